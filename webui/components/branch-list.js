// The lineage's branches, in the graph's legend order and lane colours. Each name is
// a button that opens the branch: its head, and "Merge into…" another branch, which
// sends preview-merge with the branch's head as `from` (the review is merge-view's).
import { emit, h, replace, sameState } from "../dom.js";
import { mergeTargets } from "../merge-targets.js";

const PANEL = "branch-panel";

export class BranchList extends HTMLElement {
  constructor() {
    super();
    this.open = null; // the branch whose panel is shown (this pane's own view state)
  }

  /** {order: names in legend order, branches: [{name, head}], nodes: lineage nodes}. */
  set state(state) {
    if (sameState(state, this._state)) return;
    this._state = state;
    this.render();
  }

  render() {
    const { order = [], branches = [] } = this._state ?? {};
    this.className = "branch-list";
    if (!branches.some((branch) => branch.name === this.open)) this.open = null;
    const known = new Set(branches.map((branch) => branch.name));
    const key = (name, index) => known.has(name)
      ? h("button", { type: "button", class: `lane-key lane-${index % 6}`, "aria-label": `Branch ${name}`,
        "aria-expanded": String(name === this.open), "aria-controls": PANEL, dataset: { branch: name },
        onclick: () => this.toggle(name) }, name)
      : h("span", { class: `lane-key lane-${index % 6}` }, name);
    replace(this, h("div", { class: "legend muted" }, order.map(key)),
      this.open ? this.panel(this.open) : null);
  }

  toggle(name) {
    this.open = this.open === name ? null : name;
    this.render();
    this.querySelector(`.legend [data-branch="${CSS.escape(name)}"]`)?.focus();
  }

  panel(name) {
    const { order, branches, nodes, canMerge = true, currentBranch = null } = this._state;
    const branch = branches.find((b) => b.name === name);
    const head = nodes.find((node) => node.id === branch.head?.id);
    // Any other branch that does not contain its head yet, the one the user is on first.
    const targets = branch.head ? mergeTargets(branches, nodes, branch.head.id, currentBranch, name) : [];
    const into = h("select", { "aria-label": `Merge branch ${name} into` },
      targets.map((b) => h("option", { value: b.name }, b.name)));
    const colour = `lane-${order.indexOf(name) % 6}`;
    return h("div", { class: `branch-panel ${colour}`, id: PANEL, role: "group",
      "aria-label": `Branch ${name}` },
    h("p", {}, h("strong", { class: "branch-name" }, name), " · head ",
      head ? [h("span", { class: "hash" }, head.shortHash), ` ${head.title}`] : "none",
      head && head.branchName !== name ? ` (on ${head.branchName})` : ""),
    !head || !canMerge ? null : targets.length ? h("div", { class: "inline-form" }, into,
      h("button", { type: "button", class: "small", onclick: () =>
        emit(this, "preview-merge", { from: head.id, into: into.value, branch: name }) }, "Merge into…"))
      : h("p", { class: "muted" }, branches.length > 1
        ? "Every other branch contains this checkpoint already." : "No other branch to merge it into."));
  }
}

customElements.define("branch-list", BranchList);
