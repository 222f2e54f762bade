// Left pane: spaces with their sessions, then sessions in no space. Create,
// rename (inline), delete (click twice) and open, and "Import…" (a file: the import
// dialog); every change goes up as an event.
// A space's name opens it on its own (its lineage); with accounts, only its owners
// rename or delete it, viewers start no session in it, and another member's shared
// session is marked with its author's name (theirs to rename or delete).
// On top, your pinned sessions (the most recently pinned first); "Show" filters
// the list: all but the archived sessions, the archived ones, or a tag's.
import { armOrConfirm, emit, h, replace, replaceKeeping, sameState } from "../dom.js";
import { sessionTitle } from "../format.js";

const ALL = "all";
const ARCHIVED = "archived";
const TAG = "tag:";

export class SpaceList extends HTMLElement {
  constructor() {
    super();
    this.data = { spaces: [], unattached: [], pinned: [], filter: { archived: false, tag: null },
      tags: [], currentSessionId: null, currentSpaceId: null, me: null };
    this.editing = null; // {kind, id} being renamed, or {kind: "new-space"}
  }

  set state(data) {
    if (sameState(data, this.data)) return;
    this.data = data;
    this.render();
  }

  connectedCallback() {
    this.render();
  }

  render() {
    const { spaces, unattached, pinned = [], filter } = this.data;
    const filtered = filter.archived || filter.tag !== null;
    // Your pinned sessions are listed once, in the Pinned group.
    const pins = new Set(pinned.map((session) => session.id));
    const unpinned = (sessions) => sessions.filter((session) => !pins.has(session.id));
    const group = (space, sessions) => ({ ...space, sessions: unpinned(sessions),
      pinnedAbove: sessions.length > 0 && sessions.every((session) => pins.has(session.id)) });
    const groups = [...spaces.map((space) => group(space, space.sessions)),
      group({ id: null, name: "No space" }, unattached)];
    // Under a filter, only the groups it finds something in.
    const shown = filtered ? groups.filter((group) => group.sessions.length) : groups;
    // Keeps a half-typed name across a render the user did not make (a late title).
    replaceKeeping(this,
      h("div", { class: "pane-head" }, h("h2", {}, "Spaces"),
        h("span", { class: "pane-actions" },
          h("button", { type: "button", class: "small", title: "A Smriti JSON export, a ChatGPT or Claude conversations.json, or an Open WebUI chat export",
            onclick: () => emit(this, "open-import") }, "Import…"),
          h("button", { type: "button", class: "small", onclick: () => this.startNewSpace() },
            "New space"))),
      this.editing?.kind === "new-space"
        ? this.editor("", "New space name", (name) => emit(this, "create-space", { name })) : null,
      this.filterPicker(),
      pinned.length ? this.pinnedGroup(pinned) : null,
      filtered && !pinned.length && !shown.length
        ? h("p", { class: "muted none filter-empty" }, filter.archived ? "No archived sessions."
          : `No sessions tagged “${filter.tag}”.`) : null,
      shown.map((space) => this.group(space)));
  }

  /** "Show": all sessions but the archived, the archived, or one tag's. */
  filterPicker() {
    const { filter, tags = [] } = this.data;
    const current = filter.archived ? ARCHIVED : filter.tag !== null ? `${TAG}${filter.tag}` : ALL;
    // A tag chosen stays offered while it is the filter.
    const offered = filter.tag === null || tags.includes(filter.tag) ? tags : [filter.tag, ...tags];
    return h("label", { class: "session-filter" }, h("span", {}, "Show"),
      h("select", { "aria-label": "Show sessions", id: "session-filter",
        onchange: (event) => {
          const value = event.target.value;
          emit(this, "filter-sessions", { filter: value === ARCHIVED ? { archived: true, tag: null }
            : value.startsWith(TAG) ? { archived: false, tag: value.slice(TAG.length) }
              : { archived: false, tag: null } });
        } },
      h("option", { value: ALL, selected: current === ALL }, "All sessions"),
      h("option", { value: ARCHIVED, selected: current === ARCHIVED }, "Archived"),
      offered.length ? h("optgroup", { label: "Tagged" }, offered.map((tag) =>
        h("option", { value: `${TAG}${tag}`, selected: current === `${TAG}${tag}` }, `#${tag}`)))
        : null));
  }

  /** Your pinned sessions, the most recently pinned first, wherever they are. */
  pinnedGroup(pinned) {
    return h("section", { class: "space-group pinned-group", "aria-labelledby": "pinned-heading" },
      h("div", { class: "row space-row" },
        h("span", { class: "name", id: "pinned-heading" }, "Pinned")),
      h("ul", { class: "sessions" }, pinned.map((session) => this.sessionRow(session, true))));
  }

