// Above the notebook: the session's space (attach with a memory scope / detach),
// its mount (unmount) and "Save checkpoint".
import { emit, h, replace, sameState } from "../dom.js";
import { MEMORY_SCOPES } from "../format.js";

export class SessionHeader extends HTMLElement {
  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { session, spaces, formOpen } = this._state ?? {};
    this.hidden = !session;
    if (!session) return replace(this);
    this.className = "session-header";
    const button = (label, type, extra = {}) =>
      h("button", { type: "button", class: "small", onclick: () => emit(this, type), ...extra }, label);
    const mount = session.mount;
    replace(this,
      h("div", { class: "title-row" }, h("h1", {}, session.title || "Untitled session"),
        session.space && !formOpen
          ? button("Save checkpoint", "open-checkpoint-form", { class: "small primary" }) : null),
      h("div", { class: "session-facts" },
        session.space ? [
          h("span", { class: "fact" }, "Space ", h("strong", {}, session.space.name)),
          h("span", { class: "fact" }, "Branch ", h("strong", {}, session.branchName)),
          h("label", { class: "fact" }, "Sees the ", this.scopePicker(session.memoryScope,
            (memoryScope) => emit(this, "change-scope", { memoryScope }))),
          button("Detach space", "detach-space"),
        ] : this.attachForm(spaces ?? [], session.memoryScope),
        mount ? [h("span", { class: "fact mounted" }, "Mounted ",
          h("strong", { class: "hash" }, mount.checkpoint?.shortHash ?? "?"),
          ` after turn ${mount.baseSequence}`), button("Unmount", "unmount")] : null,
        this.exportPicker(Boolean(session.space))));
  }

  /** "Export…": the session as Markdown or a notebook, or its whole space as JSON. */
  exportPicker(inSpace) {
    const formats = [["MARKDOWN", "Session as Markdown"], ["IPYNB", "Session as notebook (.ipynb)"]];
    if (inSpace) formats.push(["SPACE_JSON", "Space as JSON (for import)"]);
    return h("select", { "aria-label": "Export", class: "export-picker",
      onchange: (event) => {
        const format = event.target.value;
        event.target.value = "";
        if (format) emit(this, "export-document", { format });
      } },
    h("option", { value: "" }, "Export…"),
    formats.map(([value, label]) => h("option", { value }, label)));
  }

  /** The memory scope in words; `onchange` (when given) gets the new value. */
  scopePicker(scope, onchange = null) {
    return h("select", { "aria-label": "Memory scope",
      onchange: onchange && ((event) => onchange(event.target.value)) },
    MEMORY_SCOPES.map(([value, label]) => h("option", { value, selected: value === scope }, label)));
  }

  attachForm(spaces, scope) {
    if (!spaces.length) return h("span", { class: "fact" }, "No space (FRESH). Create a space to attach.");
    const space = h("select", { "aria-label": "Space to attach" },
      spaces.map((s) => h("option", { value: s.id }, s.name)));
    const memory = this.scopePicker(scope);
    return h("span", { class: "attach" }, h("span", { class: "fact" }, "No space (FRESH)"),
      space, memory,
      h("button", { type: "button", class: "small", onclick: () =>
        emit(this, "attach-space", { spaceId: space.value, memoryScope: memory.value }) }, "Attach"));
  }
}

customElements.define("session-header", SessionHeader);
