// What <smriti-app> does for each CustomEvent its children send up. Each handler
// runs with `this` = the app (the one owner of state); none keeps state of its own.
import * as api from "./api.js";
import { loadDraft } from "./drafts.js";

const newKey = () =>
  globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random().toString(16).slice(2)}`;

/** Send (or resend) the pending message; the same idempotencyKey on every try. */
async function deliver(app) {
  const pending = app.state.pending;
  const sessionId = app.state.session.id;
  let payload;
  try {
    payload = await api.sendMessage({ sessionId, content: pending.content, model: pending.model,
      idempotencyKey: pending.key });
  } catch (error) {
    payload = { errors: [{ code: "NETWORK", message: error.message }] };
  }
  if (app.state.session?.id !== sessionId) return;
  const known = new Set(app.state.turns.map((turn) => turn.sequenceNumber));
  const added = [payload.userTurn, payload.assistantTurn]
    .filter((turn) => turn && !known.has(turn.sequenceNumber));
  const turns = [...app.state.turns, ...added];
  if (payload.errors.length) {
    app.set({ turns, pending: { ...pending, status: "error", errors: payload.errors,
      userSaved: pending.userSaved || Boolean(payload.userTurn) } });
  } else {
    app.set({ turns, pending: null });
    app.saveDraft(app.ui.composer.value); // sent: the stored draft is what is typed now
  }
  await Promise.all([app.reloadSession(), app.refreshPreview()]);
  if (!app.state.session?.title) setTimeout(() => app.refreshSidebar().then(() => app.reloadSession()), 1500);
}

async function sessionChange(app, payload) {
  if (app.failed(payload)) return;
  app.set({ session: payload.session });
  await Promise.all([app.refreshLineage(), app.refreshPreview(), app.refreshSidebar()]);
}

export const HANDLERS = {
  "select-session"({ id }) {
    return this.openSession(id);
  },
  async "create-space"({ name }) {
    if (!this.failed(await api.createSpace({ name }))) await this.refreshSidebar();
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
    const payload = await api.createSession(spaceId ? { spaceId } : {});
    if (this.failed(payload)) return;
    await this.refreshSidebar();
    await this.openSession(payload.session.id);
    this.ui.composer.focusInput();
  },
  async "rename-session"({ id, title }) {
    const payload = await api.updateSession({ id, title });
    if (!this.failed(payload) && this.state.session?.id === id) this.set({ session: payload.session });
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
  async "detach-space"() {
    await sessionChange(this, await api.detachSpace(this.state.session.id));
  },
  async "mount-checkpoint"({ id }) {
    await sessionChange(this, await api.mountCheckpoint({ sessionId: this.state.session.id,
      checkpointId: id }));
  },
  async unmount() {
    await sessionChange(this, await api.unmountCheckpoint(this.state.session.id));
  },
  async "fork-checkpoint"({ id, branchName = null }) {
    const payload = await api.forkSession({ checkpointId: id, branchName });
    if (this.failed(payload)) return;
    await this.refreshSidebar();
    await this.openSession(payload.session.id);
  },
  "select-checkpoint"({ id }) {
    this.set({ selectedId: id });
  },
  async compare({ a, b }) {
    this.ui.compare.show(await api.compareCheckpoints(a, b));
  },
  async "open-source"({ sessionId, seq }) {
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
    this.set({ model });
    return this.refreshPreview();
  },
  "toggle-context"() {
    this.set({ showContext: !this.state.showContext });
  },
  send({ content, model }) {
    if (this.state.pending?.status === "sending") return;
    this.set({ pending: { content, model, key: newKey(), status: "sending", errors: [],
      userSaved: false } });
    this.ui.composer.value = "";
    return deliver(this);
  },
  "retry-send"() {
    this.set({ pending: { ...this.state.pending, status: "sending", errors: [] } });
    return deliver(this);
  },
  "discard-send"() {
    this.set({ pending: null });
    this.saveDraft(this.ui.composer.value || loadDraft(this.state.session.id));
  },
  "open-checkpoint-form"() {
    this.ui.form.draft = {};
    this.ui.form.status = {};
    this.set({ formOpen: true });
    this.ui.form.scrollIntoView({ block: "nearest" });
    this.ui.form.focusTitle();
  },
  "close-checkpoint-form"() {
    this.set({ formOpen: false });
  },
  async "draft-checkpoint"() {
    this.ui.form.status = { busy: true, note: "Drafting…" };
    const payload = await api.draftCheckpoint(this.state.session.id);
    if (payload.draft) this.ui.form.draft = payload.draft;
    const range = payload.draft?.sourceTurnRange;
    this.ui.form.status = { errors: payload.errors, note: payload.draft
      ? `Drafted by ${payload.draft.model}${range ? ` from turns ${range.first}–${range.last}` : ""}. Review, then save.`
      : "" };
  },
  async "save-checkpoint"(value) {
    this.ui.form.status = { busy: true };
    const payload = await api.createCheckpoint({ sessionId: this.state.session.id, ...value });
    this.ui.form.status = { errors: payload.errors };
    if (payload.errors.length) return;
    this.set({ formOpen: false });
    this.toast(`Saved checkpoint ${payload.checkpoint.shortHash}`);
    await Promise.all([this.refreshLineage(), this.refreshPreview()]);
  },
};
