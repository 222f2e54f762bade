// "Import…": a Smriti JSON export, a ChatGPT or a Claude conversations.json or an
// Open WebUI chat export, in a modal
// <dialog>. Picking a file sends it up (import-file, {file}); the app answers with
// showResult() (what importSpace made or found, or its typed errors with their field)
// or fail() (a sentence: the file too large, the server unreachable). The spaces and
// sessions listed open with select-space / select-session.
import { emit, h, replace } from "../dom.js";

/** A size in words (1.4 MB, 820 KB). */
export function byteSize(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export class ImportDialog extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    this.input = h("input", { type: "file", id: "import-file", accept: ".json,application/json",
      onchange: () => this.picked() });
    this.status = h("div", { class: "import-status", id: "import-status", role: "status" });
    this.dialog = h("dialog", { class: "import-dialog", id: "import-dialog",
      "aria-labelledby": "import-title" },
    h("div", { class: "dialog-head" }, h("h2", { id: "import-title" }, "Import"),
      h("button", { type: "button", class: "icon", "aria-label": "Close import",
        onclick: () => this.close() }, "×")),
    h("p", { class: "muted" }, "A Smriti JSON export (Export → “Space as JSON” or “Session as JSON”, "
      + "or smriti export), the conversations.json of a ChatGPT or a Claude data export, or an "
      + "Open WebUI chat export (each conversation as the line last shown; every other branch, "
      + "an edited message or a regenerated reply, as an alternative of its cell). "
      + "Its checkpoints are verified first; nothing is written when one fails, and what "
      + "was imported before is not imported again. The file may be as large as the "
      + "server's request body limit (SMRITI_MAX_BODY_BYTES)."),
    h("label", { class: "import-pick", for: "import-file" }, "File to import "),
    this.input,
    this.status);
    this.append(this.dialog);
  }

  /** Open with no file picked and no result. */
  show() {
    this.input.value = "";
    this.input.disabled = false;
    replace(this.status);
    if (!this.dialog.open) this.dialog.showModal();
    this.input.focus();
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  picked() {
    const file = this.input.files?.[0];
    if (!file) return;
    this.input.disabled = true;
    this.fileName = file.name;
    replace(this.status, h("p", { class: "muted" }, `Importing ${file.name} (${byteSize(file.size)})…`));
    emit(this, "import-file", { file });
  }

  /** importSpace's answer: its typed errors (each with its field), or what it made. */
  showResult({ spaces, sessions, created, errors, branchesImported = 0 }) {
    this.input.disabled = false;
    if (errors.length) {
      return replace(this.status, h("div", { class: "error", role: "alert", id: "import-errors" },
        h("p", {}, `${this.fileName} was not imported:`),
        h("ul", {}, errors.map((error) => h("li", {}, h("strong", {}, error.code), ": ", error.message,
          error.field ? h("span", { class: "muted" }, ` (field ${error.field})`) : null)))));
    }
    const found = spaces.length + sessions.length;
    const summary = created === 0
      ? `Nothing new: ${this.fileName} was imported before (${count(found, "item")} already here).`
      : `Imported ${this.fileName}: ${count(created, "new item")}.`;
    replace(this.status, h("div", { class: "import-result", id: "import-result" },
      h("p", {}, summary),
      branchesImported ? h("p", { class: "muted import-branches" },
        `With ${count(branchesImported, "other branch", "other branches")} (edited messages or `
        + "regenerated replies), each an alternative of its cell.") : null,
      h("ul", { class: "import-made" },
        spaces.map((space) => h("li", {}, "Space ",
          this.link(space.name, "select-space", space.id),
          ` (${count(space.sessions.length, "session")})`)),
        sessions.map((session) => h("li", {}, "Session ",
          this.link(session.title || "Untitled session", "select-session", session.id))))));
  }

  /** A sentence instead of a result (the file too large, the server unreachable). */
  fail(message) {
    this.input.disabled = false;
    replace(this.status, h("p", { class: "error", role: "alert", id: "import-errors" }, message));
  }

  link(label, type, id) {
    return h("a", { href: type === "select-space" ? `/?space=${encodeURIComponent(id)}`
      : `/?session=${encodeURIComponent(id)}`,
    onclick: (event) => {
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      this.close();
      emit(this, type, { id });
    } }, label);
  }
}

customElements.define("import-dialog", ImportDialog);
