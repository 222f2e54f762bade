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
    this.onModel = () => {
      const value = this.select.value;
      if (value.startsWith(PRESET)) {
        // A preset sets the session's model and settings (the app answers with setModels).
        this.select.value = this.selected;
        return emit(this, "apply-preset", { presetId: value.slice(PRESET.length) });
      }
      this.selected = value;
      this.showHint();
      emit(this, "model-change", { model: value });
    };
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
    this.hint = offlineHint();
    this.append(
      h("div", { class: "cell-gutter" }, "In [ ]"),
      h("div", { class: "cell-main" }, this.textarea,
        h("div", { class: "composer-bar" }, h("label", { class: "model" }, "Model ", this.select),
          h("span", { class: "spacer" }), this.sendButton),
        this.hint, this.status));
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

  /** Providers as `providers` lists them; unavailable ones disabled with the reason, and
   * those where nothing answered when last checked marked "not reachable" (still
   * selectable: the server may be up by the time a message is sent). */
  setModels(providers, selected, presets = []) {
    replace(this.select, presets.length ? h("optgroup", { label: "Presets" },
      presets.map((preset) => h("option", { value: `${PRESET}${preset.id}` },
        `${preset.name} (${preset.model})`))) : null,
    providers.map((provider) => {
      const note = !provider.available ? "unavailable"
        : provider.reachability === "UNREACHABLE" ? "not reachable" : null;
      const label = !provider.available
        ? `${provider.name} — unavailable: ${provider.reason ?? "not configured"}`
        : note ? `${provider.name} — ${note}` : provider.name;
      return h("optgroup", { label },
        provider.models.map((model) => h("option", { value: model, disabled: !provider.available },
          note ? `${model} (${note})` : model)));
    }));
    this.select.value = selected;
    this.selected = selected;
    this.showHint();
  }

  /** The offline models answer without a provider; say so while one is picked. */
  showHint() {
    this.hint.hidden = !this.select.value.startsWith(`${OFFLINE_PROVIDER}/`);
  }

  focusInput() {
    this.textarea.focus();
  }
}

const OFFLINE_PROVIDER = "offline";
// A preset's option value: this prefix and its id (never a "provider/model").
const PRESET = "preset:";

function offlineHint() {
  return h("details", { class: "model-hint", hidden: true },
    h("summary", {}, "Offline models are stand-ins: echo describes the context it got. "
      + "How to add a real provider"),
    h("ol", {},
      h("li", {}, "Add the provider and its models to ", h("code", {}, "providers.yaml"),
        " (OpenAI, Anthropic, OpenRouter, Ollama or any OpenAI-compatible server)."),
      h("li", {}, "Export the key in the variable it names, e.g. ",
        h("code", {}, "export OPENAI_API_KEY=…"), ", and restart Smriti."),
      h("li", {}, "Pick the model here. The README's “Adding a real provider” section has examples.")));
}

customElements.define("composer-cell", ComposerCell);
