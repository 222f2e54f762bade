// <smriti-app>: the root component; it holds the store (store.js, the one UI
// state, changed only by its named actions) and renders from it. Children get
// state pushed down (properties) and send CustomEvents up; handlers.js turns
// those events into API calls (api.js) and actions.
import * as api from "./api.js";
import { loadDraft, saveDraft } from "./drafts.js";
import { access, brokenOnLine, sessionTitle, unanswered } from "./format.js";
import { sameState } from "./dom.js";
import { keyAction } from "./keyboard.js";
import { HANDLERS } from "./handlers.js";
import * as actions from "./store.js";
import { EMPTY_LINEAGE, inFlight, Store } from "./store.js";
import "./components/space-list.js";
import "./components/session-header.js";
import "./components/notebook-view.js";
import "./components/composer-cell.js";
import "./components/context-badge.js";
import "./components/checkpoint-form.js";
import "./components/lineage-graph.js";
import "./components/checkpoint-details.js";
import "./components/compare-view.js";
import "./components/merge-view.js";
import "./components/shortcuts-dialog.js";
import "./components/empty-state.js";
import "./components/search-box.js";
import "./components/search-results.js";
import "./components/space-access.js";
import "./components/members-dialog.js";
import "./components/settings-dialog.js";
import "./components/import-dialog.js";

const PREVIEW_DEBOUNCE_MS = 300;
// The server checks whether providers are reachable in the background and says
// CHECKING meanwhile: ask again this often, this many times at most.
const PROVIDERS_RECHECK_MS = 1000;
const PROVIDERS_RECHECKS = 10;
// Changes that only the notebook shows.
const NOTEBOOK_ONLY = new Set(["turns", "hasOlder", "cursor", "loadingOlder", "editing", "branching"]);

/** Why Mount is off in the lineage details (when it is). */
function mountHint(may, session) {
  if (may.role === "VIEWER") return "Fork it (below), or mount it in a session of yours";
  if (may.readOnly) return `This session is ${session.authorName}'s: only they mount in it`;
  return "Open a session of this space to mount";
}

export class SmritiApp extends HTMLElement {
  constructor() {
    super();
    this.store = new Store();
    this.onEvent = (event) => HANDLERS[event.type]?.call(this, event.detail ?? {});
    this.onKey = (event) => this.key(event);
    this.onPopState = () => this.openFromUrl();
    this.onHelp = () => this.ui.shortcuts.show();
    this.onToggle = (event) => this.toggleDrawer(event.currentTarget === this.ui.leftToggle ? "left" : "right");
    this.onScrim = () => this.toggleDrawer(null);
  }

  connectedCallback() {
    const $ = (id) => this.querySelector(`#${id}`);
    this.ui = {
      spaces: $("spaces"), header: $("session-header"), notebook: $("notebook"),
      composer: $("composer"), form: $("checkpoint-form"), badge: $("badge"),
      lineage: $("lineage"), details: $("details"), compare: $("compare"), merge: $("merge"),
      shortcuts: $("shortcuts"), title: $("session-title"), empty: $("empty-state"),
      toast: $("toast"), help: $("help-button"), leftToggle: $("left-toggle"),
      rightToggle: $("right-toggle"), left: $("left-pane"), right: $("right-pane"), scrim: $("scrim"),
    };
    Object.assign(this.ui, { search: $("search-box"), results: $("search-results"),
      access: $("space-access"), members: $("members"), importer: $("importer"),
      settings: $("settings") });
    for (const type of Object.keys(HANDLERS)) this.addEventListener(type, this.onEvent);
    document.addEventListener("keydown", this.onKey);
    window.addEventListener("popstate", this.onPopState);
    this.ui.help.addEventListener("click", this.onHelp);
    for (const toggle of [this.ui.leftToggle, this.ui.rightToggle]) toggle.addEventListener("click", this.onToggle);
    this.ui.scrim.addEventListener("click", this.onScrim);
    this.unsubscribe = this.store.subscribe((state, change, previous) => this.changed(change, previous));
    this.start();
  }

  disconnectedCallback() {
    for (const type of Object.keys(HANDLERS)) this.removeEventListener(type, this.onEvent);
    document.removeEventListener("keydown", this.onKey);
    window.removeEventListener("popstate", this.onPopState);
    this.ui.help.removeEventListener("click", this.onHelp);
    for (const toggle of [this.ui.leftToggle, this.ui.rightToggle]) toggle.removeEventListener("click", this.onToggle);
    this.ui.scrim.removeEventListener("click", this.onScrim);
    clearTimeout(this.providersTimer);
    this.unsubscribe();
  }

  async start() {
    try {
      this.dispatch(actions.accountLoaded, await api.loadAccount());
      await this.loadProviders();
      await this.refreshSidebar();
      await this.openFromUrl();
      this.dataset.ready = "true";
    } catch (error) {
      this.toast(error.message);
    }
  }

