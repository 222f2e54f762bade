// The search field in the top bar: `/` focuses it, Enter searches (the results open
// in <search-results>).
import { emit, h } from "../dom.js";

export class SearchBox extends HTMLElement {
  connectedCallback() {
    if (this.input) return;
    // No maxlength: a query that is too long gets the server's message, never cut short.
    this.input = h("input", { type: "search", "aria-label": "Search", "aria-keyshortcuts": "/",
      placeholder: "Search  /", autocomplete: "off", spellcheck: "false", enterkeyhint: "search" });
    this.append(h("form", { role: "search", class: "search-box", onsubmit: (event) => {
      event.preventDefault();
      emit(this, "search-query", { query: this.input.value });
    } }, this.input));
  }

  focusInput() {
    // On a phone the field is in the top bar's menu: open it first (topbar.js).
    if (!this.input.checkVisibility()) this.dispatchEvent(new Event("reveal", { bubbles: true }));
    this.input.focus();
    this.input.select();
  }
}

customElements.define("search-box", SearchBox);
