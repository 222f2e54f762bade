// The session as a notebook. Renders only the pages the app has loaded, one
// <div class="page"> each (content-visibility: auto, so the browser skips
// off-screen pages); asks for older ones (load-older) when the sentinel at the top
// comes into view, keeping the scroll position when it prepends them.
import { emit, h, replace } from "../dom.js";
import { unanswered } from "../format.js";
import "./turn-cell.js";
import "./checkpoint-cell.js";

const PRELOAD = "800px 0px 0px 0px";

export class NotebookView extends HTMLElement {
  constructor() {
    super();
    this.cells = new Map(); // sequenceNumber -> <turn-cell>
    this.checkpointCells = new Map(); // checkpoint id -> <checkpoint-cell>
    this.data = { sessionId: null, turns: [], hasOlder: false, placements: new Map() };
    this.firstSeq = Infinity;
    this.lastSeq = -Infinity;
    this.onIntersect = (entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.requestOlder();
    };
  }

  connectedCallback() {
    this.scroller = this.closest(".centre") ?? document.scrollingElement;
    if (!this.sentinel) {
      this.sentinel = h("div", { class: "sentinel", "aria-hidden": "true" }, "Loading earlier turns…");
      this.list = h("div", { class: "cells" });
      this.tail = h("div", { class: "tail" });
      this.append(this.sentinel, this.list, this.tail);
    }
    this.observer = new IntersectionObserver(this.onIntersect,
      { root: this.scroller, rootMargin: PRELOAD });
    this.observer.observe(this.sentinel);
    // A reader at the end stays there while what is on screen settles after an update
    // (the composer shown once the session is open, cells laid out again when their
    // Edit/Regenerate tools arrive): the update scrolled to an end that then moved.
    // They are at the end until they scroll away themselves.
    // Only a move up leaves the end (a scroll down may land short of an end that has
    // since moved on, and is still meant for it).
    this.lastTop = this.scroller.scrollTop;
    this.onScroll = () => {
      const top = this.scroller.scrollTop;
      if (top < this.lastTop || this.nearBottom()) this.atEnd = this.nearBottom();
      this.lastTop = top;
    };
    this.scroller.addEventListener("scroll", this.onScroll, { passive: true });
    this.resized = new ResizeObserver(() => {
      if (this.atEnd && !this.nearBottom()) this.scroller.scrollTop = this.scroller.scrollHeight;
    });
    this.resized.observe(this);
    const composer = this.scroller.querySelector?.("composer-cell");
    if (composer) this.resized.observe(composer);
  }

  disconnectedCallback() {
    this.observer?.disconnect();
    this.resized?.disconnect();
    this.scroller?.removeEventListener("scroll", this.onScroll);
  }

  /** Everything the notebook shows, from the app's state. */
  update(data) {
    const previous = this.data;
    this.data = data;
    if (data.sessionId !== previous.sessionId) this.reset();
    const turns = data.turns;
    const first = this.firstSeq;
    const last = this.lastSeq;
    const older = this.cells.size
      ? turns.filter((t) => t.sequenceNumber < first && !this.cells.has(t.sequenceNumber)) : [];
    const newer = turns.filter((t) => t.sequenceNumber > last && !this.cells.has(t.sequenceNumber));
    if (older.length) this.prepend(older);
    if (newer.length) this.appendTurns(newer);
    const added = older.length + newer.length;
    if (data.bylines !== previous.bylines) {
      for (const cell of this.cells.values()) cell.byline = data.bylines;
    }
    if (added || data.placements !== previous.placements || data.mount !== previous.mount
      || data.bylines !== previous.bylines || data.readOnly !== previous.readOnly) {
      this.decorate(added && data.mount === previous.mount ? [...older, ...newer] : null);
    }
    this.sentinel.hidden = !data.hasOlder;
    const stick = this.nearBottom(); // before this update adds anything
    const reshaped = this.renderPending(data.pending, previous.pending);
    this.offerActions();
    this.markUnanswered();
    if (added || data.branches !== previous.branches) this.offerBranches();
    // New cells bring the end into view; streamed text, and the Edit/Regenerate rows
    // that arrive with the branches (a row per cell: a page of 50 grows ~500 px), only
    // if the reader is there.
    const grown = data.pending !== previous.pending || data.branches !== previous.branches;
    if (newer.length || reshaped || (grown && stick)) {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      this.atEnd = true;
    }
    if (data.hasOlder && !data.loadingOlder) requestAnimationFrame(() => this.checkSentinel());
  }

