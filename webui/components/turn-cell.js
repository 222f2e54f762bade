// One turn as a notebook cell: "In [2]" / "Out [2]" (numbered by exchange, the sequence
// number in the title), provider/model on replies, content;
// a reply that did not simply finish says why ("Stopped: token limit"); a cut-off
// reply the notebook marks with `actions` offers Continue (continueReply: the rest
// comes as the next cell) and Retry; a continuation sits right under the reply it
// continues; with `byline` (a space of several members), who wrote a message ("by ana").
// With `branch` (issue 21): Edit on a message (a textarea in place: Save & send makes a
// new branch of the conversation from there) and Regenerate on a reply; where the
// conversation has alternatives at this cell, "‹ 2 / 3 ›" switches between them.
import { emit, h, sameState } from "../dom.js";
import { byline, cellLabel, cellTitle, finishLabel, settingsSummary, settingsTitle } from "../format.js";

export class TurnCell extends HTMLElement {
  set turn(turn) {
    this._turn = turn;
    if (this.isConnected) this.render();
  }

  get turn() {
    return this._turn;
  }

  set actions(on) {
    if (Boolean(on) === Boolean(this._actions)) return;
    this._actions = on;
    if (this._rendered) this.render();
  }

  /** Show who wrote a message (the notebook's, for spaces with several members). */
  set byline(on) {
    if (Boolean(on) === Boolean(this._byline)) return;
    this._byline = on;
    if (this._rendered) this.render();
  }

  /** A question left without a reply: marked, with Retry. */
  set noReply(on) {
    if (Boolean(on) === Boolean(this._noReply)) return;
    this._noReply = on;
    if (this._rendered) this.render();
  }

  /** {editable, editing, busy, alternatives: {index, count, sessions} | null} */
  set branch(value) {
    if (sameState(value, this._branch)) return;
    this._branch = value;
    if (this._rendered) this.render();
  }

  connectedCallback() {
    if (!this._rendered) this.render();
  }

  render() {
    const turn = this._turn;
    if (!turn) return;
    if (!this._branch?.editing) this._editor = null;
    this._rendered = true;
    const dimmed = this.classList.contains("dimmed"); // the notebook's, kept across renders
    this.className = `cell turn ${turn.role.toLowerCase()}${this._noReply ? " unanswered" : ""}${
      turn.continuesSequence ? " continuation" : ""}`;
    this.classList.toggle("dimmed", dimmed);
    this.tabIndex = 0;
    this.dataset.seq = turn.sequenceNumber;
    this.id = `turn-${turn.sequenceNumber}`;
    // Which model answered: on replies only (a question has no author model), and the
    // provider alone when it did not say (a ChatGPT export without model_slug).
    const model = turn.role !== "ASSISTANT" || !turn.provider ? ""
      : turn.model ? `${turn.provider}/${turn.model}` : turn.provider;
    const stopped = finishLabel(turn);
    const body = h("div", { class: "cell-body" });
    if (turn.role === "ASSISTANT" && typeof turn.contentHtml === "string") {
      body.classList.add("markdown");
      // The only HTML the UI inserts: rendered and sanitised by the server.
      body.innerHTML = turn.contentHtml;
    } else {
      body.classList.add("plain");
      body.textContent = turn.content;
    }
    const kept = this._editor?.querySelector("textarea");
    const typing = kept && kept === document.activeElement
      ? { area: kept, start: kept.selectionStart, end: kept.selectionEnd } : null;
    this.replaceChildren(
      h("div", { class: "cell-gutter", title: cellTitle(turn) }, cellLabel(turn)),
      h("div", { class: "cell-main" },
        h("div", { class: "cell-meta" }, model,
          this._byline && turn.role === "USER" && turn.author
            ? h("span", { class: "byline" }, byline(turn.author)) : null,
          turn.continuesSequence ? h("span", { class: "tag" }, "continuation") : null,
          stopped ? h("span", { class: `tag finish${stopped.cutOff ? " warn" : ""}`,
            title: stopped.title }, stopped.text) : null,
          this._noReply ? h("span", { class: "tag warn" }, "no reply") : null,
          turn.settings ? h("span", { class: "tag settings-used", title: settingsTitle(turn.settings) },
            settingsSummary(turn.settings)) : null),
        this._branch?.editing ? this.keptEditor(turn) : body,
        this._branch ? this.tools(turn, this._branch) : null,
        this._actions ? this.actionBar(turn) : null,
        this._noReply ? this.retryBar(turn) : null),
    );
    // A new editor takes the focus at once, the caret at the end: not a frame later,
    // when typing may have begun (and would land after the old text). One kept across
    // this render gets back the focus and selection it had.
    const area = this._focusEditor;
    this._focusEditor = null;
    if (area?.isConnected) {
      area.focus();
      area.setSelectionRange(area.value.length, area.value.length);
    } else if (typing?.area.isConnected) {
      typing.area.focus();
      typing.area.setSelectionRange(typing.start, typing.end);
    }
  }

