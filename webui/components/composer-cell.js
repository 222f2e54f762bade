// The bottom cell: message box, model picker, context status. Shift+Enter or
// Ctrl+Enter sends; Esc leaves the cell.
import { emit, h, replace } from "../dom.js";
import "./context-status.js";

export class ComposerCell extends HTMLElement {
  constructor() {
    super();
    this.onKeydown = (event) => {
      if (event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.send();
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.textarea.blur();
        this.focus();
      }
    };
    this.onInput = () => emit(this, "draft-change", { content: this.textarea.value });
    this.onModel = () => emit(this, "model-change", { model: this.select.value });
  }

  connectedCallback() {
    if (!this.textarea) this.build();
    this.textarea.addEventListener("keydown", this.onKeydown);
    this.textarea.addEventListener("input", this.onInput);
    this.select.addEventListener("change", this.onModel);
  }

  disconnectedCallback() {
    this.textarea.removeEventListener("keydown", this.onKeydown);
    this.textarea.removeEventListener("input", this.onInput);
    this.select.removeEventListener("change", this.onModel);
  }

  build() {
    this.className = "cell composer";
    this.tabIndex = -1;
    this.textarea = h("textarea", { rows: 3, "aria-label": "Message",
      placeholder: "Write a message… Shift+Enter or Ctrl+Enter sends, Esc leaves" });
    this.select = h("select", { "aria-label": "Model" });
    this.sendButton = h("button", { type: "button", class: "primary", onclick: () => this.send() },
      "Send");
    this.status = document.createElement("context-status");
    this.append(
      h("div", { class: "cell-gutter" }, "In [ ]"),
      h("div", { class: "cell-main" }, this.textarea,
        h("div", { class: "composer-bar" }, h("label", { class: "model" }, "Model ", this.select),
          h("span", { class: "spacer" }), this.sendButton),
        this.status));
  }

  send() {
    const content = this.textarea.value;
    if (!content.trim() || this.sendButton.disabled) return;
    emit(this, "send", { content, model: this.select.value });
  }

  set value(text) {
    this.textarea.value = text;
  }

  get value() {
    return this.textarea.value;
  }

  set busy(busy) {
    this.sendButton.disabled = busy;
  }

  /** {plan, open, unanswered} for the status line and the context drawer. */
  set context(context) {
    this.status.context = context;
  }

  /** Providers as `providers` lists them; unavailable ones disabled with the reason. */
  setModels(providers, selected) {
    replace(this.select, providers.map((provider) =>
      h("optgroup", { label: provider.available ? provider.name
        : `${provider.name} — unavailable: ${provider.reason ?? "not configured"}` },
        provider.models.map((model) => h("option", { value: model, disabled: !provider.available },
          provider.available ? model : `${model} (unavailable)`)))));
    this.select.value = selected;
  }

  focusInput() {
    this.textarea.focus();
  }
}

customElements.define("composer-cell", ComposerCell);
