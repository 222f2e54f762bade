// The review of a merge (previewMerge): every list field with each item's origin,
// what the merge drops (and which branch removed it), and per conflict a choice
// that starts undecided (keep one branch's text, or drop it; Save merge waits for
// all of them), the title, objective and summary to write, then Save (mergeCheckpoints). A modal <dialog> like Compare; Esc closes it.
// Likely contradictions between the two branches' items are warnings above the
// fields: each can be dismissed (that only hides it) and none blocks Save merge.
import { LIST_FIELDS } from "../checkpoint-fields.js";
import { emit, h, replace } from "../dom.js";
import { name } from "./compare-view.js";

const FIELDS = LIST_FIELDS.map((field) => [field.name, field.label, field.member]);
/** Where a merged item comes from, in branch names rather than ours/theirs. */
function origin(value, into, from) {
  return { ANCESTOR: "kept", OURS: `from ${into}`, THEIRS: `from ${from}`, BOTH: "both" }[value];
}

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
    const into = preview.into;
    const save = h("button", { type: "button", class: "small primary", disabled: upToDate,
      onclick: () => emit(this, "merge-checkpoints", { input: input() }) },
    fastForward ? "Fast-forward" : "Save merge");
    const left = h("span", { class: "conflicts-left" });
    // A conflict starts undecided: Save merge stays off until each one is.
    const decide = () => {
      const open = choices.filter((choice) => !choice.decision()).length;
      save.disabled = upToDate || open > 0;
      left.textContent = open ? ` ${open} left to decide.` : " All decided.";
    };
    const fields = FIELDS.map(([key, label, field]) => {
      const { items, itemConflicts, dropped } = preview[key];
      const rows = items.map((item) => h("li", { dataset: { origin: item.origin } },
        item.text, " ", h("span", { class: "badge muted" }, origin(item.origin, into, theirs.branchName)),
        item.matchedBy === "SIMILARITY" ? h("span", { class: "badge muted" }, "matched by text") : null));
      for (const conflict of itemConflicts) {
        const group = `merge-${key}-${conflict.id}`;
        const option = (text, value, what) => {
          const radio = h("input", { type: "radio", name: group, value,
            onchange: decide, "aria-label": what });
          return h("label", { class: "choice" }, radio, " ", what);
        };
        const options = [
          conflict.intoText === null ? null
            : option(conflict.intoText, "INTO", `Keep ${conflict.intoBranch}'s “${conflict.intoText}”`),
          conflict.fromText === null ? null
            : option(conflict.fromText, "FROM", `Keep ${conflict.fromBranch}'s “${conflict.fromText}”`),
          option(null, "DROP", `Drop “${conflict.ancestorText ?? conflict.intoText ?? conflict.fromText}”`),
        ];
        const row = h("li", { class: "conflict", dataset: { id: conflict.id } },
          h("span", { class: "badge" }, `conflict: ${conflict.description}`),
          conflict.matchedBy === "SIMILARITY" ? h("span", { class: "badge muted" }, "matched by text") : null,
          h("div", { role: "radiogroup", "aria-label": `Resolve: ${conflict.description}` }, options));
        choices.push({ field, id: conflict.id,
          decision: () => row.querySelector(`input[name="${group}"]:checked`)?.value });
        rows.push(row);
      }
      for (const item of dropped) {
        rows.push(h("li", { class: "dropped", dataset: { id: item.id } },
          h("s", {}, item.text), " ", h("span", { class: "badge muted" }, `dropped: removed on ${item.removedOn}`)));
      }
      return h("section", { dataset: { field: key } }, h("h3", {}, label),
        rows.length ? h("ul", {}, rows) : h("p", { class: "muted" }, "—"));
    });
    const warnings = fastForward || upToDate ? null : this.warnings(preview);
    const title = h("input", { "aria-label": "Merge title", value: preview.suggestedTitle });
    const objective = h("textarea", { "aria-label": "Merge objective", rows: 2 });
    objective.value = preview.suggestedObjective;
    const summary = h("textarea", { "aria-label": "Merge summary", rows: 3 });
    summary.value = preview.suggestedSummary;
    const input = () => ({ spaceId, into: preview.into, from: theirs.id, title: title.value,
      objective: objective.value, summary: summary.value,
      resolutions: choices.map(({ field, id, decision }) => (decision() === "DROP"
        ? { field, itemId: id, keep: false } : { field, itemId: id, take: decision() })) });
    const what = branch ? `${branch}'s head` : "this checkpoint";
    const note = upToDate ? `Branch ${preview.into} already contains ${what}.`
      : fastForward ? `Fast-forward: ${preview.into} moves to ${what}; nothing new is saved.`
        : preview.conflictCount === 0 ? "No conflicts: every item merges cleanly."
          : `${preview.conflictCount} conflict(s): for each, keep one branch's text or drop it.`;
    replace(this.body,
      h("p", {}, "Into ", h("strong", {}, preview.into), " (head ", name(ours), ") from ",
        branch ? ["branch ", h("strong", {}, branch), " (head ", name(theirs), ")"] : name(theirs)),
      h("p", {}, "Common ancestor: ", commonAncestor ? name(commonAncestor) : "none"),
      h("p", { class: `merge-note${fastForward ? " fast-forward" : " muted"}` }, note,
        preview.conflictCount && !fastForward && !upToDate ? left : null),
      warnings,
      fastForward || upToDate ? null : h("div", { class: "merge-fields" }, fields),
      fastForward || upToDate ? null : h("div", { class: "merge-text" },
        h("label", {}, "Title ", title), h("label", {}, "Objective ", objective),
        h("label", {}, "Summary ", summary)),
      this.errors,
      h("div", { class: "actions" }, save));
    if (!fastForward) decide();
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** The warnings of possible contradictions, each with Dismiss (which only hides
   * it), and the note when the model could not check; null when there is neither. */
  warnings({ warnings = [], warningsNote = null, into, theirs }) {
    if (!warnings.length && !warningsNote) return null;
    const label = Object.fromEntries(FIELDS.map(([, text, field]) => [field, text]));
    const list = h("ul", {}, warnings.map((warning) => {
      const row = h("li", { class: "merge-warning", dataset: { source: warning.source } },
        h("span", { class: "badge" }, `${label[warning.field]}: possible contradiction`), " ",
        `${into}'s “${warning.intoText}” and ${theirs.branchName}'s “${warning.fromText}”. `,
        h("span", { class: "muted" }, warning.reason,
          warning.source === "HEURISTIC" ? " (a word-level guess)" : ""), " ",
        h("button", { type: "button", class: "small", "aria-label":
          `Dismiss the warning on “${warning.intoText}” and “${warning.fromText}”`,
        onclick: () => {
          row.remove();
          if (list.children.length) return;
          found.remove();
          if (!section.children.length) section.remove();
        } }, "Dismiss"));
      return row;
    }));
    const found = h("div", {},
      h("p", {}, "These may contradict each other; the merge keeps both unless you change it."), list);
    const section = h("section", { class: "merge-warnings", role: "note", "aria-label": "Merge warnings" },
      warningsNote ? h("p", { class: "muted" }, warningsNote) : null,
      warnings.length ? found : null);
    return section;
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
