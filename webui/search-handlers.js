// What <smriti-app> does for the search events: a page of hits for <search-results>,
// and opening a hit (a message in its session, a session, a checkpoint, a space).
// Like handlers.js, each runs with `this` = the app. Opening reuses the app's own
// handlers (`open-source` pages back to a turn, `select-checkpoint` shows one).
import * as api from "./api.js";
import { drawerSet } from "./store.js";

/** Show a checkpoint in its space's lineage: open a session of that space first when
 * the open session is in another (the one it was made in, else the newest). */
async function showCheckpoint(app, handlers, checkpoint) {
  if (app.state.session?.space?.id !== checkpoint.space.id) {
    const sessions = app.state.spaces.find((space) => space.id === checkpoint.space.id)?.sessions ?? [];
    const target = sessions.find((session) => session.id === checkpoint.sourceSession?.id)
      ?? sessions.at(-1);
    if (!target) {
      return app.toast(`Space ${checkpoint.space.name} has no session yet: start one in it to see its lineage.`);
    }
    app.dispatch(drawerSet, null);
    await app.openSession(target.id);
  }
  handlers["select-checkpoint"].call(app, { id: checkpoint.id });
  app.ui.lineage.querySelector(".node.selected")?.focus();
}

/** Bring a space into view in the spaces pane (its drawer on a narrow screen). */
async function showSpace(app, id) {
  if (!app.state.spaces.some((space) => space.id === id)) await app.refreshSidebar();
  if (app.isDrawer("left")) app.dispatch(drawerSet, "left");
  if (!app.ui.spaces.showSpace(id)) app.toast("That space no longer exists.");
}

/** The search handlers, given the app's full table (to reuse its handlers). */
export const searchHandlers = (handlers) => ({
  "search-query"({ query }) {
    this.ui.results.open(query, this.state.session?.space ?? null);
  },
  async "search-page"({ request }) {
    try {
      this.ui.results.show(request, await api.search(request));
    } catch (error) {
      this.ui.results.fail(request, error);
    }
  },
  "open-search-hit"({ kind, node }) {
    if (kind === "TURN") {
      return handlers["open-source"].call(this, { sessionId: node.session.id, seq: node.sequenceNumber });
    }
    if (kind === "SESSION") return handlers["select-session"].call(this, { id: node.id });
    if (kind === "CHECKPOINT") return showCheckpoint(this, handlers, node);
    return showSpace(this, node.id);
  },
});
