// Pure formatting rules shared by components.

/** "~812 tokens", "~3.1k tokens". */
export function tokens(count) {
  if (count < 1000) return `~${count} tokens`;
  const thousands = count / 1000;
  return `~${thousands >= 100 ? Math.round(thousands) : thousands.toFixed(1)}k tokens`;
}

export const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** The checkpoint the plan is anchored on: the newest of its chain (oldest first). */
export const anchor = (plan) => plan?.checkpoints?.at(-1) ?? null;

/** "FRESH", "HEAD · a1b2c3d", "MOUNTED · a1b2c3d"; a branch with no checkpoint yet:
 * "HEAD · no checkpoint yet" (the modes' names are the design's, everywhere). */
export function badge(plan) {
  if (!plan) return "";
  if (plan.mode === "FRESH") return "FRESH";
  return `${plan.mode} · ${anchor(plan)?.shortHash ?? "no checkpoint yet"}`;
}

/** Memory scopes in words, as the header shows and changes them. */
export const MEMORY_SCOPES = [["LATEST_1", "latest checkpoint"], ["LATEST_3", "latest 3 checkpoints"]];

/**
 * The state a checkpoint saved now starts from: the head of the session's branch
 * (its parent once saved), from the lineage already loaded; null when the branch
 * has no checkpoint yet. Shaped like draftCheckpoint's `carried`.
 */
export function carriedFrom(lineage, branchName) {
  const headId = lineage.branches.find((branch) => branch.name === branchName)?.head?.id;
  const head = lineage.nodes.find((node) => node.id === headId);
  return head ? { ...head, checkpoint: head } : null;
}

/**
 * The checkpoint that fails verification (loadLineage marks it `broken`) among those
 * a checkpoint saved now on `branchName` would descend from: the branch's head and
 * its ancestors, merge parents included; null when there is none (or the break is
 * on another line only).
 */
export function brokenOnLine(lineage, branchName) {
  const byId = new Map(lineage.nodes.map((node) => [node.id, node]));
  const todo = [lineage.branches.find((branch) => branch.name === branchName)?.head?.id];
  const seen = new Set();
  while (todo.length) {
    const node = byId.get(todo.pop());
    if (!node || seen.has(node.id)) continue;
    if (node.broken) return node;
    seen.add(node.id);
    todo.push(node.parent?.id, node.mergeParent?.id);
  }
  return null;
}

/** "ctx: MOUNTED · a1b2c3d (2 checkpoints, 5 turns, ~3.1k tokens)". */
export function status(plan) {
  if (!plan) return "ctx: …";
  const parts = [plural(plan.checkpoints.length, "checkpoint"), plural(plan.turns.length, "turn"),
    tokens(plan.tokenEstimate)];
  return `ctx: ${badge(plan)} (${parts.join(", ")})`;
}

/** "In [2]" and its reply "Out [2]", as in Jupyter: cells numbered by exchange (the
 * server's Turn.exchangeNumber: the notebook may not have loaded the turns before); a
 * reply shows its question's number. The sequence number is in the title (cellTitle). */
export const cellLabel = (turn) =>
  `${{ USER: "In", ASSISTANT: "Out", SYSTEM: "Note" }[turn.role] ?? turn.role} [${turn.exchangeNumber ?? " "}]`;

/** The real sequence number, for the label's tooltip: "Turn 4, the reply to turn 3";
 * a continuation: "Turn 5, continuing turn 4". */
export const cellTitle = (turn) => `Turn ${turn.sequenceNumber}${turn.continuesSequence
  ? `, continuing turn ${turn.continuesSequence}`
  : turn.replyToSequence ? `, the reply to turn ${turn.replyToSequence}` : ""}`;

// Why a reply stopped, in the label a reply shows (none for a reply that finished):
// the words, what they mean, and whether the reply is cut off (Continue goes on from it).
const STOPPED = {
  LENGTH: ["Stopped: token limit",
    "The model reached the token limit for one answer before it finished.", true],
  INTERRUPTED: ["Stopped: interrupted",
    "The reply was stopped before the model finished (Stop, a closed page, a server restart).", true],
  LOST_CONNECTION: ["Stopped: connection lost",
    "The connection to the provider was lost before the model finished.", true],
  CONTENT_FILTER: ["Stopped: content filter", "The provider's content filter stopped the reply.", false],
  TOOL_CALLS: ["Stopped: tool call", "The model stopped to call a tool; Smriti runs none.", false],
};

