// The UI's state and the only ways to change it. The state is private to the
// Store: `store.state` is a frozen snapshot (assigning to it throws), and
// `store.dispatch(action, ...args)` runs one of the named actions below, which
// returns the change to make (or null: nothing to change), applies it and tells
// the subscribers once. Components get state pushed down by <smriti-app>; none
// writes it.
//
// Answers that arrive late are settled here, in the action, not by counters
// beside the state: an answer names what it answers (the session shown when it
// was asked, the preview request, the message's key), and an action drops it when
// that is no longer what is shown.
import { placements } from "./format.js";

export const EMPTY_LINEAGE = { branches: [], nodes: [] };

// What the sidebar lists: all but the archived sessions (the default), only the
// archived ones, or those with a tag (`tag`, not archived).
export const ALL_SESSIONS = Object.freeze({ archived: false, tag: null });
export const ARCHIVED_SESSIONS = Object.freeze({ archived: true, tag: null });
export const taggedSessions = (tag) => Object.freeze({ archived: false, tag });

export const INITIAL = {
  spaces: [], unattached: [], pinned: [], sidebarFilter: ALL_SESSIONS, knownTags: [],
  providers: [], presets: [], chatDefault: "offline/echo",
  session: null, model: null, turns: [], hasOlder: false, cursor: null, loadingOlder: false,
  lineage: EMPTY_LINEAGE, placements: new Map(), plan: null, planAsked: null, showContext: false,
  pending: null, selectedId: null, formOpen: false, drawer: null, editing: null, branching: null,
  accounts: false, me: null, spaceView: null, createdSpaceId: null,
};

export class Store {
  #state;
  #subscribers = new Set();

  constructor(state = INITIAL) {
    this.#state = Object.freeze({ ...state });
  }

  get state() {
    return this.#state;
  }

