// An editable list of strings: edit items in place, add, remove.
import { h, replace } from "../dom.js";

export class ListEditor extends HTMLElement {
  set items(items) {
    this._items = [...items];
    this.render();
  }

  /** The items as typed, blanks dropped. */
  get items() {
    return [...this.querySelectorAll("input")].map((input) => input.value.trim()).filter(Boolean);
  }

  connectedCallback() {
    if (!this._items) this.items = [];
  }

  render() {
    const label = this.getAttribute("label") ?? "Items";
    const rows = this._items.map((item, index) => h("li", {},
      h("input", { value: item, "aria-label": `${label} item ${index + 1}` }),
      h("button", { type: "button", class: "icon", "aria-label": `Remove ${label} item ${index + 1}`,
        onclick: () => this.remove(index) }, "×")));
    replace(this, h("fieldset", { class: "list-editor" }, h("legend", {}, label),
      h("ul", {}, rows),
      h("button", { type: "button", class: "small ghost", onclick: () => this.add() }, `Add ${label.toLowerCase()} item`)));
  }

  add() {
    this._items = [...this.items, ""];
    this.render();
    [...this.querySelectorAll("input")].at(-1).focus();
  }

  remove(index) {
    const current = [...this.querySelectorAll("input")].map((input) => input.value);
    current.splice(index, 1);
    this._items = current;
    this.render();
  }
}

customElements.define("list-editor", ListEditor);