  reset() {
    this.cells.clear();
    this.checkpointCells.clear();
    this.marked = null;
    this.list.replaceChildren();
    this.firstSeq = Infinity;
    this.lastSeq = -Infinity;
  }

  cellFor(turn) {
    const cell = document.createElement("turn-cell");
    cell.byline = this.data.bylines;
    cell.turn = turn;
    this.cells.set(turn.sequenceNumber, cell);
    this.firstSeq = Math.min(this.firstSeq, turn.sequenceNumber);
    this.lastSeq = Math.max(this.lastSeq, turn.sequenceNumber);
    return cell;
  }

  prepend(turns) {
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    const page = h("div", { class: "page" });
    for (const turn of turns) page.append(this.cellFor(turn));
    this.list.prepend(page);
    if (this.list.children.length > 1) {
      this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
    }
  }

  appendTurns(turns) {
    const page = this.firstPage(this.list.lastElementChild);
    for (const turn of turns) page.append(this.cellFor(turn));
  }

  /** The given page, or a new empty one: cells only ever go into pages (a fork's
   * checkpoint cell shown before any turn must not become the page turns go into). */
  firstPage(page) {
    if (page) return page;
    const created = h("div", { class: "page" });
    this.list.append(created);
    return created;
  }

  /** Checkpoint cells after the turn they were saved at; the mount divider; dimming
   * (of `fresh` turns only when given: the boundary has not moved). */
  decorate(fresh = null) {
    const { placements, mount } = this.data;
    for (const element of this.list.querySelectorAll("checkpoint-cell, .mount-divider")) {
      element.remove();
    }
    const top = this.firstPage(this.list.firstElementChild);
    for (const [at, checkpoints] of placements) {
      const cells = checkpoints.map((checkpoint) => this.checkpointCell(checkpoint));
      if (at === 0 || at < this.firstSeq) {
        if (at === 0 || !this.data.hasOlder) top.prepend(...cells);
      } else {
        this.cells.get(at)?.after(...cells);
      }
    }
    const base = mount?.baseSequence ?? null;
    const dim = (seq) => this.cells.get(seq).classList.toggle("dimmed", base !== null && seq <= base);
    if (fresh) fresh.forEach((turn) => dim(turn.sequenceNumber));
    else this.cells.forEach((_, seq) => dim(seq));
    // Checkpoint cells above the divider are behind the boundary too.
    for (const [at, checkpoints] of placements) {
      for (const checkpoint of checkpoints) {
        this.checkpointCells.get(checkpoint.id)?.classList.toggle("dimmed", base !== null && at <= base);
      }
    }
    if (base === null) return;
    const divider = h("div", { class: "mount-divider", role: "separator" },
      `Mounted ${mount.checkpoint?.shortHash ?? ""} — turns above are not sent to the model`);
    let anchor = this.cells.get(base);
    if (!anchor) {
      if (base < this.firstSeq && !this.data.hasOlder) top.prepend(divider);
      return;
    }
    while (anchor.nextElementSibling?.localName === "checkpoint-cell") anchor = anchor.nextElementSibling;
    anchor.after(divider);
  }

  checkpointCell(checkpoint) {
    let cell = this.checkpointCells.get(checkpoint.id);
    if (!cell) {
      cell = document.createElement("checkpoint-cell");
      this.checkpointCells.set(checkpoint.id, cell);
    }
    cell.options = { byline: Boolean(this.data.bylines), readOnly: Boolean(this.data.readOnly) };
    cell.checkpoint = checkpoint;
    return cell;
  }

  nearBottom() {
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    return scrollHeight - scrollTop - clientHeight < 80;
  }

  /** Continue / Retry on the newest turn when it is an interrupted reply. */
  offerActions() {
    const last = this.data.turns.at(-1);
    const cell = last && this.cells.get(last.sequenceNumber);
    const offer = Boolean(cell && !this.data.pending && !this.data.readOnly && last.role === "ASSISTANT"
      && last.interrupted);
    if (this.offered && this.offered !== cell) this.offered.actions = false;
    if (cell) cell.actions = offer;
    this.offered = offer ? cell : null;
  }

  /** Edit / Regenerate on every cell (not on someone else's session, nor while a
   * message is on its way), and "‹ 2 / 3 ›" where the conversation has alternatives. */
  offerBranches() {
    const { alternatives = [], editable = false, editing = null, branching = null } =
      this.data.branches ?? {};
    const at = new Map(alternatives.map((entry) => [entry.sequenceNumber, entry]));
    for (const [seq, cell] of this.cells) {
      cell.branch = { editable, editing: editing === seq, busy: branching === seq,
        alternatives: at.get(seq) ?? null };
    }
  }

