// <smriti-app>: the root component and the one owner of state. Children get
// state pushed down (properties) and send CustomEvents up; this module turns
// those events into API calls (api.js) and a new state.
import * as api from "./api.js";
import { loadDraft, saveDraft } from "./drafts.js";
import { access, placements, sessionTitle, unanswered } from "./format.js";
import { keyAction } from "./keyboard.js";
import { HANDLERS, inFlight } from "./handlers.js";
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

const PREVIEW_DEBOUNCE_MS = 300;
// The server checks whether providers are reachable in the background and says
// CHECKING meanwhile: ask again this often, this many times at most.
const PROVIDERS_RECHECK_MS = 1000;
const PROVIDERS_RECHECKS = 10;
const EMPTY_LINEAGE = { branches: [], nodes: [] };

/** Why Mount is off in the lineage details (when it is). */
function mountHint(may, session) {
  if (may.role === "VIEWER") return "Fork it (below), or mount it in a session of yours";
  if (may.readOnly) return `This session is ${session.authorName}'s: only they mount in it`;
  return "Open a session of this space to mount";
}

export class SmritiApp extends HTMLElement {
  constructor() {
    super();
    this.state = {
      spaces: [], unattached: [], providers: [], chatDefault: "offline/echo",
      session: null, model: null, turns: [], hasOlder: false, cursor: null, loadingOlder: false,
      lineage: EMPTY_LINEAGE, placements: new Map(), plan: null, showContext: false,
      pending: null, selectedId: null, formOpen: false, drawer: null,
      accounts: false, me: null, spaceView: null,
    };
    this.previewTicket = 0;
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
      access: $("space-access"), members: $("members") });
    for (const type of Object.keys(HANDLERS)) this.addEventListener(type, this.onEvent);
    document.addEventListener("keydown", this.onKey);
    window.addEventListener("popstate", this.onPopState);
    this.ui.help.addEventListener("click", this.onHelp);
    for (const toggle of [this.ui.leftToggle, this.ui.rightToggle]) toggle.addEventListener("click", this.onToggle);
    this.ui.scrim.addEventListener("click", this.onScrim);
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
  }

  async start() {
    try {
      await api.detectFeatures();
      const account = await api.loadAccount();
      Object.assign(this.state, { accounts: account.accounts, me: account.name });
      await this.loadProviders();
      await this.refreshSidebar();
      await this.openFromUrl();
      this.dataset.ready = "true";
    } catch (error) {
      this.toast(error.message);
    }
  }

  /** Merge a change into the state and push it down. */
  set(change) {
    // Counts every change of the session, so a reload that started before one can tell.
    if ("session" in change) this.sessionChanges = (this.sessionChanges ?? 0) + 1;
    Object.assign(this.state, change);
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
    ui.spaces.state = { spaces: s.spaces, unattached: s.unattached, currentSessionId: s.session?.id,
      currentSpaceId: s.session ? null : s.spaceView, me: s.accounts ? s.me : null };
    ui.header.state = { session: s.session, spaces: s.spaces, formOpen: s.formOpen,
      accounts: s.accounts, may, space: s.session ? null : space };
    ui.access.state = { accounts: s.accounts, space };
    ui.empty.hidden = Boolean(s.session || s.spaceView);
    ui.title.textContent = s.session ? sessionTitle(s.session) : "";
    document.title = s.session ? `${sessionTitle(s.session)} · Smriti` : "Smriti";
    this.renderNotebook();
    // One bottom cell at a time: the checkpoint form takes the composer's place.
    ui.composer.hidden = !s.session || s.formOpen || may.readOnly;
    ui.composer.busy = inFlight(s.pending);
    ui.form.hidden = !s.formOpen;
    const mountedId = s.session?.mount?.checkpoint?.id ?? null;
    ui.lineage.state = { ...s.lineage, mountedId, selectedId: s.selectedId,
      spaceName: space?.name, canMerge: may.canMerge };
    const checkpoint = s.lineage.nodes.find((node) => node.id === s.selectedId) ?? null;
    ui.details.state = { checkpoint, mountedId, nodes: s.lineage.nodes,
      branches: s.lineage.branches, attached: Boolean(s.session?.space) && !may.readOnly,
      role: may.role, canMerge: may.canMerge && Boolean(space), bylines: may.bylines,
      mountHint: mountHint(may, s.session),
      // With no session open (a space on its own): your sessions outside any space.
      mountTargets: s.session ? [] : s.unattached };
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
    this.set({ drawer: open });
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
    });
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

  async refreshSidebar() {
    const { spaces, unattached } = await api.loadSidebar();
    this.set({ spaces, unattached });
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
    this.set({ session: null, turns: [], hasOlder: false, lineage: EMPTY_LINEAGE,
      placements: new Map(), plan: null, pending: null, selectedId: null, formOpen: false,
      spaceView: null });
  }

  /** A space on its own, no session open: its lineage and members (how a viewer reads it). */
  async openSpace(id, { push = true } = {}) {
    if (push && new URLSearchParams(location.search).get("space") !== id) {
      history.pushState({ space: id }, "", `/?space=${encodeURIComponent(id)}`);
    }
    this.closeSession({ push: false });
    this.set({ spaceView: id });
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
    this.state.session = null; // a new notebook, even when reopening the same session
    this.render();
    this.ui.composer.setModels(this.state.providers, session.model);
    this.ui.composer.value = loadDraft(id);
    this.set({ session, model: session.model, turns: page.turns, hasOlder: page.hasOlder,
      cursor: page.cursor, loadingOlder: false, pending: null, selectedId: null, formOpen: false,
      plan: null, spaceView: null });
    this.refreshPreview(); // not awaited: the notebook is usable before the preview arrives
    await this.refreshLineage();
  }

  /** The session as the server has it now (title, mount, space…). */
  async reloadSession() {
    const id = this.state.session?.id;
    if (!id) return;
    const changes = this.sessionChanges;
    const session = await api.loadSession(id);
    // Meanwhile the user may have opened a space or another session, or changed this
    // one (shared it, mounted…): then this answer is older than what is shown.
    if (session && this.sessionChanges === changes) this.set({ session });
  }

  /** The next older page; while one is loading, that one (callers may loop on it). */
  loadOlder() {
    const s = this.state;
    if (!s.session || !s.hasOlder) return Promise.resolve();
    if (!s.loadingOlder) this.older = this.fetchOlder().finally(() => { s.loadingOlder = false; });
    return this.older;
  }

  async fetchOlder() {
    const s = this.state;
    // Only the notebook changes while paging: render just it.
    s.loadingOlder = true;
    const sessionId = s.session.id;
    let page = null;
    try {
      page = await api.loadTurns(sessionId, s.cursor);
    } catch (error) {
      this.toast(error.message);
    }
    if (this.state.session?.id !== sessionId || !page) return;
    Object.assign(this.state, { turns: [...page.turns, ...this.state.turns],
      hasOlder: page.hasOlder, cursor: page.cursor, loadingOlder: false });
    this.renderNotebook();
  }

  async refreshLineage() {
    const { session, spaceView } = this.state;
    const spaceId = session ? session.space?.id : spaceView;
    const lineage = spaceId ? (await api.loadLineage(spaceId)) ?? EMPTY_LINEAGE : EMPTY_LINEAGE;
    if (session?.id !== this.state.session?.id || spaceView !== this.state.spaceView) return;
    const nodes = [...lineage.nodes];
    const forked = session?.forkedFrom && nodes.find((n) => n.id === session.forkedFrom.id);
    const placed = placements(nodes, session?.id);
    // A fork starts from its checkpoint: show it at the top of the notebook.
    if (forked && !placed.get(0)?.includes(forked)) placed.set(0, [forked, ...(placed.get(0) ?? [])]);
    this.set({ lineage, placements: placed });
  }

  /** The providers for the model picker, asked again while one is still being checked. */
  async loadProviders(recheck = 0) {
    const providers = await api.loadProviders();
    Object.assign(this.state, { providers: providers.providers, chatDefault: providers.chatDefault });
    if (this.state.session) this.ui.composer.setModels(this.state.providers, this.state.model);
    clearTimeout(this.providersTimer);
    if (recheck < PROVIDERS_RECHECKS && providers.providers.some((p) => p.reachability === "CHECKING")) {
      this.providersTimer = setTimeout(() => this.loadProviders(recheck + 1)
        .catch((error) => this.toast(error.message)), PROVIDERS_RECHECK_MS);
    }
  }

  /** contextPreview for what is in the composer now: the badge and status line. */
  async refreshPreview() {
    const { session, model } = this.state;
    if (!session) return;
    const ticket = ++this.previewTicket;
    try {
      const plan = await api.previewContext({ sessionId: session.id,
        content: this.ui.composer.value, model });
      if (ticket !== this.previewTicket || session.id !== this.state.session?.id) return;
      this.state.plan = plan;
      this.renderContext();
    } catch (error) {
      this.toast(error.message);
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
    else if (action === "checkpoint" && this.access().canSave) HANDLERS["open-checkpoint-form"].call(this);
    else if (action === "next" || action === "previous") this.moveFocus(action === "next" ? 1 : -1);
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
