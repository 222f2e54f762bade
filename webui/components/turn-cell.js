// One turn as a notebook cell: "In [2]" / "Out [2]" (numbered by exchange, the sequence
// number in the title), provider/model on replies, content;
// a reply that did not simply finish says why ("Stopped: token limit"); a cut-off
// reply the notebook marks with `actions` offers Continue (continueReply: the rest
// comes as the next cell) and Retry; a continuation sits right under the reply it
// continues; with `byline` (a space of several members), who wrote a message ("by ana").
import { emit, h } from "../dom.js";
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

  connectedCallback() {
    if (!this._rendered) this.render();
  }

  render() {
    const turn = this._turn;
    if (!turn) return;
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
        body,
        this._actions ? this.actionBar(turn) : null,
        this._noReply ? this.retryBar(turn) : null),
    );
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
