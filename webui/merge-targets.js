// Where a checkpoint can be merged: the branches that do not have it yet. A branch
// whose head is the checkpoint, or descends from it (by parent or merge parent),
// already contains it — "Merge into…" there would find nothing to merge.

/** Whether `ancestorId` is `headId` or one of its ancestors in `nodes`. */
export function contains(nodes, headId, ancestorId) {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const seen = new Set();
  const todo = [headId];
  while (todo.length) {
    const id = todo.pop();
    if (!id || seen.has(id)) continue;
    if (id === ancestorId) return true;
    seen.add(id);
    const node = byId.get(id);
    if (node) todo.push(node.parent?.id, node.mergeParent?.id);
  }
  return false;
}

/** The branches checkpoint `fromId` can be merged into, the branch the user is on
 * (`current`) first so that it is the default; `except`: a branch never offered
 * (the one merged from). */
export function mergeTargets(branches, nodes, fromId, current = null, except = null) {
  const targets = branches.filter((branch) => branch.name !== except && branch.head
    && !contains(nodes, branch.head.id, fromId));
  const mine = targets.findIndex((branch) => branch.name === current);
  return mine > 0 ? [targets[mine], ...targets.slice(0, mine), ...targets.slice(mine + 1)] : targets;
}
