// The first screen when no session is open: what Smriti is and how to start.
import { emit, h } from "../dom.js";

export class EmptyState extends HTMLElement {
  connectedCallback() {
    if (this.childElementCount) return;
    this.className = "empty-state";
    this.append(
      h("h1", {}, "Start a conversation"),
      h("p", { class: "muted" },
        "A session is one conversation. Put it in a space to save checkpoints of what was decided, "
        + "and to continue from them in later sessions."),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary",
          onclick: () => emit(this, "create-session", { spaceId: null }) }, "New session"),
        h("button", { type: "button", onclick: () => emit(this, "start-new-space") }, "New space")),
      h("p", { class: "muted" }, "Or open a session from the list of spaces and sessions."));
  }
}

customElements.define("empty-state", EmptyState);
