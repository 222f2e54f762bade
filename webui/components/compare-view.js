// Two checkpoints side by side: only in A / shared / only in B for every list
// field, and their common ancestor. A modal <dialog>; Esc closes it.
import { LIST_FIELDS } from "../checkpoint-fields.js";
import { h, replace } from "../dom.js";

const FIELDS = LIST_FIELDS.map((field) => [field.name, field.label]);

const list = (items) => items.length
  ? h("ul", {}, items.map((item) => h("li", {}, item))) : h("p", { class: "muted" }, "—");
export const name = (cp) => [h("span", { class: "hash" }, cp.shortHash), " ", cp.title];

export class CompareView extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    // It scrolls sideways on a phone: focusable, so a keyboard can scroll it too.
    this.body = h("div", { class: "compare-body", tabindex: "0", role: "region",
      "aria-label": "Comparison" });
    this.dialog = h("dialog", { class: "compare", "aria-label": "Compare checkpoints" },
      h("div", { class: "dialog-head" }, h("h2", {}, "Compare checkpoints"),
        h("button", { type: "button", class: "icon", "aria-label": "Close comparison",
          onclick: () => this.dialog.close() }, "×")),
      this.body);
    this.append(this.dialog);
  }

  /** Show a `compareCheckpoints` result. */
  show(comparison) {
    const { a, b, commonAncestor } = comparison;
    replace(this.body,
      h("p", {}, "Common ancestor: ", commonAncestor ? name(commonAncestor) : "none"),
      h("table", { class: "compare-table" },
        h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "Only in A: ", name(a)),
          h("th", {}, "Shared"), h("th", {}, "Only in B: ", name(b)))),
        h("tbody", {}, FIELDS.map(([key, label]) => h("tr", { dataset: { field: key } },
          h("th", { scope: "row" }, label),
          h("td", { class: "only-a" }, list(comparison[key].onlyA)),
          h("td", { class: "shared" }, list(comparison[key].shared)),
          h("td", { class: "only-b" }, list(comparison[key].onlyB)))))));
    this.dialog.showModal();
  }
}

customElements.define("compare-view", CompareView);