  /** Call `subscriber(state, change, previous)` after each change; returns the unsubscribe. */
  subscribe(subscriber) {
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Run a named action; true when it changed the state. */
  dispatch(action, ...args) {
    const previous = this.#state;
    const change = action(previous, ...args);
    if (!change) return false;
    this.#state = Object.freeze({ ...previous, ...change });
    for (const subscriber of this.#subscribers) subscriber(this.#state, change, previous);
    return true;
  }
}

/** A message is on its way (one at a time). */
export const inFlight = (pending) => Boolean(pending) && pending.status !== "error";

// --- Actions: (state, ...args) => change | null ------------------------------

export const accountLoaded = (state, { accounts, name }) => ({ accounts, me: name });
export const providersLoaded = (state, { providers, chatDefault }) => ({ providers, chatDefault });
export const drawerSet = (state, drawer) => ({ drawer });
/** The user's presets (model + settings), for the model picker. */
export const presetsLoaded = (state, presets) => ({ presets });
/** A preset renamed (or otherwise changed): the same place in the list, as saved. */
export const presetRenamed = (state, preset) => ({
  presets: state.presets.map((one) => (one.id === preset.id ? preset : one)),
});
/** A preset deleted; sessions it was applied to keep their own copy of its settings. */
export const presetDeleted = (state, id) => ({ presets: state.presets.filter((one) => one.id !== id) });
export const modelChosen = (state, model) => ({ model });
export const contextToggled = (state) => ({ showContext: !state.showContext });
export const contextClosed = () => ({ showContext: false });
export const checkpointSelected = (state, id, drawer = state.drawer) => ({ selectedId: id, drawer });
export const formOpened = () => ({ formOpen: true });
export const formClosed = () => ({ formOpen: false });

/** A space created in this page: the first screen offers it for a new session. */
export const spaceCreated = (state, id) => ({ createdSpaceId: id });

/**
 * The sidebar as loaded under `filter` (dropped when another filter was chosen
 * since). The tags offered as filters: those of every session listed under "All"
 * (a tag no session has any more is dropped), plus, under another filter, those
 * seen before; a tag keeps the spelling it was first offered with.
 */
export function sidebarLoaded(state, { spaces, unattached, pinned = [] }, filter = ALL_SESSIONS) {
  if (!sameFilter(filter, state.sidebarFilter)) return null;
  const rows = [...spaces.flatMap((space) => space.sessions), ...unattached, ...pinned];
  let known = state.knownTags;
  if (sameFilter(filter, ALL_SESSIONS)) {
    const listed = new Set(rows.flatMap((row) => (row.tags ?? []).map(tagKey)));
    known = known.filter((tag) => listed.has(tagKey(tag)));
  }
  return { spaces, unattached, pinned, knownTags: tagsOf(known, rows) };
}

/** The sidebar's filter chosen (ALL_SESSIONS, ARCHIVED_SESSIONS or taggedSessions(tag)). */
export const sidebarFiltered = (state, filter) => (sameFilter(filter, state.sidebarFilter) ? null
  : { sidebarFilter: filter });

const sameFilter = (a, b) => a.archived === b.archived && a.tag === b.tag;

/** `known` and the rows' tags, one per key (as the server compares them), sorted. */
function tagsOf(known, rows) {
  const byKey = new Map(known.map((tag) => [tagKey(tag), tag]));
  for (const row of rows) {
    for (const tag of row.tags ?? []) if (!byKey.has(tagKey(tag))) byKey.set(tagKey(tag), tag);
  }
  return [...byKey.values()].sort((a, b) => a.localeCompare(b));
}

export const tagKey = (tag) => tag.split(/\s+/).filter(Boolean).join(" ").normalize("NFKC").toLowerCase();

/** No session and no space open. */
export const sessionClosed = () => ({
  session: null, turns: [], hasOlder: false, cursor: null, loadingOlder: false,
  lineage: EMPTY_LINEAGE, placements: new Map(), plan: null, planAsked: null, pending: null,
  selectedId: null, formOpen: false, spaceView: null, editing: null, branching: null,
});

/** A space opened on its own (?space=). */
export const spaceOpened = (state, id) => ({ ...sessionClosed(), spaceView: id });

/** A session opened: a new notebook (even when it is the one open), its newest turns. */
export function sessionOpened(state, session, page) {
  return { ...sessionClosed(), ...titled(state, session), session, model: session.model,
    turns: page.turns, hasOlder: page.hasOlder, cursor: page.cursor };
}

/**
 * The open session as a mutation returned it (renamed, attached, mounted…): the
 * header, the sidebar, the badge's inputs all change at once. Dropped when another
 * session is open by now.
 */
export function sessionChanged(state, session) {
  if (!session || state.session?.id !== session.id) return null;
  return { ...titled(state, session), session, knownTags: tagsOf(state.knownTags, [session]) };
}

/** The open session as loaded again, asked while `asked` was shown: dropped when
 * anything changed the session since (it is older than what is shown). */
export function sessionReloaded(state, session, asked) {
  if (state.session !== asked) return null;
  return sessionChanged(state, session);
}

const ROW_FIELDS = ["title", "pinned", "archived", "tags"];

/**
 * The sidebar's rows with this session's title, pin, archive and tags (where it is
 * listed): a session the filter no longer holds leaves it (archived under "All", a
 * tag removed…), a session pinned joins the Pinned group, unpinned leaves it.
 */
function titled({ spaces, unattached, pinned = [], sidebarFilter = ALL_SESSIONS }, session) {
  if (!session) return { spaces, unattached, pinned };
  const shown = holds(sidebarFilter, session);
  const differs = (row) => ROW_FIELDS.some((field) => String(row[field]) !== String(session[field]));
  const update = (rows) => {
    if (!rows.some((row) => row.id === session.id && (differs(row) || !shown))) return rows;
    return shown ? rows.map((row) => (row.id === session.id ? changedRow(row, session) : row))
      : rows.filter((row) => row.id !== session.id);
  };
  const changed = spaces.map((space) => {
    const sessions = update(space.sessions);
    return sessions === space.sessions ? space : { ...space, sessions };
  });
  const listed = pinned.find((row) => row.id === session.id);
  let pins = update(pinned);
  if (session.pinned && shown && !listed) pins = [changedRow({ id: session.id }, session), ...pins];
  if (!session.pinned && listed) pins = pins.filter((row) => row.id !== session.id);
  return { spaces: changed.some((space, i) => space !== spaces[i]) ? changed : spaces,
    unattached: update(unattached), pinned: pins };
}

const changedRow = (row, session) => ({ ...row, title: session.title, pinned: session.pinned,
  archived: session.archived, tags: session.tags, authorName: session.authorName,
  visibility: session.visibility, space: session.space ? { name: session.space.name } : null });

/** Whether the sidebar under `filter` lists this session. */
function holds(filter, session) {
  if (session.archived === undefined) return true; // a row without the fields: as it was
  if (Boolean(session.archived) !== filter.archived) return false;
  return filter.tag === null || (session.tags ?? []).some((tag) => tagKey(tag) === tagKey(filter.tag));
}

export const olderRequested = (state) => (state.loadingOlder ? null : { loadingOlder: true });

/** An older page of `sessionId` (null: it failed): dropped when another session is open. */
export function olderLoaded(state, sessionId, page) {
  if (state.session?.id !== sessionId) return null;
  if (!page) return { loadingOlder: false };
  return { turns: [...page.turns, ...state.turns], hasOlder: page.hasOlder, cursor: page.cursor,
    loadingOlder: false };
}

/** Where a lineage answer belongs: the session or space shown when it was asked. */
export const lineageKey = (state) => ({ sessionId: state.session?.id ?? null, spaceView: state.spaceView });

/**
 * The space's lineage and, when given, the preview asked with it ({request, plan};
 * its plan only while it is still the newest asked) and the open session as a
 * mutation returned it: the header, the sidebar, the badge, the `ctx:` line, the
 * graph and the notebook's checkpoint cells move together. Dropped when another
 * session or space is shown by now.
 */
export function lineageLoaded(state, key, lineage, preview = null, changed = null) {
  if (key.sessionId !== (state.session?.id ?? null) || key.spaceView !== state.spaceView) return null;
  if (changed && changed.id !== key.sessionId) return null;
  const session = changed ?? state.session;
  const placed = placements(lineage.nodes, session?.id);
  // A fork starts from its checkpoint: show it at the top of the notebook.
  const forked = session?.forkedFrom && lineage.nodes.find((n) => n.id === session.forkedFrom.id);
  if (forked && !placed.get(0)?.includes(forked)) placed.set(0, [forked, ...(placed.get(0) ?? [])]);
  const change = { lineage, placements: placed };
  if (changed) Object.assign(change, titled(state, changed), { session });
  const current = preview && state.planAsked === preview.request;
  return current ? { ...change, plan: preview.plan, planAsked: null } : change;
}

/** A contextPreview asked: only the newest one asked is shown when it answers. */
export const planRequested = (state, request) => ({ planAsked: request });

export function planLoaded(state, request, plan) {
  if (state.planAsked !== request || state.session?.id !== request.sessionId) return null;
  return { plan, planAsked: null };
}

/** A message (or a continuation) starts: one at a time. */
export const sendStarted = (state, pending) => (inFlight(state.pending) ? null : { pending });

/** The message with this key, changed (dropped when it is no longer the one shown). */
export function pendingChanged(state, key, change) {
  if (state.pending?.key !== key) return null;
  return { pending: { ...state.pending, ...change } };
}

/** Saved turns of `sessionId` (and the pending message's change), new ones only. */
export function turnsArrived(state, sessionId, turns, key = null, change = null) {
  if (state.session?.id !== sessionId) return null;
  const result = { turns: withNew(state.turns, turns) };
  if (key !== null && change && state.pending?.key === key) {
    result.pending = { ...state.pending, ...change };
  }
  return result;
}

/** The message with this key is done: its turns in, the error cell (or none). */
export function replyFinished(state, key, turns, pending) {
  if (state.pending?.key !== key) return null;
  return { turns: withNew(state.turns, turns), pending };
}

export const pendingDiscarded = () => ({ pending: null });

// --- Branches: an edited message or a regenerated reply makes a new branch ----------

/** The message at `seq` is being edited in place (one at a time). */
export const editStarted = (state, seq) =>
  (inFlight(state.pending) || state.branching !== null ? null : { editing: seq });
export const editCancelled = (state) => (state.editing === null ? null : { editing: null });

/** A branch is being made from the cell at `seq` (regenerate / editAndResend): one at a
 * time, never while a message is on its way. Opening the branch ends it (sessionClosed). */
export const branchRequested = (state, seq) =>
  (inFlight(state.pending) || state.branching !== null ? null : { branching: seq });

/** The branch could not be made (nothing was written): the cell as it was. */
export const branchFailed = (state, seq) => (state.branching === seq ? { branching: null } : null);

/** Turns not yet in the notebook, in order. */
export function withNew(turns, more) {
  const known = new Set(turns.map((turn) => turn.sequenceNumber));
  const added = more.filter((turn) => turn && !known.has(turn.sequenceNumber));
  return added.length ? [...turns, ...added.sort((a, b) => a.sequenceNumber - b.sequenceNumber)]
    : turns;
}

/**
 * What importSpace made or found ({spaces with their sessions, sessions in no
 * space}), in the sidebar at once: a space listed already takes the imported
 * rows, a new one (or a session) joins the end of its list.
 */
export function spacesImported(state, { spaces = [], sessions = [] }) {
  if (!spaces.length && !sessions.length) return null;
  const byId = new Map(spaces.map((space) => [space.id, space]));
  const kept = state.spaces.map((space) => (byId.has(space.id) ? byId.get(space.id) : space));
  const known = new Set(state.spaces.map((space) => space.id));
  const listed = new Set(state.unattached.map((session) => session.id));
  return {
    spaces: [...kept, ...spaces.filter((space) => !known.has(space.id))],
    unattached: [...state.unattached, ...sessions.filter((session) => !listed.has(session.id))],
  };
}
