// Accounts mode: the signed-in name, "API tokens" and "Sign out" in the top bar;
// back to the sign-in page when the session has ended. Does nothing without accounts.
// Its requests go through api.js (the one module that talks to the network).
import * as api from "./api.js";
import { h } from "./dom.js";

/** Show a payload's first error in `error`; true when there was one. */
function failed(payload, error) {
  const first = payload.errors?.[0];
  error.textContent = first?.message ?? "";
  error.hidden = !first;
  return Boolean(first);
}

// How long a new token works (createApiToken's expiresInDays; "" = never).
const EXPIRIES = [["30", "30 days"], ["90", "90 days"], ["365", "1 year"], ["", "Never"]];
const DAY_MS = 24 * 60 * 60 * 1000;

/** " · expires in N days" / " · expired" / "" (never). */
function expiry(expiresAt) {
  if (!expiresAt) return "";
  const days = Math.round((new Date(expiresAt) - Date.now()) / DAY_MS);
  if (days <= 0) return " · expired";
  return days === 1 ? " · expires in 1 day" : ` · expires in ${days} days`;
}

/** Put `text` on the clipboard (a selection and execCommand where the Clipboard
 * API is not offered); true when it worked. */
async function copyText(text, element) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    getSelection().selectAllChildren(element);
    return document.execCommand("copy");
  }
}

function tokensDialog() {
  const list = h("ul", { class: "token-list" });
  const secret = h("code", { class: "token-secret", id: "token-secret" });
  const copy = h("button", { type: "button", id: "token-copy", "aria-describedby": "token-note" }, "Copy");
  const shown = h("div", { class: "token-shown", hidden: true }, secret, copy);
  const note = h("p", { id: "token-note", hidden: true }, "Copy it now: it is shown this once.");
  const name = h("input", { id: "token-name", placeholder: "Name (e.g. my script)", required: true,
    "aria-label": "Token name" });
  const readOnly = h("input", { type: "checkbox", id: "token-read-only" });
  // Like the CLI's `--expires`: a token that is forgotten stops working on its own.
  const expires = h("select", { id: "token-expires" },
    EXPIRIES.map(([value, label]) => h("option", { value, selected: value === "90" }, label)));
  const create = h("button", { type: "submit", id: "token-create" }, "Create token");
  const error = h("p", { class: "login-error", role: "alert", hidden: true });
  const form = h("form", { class: "token-form" }, name, h("label", {}, readOnly, " read-only"),
    h("label", {}, "Expires ", expires), create);
  const close = h("button", { type: "button", class: "ghost" }, "Close");
  const dialog = h("dialog", { id: "tokens-dialog", class: "tokens-dialog" },
    h("div", { class: "dialog-head" }, h("h2", {}, "API tokens"), close),
    form, error, note, shown, list);
  const hideSecret = () => {
    secret.textContent = "";
    shown.hidden = note.hidden = true;
    copy.textContent = "Copy";
  };
  close.addEventListener("click", () => {
    hideSecret();
    dialog.close();
  });
  copy.addEventListener("click", async () => {
    copy.textContent = await copyText(secret.textContent, secret) ? "Copied" : "Select and copy it";
  });

  async function refresh() {
    const tokens = await api.loadApiTokens();
    list.replaceChildren(...tokens.map((t) => {
      const label = `${t.name} · ${t.prefix}… · ${t.readOnly ? "read-only" : "read-write"}`
        + (t.revokedAt ? " · revoked" : expiry(t.expiresAt));
      return h("li", {}, h("span", {}, label),
        t.revokedAt ? null : h("button", { type: "button", class: "ghost", onclick: async () => {
          await api.revokeApiToken(t.id);
          await refresh();
        } }, "Revoke"));
    }));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    hideSecret();
    const payload = await api.createApiToken({ name: name.value, readOnly: readOnly.checked,
      expiresInDays: expires.value ? Number(expires.value) : null });
    if (failed(payload, error)) return;
    secret.textContent = payload.secret;
    shown.hidden = note.hidden = false;
    name.value = "";
    await refresh();
  });
  document.body.append(dialog);
  return { open: async () => { await refresh(); dialog.showModal(); } };
}

// Admins only: which models everyone may use and which are kept for admins.
function modelsDialog() {
  const list = h("ul", { class: "model-access-list" });
  const note = h("p", { id: "model-access-note", role: "status" });
  const error = h("p", { class: "login-error", id: "model-access-error", role: "alert", hidden: true });
  const close = h("button", { type: "button", class: "ghost", "aria-label": "Close models" }, "Close");
  const dialog = h("dialog", { id: "models-dialog", class: "tokens-dialog" },
    h("div", { class: "dialog-head" }, h("h2", {}, "Models"), close),
    h("p", { class: "muted" },
      "Every account uses the server's providers. A model kept for admins is hidden from "
      + "everyone else and refused to them."),
    error, list, note);
  close.addEventListener("click", () => dialog.close());

  function row(model, kept) {
    const box = h("input", { type: "checkbox", checked: kept, "aria-label": `${model}: admins only`,
      onchange: async () => {
        error.hidden = true;
        note.textContent = "";
        const payload = await api.setModelAccess({ model, adminsOnly: box.checked });
        if (failed(payload, error)) {
          box.checked = !box.checked;
          return;
        }
        note.textContent = payload.adminsOnly
          ? `${model} is kept for admins.` : `${model} is open to everyone.`;
      } });
    return h("li", {}, h("span", { class: "model-name" }, model), h("label", {}, box, " admins only"));
  }

  async function refresh() {
    const access = await api.loadModelAccess();
    const kept = new Set(access.adminsOnly);
    const models = access.providers.flatMap((p) => p.models); // "provider/model"
    list.replaceChildren(...models.map((model) => row(model, kept.has(model))));
  }

  document.body.append(dialog);
  return { open: async () => { note.textContent = ""; await refresh(); dialog.showModal(); } };
}

async function start() {
  const me = await api.loadMe();
  if (!me) return api.toLogin();
  if (me.mode !== "accounts") return undefined;
  document.head.append(h("link", { rel: "stylesheet", href: "/account.css" }));
  const bar = document.querySelector(".topbar");
  const help = document.getElementById("help-button");
  const tokens = tokensDialog();
  const controls = h("span", { class: "account" },
    h("span", { class: "account-name", id: "account-name" }, me.name),
    h("button", { type: "button", class: "ghost", id: "tokens-button", onclick: () => tokens.open() },
      "API tokens"));
  if (me.isAdmin) {
    const access = modelsDialog();
    controls.append(h("button", { type: "button", class: "ghost", id: "models-button",
      onclick: () => access.open() }, "Models"));
  }
  controls.append(h("button", { type: "button", class: "ghost", id: "sign-out",
    onclick: () => api.signOut() }, "Sign out"));
  bar.insertBefore(controls, help);
  return undefined;
}

start();
