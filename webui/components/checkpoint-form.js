// "Save checkpoint": a form cell with every field. "Draft with AI" replaces the
// fields with the background model's draft; the user reviews, then saves.
import { emit, h, replace } from "../dom.js";
import "./list-editor.js";

const LISTS = [["decisions", "Decisions"], ["tasks", "Tasks"],
  ["openQuestions", "Open questions"], ["entities", "Entities"]];
const EMPTY = { title: "", objective: "", summary: "", decisions: [], tasks: [],
  openQuestions: [], entities: [] };

export class CheckpointForm extends HTMLElement {
  connectedCallback() {
    if (this.fields) return;
    this.className = "cell checkpoint-form";
    this.fields = {
      title: h("input", { "aria-label": "Title", required: true, placeholder: "A one-line name" }),
      objective: h("input", { "aria-label": "Objective", placeholder: "What the conversation is trying to achieve" }),
      summary: h("textarea", { "aria-label": "Summary", rows: 4, placeholder: "What was understood so far" }),
    };
    this.lists = Object.fromEntries(LISTS.map(([key, label]) =>
      [key, h("list-editor", { label })]));
    this.messages = h("div", { class: "form-messages", role: "status" });
    this.draftButton = h("button", { type: "button", onclick: () => emit(this, "draft-checkpoint") },
      "Draft with AI");
    this.saveButton = h("button", { type: "button", class: "primary", onclick: () =>
      emit(this, "save-checkpoint", this.value) }, "Save checkpoint");
    this.append(
      h("div", { class: "cell-gutter" }, "◆ new"),
      h("div", { class: "cell-main" }, h("h3", {}, "Save checkpoint"),
        h("label", {}, "Title", this.fields.title),
        h("label", {}, "Objective", this.fields.objective),
        h("label", {}, "Summary", this.fields.summary),
        h("div", { class: "lists" }, Object.values(this.lists)),
        this.messages,
        h("div", { class: "actions" }, this.draftButton, this.saveButton,
          h("button", { type: "button", class: "ghost", onclick: () => emit(this, "close-checkpoint-form") },
            "Cancel"))));
  }

  /** Fill every field (replacing, never merging). */
  set draft(draft) {
    const value = { ...EMPTY, ...draft };
    for (const key of ["title", "objective", "summary"]) this.fields[key].value = value[key] ?? "";
    for (const [key] of LISTS) this.lists[key].items = value[key] ?? [];
  }

  get value() {
    const value = Object.fromEntries(Object.entries(this.fields).map(([k, f]) => [k, f.value.trim()]));
    for (const [key] of LISTS) value[key] = this.lists[key].items;
    return value;
  }

  set status({ busy = false, errors = [], note = "" }) {
    this.draftButton.disabled = busy;
    this.saveButton.disabled = busy;
    replace(this.messages, note ? h("p", { class: "muted" }, note) : null,
      errors.map((error) => h("p", { class: "error-text" }, h("code", {}, error.code), " ", error.message)));
  }

  focusTitle() {
    this.fields.title.focus();
  }
}

customElements.define("checkpoint-form", CheckpointForm);
