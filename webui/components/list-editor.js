// An editable list of strings: edit items in place (multi-line fields that grow),
// Enter adds the next item, × removes one. An entry may carry the item's `id`,
// kept while its text is edited (a new row has none). Each entry remembers where it came from
// ("carried" forward from the parent checkpoint, "new" from an AI draft, or typed
// here) and, with a `check` attribute ("Done", "Resolved"), can be ticked off:
// ticked entries stay visible, struck through, and are left out of `items`.
import { h, replace } from "../dom.js";

const ORIGIN_TAGS = { carried: "carried forward", new: "new" };

/** "Fly into Sydney." and "fly  into sydney" are one item (as compareCheckpoints sees it). */
export const sameItem = (a, b) => normalize(a) === normalize(b);
const normalize = (text) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

export class ListEditor extends HTMLElement {
  /** Plain strings (typed here) or entries {id, text, origin, done}. */
  set items(items) {
    this._entries = items.map((item) => typeof item === "string"
      ? { text: item, origin: "own", done: false } : { origin: "own", done: false, ...item });
    this.render();
  }

  /** The items to save, as typed: blanks and ticked-off entries dropped. */
  get items() {
    return this.entries.filter((entry) => !entry.done).map((entry) => entry.text.trim())
      .filter(Boolean);
  }

  /** The items to save with their ids ({id, text}; no id for a row added
   * here or drafted): an edited row keeps the id it came with. */
  get itemsWithIds() {
    return this.entries.filter((entry) => !entry.done && entry.text.trim())
      .map(({ id, text }) => (id ? { id, text: text.trim() } : { text: text.trim() }));
  }

  /** Every entry as shown now (text as typed). */
  get entries() {
    const fields = [...this.querySelectorAll("textarea")];
    return (this._entries ?? []).map((entry, index) =>
      ({ ...entry, text: fields[index]?.value ?? entry.text }));
  }

  connectedCallback() {
    if (!this._entries) this.items = [];
  }

  render() {
    const label = this.getAttribute("label") ?? "Items";
    const check = this.getAttribute("check");
    const rows = this._entries.map((entry, index) => {
      const field = h("textarea", { rows: 1, value: entry.text,
        "aria-label": `${label} item ${index + 1}`,
        oninput: () => grow(field),
        onkeydown: (event) => this.key(event, index) });
      return h("li", { class: `item ${entry.origin}${entry.done ? " done" : ""}` },
        check ? h("input", { type: "checkbox", checked: entry.done, title: check,
          "aria-label": `${check}: ${label} item ${index + 1}`,
          onchange: (event) => this.tick(index, event.target.checked) }) : null,
        h("div", { class: "item-body" }, field,
          ORIGIN_TAGS[entry.origin] ? h("span", { class: "tag origin" }, ORIGIN_TAGS[entry.origin]) : null),
        h("button", { type: "button", class: "icon", "aria-label": `Remove ${label} item ${index + 1}`,
          onclick: () => this.remove(index) }, "×"));
    });
    replace(this, h("fieldset", { class: "list-editor" }, h("legend", {}, label),
      h("ul", {}, rows),
      h("button", { type: "button", class: "small ghost", onclick: () => this.add(this._entries.length) },
        `Add ${label.toLowerCase()} item`)));
    // Heights are known once the fields are in the document.
    requestAnimationFrame(() => this.querySelectorAll("textarea").forEach(grow));
  }

  key(event, index) {
    if (event.key === "Enter" && !event.shiftKey && !event.ctrlKey && !event.metaKey) {
      event.preventDefault(); // an item is one line of the prompt: Enter starts the next
      this.add(index + 1);
    } else if (event.key === "Backspace" && event.target.value === "" && this._entries.length > 1) {
      event.preventDefault();
      this.remove(index);
      this.focusItem(Math.max(0, index - 1));
    }
  }

  /** A blank entry at `index`, focused. */
  add(index) {
    const entries = this.entries;
    entries.splice(index, 0, { text: "", origin: "own", done: false });
    this._entries = entries;
    this.render();
    this.focusItem(index);
  }

  remove(index) {
    const entries = this.entries;
    entries.splice(index, 1);
    this._entries = entries;
    this.render();
  }

  tick(index, done) {
    const entries = this.entries;
    entries[index] = { ...entries[index], done };
    this._entries = entries;
    this.render();
  }

  focusItem(index) {
    this.querySelectorAll("textarea")[index]?.focus();
  }
}

/** A field as tall as its text. */
function grow(field) {
  field.style.height = "auto";
  field.style.height = `${field.scrollHeight + 2}px`;
}

customElements.define("list-editor", ListEditor);
