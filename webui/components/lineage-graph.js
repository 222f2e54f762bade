// Right pane: the space's lineage as an SVG graph, oldest checkpoint at the top, laid
// out by lineage-layout.js (lanes per live branch, edges that never pass another
// node), heads marked, the mounted checkpoint highlighted, branches with no checkpoint
// of their own as tips, merges ringed with a dashed edge from the line merged in.
// Click or Enter on a node sends select-checkpoint; the legend is <branch-list>.
import { emit, h, replace, sameState } from "../dom.js";
import { branchOrder, edgePath, layout, mergePath } from "../lineage-layout.js";
import "./branch-list.js";

const NS = "http://www.w3.org/2000/svg";
const LANE = 18;
const TOP = 18;
const LEFT = 14;
const LABEL_CHARS = 26;
// Rows are touch targets where there is no hover.
const rowHeight = () => (matchMedia("(hover: none), (pointer: coarse)").matches ? 44 : 30);

function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  for (const child of children) if (child) element.append(child);
  return element;
}

const clip = (text) => (text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text);

export class LineageGraph extends HTMLElement {
  constructor() {
    super();
    this.onClick = (event) => this.pick(event);
    this.onKeydown = (event) => {
      if (event.key === "Enter" || event.key === " ") this.pick(event);
    };
  }

  connectedCallback() {
    this.addEventListener("click", this.onClick);
    this.addEventListener("keydown", this.onKeydown);
  }

  disconnectedCallback() {
    this.removeEventListener("click", this.onClick);
    this.removeEventListener("keydown", this.onKeydown);
  }

  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { nodes = [], branches = [], mountedId = null, selectedId = null, spaceName,
      verification = null } = this._state ?? {};
    this.className = "lineage-graph";
    const title = h("div", { class: "pane-head" }, h("h2", {}, "Lineage"),
      spaceName ? h("span", { class: "muted" }, spaceName) : null,
      nodes.length ? verifiedMark(verification) : null);
    if (!nodes.length) {
      return replace(this, title, h("p", { class: "muted empty" }, spaceName
        ? "No checkpoints yet. Save one from the session." : "Attach the session to a space to see its lineage."));
    }
    const ROW = rowHeight();
    const order = branchOrder(nodes, branches);
    const colour = (name) => `lane-${order.indexOf(name) % 6}`;
    const { rows, lane, lanes, rowOf, merges } = layout(nodes, branches);
    // A branch's head is tagged on its checkpoint; a branch fast-forwarded onto
    // another branch's checkpoint (it has checkpoints of its own) is tagged there too.
    // A branch with none of its own is drawn as a tip instead.
    const own = new Set(nodes.map((node) => node.branchName));
    const headsOf = (node) => branches.filter((b) => b.head?.id === node.id &&
      (b.name === node.branchName || own.has(b.name))).map((b) => b.name);
    const isHead = (node) => headsOf(node).length > 0;
    const point = (key) => ({ x: LEFT + lane.get(key) * LANE, y: TOP + rowOf.get(key) * ROW });
    const labelX = LEFT + lanes * LANE;
    const edges = svg("g", { class: "edges" });
    for (const row of rows) {
      if (row.parentId === undefined || !rowOf.has(row.parentId)) continue;
      const parent = point(row.parentId);
      const { x, y } = point(row.key);
      edges.append(svg("path", { d: edgePath(parent.x, parent.y, x, y, ROW),
        class: `edge ${colour(row.branch)}${row.kind === "tip" ? " tip-edge" : ""}`,
        "data-from": row.parentId, "data-to": row.key }));
    }
    // A merge's second parent: a dashed edge from the checkpoint merged in, down the
    // lane the layout keeps for it.
    for (const merge of merges) {
      const source = point(merge.from);
      const { x, y } = point(merge.to);
      edges.append(svg("path", { d: mergePath(source.x, source.y, LEFT + merge.lane * LANE, x, y, ROW),
        class: `edge merge-edge ${colour(merge.branch)}`, "data-from": merge.from, "data-to": merge.to,
        "data-lane": merge.lane }));
    }
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const group = svg("g", { class: "nodes" });
    // The selected and mounted rows are shaded under the edges, so an edge ending at
    // such a node (a merge's turn into its lane) stays visible.
    const marks = svg("g", { class: "marks", "aria-hidden": "true" });
    for (const row of rows) {
      const { x, y } = point(row.key);
      if (row.kind === "tip") {
        group.append(svg("g", { class: `tip ${colour(row.branch)}`, "data-branch": row.branch },
          svg("circle", { cx: x, cy: y, r: 4 }),
          svg("text", { x: labelX, y: y + 4 }, svg("tspan", { class: "head-tag" }, row.branch),
            svg("tspan", { dx: 6, class: "tip-note" }, "no checkpoint yet"))));
        continue;
      }
      const node = row.node;
      const classes = ["node", colour(node.branchName)];
      if (node.id === mountedId) classes.push("mounted");
      if (node.id === selectedId) classes.push("selected");
      if (isHead(node)) classes.push("head");
      if (node.mergeParent) classes.push("merge");
      const shade = ["mounted", "selected"].filter((name) => classes.includes(name));
      if (shade.length) {
        marks.append(svg("rect", { class: `mark ${shade.join(" ")}`, x: 2, y: y - ROW / 2 + 2,
          width: "100%", height: ROW - 4, rx: 5 }));
      }
      const broken = brokenReason(node, verification);
      if (broken) classes.push("broken");
      const title = clip(node.title);
      const heads = headsOf(node);
      // The alarm's mark sits by the hash, where a long title cannot push it out of view.
      // Words are apart by spaces, not offsets: the text read out is the text shown.
      const words = [svg("tspan", { class: "hash" }, node.shortHash),
        broken ? svg("tspan", { class: "broken-tag" }, "⚠ altered") : null,
        svg("tspan", {}, title), ...heads.map((name) => svg("tspan", { class: "head-tag" }, name))]
        .filter(Boolean);
      const label = svg("text", { x: labelX, y: y + 4, class: "label" },
        ...words.flatMap((word, index) => (index ? [" ", word] : [word])));
      // The accessible name starts with the text shown (WCAG 2.5.3, label in name),
      // then says the rest: the whole title when it is cut, the branch, the state.
      const shown = [node.shortHash, broken ? "⚠ altered" : null, title, ...heads]
        .filter(Boolean).join(" ");
      const item = svg("g", { class: classes.join(" "), tabindex: "0", role: "button",
        "data-id": node.id,
        "aria-label": `${shown}${title === node.title ? "" : ` (${node.title})`}` +
          `, checkpoint on ${node.branchName}` +
          `${mergeNote(node, byId)}${isHead(node) ? " (head)" : ""}` +
          `${node.id === mountedId ? " (mounted)" : ""}${broken ? `: ${broken}` : ""}` },
        svg("rect", { class: "hit", x: 2, y: y - ROW / 2 + 2, width: "100%", height: ROW - 4, rx: 5 }),
        svg("circle", { cx: x, cy: y, r: isHead(node) ? 6 : 5 }),
        node.mergeParent ? svg("circle", { class: "merge-ring", cx: x, cy: y, r: 9 }) : null, label);
      group.append(item);
    }
    const chart = svg("svg", { class: "graph", width: "100%", height: TOP + rows.length * ROW,
      role: "group", "aria-label": "Checkpoint lineage" }, marks, edges, group);
    this.branchList ??= document.createElement("branch-list");
    this.branchList.state = { order, branches, nodes, canMerge: this._state.canMerge ?? true,
      currentBranch: this._state.currentBranch ?? null };
    replace(this, title, this.branchList, chart);
  }

  pick(event) {
    const node = event.target.closest?.("g.node");
    if (!node) return;
    event.preventDefault();
    emit(this, "select-checkpoint", { id: node.dataset.id });
  }
}

