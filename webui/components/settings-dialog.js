// A session's model settings in a modal <dialog>: its instructions (a system
// prompt of its own) and parameters (temperature, top_p, max output tokens, stop
// list). A field left empty takes the space's default, shown as its placeholder
// ("from space defaults"). The space's owner edits those defaults here too
// ("Settings of: space defaults"). Saving sends save-settings {target, settings};
// the app answers with show() (as saved) or fail() (payload errors, in words).
import { armOrConfirm, emit, h, replace } from "../dom.js";

export const SETTINGS_FIELDS = [
  ["instructions", "Instructions"], ["temperature", "Temperature"], ["topP", "Top p"],
  ["maxOutputTokens", "Max output tokens"], ["stop", "Stop sequences"],
];

export class SettingsDialog extends HTMLElement {
  connectedCallback() {
    if (this.dialog) return;
    this.body = h("form", { class: "settings-body", onsubmit: (event) => {
      event.preventDefault();
      this.save();
    } });
    this.dialog = h("dialog", { class: "settings-dialog", id: "settings-dialog",
      "aria-labelledby": "settings-title" },
    h("div", { class: "dialog-head" }, h("h2", { id: "settings-title" }, "Model settings"),
      h("button", { type: "button", class: "icon", "aria-label": "Close settings",
        onclick: () => this.close() }, "×")),
    this.body);
    this.append(this.dialog);
  }

  /** Show (or refresh) the settings of `session`; `target`: "session" or "space"
   * (the space's defaults, for its owner); `note`: what just happened. */
  show(session, target = this.target ?? "session", note = "") {
    this.session = session;
    const space = session.space;
    const owner = space?.viewerRole === "OWNER";
    this.target = target === "space" && owner ? "space" : "session";
    const own = this.target === "space" ? space.settings : session.settings;
    const inherited = new Set(this.target === "session" ? session.inheritedSettings ?? [] : []);
    const defaults = space?.settings ?? {};
    const from = (name) => (inherited.has(name) ? `from space defaults: ${shown(name, defaults[name])}` : "");
    this.inputs = {
      instructions: h("textarea", { id: "settings-instructions", rows: 4, value: own?.instructions ?? "",
        placeholder: from("instructions") || "A system prompt of your own, sent before everything else" }),
      temperature: h("input", { id: "settings-temperature", type: "number", step: "any",
        inputmode: "decimal", value: own?.temperature ?? "", placeholder: from("temperature") || "default" }),
      topP: h("input", { id: "settings-top-p", type: "number", step: "any",
        inputmode: "decimal", value: own?.topP ?? "", placeholder: from("topP") || "default" }),
      maxOutputTokens: h("input", { id: "settings-max-tokens", type: "number", min: 1, step: 1,
        inputmode: "numeric", value: own?.maxOutputTokens ?? "",
        placeholder: from("maxOutputTokens") || "default" }),
      stop: h("textarea", { id: "settings-stop", rows: 2, value: (own?.stop ?? []).join("\n"),
        placeholder: from("stop") || "One per line (at most 4)" }),
    };
    this.error = h("p", { class: "error", role: "alert", id: "settings-error", hidden: true });
    const field = ([name, label]) => h("label", { class: `settings-field ${name}` },
      h("span", {}, label), this.inputs[name],
      inherited.has(name) ? h("small", { class: "muted inherited" }, "from space defaults") : null);
    replace(this.body,
      owner ? h("label", { class: "settings-target" }, "Settings of ",
        h("select", { id: "settings-target", onchange: (event) => this.show(this.session, event.target.value) },
          h("option", { value: "session", selected: this.target === "session" }, "this session"),
          h("option", { value: "space", selected: this.target === "space" },
            `space defaults (${space.name})`))) : null,
      h("p", { class: "muted" }, this.target === "space"
        ? "Defaults for every session of the space; a session's own value wins, field by field."
        : "Empty fields take the space's defaults (if any), else the provider's."),
      SETTINGS_FIELDS.map(field),
      this.error,
      h("p", { class: "muted", role: "status", id: "settings-note" }, note),
      h("div", { class: "dialog-actions" },
        h("button", { type: "button", class: "small", id: "settings-clear",
          onclick: () => this.send({}) }, "Clear all"),
        h("button", { type: "submit", class: "small primary", id: "settings-save" }, "Save")),
      this.target === "session" ? this.presetForm() : null);
    if (!this.dialog.open) this.dialog.showModal();
  }

  /** "Save as preset": the model chosen now and these fields, under a name of yours;
   * presets are chosen from the model picker. Below it, your presets (`this.presets`,
   * set by the app): each renamed in place (Enter or "Rename") or deleted. */
  presetForm() {
    const name = h("input", { id: "preset-name", placeholder: "Preset name", "aria-label": "Preset name" });
    const presets = this.presets ?? [];
    return [h("div", { class: "preset-save" }, name,
      h("button", { type: "button", class: "small", id: "preset-save",
        onclick: () => emit(this, "save-preset", { name: name.value, settings: this.values() }) },
      "Save as preset")),
    presets.length ? h("section", { class: "preset-list", "aria-labelledby": "presets-title" },
      h("h3", { id: "presets-title" }, "Your presets"),
      h("ul", {}, presets.map((preset) => this.presetRow(preset)))) : null];
  }

  presetRow(preset) {
    const rename = () => emit(this, "rename-preset", { presetId: preset.id, name: input.value });
    const input = h("input", { class: "preset-name", value: preset.name,
      "aria-label": `Name of preset ${preset.name}`,
      // Enter renames this preset; it does not submit the settings form around it.
      onkeydown: (event) => {
        if (event.key !== "Enter") return;
        event.preventDefault();
        rename();
      } });
    return h("li", { class: "preset-row", "data-preset-id": preset.id }, input,
      h("span", { class: "muted preset-model" }, preset.model),
      h("button", { type: "button", class: "small", "aria-label": `Rename preset ${preset.name}`,
        onclick: rename }, "Rename"),
      h("button", { type: "button", class: "small", "aria-label": `Delete preset ${preset.name}`,
        onclick: (event) => armOrConfirm(event.currentTarget, `Confirm delete preset ${preset.name}`,
          () => emit(this, "delete-preset", { presetId: preset.id, name: preset.name })) },
      "Delete"));
  }

  values() {
    const text = (name) => this.inputs[name].value.trim();
    const number = (name) => (text(name) === "" ? null : Number(text(name)));
    const stop = this.inputs.stop.value.split("\n").filter((line) => line !== "");
    return { instructions: text("instructions") || null, temperature: number("temperature"),
      topP: number("topP"), maxOutputTokens: number("maxOutputTokens"), stop: stop.length ? stop : null };
  }

  save() {
    this.send(this.values());
  }

  send(settings) {
    emit(this, "save-settings", { target: this.target, settings });
  }

  /** Payload errors, in words, beside the form (nothing was saved). */
  fail(errors) {
    this.error.hidden = false;
    this.error.textContent = errors.map((error) => error.message).join(" ");
  }

  close() {
    if (this.dialog?.open) this.dialog.close();
  }
}

function shown(name, value) {
  if (name === "stop") return (value ?? []).map((s) => JSON.stringify(s)).join(", ");
  if (name === "instructions") return value.length > 60 ? `${value.slice(0, 60)}…` : value;
  return String(value);
}

customElements.define("settings-dialog", SettingsDialog);