  /** "no reply — Retry" on every question left without a reply. */
  markUnanswered() {
    // Someone else's session (read-only): theirs to retry.
    const open = this.data.readOnly ? new Set() : unanswered(this.data.turns, this.data.pending);
    for (const seq of this.marked ?? []) {
      if (!open.has(seq) && this.cells.has(seq)) this.cells.get(seq).noReply = false;
    }
    for (const seq of open) if (this.cells.has(seq)) this.cells.get(seq).noReply = true;
    this.marked = open;
  }

  /** The cells of the message on its way; true when they changed shape (not just text). */
  renderPending(pending, previous) {
    if (pending === previous) return false;
    const shape = (p) => p && [p.key, p.status, p.userSaved, p.stoppable, p.text === ""].join("|");
    if (pending && this.streamBody && shape(pending) === shape(previous)
      && pending.text.startsWith(previous.text)) {
      this.streamBody.append(pending.text.slice(previous.text.length)); // only the new piece
      return false;
    }
    this.streamBody = null;
    if (!pending) {
      replace(this.tail);
      return Boolean(previous);
    }
    const cells = [];
    if (!pending.userSaved) {
      cells.push(h("div", { class: "cell turn user pending", tabindex: "0" },
        h("div", { class: "cell-gutter" }, "In [*]"),
        h("div", { class: "cell-main" }, h("div", { class: "cell-body plain" }, pending.content))));
    }
    if (pending.status !== "error") {
      cells.push(this.streamingCell(pending));
    } else {
      cells.push(h("div", { class: "cell error", tabindex: "0", role: "alert" },
        h("div", { class: "cell-gutter" }, "Error"),
        h("div", { class: "cell-main" },
          pending.errors.map((error) => h("p", {}, h("code", {}, error.code), " ", error.message)),
          h("div", { class: "actions" },
            h("button", { type: "button", onclick: () => emit(this, "retry-send") }, "Retry"),
            h("button", { type: "button", class: "ghost", onclick: () => emit(this, "discard-send") },
              "Dismiss")))));
    }
    replace(this.tail, cells);
    return true;
  }

  /** The reply as it arrives: plain text until the saved turn (with its Markdown) replaces it. */
  streamingCell(pending) {
    const stopping = pending.status === "stopping";
    const body = pending.text
      ? (this.streamBody = h("div", { class: "cell-body plain" }, pending.text))
      : h("div", { class: "thinking" }, stopping ? "Stopping…" : "Waiting for the reply…");
    return h("div", { class: "cell turn assistant pending", "aria-busy": "true" },
      h("div", { class: "cell-gutter" }, "Out [*]"),
      h("div", { class: "cell-main" },
        h("div", { class: "cell-meta" }, pending.model ?? "",
          stopping ? h("span", { class: "tag warn" }, "stopping") : null),
        body,
        pending.stoppable && !stopping ? h("div", { class: "actions" },
          h("button", { type: "button", title: "Stop the reply, keeping what has arrived (Esc)",
            onclick: () => emit(this, "stop-stream") }, "Stop")) : null));
  }

  requestOlder() {
    if (this.data.hasOlder && !this.data.loadingOlder) emit(this, "load-older");
  }

  checkSentinel() {
    if (this.sentinel.hidden) return;
    const top = this.sentinel.getBoundingClientRect().bottom;
    const rootTop = this.scroller.getBoundingClientRect().top;
    if (top > rootTop - 800) this.requestOlder();
  }

  /** Bring a checkpoint's cell into view (a checkpoint just saved); false when it has none. */
  scrollToCheckpoint(id) {
    const cell = this.checkpointCells.get(id);
    if (!cell?.isConnected) return false;
    cell.scrollIntoView({ block: "nearest" });
    return true;
  }

  /** Bring a turn into view and focus it (it must be loaded). */
  scrollToSequence(seq) {
    const cell = this.cells.get(seq);
    if (!cell) return false;
    cell.scrollIntoView({ block: "center" });
    cell.focus({ preventScroll: true });
    cell.classList.add("flash");
    setTimeout(() => cell.classList.remove("flash"), 1600);
    return true;
  }
}

customElements.define("notebook-view", NotebookView);
