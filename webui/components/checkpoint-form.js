// The checkpoint form. A checkpoint is a snapshot of the whole state, so the form
// starts from the parent checkpoint's objective and items ("carried forward": edit,
// drop, or tick off done tasks and resolved questions, which are then left out).
// "Draft with AI" fills title and summary (and an empty objective) and adds what the
// background model extracted from the recent turns as "new" items; drafting again
// replaces the previous draft's new items, never the carried ones or your own.
// Each carried item keeps its id through edits; Save sends the lists as items with ids.
// Keyboard: Enter in Title moves on; Ctrl+Enter (Cmd+Enter) saves from any field.
// On a line that fails verification (`broken`: a checkpoint the save extends was
// altered behind Smriti) the form says so and Save reads "Save anyway": saving is
// still possible, but only by pressing that button (Ctrl+Enter moves to it).
import { LIST_FIELDS } from "../checkpoint-fields.js";
import { emit, h, replace } from "../dom.js";
import { sameItem } from "./list-editor.js";

// Each list: its field, label and word for ticking an item off (null: not ticked off).
const LISTS = LIST_FIELDS.map((field) => [field.name, field.label, field.done]);
// Each list's items with their ids, as the API names them (read and sent).
const ITEMS = Object.fromEntries(LIST_FIELDS.map((field) => [field.name, field.items]));

export class CheckpointForm extends HTMLElement {
  connectedCallback() {
    if (this.fields) return;
    this.className = "cell checkpoint-form";
    this.fields = {
      title: h("input", { "aria-label": "Title", required: true, placeholder: "A one-line name" }),
      objective: h("input", { "aria-label": "Objective", placeholder: "What the conversation is trying to achieve" }),
      summary: h("textarea", { "aria-label": "Summary", rows: 3, placeholder: "What was understood so far" }),
    };
    this.lists = Object.fromEntries(LISTS.map(([key, label, check]) =>
      [key, h("list-editor", { label, check })]));
    this.source = h("p", { class: "carried-note muted" });
    this.warning = h("p", { class: "line-broken", role: "alert", hidden: true });
    this.messages = h("div", { class: "form-messages", role: "status" });
    this.draftButton = h("button", { type: "button", onclick: () => emit(this, "draft-checkpoint") },
      "Draft with AI");
    this.saveButton = h("button", { type: "button", class: "primary", onclick: () =>
      emit(this, "save-checkpoint", this.value) }, "Save checkpoint");
    this.append(
      h("div", { class: "cell-gutter" }, "◆ new"),
      h("div", { class: "cell-main" }, h("h3", {}, "New checkpoint"), this.source, this.warning,
        h("label", {}, "Title", this.fields.title),
        h("label", {}, "Objective", this.fields.objective),
        h("label", {}, "Summary", this.fields.summary),
        h("div", { class: "lists" }, Object.values(this.lists)),
        this.messages,
        h("div", { class: "actions form-actions" }, this.draftButton, this.saveButton,
          h("button", { type: "button", class: "ghost", onclick: () => emit(this, "close-checkpoint-form") },
            "Cancel"))));
    this.addEventListener("keydown", (event) => this.key(event));
  }

  /** From the keyboard: Enter in Title moves on to Objective; Ctrl+Enter (Cmd+Enter)
   * saves from anywhere in the form (Save is many Tabs away). */
  key(event) {
    if (event.key !== "Enter" || event.isComposing || event.defaultPrevented) return;
    if (event.ctrlKey || event.metaKey) {
      event.preventDefault();
      if (this.brokenNode) this.saveButton.focus(); // "Save anyway" is pressed, not typed
      else if (!this.saveButton.disabled) this.saveButton.click();
    } else if (event.target === this.fields.title && !event.shiftKey && !event.altKey) {
      event.preventDefault();
      this.fields.objective.focus();
    }
  }

  /**
   * Start over from `carried` (the parent's state, as draftCheckpoint's `carried`
   * or a lineage node; null for a branch with no checkpoint yet).
   */
  start(carried) {
    this.carriedFrom = carried?.checkpoint ?? null;
    for (const key of ["title", "summary"]) this.fields[key].value = "";
    this.fields.objective.value = carried?.objective ?? "";
    for (const [key] of LISTS) {
      // With ids when the carried state has them: an edited item keeps its identity.
      const items = carried?.[ITEMS[key]] ?? (carried?.[key] ?? []).map((text) => ({ text }));
      this.lists[key].items = items.map(({ id, text }) => ({ id, text, origin: "carried" }));
    }
    const from = this.carriedFrom;
    replace(this.source, from
      ? ["Carried forward from ", h("span", { class: "hash" }, from.shortHash), ` ${from.title}: `,
        "edit or drop what no longer holds; tick off done tasks and resolved questions."]
      : "The first checkpoint on this branch: nothing to carry forward.");
  }

  /**
   * The checkpoint on the line this save extends that fails verification (a lineage
   * node with `broken`, its reason), or null: the warning and the Save button follow.
   */
  set broken(node) {
    const was = this.brokenNode;
    if ((was?.id ?? null) === (node?.id ?? null) && was?.broken === node?.broken) return;
    this.brokenNode = node ?? null;
    this.warning.hidden = !node;
    this.saveButton.textContent = node ? "Save anyway" : "Save checkpoint";
    this.saveButton.classList.toggle("danger", Boolean(node));
    replace(this.warning, node ? ["⚠ This line does not verify: checkpoint ",
      h("span", { class: "hash" }, node.shortHash), ` “${node.title}” was altered (`,
      node.broken === "MISSING_PARENT" ? "its parent is missing" : "its hash does not match",
      "). A checkpoint saved here extends it, so its parent chain will not verify either."]
      : null);
  }

  /** Add the background model's `extracted` draft (see the module comment). */
  addDraft(extracted) {
    for (const key of ["title", "summary"]) this.fields[key].value = extracted[key] ?? "";
    if (!this.fields.objective.value.trim()) this.fields.objective.value = extracted.objective ?? "";
    for (const [key] of LISTS) {
      const kept = this.lists[key].entries.filter((entry) => entry.origin !== "new");
      const fresh = (extracted[key] ?? []).filter((text) =>
        !kept.some((entry) => sameItem(entry.text, text)));
      this.lists[key].items = [...kept, ...fresh.map((text) => ({ text, origin: "new" }))];
    }
  }

  get value() {
    const value = Object.fromEntries(Object.entries(this.fields).map(([k, f]) => [k, f.value.trim()]));
    // Items with their ids (a new one without): never the plain list as well.
    for (const [key] of LISTS) value[ITEMS[key]] = this.lists[key].itemsWithIds;
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
