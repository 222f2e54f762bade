// Page-wide single-key shortcuts (ignored while typing or in a dialog).
const KEYS = { "?": "help", j: "next", k: "previous", i: "compose", s: "checkpoint",
  Escape: "stop", "/": "search" };

/** The action a keydown asks for, or null. */
export function keyAction(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return null;
  const target = event.target;
  if (target.closest?.("input, textarea, select, [contenteditable], dialog")) return null;
  return KEYS[event.key] ?? null;
}
