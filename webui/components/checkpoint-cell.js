// A checkpoint shown in the notebook where it was saved; collapsible. `options`:
// {byline: who saved it, shown ("by ana"), readOnly: someone else's session (no Mount)}.
import { LIST_FIELDS } from "../checkpoint-fields.js";
import { emit, h } from "../dom.js";
import { byline } from "../format.js";

const LISTS = LIST_FIELDS.map((field) => [field.name, field.label]);

/** The body shared by notebook cells and the lineage details panel. */
export function checkpointBody(checkpoint) {
  return [
    checkpoint.objective ? h("p", {}, h("strong", {}, "Objective: "), checkpoint.objective) : null,
    checkpoint.summary ? h("p", { class: "summary" }, checkpoint.summary) : null,
    LISTS.filter(([key]) => checkpoint[key]?.length).map(([key, label]) =>
      h("div", { class: "cp-list" }, h("h4", {}, label),
        h("ul", {}, checkpoint[key].map((item) => h("li", {}, item))))),
  ];
}

export class CheckpointCell extends HTMLElement {
  set checkpoint(value) {
    this._checkpoint = value;
    if (this.isConnected) this.render();
  }

  set options(value) {
    if (value.byline === this._options?.byline && value.readOnly === this._options?.readOnly) return;
    this._options = value;
    if (this._rendered) this.render();
  }

  get checkpoint() {
    return this._checkpoint;
  }

  connectedCallback() {
    if (!this._rendered) this.render();
  }

  render() {
    const cp = this._checkpoint;
    if (!cp) return;
    const { byline: by = false, readOnly = false } = this._options ?? {};
    this._rendered = true;
    this.className = "cell checkpoint";
    this.tabIndex = 0;
    this.dataset.checkpoint = cp.id;
    const action = (label, type) =>
      h("button", { type: "button", class: "small", onclick: () => emit(this, type, { id: cp.id }) },
        label);
    this.replaceChildren(
      h("div", { class: "cell-gutter" }, "◆"),
      h("details", { class: "cell-main" },
        h("summary", {},
          h("span", { class: "hash" }, cp.shortHash), " ",
          h("span", { class: "cp-title" }, cp.title),
          h("span", { class: "tag" }, cp.branchName),
          cp.broken ? h("span", { class: "broken-tag" }, "⚠ altered: ",
            cp.broken === "MISSING_PARENT" ? "its parent is missing" : "its hash does not match")
            : null,
          by && cp.author ? h("span", { class: "byline muted" }, byline(cp.author)) : null),
        h("div", { class: "cp-body" }, checkpointBody(cp),
          h("div", { class: "actions" },
            readOnly ? null : action("Mount", "mount-checkpoint"),
            action("Fork", "fork-checkpoint"),
            action("Show in lineage", "select-checkpoint")))),
    );
  }
}

customElements.define("checkpoint-cell", CheckpointCell);
