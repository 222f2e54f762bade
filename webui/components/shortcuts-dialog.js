// The "?" dialog listing keyboard shortcuts.
import { h } from "../dom.js";

export const SHORTCUTS = [
  ["?", "Show this list"],
  ["/", "Search"],
  ["j / k", "Next / previous cell"],
  ["i", "Write a message (focus the composer)"],
  ["Shift+Enter or Ctrl+Enter", "Send the message"],
  ["Esc", "Leave the composer / close a dialog"],
  ["Esc (outside the message box)", "Stop the reply that is streaming"],
  ["s", "Save a checkpoint"],
  ["Tab", "Move between buttons and links"],
];

export class ShortcutsDialog extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    this.dialog = h("dialog", { class: "shortcuts", "aria-label": "Keyboard shortcuts" },
      h("div", { class: "dialog-head" }, h("h2", {}, "Keyboard shortcuts"),
        h("button", { type: "button", class: "icon", "aria-label": "Close shortcuts",
          onclick: () => this.dialog.close() }, "×")),
      h("dl", {}, SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])));
    this.append(this.dialog);
  }

  show() {
    if (!this.dialog.open) this.dialog.showModal();
  }
}

customElements.define("shortcuts-dialog", ShortcutsDialog);
