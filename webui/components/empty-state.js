// The first screen when no session is open: what Smriti is and how to start.
// Right after a space is created here, "New session" offers that space first: a
// session in no space cannot save checkpoints, which is what a new space is for.
import { emit, h, replace } from "../dom.js";

export class EmptyState extends HTMLElement {
  connectedCallback() {
    this.className = "empty-state";
    if (!this.childElementCount) this.render();
  }

  /** {space}: the space just created (null: none), offered for the new session. */
  set state({ space = null } = {}) {
    if (this.rendered && (this.space?.id ?? null) === (space?.id ?? null)
      && this.space?.name === space?.name) return;
    this.space = space;
    this.render();
  }

  render() {
    this.rendered = true;
    const { space } = this;
    const newSession = (spaceId) => () => emit(this, "create-session", { spaceId });
    replace(this,
      h("h1", {}, "Start a conversation"),
      h("p", { class: "muted" },
        "A session is one conversation. Put it in a space to save checkpoints of what was decided, "
        + "and to continue from them in later sessions."),
      h("div", { class: "actions" },
        space
          ? [h("button", { type: "button", class: "primary", onclick: newSession(space.id) },
            `New session in ${space.name}`),
          h("button", { type: "button", onclick: newSession(null) }, "New session in no space")]
          : h("button", { type: "button", class: "primary", onclick: newSession(null) }, "New session"),
        h("button", { type: "button", onclick: () => emit(this, "start-new-space") }, "New space")),
      h("p", { class: "muted" }, "Or open a session from the list of spaces and sessions."));
  }
}

customElements.define("empty-state", EmptyState);
