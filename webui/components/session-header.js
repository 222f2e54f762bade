// Above the notebook: the session's space (attach with a memory scope / detach),
// its mount (unmount), "Save checkpoint" (for the space's editors and owners) and,
// with accounts, "Shared with the space". Someone else's shared session: read-only,
// saying whose it is. No session but a space opened on its own: the space and your role.
// Organising (the author's): Pin / Unpin, Archive / Unarchive (an archived session says
// so, with Unarchive), and its tags as chips with a field to add one.
import { emit, h, replace, replaceKeeping, sameState } from "../dom.js";
import { MEMORY_SCOPES } from "../format.js";

const TAG_MAX_CHARS = 40;

export class SessionHeader extends HTMLElement {
  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { session, spaces, formOpen, accounts, may = {}, space } = this._state ?? {};
    if (!session && space) return this.renderSpace(space);
    this.hidden = !session;
    if (!session) return replace(this);
    this.className = "session-header";
    if (may.readOnly) return this.renderReadOnly(session);
    const button = (label, type, extra = {}) =>
      h("button", { type: "button", class: "small", onclick: () => emit(this, type), ...extra }, label);
    const mount = session.mount;
    // Attaching takes a space you may edit.
    const attachable = (spaces ?? []).filter((s) => s.viewerRole !== "VIEWER");
    const organise = (label, change, extra = {}) => h("button", { type: "button", class: "small",
      onclick: () => emit(this, "organise-session", change), ...extra }, label);
    // Keeps a half-typed tag and the attach choices across renders of the same session.
    replaceKeeping(this,
      h("div", { class: "title-row" }, h("h1", {}, session.title || "Untitled session"),
        h("span", { class: "organise" },
          organise(session.pinned ? "Unpin" : "Pin", { pinned: !session.pinned },
            { id: "pin-session" }),
          session.archived ? null : organise("Archive", { archived: true }, { id: "archive-session" })),
        may.canSave && !formOpen
          ? button("Save checkpoint", "open-checkpoint-form", { class: "small primary" }) : null),
      session.archived ? this.archivedNote(organise("Unarchive", { archived: false },
        { id: "unarchive-session" })) : null,
      this.tagEditor(session.tags ?? []),
      h("div", { class: "session-facts" },
        session.space ? [
          h("span", { class: "fact" }, "Space ", h("strong", {}, session.space.name)),
          h("span", { class: "fact" }, "Branch ", h("strong", {}, session.branchName)),
          h("label", { class: "fact" }, "Sees the ", this.scopePicker(session.memoryScope,
            (memoryScope) => emit(this, "change-scope", { memoryScope }))),
          button("Detach space", "detach-space"),
          accounts ? this.shareToggle(session) : null,
        ] : this.attachForm(attachable, session.memoryScope),
        mount ? [h("span", { class: "fact mounted" }, "Mounted ",
          h("strong", { class: "hash" }, mount.checkpoint?.shortHash ?? "?"),
          ` after turn ${mount.baseSequence}`), button("Unmount", "unmount")] : null,
        this.settingsButton(session),
        this.exportPicker(Boolean(session.space))));
  }

  /** An archived session: what that means, and Unarchive. */
  archivedNote(unarchive) {
    return h("p", { class: "archived-note", id: "archived-note", role: "status" },
      h("strong", {}, "Archived"), ": hidden from the sidebar (Show: Archived lists it), still "
        + "searched and exported. ", unarchive);
  }

  /** The session's tags as chips (× removes one) and a field that adds one (Enter or ","). */
  tagEditor(tags) {
    const send = (next) => emit(this, "organise-session", { tags: next });
    const known = (this._state.knownTags ?? []).filter((tag) => !tags.includes(tag));
    const input = h("input", { type: "text", class: "tag-input", id: "tag-input",
      "aria-label": "Add a tag", placeholder: "Add tag", maxlength: String(TAG_MAX_CHARS),
      list: known.length ? "known-tags" : null, autocomplete: "off",
      dataset: { keep: `tag:${this._state.session.id}` } });
    const add = () => {
      const tag = input.value.split(/\s+/).filter(Boolean).join(" ");
      if (!tag) return;
      input.value = "";
      send([...tags, tag]);
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === ",") {
        event.preventDefault();
        add();
      }
    });
    return h("div", { class: "session-tags", role: "group", "aria-label": "Tags" },
      h("ul", { class: "chips", "aria-label": "Tags of this session" }, tags.map((tag) =>
        h("li", { class: "chip" }, h("span", {}, `#${tag}`),
          h("button", { type: "button", class: "icon", "aria-label": `Remove tag ${tag}`,
            title: "Remove tag", onclick: () => send(tags.filter((t) => t !== tag)) }, "×")))),
      input,
      known.length ? h("datalist", { id: "known-tags" }, known.map((tag) => h("option", { value: tag })))
        : null,
      h("button", { type: "button", class: "small", onclick: add }, "Add tag"));
  }

  /** "Settings": the session's instructions and parameters (and its space's defaults). */
  settingsButton(session) {
    const own = Object.values(session.settings ?? {}).filter((v) => v !== null).length;
    const inherited = session.inheritedSettings?.length ?? 0;
    const count = own + inherited;
    return h("button", { type: "button", class: "small", id: "open-settings",
      title: count ? `${count} setting${count === 1 ? "" : "s"} in use` : "Instructions and model parameters",
      onclick: () => emit(this, "open-settings") }, count ? `Settings (${count})` : "Settings");
  }

  /** "Shared with the space": the author's switch between SPACE and PRIVATE. */
  shareToggle(session) {
    return h("label", { class: "fact share" },
      h("input", { type: "checkbox", id: "share-session", checked: session.visibility === "SPACE",
        onchange: (event) => emit(this, "change-visibility",
          { visibility: event.target.checked ? "SPACE" : "PRIVATE" }) }),
      " Shared with the space");
  }

  /** Another member's shared session: whose it is, read-only. */
  renderReadOnly(session) {
    replace(this,
      h("div", { class: "title-row" }, h("h1", {}, session.title || "Untitled session")),
      h("p", { class: "read-only-note", id: "read-only-note" },
        `${session.authorName}'s session, shared with the space: read-only (only `
        + `${session.authorName} writes to it).`),
      session.archived ? h("p", { class: "archived-note", id: "archived-note" },
        h("strong", {}, "Archived"), " by its author.") : null,
      (session.tags ?? []).length ? h("ul", { class: "chips", "aria-label": "Tags of this session" },
        session.tags.map((tag) => h("li", { class: "chip" }, `#${tag}`))) : null,
      h("div", { class: "session-facts" },
        h("span", { class: "fact" }, "Space ", h("strong", {}, session.space?.name ?? "none")),
        h("span", { class: "fact" }, "Branch ", h("strong", {}, session.branchName)),
        this.exportPicker(Boolean(session.space), false)));
  }

  /** A space opened on its own (no session): its name, your role, what you can do. */
  renderSpace(space) {
    this.hidden = false;
    this.className = "session-header space-view";
    const viewer = space.viewerRole === "VIEWER";
    replace(this,
      h("div", { class: "title-row" }, h("h1", {}, space.name),
        viewer ? null : h("button", { type: "button", class: "small primary",
          onclick: () => emit(this, "create-session", { spaceId: space.id }) }, "New session")),
      h("p", { class: "muted", id: "space-view-note" }, viewer
        ? "You are a viewer of this space: open a checkpoint in the lineage to read it, or fork "
          + "it into a session of your own (outside the space)."
        : "Open a checkpoint in the lineage to read, fork or compare it, or start a session here."));
  }

  /**
   * "Export…": the session as Markdown or a notebook; as JSON (for import) when it is
   * in no space, else its whole space as JSON (`spaceJson`: when you may export it),
   * since a session's JSON stands alone only outside a space (its checkpoints are the
   * space's). "Import a file…" opens the import dialog.
   */
  exportPicker(inSpace, spaceJson = inSpace) {
    const formats = [["MARKDOWN", "Session as Markdown"], ["IPYNB", "Session as notebook (.ipynb)"]];
    if (!inSpace) formats.push(["JSON", "Session as JSON (for import)"]);
    else {
      formats.push(["JSON", "Session as JSON: only for a session in no space", { disabled: true }]);
      if (spaceJson) formats.push(["SPACE_JSON", "Space as JSON (for import)"]);
    }
    formats.push(["IMPORT", "Import a file…"]);
    return h("select", { "aria-label": "Export", class: "export-picker",
      onchange: (event) => {
        const format = event.target.value;
        event.target.value = "";
        if (format === "IMPORT") emit(this, "open-import");
        else if (format) emit(this, "export-document", { format });
      } },
    h("option", { value: "" }, "Export…"),
    formats.map(([value, label, extra = {}]) => h("option", { value, ...extra }, label)));
  }

  /** The memory scope in words; `onchange` (when given) gets the new value. */
  scopePicker(scope, onchange = null) {
    return h("select", { "aria-label": "Memory scope",
      onchange: onchange && ((event) => onchange(event.target.value)) },
    MEMORY_SCOPES.map(([value, label]) => h("option", { value, selected: value === scope }, label)));
  }

  attachForm(spaces, scope) {
    if (!spaces.length) return h("span", { class: "fact" }, "No space (FRESH). Create a space to attach.");
    const session = this._state.session.id;
    const space = h("select", { "aria-label": "Space to attach", dataset: { keep: `attach:${session}` } },
      spaces.map((s) => h("option", { value: s.id }, s.name)));
    const memory = this.scopePicker(scope);
    memory.dataset.keep = `attach-scope:${session}`;
    return h("span", { class: "attach" }, h("span", { class: "fact" }, "No space (FRESH)"),
      space, memory,
      h("button", { type: "button", class: "small", onclick: () =>
        emit(this, "attach-space", { spaceId: space.value, memoryScope: memory.value }) }, "Attach"));
  }
}

customElements.define("session-header", SessionHeader);