/** {text, title, cutOff} for a reply that did not simply finish, else null. */
export function finishLabel(turn) {
  if (turn.role !== "ASSISTANT") return null;
  const reason = turn.finishReason;
  if (reason === "OTHER") {
    const word = turn.providerFinishReason;
    return { text: `Stopped: ${word ?? "unknown reason"}`, cutOff: false,
      title: word ? `The provider's reason, which Smriti does not know: “${word}”.`
        : "The provider gave no reason." };
  }
  if (STOPPED[reason]) {
    const [text, title, cutOff] = STOPPED[reason];
    return { text, title, cutOff };
  }
  // Saved before reasons were recorded: only whether it was cut off is known.
  return !reason && turn.interrupted
    ? { text: "Stopped: interrupted", title: "The reply was cut off before the model finished.",
      cutOff: true }
    : null;
}

export const sessionTitle = (session) => session?.title || "Untitled session";

/** Checkpoints saved from this session, keyed by the turn they follow (0 = the top):
 * the session's last turn when saved (its baseSequence), as the exports place them. */
export function placements(nodes, sessionId) {
  const after = new Map();
  for (const node of nodes) {
    if (node.sourceSession?.id !== sessionId) continue;
    const at = node.baseSequence ?? node.sourceTurnRange?.last ?? 0;
    if (!after.has(at)) after.set(at, []);
    after.get(at).push(node);
  }
  return after;
}

/**
 * Sequence numbers of the user turns left without a reply (a failed provider call
 * keeps the question): not the message on its way, nor one asked again and answered.
 */
export function unanswered(turns, pending = null) {
  const replied = new Set(turns.map((turn) => turn.replyToSequence).filter(Boolean));
  const questions = turns.filter((turn) => turn.role === "USER");
  const lastAnswered = new Map(); // text -> the newest answered turn asking it
  for (const turn of questions) {
    if (replied.has(turn.sequenceNumber)) lastAnswered.set(turn.content, turn.sequenceNumber);
  }
  return new Set(questions.filter((turn) => !replied.has(turn.sequenceNumber)
    && turn.sequenceNumber !== pending?.userSeq
    && !(lastAnswered.get(turn.content) > turn.sequenceNumber))
    .map((turn) => turn.sequenceNumber));
}

/** "by ana", or "by ana via nightly-script" for something written with an API token. */
export const byline = (author) =>
  author ? `by ${author.name}${author.viaToken ? ` via ${author.viaToken}` : ""}` : "";

/** "an owner", "an editor", "a viewer". */
export const aRole = (role) => `${role === "VIEWER" ? "a" : "an"} ${role.toLowerCase()}`;

/** Roles in words, as the members dialog offers them. */
export const ROLES = [["OWNER", "Owner"], ["EDITOR", "Editor"], ["VIEWER", "Viewer"]];

/**
 * What the signed-in user may do where they are: `role` in the space (null: none),
 * `readOnly` (someone else's shared session), `canSave` checkpoints, `canMerge`,
 * `bylines` (the space has more than one member). Without accounts: everything.
 */
export function access({ accounts, me, session, space }) {
  const role = space?.viewerRole ?? null;
  const readOnly = Boolean(accounts && session && session.authorName !== me);
  const editor = role === "OWNER" || role === "EDITOR";
  return { role, readOnly, canSave: Boolean(session?.space) && editor && !readOnly,
    canMerge: editor, bylines: Boolean(accounts && (space?.members?.length ?? 0) > 1) };
}

/** A turn's or a session's settings in one short line ("temperature 0.3 · stop 2"), or "". */
export function settingsSummary(settings) {
  if (!settings) return "";
  const parts = [];
  if (settings.instructions) parts.push("instructions");
  if (settings.temperature !== null && settings.temperature !== undefined) {
    parts.push(`temperature ${settings.temperature}`);
  }
  if (settings.topP !== null && settings.topP !== undefined) parts.push(`top_p ${settings.topP}`);
  if (settings.maxOutputTokens) parts.push(`max ${settings.maxOutputTokens} tokens`);
  if (settings.stop?.length) parts.push(`stop ${settings.stop.map((s) => JSON.stringify(s)).join(", ")}`);
  return parts.join(" · ");
}

/** The settings a reply was asked with, in full: its tag's tooltip. */
export function settingsTitle(settings) {
  const lines = ["Asked with these settings:"];
  if (settings.instructions) lines.push(`Instructions: ${settings.instructions}`);
  const rest = settingsSummary({ ...settings, instructions: null });
  if (rest) lines.push(rest);
  return lines.join("\n");
}