  /** The state now (frozen: change it with `dispatch`). */
  get state() {
    return this.store.state;
  }

  /** Run one of store.js's named actions; true when it changed the state. */
  dispatch(action, ...args) {
    return this.store.dispatch(action, ...args);
  }

  /** After each change: render what it touches (streamed text and paging: the
   * notebook alone; a plan: the badge and status line; otherwise everything). */
  changed(change, previous) {
    const keys = Object.keys(change);
    const { pending } = this.state;
    if (keys.every((key) => key === "planAsked")) return;
    if (keys.every((key) => key === "plan" || key === "planAsked")) return this.renderContext();
    const textOnly = keys.length === 1 && keys[0] === "pending" && pending && previous.pending
      && pending.status === previous.pending.status && pending.userSaved === previous.pending.userSaved;
    if (textOnly || keys.every((key) => NOTEBOOK_ONLY.has(key))) return this.renderNotebook();
    this.render();
  }

  /** The space shown: the open session's, or the one opened on its own (?space=). */
  currentSpace() {
    const s = this.state;
    if (s.session) return s.session.space ?? null;
    return s.spaceView && s.lineage.space?.id === s.spaceView ? s.lineage.space : null;
  }

  /** What the signed-in user may do here (format.js access()). */
  access() {
    const s = this.state;
    return access({ accounts: s.accounts, me: s.me, session: s.session, space: this.currentSpace() });
  }

  render() {
    const s = this.state;
    const { ui } = this;
    const space = this.currentSpace();
    const may = this.access();
    ui.spaces.state = { spaces: s.spaces, unattached: s.unattached, pinned: s.pinned,
      filter: s.sidebarFilter, tags: s.knownTags, currentSessionId: s.session?.id,
      currentFamilyId: s.session?.familyId,
      currentSpaceId: s.session ? null : s.spaceView, me: s.accounts ? s.me : null };
    ui.header.state = { session: s.session, spaces: s.spaces, formOpen: s.formOpen,
      accounts: s.accounts, may, space: s.session ? null : space, knownTags: s.knownTags };
    ui.access.state = { accounts: s.accounts, space };
    ui.empty.hidden = Boolean(s.session || s.spaceView);
    // The space just created (while it is still listed: not deleted since).
    ui.empty.state = { space: s.spaces.find((row) => row.id === s.createdSpaceId) ?? null };
    ui.title.textContent = s.session ? sessionTitle(s.session) : "";
    document.title = s.session ? `${sessionTitle(s.session)} · Smriti` : "Smriti";
    this.renderNotebook();
    // One bottom cell at a time: the checkpoint form takes the composer's place.
    ui.composer.hidden = !s.session || s.formOpen || may.readOnly;
    ui.composer.busy = inFlight(s.pending);
    ui.form.hidden = !s.formOpen;
    // Current with the lineage (a reload, a tampering found while the form is open).
    ui.form.broken = s.formOpen ? brokenOnLine(s.lineage, s.session?.branchName) : null;
    const mountedId = s.session?.mount?.checkpoint?.id ?? null;
    ui.lineage.state = { ...s.lineage, mountedId, selectedId: s.selectedId,
      spaceName: space?.name, canMerge: may.canMerge, currentBranch: s.session?.branchName ?? null };
    const checkpoint = s.lineage.nodes.find((node) => node.id === s.selectedId) ?? null;
    ui.details.state = { checkpoint, mountedId, nodes: s.lineage.nodes,
      branches: s.lineage.branches, attached: Boolean(s.session?.space) && !may.readOnly,
      role: may.role, canMerge: may.canMerge && Boolean(space), bylines: may.bylines,
      mountHint: mountHint(may, s.session),
      // With no session open (a space on its own): your sessions outside any space.
      mountTargets: s.session ? [] : s.unattached, currentBranch: s.session?.branchName ?? null };
    this.renderContext();
    this.renderDrawers();
  }

  /** On narrow screens the side panes are drawers: which one is open (CSS does the rest). */
  renderDrawers() {
    const { drawer } = this.state;
    this.dataset.drawer = drawer ?? "";
    this.ui.leftToggle.setAttribute("aria-expanded", String(drawer === "left"));
    this.ui.rightToggle.setAttribute("aria-expanded", String(drawer === "right"));
    this.ui.scrim.hidden = !drawer;
  }

  /** Open a side pane as a drawer (null or the open one: close it), when it is one. */
  toggleDrawer(side) {
    const open = side && side !== this.state.drawer && this.isDrawer(side) ? side : null;
    const closing = this.state.drawer;
    this.dispatch(actions.drawerSet, open);
    if (open) this.ui[open].focus({ preventScroll: true });
    else if (closing && this.isDrawer(closing)) this.ui[`${closing}Toggle`].focus();
  }

