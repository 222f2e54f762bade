// The session as a notebook. Renders only the pages the app has loaded, one
// <div class="page"> each (content-visibility: auto, so the browser skips
// off-screen pages); asks for older ones (load-older) when the sentinel at the top
// comes into view, keeping the scroll position when it prepends them.
import { emit, h, replace } from "../dom.js";
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
  }

  disconnectedCallback() {
    this.observer?.disconnect();
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
    if (added || data.placements !== previous.placements || data.mount !== previous.mount) {
      this.decorate(added && data.mount === previous.mount ? [...older, ...newer] : null);
    }
    this.sentinel.hidden = !data.hasOlder;
    this.renderPending(data.pending);
    if (newer.length || data.pending !== previous.pending) this.scroller.scrollTop = this.scroller.scrollHeight;
    if (data.hasOlder && !data.loadingOlder) requestAnimationFrame(() => this.checkSentinel());
  }

  reset() {
    this.cells.clear();
    this.checkpointCells.clear();
    this.list.replaceChildren();
    this.firstSeq = Infinity;
    this.lastSeq = -Infinity;
  }

  cellFor(turn) {
    const cell = document.createElement("turn-cell");
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
    let page = this.list.lastElementChild;
    if (!page) this.list.append((page = h("div", { class: "page" })));
    for (const turn of turns) page.append(this.cellFor(turn));
  }

  /** Checkpoint cells after the turn they were saved at; the mount divider; dimming
   * (of `fresh` turns only when given: the boundary has not moved). */
  decorate(fresh = null) {
    const { placements, mount } = this.data;
    for (const element of this.list.querySelectorAll("checkpoint-cell, .mount-divider")) {
      element.remove();
    }
    const top = this.list.firstElementChild ?? this.list;
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
    cell.checkpoint = checkpoint;
    return cell;
  }

  renderPending(pending) {
    if (!pending) return replace(this.tail);
    const cells = [];
    if (!pending.userSaved) {
      cells.push(h("div", { class: "cell turn user pending", tabindex: "0" },
        h("div", { class: "cell-gutter" }, "In [*]"),
        h("div", { class: "cell-main" }, h("div", { class: "cell-body plain" }, pending.content))));
    }
    if (pending.status === "sending") {
      cells.push(h("div", { class: "cell turn assistant pending" },
        h("div", { class: "cell-gutter" }, "Out [*]"),
        h("div", { class: "cell-main" }, h("div", { class: "thinking" }, "Waiting for the reply…"))));
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
