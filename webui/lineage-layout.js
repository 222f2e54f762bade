// Where the lineage graph puts each checkpoint: pure geometry, no DOM.
//
// One row per checkpoint, oldest first; one lane (column) per branch while the
// branch is alive — from the row it forks at to its last checkpoint — so lanes are
// reused and the graph stays narrow with many branches. A branch with no checkpoint
// of its own gets a "tip" row right under the checkpoint it starts from. Edges leave
// the parent downwards, turn into the child's lane before the next row and run down
// that lane, which belongs to the child's branch: an edge never passes a node it
// does not end at.
//
// A merge's second edge (mergeParent → merge checkpoint) runs the other way: down
// the merged line's lane, turning into the merge's lane in the half row above it.
// The merged branch's lane stays alive down to the merge row for it; when that lane
// holds another checkpoint of the branch on the way (a checkpoint merged from the
// middle of its line), the edge gets a lane of its own for those rows instead.

/** Branch names in legend order: main, then by first appearance (own checkpoint or head). */
export function branchOrder(nodes, branches) {
  const order = ["main"];
  const add = (name) => !order.includes(name) && order.push(name);
  for (const node of nodes) add(node.branchName);
  for (const branch of branches) add(branch.name);
  return order;
}

/**
 * rows: [{kind: "node", node} | {kind: "tip", branch, parentId}] in drawing order;
 * lane: Map(node id or "tip:<branch>") -> lane index; lanes: how many;
 * merges: [{from, to, branch, lane}] — each second-parent edge, the lane it runs
 * down (its source's lane, or one of its own) and the branch it comes from.
 */
export function layout(nodes, branches) {
  const own = new Set(nodes.map((node) => node.branchName));
  const tipsAt = new Map(); // head id -> empty branches starting there
  for (const branch of branches) {
    if (own.has(branch.name) || !branch.head) continue;
    if (!tipsAt.has(branch.head.id)) tipsAt.set(branch.head.id, []);
    tipsAt.get(branch.head.id).push(branch.name);
  }
  const rows = [];
  for (const node of nodes) {
    rows.push({ kind: "node", node, key: node.id, branch: node.branchName, parentId: node.parent?.id });
    for (const name of tipsAt.get(node.id) ?? []) {
      rows.push({ kind: "tip", branch: name, key: `tip:${name}`, parentId: node.id });
    }
  }
  const rowOf = new Map(rows.map((row, index) => [row.key, index]));
  // Each branch is alive from the row of its first parent (or first row) to its last row.
  const span = new Map();
  rows.forEach((row, index) => {
    const from = row.parentId !== undefined && rowOf.has(row.parentId) ? rowOf.get(row.parentId) : index;
    const known = span.get(row.branch);
    span.set(row.branch, known ? { start: Math.min(known.start, from), end: index }
      : { start: from, end: index });
  });
  const merges = mergeEdges(rows, rowOf);
  for (const merge of merges) {
    const known = span.get(merge.branch);
    // An edge with a lane of its own is keyed by itself: it never meets a branch name.
    if (merge.own) span.set(merge, { start: merge.start, end: merge.end });
    else span.set(merge.branch, { start: known.start, end: Math.max(known.end, merge.end) });
  }
  // Greedy interval colouring, main first on lane 0: a lane is free again after the
  // row its last branch ended on.
  const laneOfBranch = new Map(); // branch name (or own-lane merge edge) -> lane
  const freeAfter = []; // lane -> last busy row
  const byStart = [...span.entries()].sort(([a, x], [b, y]) =>
    (a === "main" ? -1 : b === "main" ? 1 : x.start - y.start));
  for (const [name, { start, end }] of byStart) {
    let lane = freeAfter.findIndex((last) => last < start);
    if (name === "main" || lane === -1) lane = freeAfter.length;
    freeAfter[lane] = end;
    laneOfBranch.set(name, lane);
  }
  const lane = new Map(rows.map((row) => [row.key, laneOfBranch.get(row.branch)]));
  const edges = merges.map((merge) => ({ from: merge.from, to: merge.to, branch: merge.branch,
    lane: laneOfBranch.get(merge.own ? merge : merge.branch) }));
  return { rows, lane, lanes: Math.max(1, freeAfter.length), rowOf, merges: edges };
}

/** The second-parent edges whose two ends are drawn, with the rows they span; `own`
 * when a checkpoint of the merged branch sits in its lane between the two ends. */
function mergeEdges(rows, rowOf) {
  const merges = [];
  rows.forEach((row, end) => {
    const from = row.node?.mergeParent?.id;
    if (from === undefined || !rowOf.has(from)) return;
    const start = rowOf.get(from);
    const branch = rows[start].branch;
    const own = rows.slice(start + 1, end).some((between) => between.branch === branch);
    merges.push({ from, to: row.key, branch, start, end, own });
  });
  return merges;
}

/** The SVG path of an edge from (px, py) to (x, y), rows `step` apart. */
export function edgePath(px, py, x, y, step) {
  if (px === x) return `M${px},${py} L${x},${y}`;
  const turn = py + step / 2;
  return `M${px},${py} C${px},${turn} ${x},${py} ${x},${turn} L${x},${y}`;
}

/**
 * The SVG path of a merge edge from (px, py) to (x, y) running down lane x `via`:
 * into that lane in the half row under the source (when it is not the source's),
 * down it, and into the merge's lane in the half row above the merge.
 */
export function mergePath(px, py, via, x, y, step) {
  const half = step / 2;
  const start = via === px ? `M${px},${py}`
    : `M${px},${py} C${px},${py + half} ${via},${py} ${via},${py + half}`;
  if (via === x) return `${start} L${x},${y}`;
  return `${start} L${via},${y - half} C${via},${y} ${x},${y - half} ${x},${y}`;
}
