// Search results, in a dialog: the hits grouped by session, checkpoint and space,
// each with the server's snippet; "More results" reads the next page; the filters
// (this space only, one kind) search again. Opening a hit closes the dialog and
// sends `open-search-hit` up; each page is asked for with `search-page`.
import { emit, h, replace } from "../dom.js";
import { cellLabel, plural, sessionTitle } from "../format.js";

const KINDS = [["", "Everything"], ["TURN", "Messages"], ["CHECKPOINT", "Checkpoints"],
  ["SESSION", "Session titles"], ["SPACE", "Spaces"]];
const ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#x27;": "'" };
export const SYNTAX = "Words in any order, \"a phrase\" in quotes, word* for a prefix.";

/**
 * The API's snippet (escaped text with the matches in <mark>…</mark>) as text nodes
 * and <mark> elements: nothing in it is ever parsed as HTML, so a snippet that held
 * anything else would show as text.
 */
export function snippetNodes(snippet) {
  const nodes = [];
  let marked = false;
  for (const part of snippet.split(/(<\/?mark>)/)) {
    if (part === "<mark>" || part === "</mark>") {
      marked = part === "<mark>";
    } else if (part) {
      const text = part.replace(/&(?:amp|lt|gt|quot|#x27);/g, (entity) => ENTITIES[entity]);
      nodes.push(marked ? h("mark", {}, text) : text);
    }
  }
  return nodes;
}

/** Hits grouped in the order of each group's best hit: a session's turns (and its own
 * title hit) under the session; each checkpoint and each space on its own. */
export function groupHits(hits) {
  const groups = new Map();
  hits.forEach((hit, index) => {
    const turn = hit.kind === "TURN";
    const subject = turn ? hit.node.session : hit.node;
    const kind = turn ? "SESSION" : hit.kind;
    const key = `${kind}:${subject.id}`;
    if (!groups.has(key)) groups.set(key, { key, kind, subject, hits: [] });
    groups.get(key).hits.push({ ...hit, index });
  });
  return [...groups.values()];
}

function groupHeading({ kind, subject }) {
  if (kind === "SESSION") {
    return [h("span", { class: "tag kind" }, "Session"), " ", sessionTitle(subject), " ",
      h("span", { class: "muted" }, subject.space ? `in ${subject.space.name}` : "in no space")];
  }
  if (kind === "CHECKPOINT") {
    return [h("span", { class: "tag kind" }, "Checkpoint"), " ",
      h("span", { class: "hash" }, subject.shortHash), " ", subject.title, " ",
      h("span", { class: "muted" }, `in ${subject.space.name} · ${subject.branchName}`)];
  }
  return [h("span", { class: "tag kind" }, "Space"), " ", subject.name];
}

function hitLabel({ kind, node }) {
  if (kind === "TURN") return cellLabel(node);
  return { SESSION: "Title", CHECKPOINT: "Content", SPACE: "Name" }[kind];
}

const HIT_TITLES = { TURN: "Open the session at this message", SESSION: "Open this session",
  CHECKPOINT: "Show this checkpoint in its lineage", SPACE: "Show this space" };

export class SearchResults extends HTMLElement {
  constructor() {
    super();
    this.request = null; // the page asked for last: older answers are dropped
    this.hits = [];
    this.space = null;
  }

  connectedCallback() {
    if (this.dialog) return;
    this.heading = h("h2", { id: "search-heading" }, "Search results");
    this.spaceOnly = h("input", { type: "checkbox", onchange: () => this.run() });
    this.spaceName = h("span", {});
    this.scope = h("label", { class: "search-scope" }, this.spaceOnly, " Only in space ", this.spaceName);
    // Not inside its label: the options' text would become part of the label's.
    this.kind = h("select", { id: "search-kind", onchange: () => this.run() },
      KINDS.map(([value, label]) => h("option", { value }, label)));
    this.status = h("p", { class: "search-status", role: "status" });
    this.list = h("div", { class: "search-groups" });
    this.more = h("button", { type: "button", class: "more", hidden: true,
      onclick: () => this.run(this.cursor) }, "More results");
    this.dialog = h("dialog", { class: "search-dialog", "aria-labelledby": "search-heading" },
      h("div", { class: "dialog-head" }, this.heading,
        h("button", { type: "button", class: "icon", "aria-label": "Close search results",
          onclick: () => this.dialog.close() }, "×")),
      h("div", { class: "search-filters" }, this.scope,
        h("span", {}, h("label", { for: "search-kind" }, "Show"), " ", this.kind)),
      this.status, this.list, this.more);
    this.append(this.dialog);
  }

  /** Show the dialog and search `query` (in `space` when "Only in space" is ticked). */
  open(query, space) {
    this.query = query;
    this.space = space;
    this.scope.hidden = !space;
    this.spaceName.textContent = space?.name ?? "";
    if (!space) this.spaceOnly.checked = false;
    if (!this.dialog.open) this.dialog.showModal();
    this.run();
  }

  /** Ask for the first page (or the page after `after`). */
  run(after = null) {
    const query = this.query.trim();
    const spaceId = this.spaceOnly.checked && this.space ? this.space.id : null;
    const kinds = this.kind.value ? [this.kind.value] : null;
    this.request = { query, spaceId, kinds, after };
    this.more.disabled = true;
    if (!after) {
      this.hits = [];
      this.more.hidden = true;
      replace(this.list);
    }
    if (!query) {
      return this.say(`Type what to search for. ${SYNTAX}`);
    }
    this.say(after ? "Loading more results…" : "Searching…");
    this.list.setAttribute("aria-busy", "true");
    emit(this, "search-page", { request: this.request });
  }

  /** A page arrived (ignored unless it answers the latest request). */
  show(request, page) {
    if (request !== this.request) return;
    const first = this.hits.length;
    this.hits = [...this.hits, ...page.hits];
    this.cursor = page.cursor;
    this.list.removeAttribute("aria-busy");
    this.more.hidden = !page.hasMore;
    this.more.disabled = false;
    const quoted = `“${request.query}”`;
    if (!this.hits.length) {
      const narrowed = request.spaceId || request.kinds ? " with these filters" : "";
      return this.say(`No results for ${quoted}${narrowed}.`);
    }
    const count = plural(this.hits.length, "result");
    this.say(page.hasMore ? `The best ${count} for ${quoted}; more below.` : `${count} for ${quoted}.`);
    this.render();
    // After "More results", go on from the first new hit.
    if (request.after) this.list.querySelector(`[data-index="${first}"]`)?.focus();
  }

  /** The search failed: the server's message (a bad query says what is wrong with it). */
  fail(request, error) {
    if (request !== this.request) return;
    this.list.removeAttribute("aria-busy");
    this.more.disabled = false;
    const message = error.code === "INVALID" ? `That search cannot be run: ${error.message} ${SYNTAX}`
      : `The search failed: ${error.message}`;
    this.say(message, { error: true });
  }

  say(message, { error = false } = {}) {
    this.status.textContent = message;
    this.status.classList.toggle("error-text", error);
  }

  render() {
    replace(this.list, groupHits(this.hits).map((group) => h("section", { class: "search-group",
      dataset: { group: group.key } },
    h("h3", {}, groupHeading(group)),
    h("ul", {}, group.hits.map((hit) => h("li", {}, h("button", { type: "button", class: "hit",
      title: HIT_TITLES[hit.kind], dataset: { index: hit.index, kind: hit.kind },
      onclick: () => this.choose(hit) },
    h("span", { class: "hit-label" }, hitLabel(hit)), " ",
    h("span", { class: "snippet" }, snippetNodes(hit.snippet)))))))));
  }

  choose(hit) {
    this.dialog.close();
    emit(this, "open-search-hit", { kind: hit.kind, node: hit.node });
  }
}

customElements.define("search-results", SearchResults);
