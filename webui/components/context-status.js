// The composer's status line `ctx: MOUNTED · a1b2c3d (…)` and, when open, the
// exact messages the server will send.
import { emit, h, replace } from "../dom.js";
import { status } from "../format.js";

export class ContextStatus extends HTMLElement {
  connectedCallback() {
    if (this.line) return;
    this.className = "context-status";
    this.line = h("span", { class: "ctx-line" });
    this.toggle = h("button", { type: "button", class: "small ghost", "aria-expanded": "false",
      onclick: () => emit(this, "toggle-context") }, "Show context");
    this.messages = h("div", { class: "ctx-messages", hidden: true });
    this.append(h("div", { class: "ctx-row" }, this.line, this.toggle), this.messages);
    this.render();
  }

  set plan(plan) {
    this._plan = plan;
    this.render();
  }

  set open(open) {
    this._open = open;
    this.render();
  }

  render() {
    if (!this.line) return;
    const plan = this._plan;
    this.line.textContent = status(plan);
    this.toggle.textContent = this._open ? "Hide context" : "Show context";
    this.toggle.setAttribute("aria-expanded", String(Boolean(this._open)));
    this.messages.hidden = !this._open;
    if (!this._open || !plan) return;
    replace(this.messages, plan.messages.map((message) =>
      h("div", { class: `ctx-message ${message.role}` },
        h("div", { class: "ctx-role" }, message.role), h("pre", {}, message.content))));
  }
}

customElements.define("context-status", ContextStatus);
