// What <smriti-app> does for each CustomEvent its children send up. Each handler
// runs with `this` = the app; it reads `this.state` and changes it only through
// store.js's named actions (`this.dispatch`); none keeps state of its own.
import * as api from "./api.js";
import { loadDraft } from "./drafts.js";
import { carriedFrom } from "./format.js";
import { forgetKey, keyFor, rememberKey } from "./message-keys.js";
import { importHandlers } from "./import-handlers.js";
import { searchHandlers } from "./search-handlers.js";
import * as actions from "./store.js";
import { inFlight } from "./store.js";

const newKey = () =>
  globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(16).slice(2)}`;

const STOP_POLLS = 20; // × 100 ms: the server saves a stopped reply right after the stream closes
// ms before each look for the automatic title (30 s in all, a title written at
// any time in them shown at most 5 s later): see awaitTitle.
const TITLE_WAITS = [1000, 1000, 2000, 2000, 3000, 3000, 4000, 4000, 5000, 5000];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new message (new idempotencyKey), sent at once. */
function startSend(app, content, model) {
  const started = app.dispatch(actions.sendStarted, { content, model, key: newKey(),
    status: "sending", errors: [], userSaved: false, text: "", stoppable: true, controller: null });
  return started ? deliver(app) : undefined;
}

/** Continue a cut-off reply (continueReply): the rest streams in as the next reply,
 * written by the reply's own model. */
function startContinue(app, reply) {
  if (!reply) return undefined;
  const started = app.dispatch(actions.sendStarted, { continues: reply.sequenceNumber,
    turnId: reply.id, content: "", model: reply.provider ? `${reply.provider}/${reply.model}` : null,
    key: newKey(), status: "streaming", errors: [], userSaved: true, text: "", stoppable: true,
    controller: null });
  return started ? deliver(app) : undefined;
}

const continuing = (pending) => pending.continues !== undefined;

/**
 * messageStream (continueReplyStream for a continuation); when no stream can be
 * opened, sendMessage with the same idempotencyKey (continueReply, which gives a
 * reply continued already its continuation back).
 */
async function* replyEvents(app, input, controller, key) {
  const continued = continuing(app.state.pending);
  try {
    yield* (continued ? api.streamContinuation : api.streamMessage)(input, controller.signal);
  } catch (error) {
    if (!(error instanceof api.StreamUnavailable)) throw error;
    app.dispatch(actions.pendingChanged, key, { stoppable: false }); // a mutation cannot be stopped
    yield* (continued ? api.continueReplyEvents : api.sendMessageEvents)(input);
  }
}

/**
 * Send (or resend) the pending message, its reply streamed into the notebook; the
 * same idempotencyKey on every try (or continue the pending continuation's reply).
 * Ends with the saved turns in the notebook and either no pending message or an
 * error cell.
 */
async function deliver(app) {
  const key = app.state.pending.key;
  const sessionId = app.state.session.id;
  const controller = new AbortController();
  // Another session opened, or the message dismissed: its key is no longer the
  // pending one, and the actions below drop what still arrives for it.
  const ours = () => app.state.session?.id === sessionId && app.state.pending?.key === key;
  app.dispatch(actions.pendingChanged, key, { controller });
  const pending = app.state.pending;
  const input = continuing(pending) ? { turnId: pending.turnId }
    : { sessionId, content: pending.content, model: pending.model, idempotencyKey: key };
  let outcome = { errors: [{ code: "NETWORK", message: "The reply stream ended early." }] };
  try {
    for await (const event of replyEvents(app, input, controller, key)) {
      // Another session opened meanwhile: let the reply finish (it is saved) unseen.
      if (!ours()) continue;
      if (event.__typename === "StreamUserTurn") {
        rememberKey(sessionId, event.userTurn.sequenceNumber, key);
        const status = app.state.pending.status === "sending" ? "streaming" : app.state.pending.status;
        app.dispatch(actions.turnsArrived, sessionId, [event.userTurn], key,
          { userSaved: true, userSeq: event.userTurn.sequenceNumber, status });
      } else if (event.__typename === "StreamDelta") {
        app.dispatch(actions.pendingChanged, key, { text: app.state.pending.text + event.delta });
      } else if (event.__typename === "StreamAssistantTurn") {
        outcome = { reply: event.assistantTurn };
      } else if (event.__typename === "StreamFailed") {
        outcome = { errors: event.errors, partial: event.partialReply };
      }
    }
  } catch (error) {
    outcome = controller.signal.aborted ? { stopped: true }
      : { errors: [{ code: "NETWORK", message: error.message }] };
  }
  if (!ours()) return;
  if (outcome.stopped) {
    await settleStopped(app, sessionId, key);
    if (!ours()) return;
  }
  const done = app.state.pending;
  const turns = [outcome.reply, outcome.partial];
  const answer = outcome.reply ?? outcome.partial;
  if (answer?.replyToSequence) forgetKey(sessionId, answer.replyToSequence);
  if (outcome.errors?.length) {
    // With a partial reply saved, the exchange is answered: Retry asks again (new key).
    app.dispatch(actions.replyFinished, key, turns, { ...done, status: "error",
      errors: outcome.errors, text: "", controller: null, answered: Boolean(outcome.partial) });
  } else {
    app.dispatch(actions.replyFinished, key, turns, null);
    if (done.userSaved) app.saveDraft(app.ui.composer.value); // sent: the draft is what is typed now
    else if (outcome.stopped && !app.ui.composer.value) app.ui.composer.value = done.content; // never sent
  }
  // The session's automatic title, once written: the header and the sidebar take it
  // from the same change (sessionReloaded).
  await Promise.all([app.reloadSession(), app.refreshPreview()]);
  awaitTitle(app, sessionId); // not awaited: the reply is done
}

/**
 * The automatic title is written in the background after the first reply, as fast as
 * the background model answers (seconds, or more): no event says when, so the session
 * is asked again, less often as time passes (TITLE_WAITS), until it has a title or
 * another session is open, or 30 s have passed. Each answer goes through sessionReloaded: header and sidebar together.
 */
async function awaitTitle(app, sessionId) {
  const waiting = () => app.state.session?.id === sessionId && !app.state.session.title;
  for (const wait of TITLE_WAITS) {
    if (!waiting()) return;
    await sleep(wait);
    if (!waiting()) return;
    await app.reloadSession().catch(() => {}); // offline for a moment: the next try
  }
}

/** After Stop: the turns the server saved (the reply, or the continuation, marked
 * interrupted, once a piece had arrived). */
async function settleStopped(app, sessionId, key) {
  const before = app.state.turns.at(-1)?.sequenceNumber ?? 0;
  const expectReply = app.state.pending.userSaved && app.state.pending.text !== "";
  for (let poll = 0; poll < STOP_POLLS; poll += 1) {
    let page = null;
    try {
      page = await api.loadTurns(sessionId);
    } catch (error) {
      app.toast(error.message);
    }
    if (app.state.session?.id !== sessionId || app.state.pending?.key !== key) return;
    const pending = app.state.pending;
    const found = page?.turns ?? [];
    // Stopped before the server said so, the message may still have been saved.
    const user = pending.userSaved ? null : found.find((turn) => turn.role === "USER"
      && turn.sequenceNumber > before && turn.content === pending.content);
    app.dispatch(actions.turnsArrived, sessionId, found, key,
      user ? { userSaved: true, userSeq: user.sequenceNumber } : null);
    const { userSeq, continues } = app.state.pending;
    const replied = found.some((turn) => turn.role === "ASSISTANT" && (continues !== undefined
      ? turn.continuesSequence === continues : turn.replyToSequence === userSeq));
    if (!expectReply || replied) return;
    await sleep(100);
  }
}

/**
 * Make a branch from the cell at `seq` with `stream` (regenerateStream /
 * editAndResendStream): once its message is saved the branch opens in place of this
 * conversation (its URL, the cell in view) and the reply streams into it, stoppable
 * as any reply. Without a stream, `request` (the mutation) does it in one answer.
 * A provider failure keeps the branch and its message ("no reply — Retry" there).
 */
async function streamBranch(app, seq, stream, request) {
  if (!app.dispatch(actions.branchRequested, seq)) return;
  const controller = new AbortController();
  const key = newKey();
  let branchId = null;
  const ours = () => app.state.session?.id === branchId && app.state.pending?.key === key;
  let outcome = { errors: [{ code: "NETWORK", message: "The reply stream ended early." }] };
  try {
    for await (const event of stream(controller.signal)) {
      if (event.__typename === "StreamUserTurn" && branchId === null) {
        branchId = event.userTurn.session.id;
        await app.openSession(branchId); // a new notebook: ends `branching`
        if (app.state.session?.id !== branchId) continue; // another one opened meanwhile
        app.dispatch(actions.sendStarted, { content: event.userTurn.content, model: null, key,
          status: "streaming", errors: [], userSaved: true, userSeq: event.userTurn.sequenceNumber,
          text: "", stoppable: true, controller, branched: true });
        await showSequence(app, seq);
      } else if (!ours()) {
        if (event.__typename === "StreamFailed" && branchId === null) outcome = event;
      } else if (event.__typename === "StreamDelta") {
        app.dispatch(actions.pendingChanged, key, { text: app.state.pending.text + event.delta });
      } else if (event.__typename === "StreamAssistantTurn") {
        outcome = { reply: event.assistantTurn };
      } else if (event.__typename === "StreamFailed") {
        outcome = { errors: event.errors, partial: event.partialReply };
      }
    }
  } catch (error) {
    if (error instanceof api.StreamUnavailable && branchId === null) {
      app.dispatch(actions.branchFailed, seq);
      return branchFrom(app, seq, request);
    }
    outcome = controller.signal.aborted ? { stopped: true }
      : { errors: [{ code: "NETWORK", message: error.message }] };
  }
  if (branchId === null) { // refused: nothing was written
    app.dispatch(actions.branchFailed, seq);
    app.failed(outcome);
    return;
  }
  if (!ours()) return;
  if (outcome.stopped) {
    await settleStopped(app, branchId, key);
    if (!ours()) return;
  }
  // The branch's message stays; a failed reply leaves it marked "no reply" (Retry there).
  app.dispatch(actions.replyFinished, key, [outcome.reply, outcome.partial], null);
  if (outcome.errors?.length) app.failed(outcome);
  await Promise.all([app.reloadSession(), app.refreshPreview(), app.refreshSidebar()]);
}

/** Make a branch with `request` (regenerate / editAndResend) and open it, the cell at
 * `seq` in view; a provider failure keeps the branch and its message (Retry there). */
async function branchFrom(app, seq, request) {
  if (!app.dispatch(actions.branchRequested, seq)) return;
  let payload;
  try {
    payload = await request();
  } catch (error) {
    app.dispatch(actions.branchFailed, seq);
    return app.toast(error.message);
  }
  if (!payload.session) {
    app.dispatch(actions.branchFailed, seq);
    return app.failed(payload);
  }
  app.failed(payload); // the provider failed: said, and the branch is opened all the same
  await app.openSession(payload.session.id);
  await showSequence(app, seq);
  await app.refreshSidebar();
}

/** Load older pages until `seq` is in the notebook, then bring its cell into view. */
async function showSequence(app, seq) {
  while (!app.state.turns.some((t) => t.sequenceNumber <= seq) && app.state.hasOlder) {
    await app.loadOlder();
  }
  app.ui.notebook.scrollToSequence(seq);
}

async function sessionChange(app, payload) {
  if (app.failed(payload)) return;
  // The header (space, mount), the badge, the `ctx:` line and the lineage: one change.
  await Promise.all([app.refreshLineage({ plan: true, session: payload.session }),
    app.refreshSidebar()]);
}

/** After a member change: the dialog, the session, the lineage pane and the sidebar. */
async function membersChanged(app, spaceId, payload, userName, note) {
  if (payload.errors.length) return app.ui.members.fail(payload.errors, userName);
  if (payload.space) app.ui.members.show(payload.space, app.state.me, note);
  else app.ui.members.close(); // you left the space
  const here = app.currentSpace()?.id === spaceId;
  // Left the space: a session of yours in it is detached (kept); the space is gone.
  if (here && !payload.space && !app.state.session) app.closeSession();
  if (here && app.state.session) await app.reloadSession();
  if (here) await app.refreshLineage();
  await app.refreshSidebar();
}

/** The presets changed (saved, renamed, deleted): the model picker and the settings
 * dialog's list show them as the store has them now, with `note` said there. */
function presetsShown(app, note) {
  const model = app.state.model ?? app.state.session?.model;
  app.ui.composer.setModels(app.state.providers, model, app.state.presets);
  app.ui.settings.presets = app.state.presets;
  if (app.state.session) app.ui.settings.show(app.state.session, "session", note);
}

export const HANDLERS = {
  "select-space"({ id }) {
    this.dispatch(actions.drawerSet, null);
    return this.openSpace(id);
  },
  async "open-members"({ spaceId }) {
    const space = await api.loadMembers(spaceId);
    if (!space) return this.toast("That space no longer exists.");
    this.ui.members.show(space, this.state.me);
  },
  async "add-member"({ spaceId, userName, role }) {
    await membersChanged(this, spaceId, await api.addSpaceMember({ spaceId, userName, role }), userName,
      `${userName} added as ${role.toLowerCase()}.`);
  },
  async "update-member"({ spaceId, userName, role }) {
    await membersChanged(this, spaceId, await api.updateSpaceMember({ spaceId, userName, role }),
      userName, `${userName} is now ${role.toLowerCase()}.`);
  },
  async "remove-member"({ spaceId, userName }) {
    await membersChanged(this, spaceId, await api.removeSpaceMember({ spaceId, userName }), userName,
      `${userName} removed.`);
  },
  async "change-visibility"({ visibility }) {
    await sessionChange(this, await api.updateSession({ id: this.state.session.id, visibility }));
  },
  async "filter-sessions"({ filter }) {
    this.dispatch(actions.sidebarFiltered, filter);
    await this.refreshSidebar();
  },
  /** Pin, archive or tag the open session: the header and the sidebar change at once
   * (sessionChanged), then the sidebar is read again for the server's order. */
  async "organise-session"(change) {
    const payload = await api.updateSession({ id: this.state.session.id, ...change });
    if (this.failed(payload)) return;
    this.dispatch(actions.sessionChanged, payload.session);
    await this.refreshSidebar();
  },
  "select-session"({ id }) {
    this.dispatch(actions.drawerSet, null);
    return this.openSession(id);
  },
  "start-new-space"() {
    if (this.isDrawer("left")) this.dispatch(actions.drawerSet, "left");
    this.ui.spaces.startNewSpace();
  },
  async "create-space"({ name }) {
    const payload = await api.createSpace({ name });
    if (this.failed(payload)) return;
    await this.refreshSidebar();
    this.dispatch(actions.spaceCreated, payload.space.id);
  },
  async "rename-space"({ id, name }) {
    if (this.failed(await api.updateSpace({ id, name }))) return this.refreshSidebar();
    await this.refreshSidebar();
    if (this.state.session?.space?.id === id) await this.reloadSession();
  },
  async "delete-space"({ id }) {
    if (this.failed(await api.deleteSpace(id))) return;
    if (this.state.session?.space?.id === id) this.closeSession();
    await this.refreshSidebar();
  },
  async "create-session"({ spaceId }) {
    this.dispatch(actions.drawerSet, null);
    const payload = await api.createSession(spaceId ? { spaceId } : {});
    if (this.failed(payload)) return;
    await this.refreshSidebar();
    await this.openSession(payload.session.id);
    this.ui.composer.focusInput();
  },
  async "rename-session"({ id, title }) {
    const payload = await api.updateSession({ id, title });
    if (!this.failed(payload)) this.dispatch(actions.sessionChanged, payload.session);
    await this.refreshSidebar();
  },
  async "delete-session"({ id }) {
    if (this.failed(await api.deleteSession(id))) return;
    if (this.state.session?.id === id) this.closeSession();
    await this.refreshSidebar();
  },
  async "attach-space"({ spaceId, memoryScope }) {
    await sessionChange(this, await api.attachSpace({ sessionId: this.state.session.id, spaceId,
      memoryScope }));
  },
  "open-settings"() {
    this.ui.settings.presets = this.state.presets;
    if (this.state.session) this.ui.settings.show(this.state.session, "session");
  },
  async "save-settings"({ target, settings }) {
    const session = this.state.session;
    if (!session) return;
    const payload = target === "space"
      ? await api.updateSpace({ id: session.space.id, settings })
      : await api.updateSession({ id: session.id, settings });
    if (payload.errors.length) return this.ui.settings.fail(payload.errors);
    if (target === "space") await this.reloadSession();
    else await sessionChange(this, payload);
    if (target === "space") await this.refreshPreview();
    this.ui.settings.show(this.state.session, target, "Saved.");
  },
  async "save-preset"({ name, settings }) {
    const session = this.state.session;
    if (!session) return;
    const model = this.state.model ?? session.model;
    const payload = await api.createPreset({ name, model, settings });
    if (payload.errors.length) return this.ui.settings.fail(payload.errors);
    this.dispatch(actions.presetsLoaded, await api.loadPresets());
    presetsShown(this, `Preset “${payload.preset.name}” saved (${model}).`);
  },
  async "rename-preset"({ presetId, name }) {
    const payload = await api.updatePreset({ id: presetId, name });
    if (payload.errors.length) return this.ui.settings.fail(payload.errors);
    this.dispatch(actions.presetRenamed, payload.preset);
    presetsShown(this, `Preset renamed “${payload.preset.name}”.`);
  },
  async "delete-preset"({ presetId, name }) {
    const payload = await api.deletePreset(presetId);
    if (payload.errors.length) return this.ui.settings.fail(payload.errors);
    this.dispatch(actions.presetDeleted, presetId);
    presetsShown(this, `Preset “${name}” deleted; sessions that used it keep their settings.`);
  },
  async "apply-preset"({ presetId }) {
    const session = this.state.session;
    if (!session) return;
    const payload = await api.applyPreset({ sessionId: session.id, presetId });
    if (this.failed(payload)) return;
    this.dispatch(actions.modelChosen, payload.session.model);
    this.ui.composer.setModels(this.state.providers, payload.session.model, this.state.presets);
    await sessionChange(this, payload);
  },
  async "change-scope"({ memoryScope }) {
    await sessionChange(this, await api.updateSession({ id: this.state.session.id, memoryScope }));
  },
  async "detach-space"() {
    await sessionChange(this, await api.detachSpace(this.state.session.id));
  },
  async "mount-checkpoint"({ id, sessionId = null }) {
    if (sessionId) {
      // From a space opened on its own, into a session of yours outside it: open that session.
      const payload = await api.mountCheckpoint({ sessionId, checkpointId: id });
      if (this.failed(payload)) return;
      await this.openSession(sessionId);
      return;
    }
    await sessionChange(this, await api.mountCheckpoint({ sessionId: this.state.session.id,
      checkpointId: id }));
  },
  async "export-document"({ format }) {
    const exported = await api.exportDocument(this.state.session, format);
    if (!exported) return;
    // A download of the document the server wrote, named as it suggests.
    const url = URL.createObjectURL(new Blob([exported.document], { type: exported.mediaType }));
    const link = Object.assign(document.createElement("a"), { href: url, download: exported.fileName });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  },
  async unmount() {
    await sessionChange(this, await api.unmountCheckpoint(this.state.session.id));
  },
  async "fork-checkpoint"({ id, branchName = null }) {
    const payload = await api.forkSession({ checkpointId: id, branchName });
    if (this.failed(payload)) return;
    this.dispatch(actions.drawerSet, null);
    await this.refreshSidebar();
    await this.openSession(payload.session.id);
  },
  "select-checkpoint"({ id }) {
    // "Show in lineage" from the notebook: on a narrow screen the lineage is a drawer.
    const drawer = id && this.isDrawer("right") ? "right" : this.state.drawer;
    this.dispatch(actions.checkpointSelected, id, drawer);
    if (id) this.ui.details.scrollIntoView({ block: "nearest" });
  },
  async compare({ a, b }) {
    this.ui.compare.show(await api.compareCheckpoints(a, b));
  },
  async "preview-merge"({ from, into, branch = null }) {
    const spaceId = this.currentSpace()?.id;
    if (!spaceId) return;
    const preview = await api.previewMerge({ spaceId, into, from });
    if (!preview) return this.toast("That merge cannot be previewed any more.");
    this.ui.merge.show(preview, spaceId, { branch });
  },
  async "merge-checkpoints"({ input }) {
    const payload = await api.mergeCheckpoints(input);
    if (payload.errors.length) return this.ui.merge.fail(payload.errors);
    this.ui.merge.close();
    // The branch moved (a merge checkpoint, or a fast-forward): when it is the open
    // session's, the badge and the `ctx:` line move with the graph, in one change.
    await this.refreshLineage({ plan: true });
    this.dispatch(actions.checkpointSelected, payload.checkpoint.id);
  },
  async "open-source"({ sessionId, seq }) {
    this.dispatch(actions.drawerSet, null);
    if (this.state.session?.id !== sessionId) await this.openSession(sessionId);
    if (seq === null) return;
    while (!this.state.turns.some((t) => t.sequenceNumber <= seq) && this.state.hasOlder) {
      await this.loadOlder();
    }
    this.ui.notebook.scrollToSequence(seq);
  },
  "load-older"() {
    return this.loadOlder();
  },
  "draft-change"({ content }) {
    this.saveDraft(content);
    this.previewSoon();
  },
  "model-change"({ model }) {
    this.dispatch(actions.modelChosen, model);
    return this.refreshPreview();
  },
  "toggle-context"() {
    this.dispatch(actions.contextToggled);
  },
  "close-context"() {
    this.dispatch(actions.contextClosed);
  },
  send({ content, model }) {
    if (inFlight(this.state.pending)) return undefined;
    this.ui.composer.value = "";
    return startSend(this, content, model);
  },
  "retry-send"() {
    const pending = this.state.pending;
    if (continuing(pending)) {
      // What arrived before the failure was saved: go on from there instead.
      const from = pending.answered ? this.state.turns.at(-1)
        : this.state.turns.find((turn) => turn.sequenceNumber === pending.continues);
      return startContinue(this, from);
    }
    // A partial reply was saved: the exchange is answered, so ask again as a new message.
    if (pending.answered) return startSend(this, pending.content, pending.model);
    this.dispatch(actions.pendingChanged, pending.key,
      { status: "sending", errors: [], text: "", stoppable: true });
    return deliver(this);
  },
  /** Retry a question left without a reply: with its key when this browser sent it
   * (the server answers that turn), else asked again as a new message. */
  "retry-turn"({ seq }) {
    if (inFlight(this.state.pending)) return undefined;
    const question = this.state.turns.find((turn) => turn.sequenceNumber === seq);
    if (!question) return undefined;
    const key = keyFor(this.state.session.id, seq);
    if (!key) return startSend(this, question.content, this.state.model);
    this.dispatch(actions.sendStarted, { content: question.content, model: this.state.model, key,
      status: "sending", errors: [], userSaved: true, userSeq: seq, text: "", stoppable: true,
      controller: null });
    return deliver(this);
  },
  "stop-stream"() {
    const pending = this.state.pending;
    if (!inFlight(pending) || !pending.stoppable || !pending.controller) return;
    this.dispatch(actions.pendingChanged, pending.key, { status: "stopping" });
    pending.controller.abort();
  },
  "continue-reply"({ seq }) {
    return startContinue(this, this.state.turns.find((turn) => turn.sequenceNumber === seq));
  },
  "retry-reply"({ seq }) {
    const reply = this.state.turns.find((turn) => turn.sequenceNumber === seq);
    const question = this.state.turns.find((turn) => turn.sequenceNumber === reply?.replyToSequence);
    if (!question) return this.toast("The message this reply answered is not loaded.");
    return startSend(this, question.content, this.state.model);
  },
  // Branches (issue 21): an edited message or a regenerated reply is a new branch of
  // the conversation, opened in place of this one (which is kept: "‹ 1 / 2 ›").
  "edit-start"({ seq }) {
    this.dispatch(actions.editStarted, seq);
  },
  "edit-cancel"() {
    this.dispatch(actions.editCancelled);
  },
  "edit-turn"({ seq, content }) {
    const turn = this.state.turns.find((t) => t.sequenceNumber === seq);
    if (!turn) return undefined;
    const input = { turnId: turn.id, content, model: this.state.model, idempotencyKey: newKey() };
    return streamBranch(this, seq, (signal) => api.streamEditAndResend(input, signal),
      () => api.editAndResend(input));
  },
  "regenerate-turn"({ seq }) {
    const turn = this.state.turns.find((t) => t.sequenceNumber === seq);
    if (!turn) return undefined;
    const input = { turnId: turn.id, model: this.state.model };
    return streamBranch(this, seq, (signal) => api.streamRegenerate(input, signal),
      () => api.regenerate(input));
  },
  /** Another alternative at `seq`: its session opened, that cell kept in view. */
  async "switch-alternative"({ seq, sessionId }) {
    if (inFlight(this.state.pending)) return;
    await this.openSession(sessionId);
    await showSequence(this, seq);
  },
  "discard-send"() {
    this.dispatch(actions.pendingDiscarded);
    this.saveDraft(this.ui.composer.value || loadDraft(this.state.session.id));
  },
  "open-checkpoint-form"() {
    if (this.state.formOpen) return this.ui.form.focusTitle(); // keep what was typed
    this.ui.form.start(carriedFrom(this.state.lineage, this.state.session.branchName));
    this.ui.form.status = {};
    this.dispatch(actions.formOpened);
    this.ui.form.scrollIntoView({ block: "nearest" });
    this.ui.form.focusTitle();
  },
  "close-checkpoint-form"() {
    this.dispatch(actions.formClosed);
  },
  async "draft-checkpoint"() {
    this.ui.form.status = { busy: true, note: "Drafting…" };
    const payload = await api.draftCheckpoint(this.state.session.id);
    const { extracted, carried } = payload;
    const form = this.ui.form;
    // The lineage was not loaded (or is stale): start from the server's parent.
    if (carried?.checkpoint && form.carriedFrom?.id !== carried.checkpoint.id) form.start(carried);
    if (extracted) form.addDraft(extracted);
    const range = extracted?.sourceTurnRange;
    form.status = { errors: payload.errors, note: extracted
      ? `Drafted by ${extracted.model}${range ? ` from turns ${range.first}–${range.last}` : ""}:`
        + " its items are marked new. Review, then save."
      : "" };
  },
  async "save-checkpoint"(value) {
    this.ui.form.status = { busy: true };
    const payload = await api.createCheckpoint({ sessionId: this.state.session.id, ...value });
    this.ui.form.status = { errors: payload.errors };
    if (payload.errors.length) return;
    this.dispatch(actions.formClosed);
    this.toast(`Saved checkpoint ${payload.checkpoint.shortHash}`);
    await this.refreshLineage({ plan: true });
    this.ui.notebook.scrollToCheckpoint(payload.checkpoint.id);
  },
};

// Searching and opening search hits (search-handlers.js).
Object.assign(HANDLERS, searchHandlers(HANDLERS), importHandlers());
