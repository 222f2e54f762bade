// The review of a merge (previewMerge): every list field with each item's origin,
// a keep / drop choice per conflict, the title, objective and summary to write,
// then Save (mergeCheckpoints). A modal <dialog> like Compare; Esc closes it.
import { emit, h, replace } from "../dom.js";
import { name } from "./compare-view.js";

const FIELDS = [["decisions", "Decisions", "DECISIONS"], ["tasks", "Tasks", "TASKS"],
  ["openQuestions", "Open questions", "OPEN_QUESTIONS"], ["entities", "Entities", "ENTITIES"]];
const ORIGINS = { ANCESTOR: "kept", OURS: "ours", THEIRS: "theirs", BOTH: "both" };

export class MergeView extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    this.body = h("div", { class: "merge-body" });
    this.dialog = h("dialog", { class: "compare merge", "aria-label": "Merge checkpoints" },
      h("div", { class: "dialog-head" }, h("h2", {}, "Merge"),
        h("button", { type: "button", class: "icon", "aria-label": "Close merge",
          onclick: () => this.dialog.close() }, "×")),
      this.body);
    this.append(this.dialog);
  }

  /** Show a `previewMerge` result for `spaceId`; `branch`: the branch merged in
   * (its head is `theirs`), when the merge was asked for a branch. */
  show(preview, spaceId, { branch = null } = {}) {
    const { ours, theirs, commonAncestor, fastForward, upToDate } = preview;
    this.errors = h("p", { class: "error", role: "alert" });
    const choices = [];
    const fields = FIELDS.map(([key, label, field]) => {
      const { items, conflicts } = preview[key];
      const rows = items.map((item) => h("li", { dataset: { origin: item.origin } },
        item.text, " ", h("span", { class: "badge muted" }, ORIGINS[item.origin])));
      for (const conflict of conflicts) {
        const keep = h("input", { type: "checkbox", checked: true,
          "aria-label": `Keep “${conflict.text}”` });
        choices.push({ field, item: conflict.text, input: keep });
        rows.push(h("li", { class: "conflict", dataset: { origin: conflict.origin } },
          h("label", {}, keep, " ", conflict.text),
          " ", h("span", { class: "badge" }, `conflict: removed by ${conflict.origin === "OURS" ? "theirs" : "ours"}`)));
      }
      return h("section", { dataset: { field: key } }, h("h3", {}, label),
        rows.length ? h("ul", {}, rows) : h("p", { class: "muted" }, "—"));
    });
    const title = h("input", { "aria-label": "Merge title", value: preview.suggestedTitle });
    const objective = h("textarea", { "aria-label": "Merge objective", rows: 2 });
    objective.value = preview.suggestedObjective;
    const summary = h("textarea", { "aria-label": "Merge summary", rows: 3 });
    summary.value = preview.suggestedSummary;
    const input = () => ({ spaceId, into: preview.into, from: theirs.id, title: title.value,
      objective: objective.value, summary: summary.value,
      resolutions: choices.map(({ field, item, input: box }) => ({ field, item, keep: box.checked })) });
    const what = branch ? `${branch}'s head` : "this checkpoint";
    const note = upToDate ? `Branch ${preview.into} already contains ${what}.`
      : fastForward ? `Fast-forward: ${preview.into} moves to ${what}; nothing new is saved.`
        : preview.conflictCount === 0 ? "No conflicts: every item merges cleanly."
          : `${preview.conflictCount} conflict(s): choose for each whether to keep it.`;
    replace(this.body,
      h("p", {}, "Into ", h("strong", {}, preview.into), " (head ", name(ours), ") from ",
        branch ? ["branch ", h("strong", {}, branch), " (head ", name(theirs), ")"] : name(theirs)),
      h("p", {}, "Common ancestor: ", commonAncestor ? name(commonAncestor) : "none"),
      h("p", { class: `merge-note${fastForward ? " fast-forward" : " muted"}` }, note),
      fastForward || upToDate ? null : h("div", { class: "merge-fields" }, fields),
      fastForward || upToDate ? null : h("div", { class: "merge-text" },
        h("label", {}, "Title ", title), h("label", {}, "Objective ", objective),
        h("label", {}, "Summary ", summary)),
      this.errors,
      h("div", { class: "actions" },
        h("button", { type: "button", class: "small primary", disabled: upToDate,
          onclick: () => emit(this, "merge-checkpoints", { input: input() }) },
        fastForward ? "Fast-forward" : "Save merge")));
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** Payload errors of mergeCheckpoints, shown in the dialog (nothing was saved). */
  fail(errors) {
    this.errors.textContent = errors.map((e) => `${e.code}: ${e.message}`).join(" ");
  }

  close() {
    this.dialog.close();
  }
}

customElements.define("merge-view", MergeView);