customElements.define("lineage-graph", LineageGraph);

/** ", merge of <branch> into <branch>" for a merge checkpoint ("" otherwise); the
 * merged-in checkpoint's short hash when it is not in the graph. */
function mergeNote(node, byId) {
  if (!node.mergeParent) return "";
  const from = byId.get(node.mergeParent.id);
  const what = from ? `${from.branchName} (${from.shortHash})` : node.mergeParent.shortHash;
  return `, merge of ${what} into ${node.branchName}`;
}

/** Why ``node`` fails verification (the first checkpoint that does), else null. */
export function brokenReason(node, verification) {
  const first = verification && !verification.ok ? verification.firstBroken : null;
  if (!first || first.checkpoint.id !== node.id) return null;
  return first.reason === "MISSING_PARENT" ? "its parent is missing" : "its hash does not match";
}

/** "Verified" when every hash and parent link of the space recomputes; an alarm naming
 * the first checkpoint that does not (its stored fields were changed behind Smriti). */
function verifiedMark(verification) {
  if (!verification) return null;
  if (verification.ok) {
    return h("span", { class: "verified", title: `All ${verification.checked} checkpoint ` +
      "hashes and parent links recompute." }, "✓ verified");
  }
  const { checkpoint } = verification.firstBroken;
  const why = brokenReason(checkpoint, verification);
  return h("span", { class: "tampered", role: "alert" },
    `⚠ Lineage altered: checkpoint ${checkpoint.shortHash} “${checkpoint.title}”: ${why}.`);
}
