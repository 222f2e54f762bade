// Small DOM-building helpers. Strings always become text nodes, never HTML.

/**
 * h("button", {class: "x", type: "button", onclick: fn, dataset: {id: 1}}, "Label")
 * Attributes named on* become event listeners; `false`/`null` values are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "value" || (name in element && typeof value !== "string")) {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? "" : value);
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/**
 * Replace an element's children without losing what the user was doing in them: every
 * control marked `data-keep` gets back, in the new children, the value it had under the
 * same key (a select only if that option is still there), and the one that had the focus
 * gets back the focus and its selection. A component re-rendered by a state change the
 * user did not make (a sidebar reload, a tag list arriving) must not eat half a word.
 */
export function replaceKeeping(element, ...children) {
  const kept = new Map();
  for (const control of element.querySelectorAll("[data-keep]")) {
    const focused = control === document.activeElement;
    kept.set(control.dataset.keep, { value: control.value, focused,
      start: focused ? selectionOf(control, "selectionStart") : null,
      end: focused ? selectionOf(control, "selectionEnd") : null });
  }
  replace(element, ...children);
  for (const control of element.querySelectorAll("[data-keep]")) {
    const was = kept.get(control.dataset.keep);
    if (!was) continue;
    const option = control.tagName === "SELECT"
      ? [...control.options].some((o) => o.value === was.value) : true;
    if (option) control.value = was.value;
    if (!was.focused) continue;
    control.focus();
    if (was.start !== null) control.setSelectionRange(was.start, was.end);
  }
}

/** A control's selection offset, or null where the control has none (a select, a checkbox). */
function selectionOf(control, name) {
  try {
    return typeof control[name] === "number" ? control[name] : null;
  } catch {
    return null;
  }
}

/**
 * A delete button's two presses: the first arms it (its text "Delete?", its name
 * `confirmLabel`, focus kept), a second within four seconds calls `onConfirm`; left alone,
 * it goes back to what it was. One rule for every destructive button, so a stray click or
 * Enter never deletes a space, a session or a preset at once.
 */
export function armOrConfirm(button, confirmLabel, onConfirm) {
  if (button.dataset.armed) {
    delete button.dataset.armed;
    return onConfirm();
  }
  const text = button.textContent;
  const label = button.getAttribute("aria-label");
  button.dataset.armed = "1";
  button.textContent = "Delete?";
  button.setAttribute("aria-label", confirmLabel);
  setTimeout(() => {
    if (!button.dataset.armed) return;
    delete button.dataset.armed;
    button.textContent = text;
    if (label === null) button.removeAttribute("aria-label");
    else button.setAttribute("aria-label", label);
  }, 4000);
  return undefined;
}

/** Dispatch a bubbling, composed CustomEvent from a component. */
export function emit(element, type, detail = {}) {
  element.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
}

/** Shallow equality of two state objects: re-render only when something changed. */
export function sameState(a, b) {
  if (!a || !b) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.is(a[key], b[key]));
}