  /** Edit / Regenerate, and the alternatives switcher. */
  tools(turn, { editable, editing, busy, alternatives }) {
    const seq = turn.sequenceNumber;
    const user = turn.role === "USER";
    const action = editable && !editing && (user || turn.role === "ASSISTANT")
      ? h("button", { type: "button", class: "link", disabled: busy,
        title: user ? "Edit this message and send it again: a new branch of the conversation "
          + "(this one is kept)"
          : "Ask for a new reply: a new branch of the conversation (this one is kept)",
        onclick: () => emit(this, user ? "edit-start" : "regenerate-turn", { seq }) },
      busy ? "Sending…" : user ? "Edit" : "Regenerate") : null;
    const switcher = alternatives && alternatives.count > 1 ? this.switcher(seq, alternatives) : null;
    if (!action && !switcher) return null;
    return h("div", { class: "cell-tools" }, switcher, action);
  }

  switcher(seq, { index, count, sessions }) {
    const go = (to) => emit(this, "switch-alternative", { seq, sessionId: sessions[to].id });
    return h("span", { class: "alternatives", role: "group", "aria-label": "Alternatives" },
      h("button", { type: "button", class: "link", "aria-label": "Previous alternative",
        title: "Previous alternative", disabled: index === 0, onclick: () => go(index - 1) }, "‹"),
      h("span", { class: "alternative-count" }, `${index + 1} / ${count}`),
      h("button", { type: "button", class: "link", "aria-label": "Next alternative",
        title: "Next alternative", disabled: index === count - 1, onclick: () => go(index + 1) },
      "›"));
  }

  /** The editor while editing lasts: the same textarea across renders, so what is being
   * typed (and where the caret is) survives a re-render of the cell. */
  keptEditor(turn) {
    if (!this._editor) this._editor = this.editor(turn);
    return this._editor;
  }

  /** The message in a textarea: Save & send (Ctrl/⌘+Enter) or Cancel (Escape). */
  editor(turn) {
    const seq = turn.sequenceNumber;
    const area = h("textarea", { class: "cell-edit", "aria-label": "Edit message", rows: 3 });
    area.value = turn.content;
    const save = () => {
      const content = area.value.trim();
      if (content) emit(this, "edit-turn", { seq, content });
    };
    const cancel = () => emit(this, "edit-cancel", { seq });
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        cancel();
      }
    });
    this._focusEditor = area; // once it is in the page (render)
    return h("div", { class: "cell-editor" }, area,
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: save }, "Save & send"),
        h("button", { type: "button", onclick: cancel }, "Cancel")));
  }

  retryBar(turn) {
    const seq = turn.sequenceNumber;
    return h("div", { class: "actions no-reply" },
      h("span", { class: "muted" }, "No reply was saved for this message; it is still sent with the next ones."),
      h("button", { type: "button", title: "Ask the model to answer this message",
        onclick: () => emit(this, "retry-turn", { seq }) }, "Retry"));
  }

  actionBar(turn) {
    const seq = turn.sequenceNumber;
    return h("div", { class: "actions" },
      h("button", { type: "button",
        title: "Ask the model to go on from where this reply stopped; the rest comes below it",
        onclick: () => emit(this, "continue-reply", { seq }) }, "Continue"),
      h("button", { type: "button", title: "Ask the same question again for a new reply",
        onclick: () => emit(this, "retry-reply", { seq }) }, "Retry"));
  }
}

customElements.define("turn-cell", TurnCell);
