// The composer's status line `ctx: MOUNTED · a1b2c3d (…)` and "Show context": a
// side drawer (a modal <dialog>) with the token gauge against the model's context
// window and the exact messages the server will send.
import { emit, h, replace } from "../dom.js";
import { settingsSummary, status, tokens } from "../format.js";

export class ContextStatus extends HTMLElement {
  constructor() {
    super();
    this._context = { plan: null, open: false, unanswered: new Set() };
    // Esc or the close button: the app owns whether it is open.
    this.onClose = () => this._context.open && emit(this, "close-context");
  }

  connectedCallback() {
    if (!this.line) this.build();
    this.dialog.addEventListener("close", this.onClose);
    this.render();
  }

  disconnectedCallback() {
    this.dialog.removeEventListener("close", this.onClose);
  }

  build() {
    this.className = "context-status";
    this.line = h("span", { class: "ctx-line" });
    this.toggle = h("button", { type: "button", class: "small ghost", "aria-haspopup": "dialog",
      onclick: () => emit(this, "toggle-context") }, "Show context");
    this.gauge = h("div", { class: "ctx-gauge" });
    this.messages = h("div", { class: "ctx-messages", tabindex: "0", role: "region",
      "aria-label": "Messages sent to the model" });
    this.dialog = h("dialog", { class: "context-drawer", "aria-labelledby": "ctx-title" },
      h("div", { class: "dialog-head" }, h("h2", { id: "ctx-title" }, "What the model will receive"),
        h("button", { type: "button", class: "icon", "aria-label": "Close context",
          onclick: () => this.dialog.close() }, "×")),
      this.gauge, this.messages);
    this.append(h("div", { class: "ctx-row" }, this.line, this.toggle), this.dialog);
  }

  /** {plan, open, unanswered}: the contextPreview, whether the drawer is open, and
   * the sequence numbers of questions left without a reply. */
  set context(context) {
    this._context = context;
    this.render();
  }

  render() {
    if (!this.line) return;
    const { plan, open, unanswered } = this._context;
    this.line.textContent = status(plan);
    if (!open) {
      if (this.dialog.open) this.dialog.close();
      return;
    }
    if (!this.dialog.open) this.dialog.showModal();
    if (!plan) return replace(this.messages, h("p", { class: "muted" }, "Loading…"));
    const share = plan.contextWindow ? Math.min(1, plan.tokenEstimate / plan.contextWindow) : 0;
    const waiting = plan.turns.map((turn) => turn.sequenceNumber).filter((seq) => unanswered.has(seq));
    replace(this.gauge,
      h("p", { class: "ctx-summary" }, status(plan)),
      h("label", { class: "gauge-label" },
        `${tokens(plan.tokenEstimate)} of ${plan.contextWindow.toLocaleString("en")} in ${plan.model}'s `
        + `context window (${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%)`,
        h("meter", { min: 0, max: plan.contextWindow, value: plan.tokenEstimate,
          low: plan.contextWindow * 0.7, high: plan.contextWindow * 0.9, optimum: 0 })),
      // The parameters go beside the messages (the instructions are in the system one).
      settingsSummary(plan.settings) ? h("p", { class: "ctx-settings" },
        `Sent with: ${settingsSummary(plan.settings)}`) : null,
      waiting.length ? h("p", { class: "ctx-note", role: "note" },
        `${waiting.length === 1 ? "Turn" : "Turns"} ${waiting.join(", ")} got no reply: `
        + `${waiting.length === 1 ? "it" : "they"} will be sent to the model with your message, `
        + `merged into one message with what follows ${waiting.length === 1 ? "it" : "them"} `
        + "(see “merged” below).") : null);
    replace(this.messages, plan.messages.map((message) =>
      h("div", { class: `ctx-message ${message.role}` },
        h("div", { class: "ctx-role" }, message.role, mergedLabel(message)),
        h("pre", {}, message.content))));
  }
}

/** "merged: turns 3, 4 + your message" for a message that joins several turns. */
function mergedLabel(message) {
  if (!message.merged) return null;
  const turns = message.sequenceNumbers;
  const parts = turns.length ? [`${turns.length === 1 ? "turn" : "turns"} ${turns.join(", ")}`] : [];
  if (message.includesNewMessage) parts.push("your message");
  return h("span", { class: "ctx-merged", title: "Sent to the model as one message, "
    + "a blank line between the parts" }, `merged: ${parts.join(" + ")}`);
}

customElements.define("context-status", ContextStatus);
