// Right pane, under the graph: the selected checkpoint with Mount / Fork /
// Compare / Merge into… / Open source conversation. A viewer of the space forks
// without a branch name (a private session of theirs, outside the space) and merges
// nothing; with more than one member, who saved it ("by ana").
import { emit, h, replace, sameState } from "../dom.js";
import { byline } from "../format.js";
import { mergeTargets } from "../merge-targets.js";
import { checkpointBody } from "./checkpoint-cell.js";

export class CheckpointDetails extends HTMLElement {
  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { checkpoint: cp, mountedId, nodes = [], branches = [], attached, role = null,
      canMerge = attached, bylines = false, mountHint = "Open a session of this space to mount",
      mountTargets = [], currentBranch = null } = this._state ?? {};
    this.className = "checkpoint-details";
    this.hidden = !cp;
    if (!cp) return replace(this);
    const fire = (type, detail) => () => emit(this, type, { id: cp.id, ...detail });
    const branch = h("input", { "aria-label": "New branch name", placeholder: "branch name (optional)" });
    const others = nodes.filter((node) => node.id !== cp.id);
    const other = h("select", { "aria-label": "Compare with" },
      others.map((node) => h("option", { value: node.id }, `${node.shortHash} ${node.title}`)));
    // Any branch that does not contain it yet, the one the user is on first.
    const targets = mergeTargets(branches, nodes, cp.id, currentBranch);
    const into = h("select", { "aria-label": "Merge into branch" },
      targets.map((b) => h("option", { value: b.name }, b.name)));
    const mounted = cp.id === mountedId;
    const range = cp.sourceTurnRange;
    replace(this,
      h("div", { class: "details-head" },
        h("h3", {}, h("span", { class: "hash" }, cp.shortHash), " ", cp.title),
        h("button", { type: "button", class: "icon", "aria-label": "Close details",
          onclick: () => emit(this, "select-checkpoint", { id: null }) }, "×")),
      h("p", { class: "muted" }, `Branch ${cp.branchName}`,
        cp.parent ? ` · parent ${cp.parent.shortHash}` : " · root",
        cp.mergeParent ? ` · merged ${cp.mergeParent.shortHash}${mergedFrom(cp, nodes)}` : "",
        ` · ${new Date(cp.createdAt).toLocaleString()}`,
        bylines && cp.author ? h("span", { class: "byline" }, ` · ${byline(cp.author)}`) : null),
      checkpointBody(cp),
      h("div", { class: "actions" },
        mounted
          ? h("button", { type: "button", class: "small", onclick: () => emit(this, "unmount") }, "Unmount")
          : h("button", { type: "button", class: "small primary", disabled: !attached,
            title: attached ? "" : mountHint, "aria-describedby": attached ? null : "mount-hint",
            onclick: fire("mount-checkpoint") },
          "Mount"),
        cp.sourceSession ? h("button", { type: "button", class: "small",
          onclick: fire("open-source", { sessionId: cp.sourceSession.id, seq: range?.first ?? null }) },
        "Open source conversation") : null),
      // Why Mount is off, in words (a disabled button shows no tooltip to a keyboard or touch).
      !mounted && !attached ? h("p", { class: "muted mount-hint", id: "mount-hint" }, `${mountHint}.`) : null,
      // A space opened on its own: mounting reads the lineage, so it can go into any
      // session of yours outside a space (a viewer's too).
      !attached && mountTargets.length ? mountInto(cp, mountTargets, this) : null,
      range && cp.sourceSession ? h("p", { class: "muted" },
        `From turns ${range.first}–${range.last} of “${cp.sourceSession.title || "Untitled session"}”`) : null,
      role === "VIEWER"
        ? h("div", { class: "inline-form" },
          h("span", { class: "muted" }, "Fork it into a private session of yours:"),
          h("button", { type: "button", class: "small", onclick: fire("fork-checkpoint") }, "Fork"))
        : h("div", { class: "inline-form" }, branch,
          h("button", { type: "button", class: "small", onclick: () =>
            emit(this, "fork-checkpoint", { id: cp.id, branchName: branch.value.trim() || null }) },
          "Fork")),
      others.length ? h("div", { class: "inline-form" }, other,
        h("button", { type: "button", class: "small", onclick: () =>
          emit(this, "compare", { a: cp.id, b: other.value }) }, "Compare")) : null,
      targets.length && canMerge ? h("div", { class: "inline-form" }, into,
        h("button", { type: "button", class: "small", onclick: () =>
          emit(this, "preview-merge", { from: cp.id, into: into.value }) }, "Merge into…")) : null);
  }
}

customElements.define("checkpoint-details", CheckpointDetails);

/** "Mount in [session]": the sessions of yours in no space. */
function mountInto(cp, sessions, element) {
  const target = h("select", { "aria-label": "Session to mount it in" },
    sessions.map((session) => h("option", { value: session.id },
      session.title || "Untitled session")));
  return h("div", { class: "inline-form" },
    h("span", { class: "muted" }, "Mount in"), target,
    h("button", { type: "button", class: "small", onclick: () =>
      emit(element, "mount-checkpoint", { id: cp.id, sessionId: target.value }) }, "Mount here"));
}

/** " from <branch>": the branch of a merge's second parent, when it is loaded. */
function mergedFrom(cp, nodes) {
  const from = nodes.find((node) => node.id === cp.mergeParent.id);
  return from ? ` from ${from.branchName}` : "";
}