  /** True when this side pane is shown as a drawer at the current width. */
  isDrawer(side) {
    return getComputedStyle(this.ui[`${side}Toggle`]).display !== "none";
  }

  renderNotebook() {
    const s = this.state;
    const may = this.access();
    this.ui.notebook.hidden = !s.session;
    this.ui.notebook.update({
      sessionId: s.session?.id ?? null, turns: s.turns, hasOlder: s.hasOlder,
      loadingOlder: s.loadingOlder, placements: s.placements, mount: s.session?.mount ?? null,
      pending: s.pending, bylines: may.bylines, readOnly: may.readOnly,
      branches: this.branches(s, may),
    });
  }

  /** What the notebook's cells offer for branching, the same object while nothing
   * it holds changed (the cells re-render only then). */
  branches(s, may) {
    const next = { alternatives: s.session?.alternatives ?? [],
      editable: Boolean(s.session) && !may.readOnly && !inFlight(s.pending) && s.branching === null,
      editing: s.editing, branching: s.branching };
    if (!sameState(next, this.lastBranches)) this.lastBranches = next;
    return this.lastBranches;
  }

  renderContext() {
    const { plan, showContext, session, turns, pending } = this.state;
    this.ui.badge.plan = session ? plan : null;
    this.ui.composer.context = { plan, open: Boolean(session) && showContext,
      unanswered: unanswered(turns, pending) };
  }