  group(space) {
    const label = space.id ? `New session in space ${space.name}` : "New session without a space";
    const renaming = space.id && this.isEditing("space", space.id);
    const role = space.viewerRole ?? "OWNER";
    return h("section", { class: "space-group", dataset: { space: space.id ?? "" } },
      h("div", { class: "row space-row" },
        renaming
          ? this.editor(space.name, "Space name", (name) => emit(this, "rename-space", { id: space.id, name }))
          : this.spaceName(space),
        h("span", { class: "row-actions" },
          role === "VIEWER" ? h("span", { class: "tag", title: "You may read this space" }, "viewer")
            : h("button", { type: "button", class: "icon", "aria-label": label, title: "New session",
              onclick: () => emit(this, "create-session", { spaceId: space.id }) }, "+"),
          space.id && role === "OWNER" ? this.rowActions("space", space.id, space.name) : null)),
      space.sessions.length
        ? h("ul", { class: "sessions" }, space.sessions.map((session) => this.sessionRow(session)))
        : h("p", { class: "muted none" }, space.pinnedAbove ? "Pinned above" : "No sessions yet"));
  }

  /** The space's name: a link that opens the space on its own (no session). */
  spaceName(space) {
    if (!space.id) return h("span", { class: "name" }, space.name);
    const current = space.id === this.data.currentSpaceId;
    return h("a", { href: `/?space=${encodeURIComponent(space.id)}`, class: "name",
      "aria-current": current ? "page" : false,
      onclick: (event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        emit(this, "select-space", { id: space.id });
      } }, space.name);
  }

  sessionRow(session, inPinned = false) {
    const title = sessionTitle(session);
    // A conversation's branches share one row: current when any of them is open.
    const current = session.id === this.data.currentSessionId
      || (Boolean(session.familyId) && session.familyId === this.data.currentFamilyId);
    const { me } = this.data;
    const theirs = Boolean(me && session.authorName && session.authorName !== me);
    if (this.isEditing("session", session.id)) {
      return h("li", { class: "row session-row" }, this.editor(session.title, "Session title",
        (value) => emit(this, "rename-session", { id: session.id, title: value })));
    }
    return h("li", { class: `row session-row${current ? " current" : ""}` },
      h("a", { href: `/?session=${encodeURIComponent(session.id)}`, class: "name",
        "aria-current": current ? "page" : false,
        onclick: (event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
          event.preventDefault();
          emit(this, "select-session", { id: session.id });
        } },
        // Someone else's session: the title gives way, the author's name is never cut.
        theirs ? h("span", { class: "title-text" }, title) : title,
        theirs ? h("span", { class: "author muted" }, ` · ${session.authorName}`) : null,
        inPinned && session.space ? h("span", { class: "author muted" }, ` · ${session.space.name}`)
          : null),
      h("span", { class: "row-actions" },
        // The count alone is shown (the title keeps its room in a 258 px sidebar); the
        // word is there for screen readers and in the tooltip.
        session.branchCount > 1 ? h("span", { class: "tag branches", title: `${session.branchCount} `
          + "branches of this conversation (an edited message or a regenerated reply); "
          + "switch between them on the cell" },
        `${session.branchCount}`, h("span", { class: "visually-hidden" }, " branches")) : null,
        session.pinned && !inPinned ? h("span", { class: "tag", title: "Pinned" }, "pinned") : null,
        session.archived ? h("span", { class: "tag", title: "Archived" }, "archived") : null,
        me && !theirs && session.visibility === "SPACE"
          ? h("span", { class: "tag", title: "Shared with the space" }, "shared") : null,
        theirs ? null : this.rowActions("session", session.id, title)));
  }

  rowActions(kind, id, name) {
    const confirm = (button) => armOrConfirm(button, `Confirm delete ${kind} ${name}`,
      () => emit(this, `delete-${kind}`, { id }));
    return [
      h("button", { type: "button", class: "icon", "aria-label": `Rename ${kind} ${name}`,
        title: "Rename", onclick: () => this.edit({ kind, id }) }, "✎"),
      h("button", { type: "button", class: "icon danger", "aria-label": `Delete ${kind} ${name}`,
        title: "Delete", onclick: (event) => confirm(event.currentTarget) }, "×"),
    ];
  }

  /** Open the "New space" name field (from the empty state too). */
  startNewSpace() {
    this.edit({ kind: "new-space" });
  }

  /** Bring a space's group into view, focused and briefly highlighted (a search hit);
   * false when the list has no such space. */
  showSpace(id) {
    const group = [...this.querySelectorAll(".space-group")].find((g) => g.dataset.space === id);
    if (!group) return false;
    group.tabIndex = -1;
    group.scrollIntoView({ block: "nearest" });
    group.focus({ preventScroll: true });
    group.classList.add("flash");
    setTimeout(() => group.classList.remove("flash"), 1600);
    return true;
  }

  isEditing(kind, id) {
    return this.editing?.kind === kind && this.editing.id === id;
  }

  edit(editing) {
    this.editing = editing;
    this.render();
    this.querySelector("input.inline-edit")?.select();
  }

  editor(value, label, commit) {
    const input = h("input", { class: "inline-edit", value, "aria-label": label,
      dataset: { keep: `edit:${this.editing.kind}:${this.editing.id ?? ""}` } });
    const finish = (save) => {
      const text = input.value.trim();
      this.editing = null;
      if (save && text) commit(text);
      else this.render();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") finish(true);
      if (event.key === "Escape") finish(false);
    });
    // Leaving the field cancels; being replaced by the next render (which keeps the text
    // and the focus in the new field) does not.
    input.addEventListener("blur", () => this.editing && input.isConnected && finish(false));
    return input;
  }
}

customElements.define("space-list", SpaceList);
