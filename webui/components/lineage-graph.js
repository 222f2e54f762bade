// Right pane: the space's lineage as an SVG graph. One lane (column) per branch,
// oldest checkpoint at the top, parent links drawn, heads marked, the mounted
// checkpoint highlighted. Click or Enter on a node sends select-checkpoint.
import { emit, h, replace, sameState } from "../dom.js";

const NS = "http://www.w3.org/2000/svg";
const ROW = 30;
const LANE = 18;
const TOP = 18;
const LEFT = 14;
const LABEL_CHARS = 30;

function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  for (const child of children) element.append(child);
  return element;
}

const clip = (text) => (text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text);

/** Lane per branch: main first, then in order of each branch's first checkpoint. */
export function lanes(nodes) {
  const order = ["main"];
  for (const node of nodes) if (!order.includes(node.branchName)) order.push(node.branchName);
  return new Map(order.map((name, index) => [name, index]));
}

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
    const { nodes = [], branches = [], mountedId = null, selectedId = null, spaceName } =
      this._state ?? {};
    this.className = "lineage-graph";
    const title = h("div", { class: "pane-head" }, h("h2", {}, "Lineage"),
      spaceName ? h("span", { class: "muted" }, spaceName) : null);
    if (!nodes.length) {
      return replace(this, title, h("p", { class: "muted empty" }, spaceName
        ? "No checkpoints yet. Save one from the session." : "Attach the session to a space to see its lineage."));
    }
    const lane = lanes(nodes);
    const heads = new Map(branches.filter((b) => b.head).map((b) => [b.head.id, b.name]));
    const position = new Map(nodes.map((node, row) =>
      [node.id, { x: LEFT + lane.get(node.branchName) * LANE, y: TOP + row * ROW }]));
    const labelX = LEFT + lane.size * LANE;
    const edges = svg("g", { class: "edges" });
    for (const node of nodes) {
      const parent = node.parent && position.get(node.parent.id);
      if (!parent) continue;
      const { x, y } = position.get(node.id);
      const d = parent.x === x ? `M${x},${parent.y} L${x},${y}`
        : `M${parent.x},${parent.y} C${parent.x},${y - ROW / 2} ${x},${parent.y + ROW / 2} ${x},${y}`;
      edges.append(svg("path", { d, class: `edge lane-${lane.get(node.branchName) % 6}` }));
    }
    const group = svg("g", { class: "nodes" });
    for (const node of nodes) {
      const { x, y } = position.get(node.id);
      const classes = ["node", `lane-${lane.get(node.branchName) % 6}`];
      if (node.id === mountedId) classes.push("mounted");
      if (node.id === selectedId) classes.push("selected");
      if (heads.has(node.id)) classes.push("head");
      const label = svg("text", { x: labelX, y: y + 4 },
        svg("tspan", { class: "hash" }, node.shortHash), svg("tspan", { dx: 6 }, clip(node.title)));
      if (heads.has(node.id)) label.append(svg("tspan", { dx: 6, class: "head-tag" }, heads.get(node.id)));
      const item = svg("g", { class: classes.join(" "), tabindex: "0", role: "button",
        "data-id": node.id,
        "aria-label": `Checkpoint ${node.shortHash} ${node.title} on ${node.branchName}` +
          `${heads.has(node.id) ? " (head)" : ""}${node.id === mountedId ? " (mounted)" : ""}` },
        svg("rect", { class: "hit", x: 2, y: y - ROW / 2 + 2, width: "100%", height: ROW - 4, rx: 5 }),
        svg("circle", { cx: x, cy: y, r: heads.has(node.id) ? 6 : 5 }), label);
      group.append(item);
    }
    const chart = svg("svg", { class: "graph", width: "100%", height: TOP + nodes.length * ROW,
      role: "group", "aria-label": "Checkpoint lineage" }, edges, group);
    replace(this, title, h("div", { class: "legend muted" },
      [...lane.keys()].map((name) => h("span", { class: `lane-key lane-${lane.get(name) % 6}` }, name))),
      chart);
  }

  pick(event) {
    const node = event.target.closest?.("g.node");
    if (!node) return;
    event.preventDefault();
    emit(this, "select-checkpoint", { id: node.dataset.id });
  }
}

customElements.define("lineage-graph", LineageGraph);