  toast(message) {
    const { toast } = this.ui;
    toast.textContent = message;
    toast.classList.add("visible");
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => toast.classList.remove("visible"), 5000);
  }

  /** Show the first payload error, if any; true when there was one. */
  failed(payload) {
    const error = payload.errors?.[0];
    if (error) this.toast(`${error.code}: ${error.message}`);
    return Boolean(error);
  }

  /** The sidebar under its filter (an answer for a filter changed since is dropped). */
  async refreshSidebar() {
    const filter = this.state.sidebarFilter;
    this.dispatch(actions.sidebarLoaded, await api.loadSidebar(filter), filter);
  }

  async openFromUrl() {
    const params = new URLSearchParams(location.search);
    const id = params.get("session");
    if (id) await this.openSession(id, { push: false });
    else if (params.get("space")) await this.openSpace(params.get("space"), { push: false });
    else this.closeSession({ push: false });
  }

  closeSession({ push = true } = {}) {
    if (push) history.pushState({}, "", "/");
    this.dispatch(actions.sessionClosed);
  }

  /** A space on its own, no session open: its lineage and members (how a viewer reads it). */
  async openSpace(id, { push = true } = {}) {
    if (push && new URLSearchParams(location.search).get("space") !== id) {
      history.pushState({ space: id }, "", `/?space=${encodeURIComponent(id)}`);
    }
    this.dispatch(actions.spaceOpened, id);
    await this.refreshLineage();
    if (this.state.spaceView === id && !this.state.lineage.space) {
      this.toast("That space no longer exists.");
      this.closeSession({ push });
    }
  }

  /** Open a session: its newest page of turns, its space's lineage, its draft. */
  async openSession(id, { push = true } = {}) {
    const [session, page] = await Promise.all([api.loadSession(id), api.loadTurns(id)]);
    if (!session) {
      this.toast("That session no longer exists.");
      return this.closeSession({ push });
    }
    if (push && new URLSearchParams(location.search).get("session") !== id) {
      history.pushState({ session: id }, "", `/?session=${encodeURIComponent(id)}`);
    }
    this.dispatch(actions.sessionClosed); // a new notebook, even when reopening the same session
    this.ui.composer.setModels(this.state.providers, session.model, this.state.presets);
    this.ui.composer.value = loadDraft(id);
    this.dispatch(actions.sessionOpened, session, page);
    this.refreshPreview(); // not awaited: the notebook is usable before the preview arrives
    await this.refreshLineage();
  }

  /** The session as the server has it now (title, mount, space…). */
  async reloadSession() {
    const asked = this.state.session;
    if (!asked) return;
    // How many reloads are on their way, on the element (data-reloading): a test waits
    // for 0 to know that a late answer was handled (applied or dropped), not a delay.
    this.dataset.reloading = String(Number(this.dataset.reloading ?? 0) + 1);
    try {
      // Meanwhile the user may have opened a space or another session, or changed this
      // one (shared it, mounted…): then sessionReloaded drops this older answer.
      this.dispatch(actions.sessionReloaded, await api.loadSession(asked.id), asked);
    } finally {
      this.dataset.reloading = String(Number(this.dataset.reloading) - 1);
    }
  }

  /** The next older page; while one is loading, that one (callers may loop on it). */
  loadOlder() {
    const s = this.state;
    if (!s.session || !s.hasOlder) return Promise.resolve();
    if (this.dispatch(actions.olderRequested)) this.older = this.fetchOlder(s.session.id, s.cursor);
    return this.older;
  }

  async fetchOlder(sessionId, cursor) {
    let page = null;
    try {
      page = await api.loadTurns(sessionId, cursor);
    } catch (error) {
      this.toast(error.message);
    }
    this.dispatch(actions.olderLoaded, sessionId, page);
  }

  /**
   * The lineage of the space shown; with `plan`, the context preview too, and with
   * `session`, the open session as a mutation just returned it: all in one change.
   * After a checkpoint is saved, a branch moves (merge, fast-forward) or the session
   * is attached, mounted…, the header, the graph, the notebook's cells, the badge and
   * the `ctx:` line move together.
   */
  async refreshLineage({ plan = false, session = null } = {}) {
    const key = actions.lineageKey(this.state);
    const spaceId = this.state.session ? (session ?? this.state.session).space?.id : key.spaceView;
    const [lineage, preview] = await Promise.all([
      spaceId ? api.loadLineage(spaceId) : null,
      plan ? this.askPreview() : null]);
    this.dispatch(actions.lineageLoaded, key, lineage ?? EMPTY_LINEAGE, preview, session);
  }

  /** The providers for the model picker, asked again while one is still being checked. */
  async loadProviders(recheck = 0) {
    const [providers, presets] = await Promise.all([api.loadProviders(),
      recheck ? this.state.presets : api.loadPresets()]);
    this.dispatch(actions.providersLoaded, providers);
    this.dispatch(actions.presetsLoaded, presets);
    if (this.state.session) {
      this.ui.composer.setModels(this.state.providers, this.state.model, this.state.presets);
    }
    clearTimeout(this.providersTimer);
    if (recheck < PROVIDERS_RECHECKS && providers.providers.some((p) => p.reachability === "CHECKING")) {
      this.providersTimer = setTimeout(() => this.loadProviders(recheck + 1)
        .catch((error) => this.toast(error.message)), PROVIDERS_RECHECK_MS);
    }
  }

  /** contextPreview for what is in the composer now: the badge and status line. */
  async refreshPreview() {
    const preview = await this.askPreview();
    if (preview) this.dispatch(actions.planLoaded, preview.request, preview.plan);
  }

  /** contextPreview for the open session and what is typed: {request, plan}, null when it
   * failed. The request is the newest asked (planRequested); planLoaded shows only its plan. */
  async askPreview() {
    const { session, model } = this.state;
    if (!session) return null;
    const request = { sessionId: session.id, content: this.ui.composer.value, model };
    this.dispatch(actions.planRequested, request);
    try {
      return { request, plan: await api.previewContext(request) };
    } catch (error) {
      this.toast(error.message);
      return null;
    }
  }

  previewSoon() {
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.refreshPreview(), PREVIEW_DEBOUNCE_MS);
  }

  saveDraft(text) {
    if (this.state.session) saveDraft(this.state.session.id, text);
  }

  key(event) {
    const action = keyAction(event);
    if (action === "stop" && this.state.drawer) {
      event.preventDefault();
      return this.toggleDrawer(null);
    }
    if (!action || (action === "stop" && !inFlight(this.state.pending))) return;
    event.preventDefault();
    if (action === "help") this.ui.shortcuts.show();
    else if (action === "compose" && this.state.session && !this.access().readOnly) {
      this.ui.composer.focusInput();
    }
    else if (action === "search") this.ui.search.focusInput();
    else if (action === "stop") HANDLERS["stop-stream"].call(this);
    else if (action === "checkpoint") this.startCheckpoint();
    else if (action === "next" || action === "previous") this.moveFocus(action === "next" ? 1 : -1);
  }

  /** `s`: the checkpoint form, or why it does not open (a session in no space). */
  startCheckpoint() {
    const { session } = this.state;
    if (this.access().canSave) HANDLERS["open-checkpoint-form"].call(this);
    else if (session && !session.space && !this.access().readOnly) {
      this.toast("Checkpoints belong to a space: attach one first");
    }
  }

  /** j / k: focus the next / previous cell. */
  moveFocus(step) {
    const cells = [...this.ui.notebook.querySelectorAll(".cell"), this.ui.form, this.ui.composer]
      .filter((cell) => !cell.hidden && cell.isConnected);
    const current = cells.indexOf(document.activeElement?.closest(".cell"));
    const index = current === -1 ? (step > 0 ? 0 : cells.length - 1)
      : Math.max(0, Math.min(cells.length - 1, current + step));
    const cell = cells[index];
    if (!cell) return;
    if (cell.tabIndex < 0 && cell !== this.ui.composer) cell.tabIndex = 0;
    cell.focus({ preventScroll: true });
    cell.scrollIntoView({ block: "nearest" });
  }
}

customElements.define("smriti-app", SmritiApp);
