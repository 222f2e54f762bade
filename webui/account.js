// Accounts mode: the signed-in name, "API tokens" and "Sign out" in the top bar;
// back to the sign-in page when the session has ended. Does nothing without accounts.
const ERRORS = "errors { code message field }";
const TOKENS = `{ viewer { apiTokens { id name prefix readOnly createdAt lastUsedAt
  expiresAt revokedAt } } }`;
const CREATE = `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) {
  secret apiToken { id } ${ERRORS} } }`;
const REVOKE = `mutation($id: ID!) { revokeApiToken(input: {id: $id}) { apiToken { id } ${ERRORS} } }`;
const MODELS = "{ providers { adminsOnly providers { name available models } } }";
const SET_ACCESS = `mutation($input: SetModelAccessInput!) { setModelAccess(input: $input) {
  model adminsOnly ${ERRORS} } }`;

function toLogin() {
  location.assign(`/login.html?next=${encodeURIComponent(location.pathname + location.search)}`);
}

async function graphql(query, variables = {}) {
  const response = await fetch("/graphql", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  if (response.status === 401) toLogin();
  const body = await response.json();
  if (body.errors) throw new Error(body.errors[0].message);
  return body.data;
}

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function tokensDialog() {
  const list = el("ul", { className: "token-list" });
  const secret = el("p", { className: "token-secret", id: "token-secret", hidden: true });
  const note = el("p", { id: "token-note", hidden: true },
    "Copy it now: it is shown this once.");
  const name = el("input", { id: "token-name", placeholder: "Name (e.g. my script)", required: true });
  const readOnly = el("input", { type: "checkbox", id: "token-read-only" });
  const create = el("button", { type: "submit", id: "token-create" }, "Create token");
  const error = el("p", { className: "login-error", role: "alert", hidden: true });
  const form = el("form", { className: "token-form" }, name,
    el("label", {}, readOnly, " read-only"), create);
  const close = el("button", { type: "button", className: "ghost" }, "Close");
  const dialog = el("dialog", { id: "tokens-dialog", className: "tokens-dialog" },
    el("div", { className: "dialog-head" }, el("h2", {}, "API tokens"), close),
    form, error, note, secret, list);
  close.addEventListener("click", () => {
    secret.textContent = "";
    secret.hidden = note.hidden = true;
    dialog.close();
  });

  async function refresh() {
    const data = await graphql(TOKENS);
    list.replaceChildren(...data.viewer.apiTokens.map((t) => {
      const label = `${t.name} · ${t.prefix}… · ${t.readOnly ? "read-only" : "read-write"}`
        + (t.revokedAt ? " · revoked" : "");
      const item = el("li", {}, el("span", {}, label));
      if (!t.revokedAt) {
        const revoke = el("button", { type: "button", className: "ghost" }, "Revoke");
        revoke.addEventListener("click", async () => {
          await graphql(REVOKE, { id: t.id });
          await refresh();
        });
        item.append(revoke);
      }
      return item;
    }));
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const data = await graphql(CREATE, { input: { name: name.value, readOnly: readOnly.checked } });
    const payload = data.createApiToken;
    if (payload.errors.length) {
      error.textContent = payload.errors[0].message;
      error.hidden = false;
      return;
    }
    secret.textContent = payload.secret;
    secret.hidden = note.hidden = false;
    name.value = "";
    await refresh();
  });
  document.body.append(dialog);
  return { open: async () => { await refresh(); dialog.showModal(); } };
}

// Admins only: which models everyone may use and which are kept for admins.
function modelsDialog() {
  const list = el("ul", { className: "model-access-list" });
  const note = el("p", { id: "model-access-note", role: "status" });
  const error = el("p", { className: "login-error", id: "model-access-error", role: "alert",
    hidden: true });
  const close = el("button", { type: "button", className: "ghost", ariaLabel: "Close models" },
    "Close");
  const dialog = el("dialog", { id: "models-dialog", className: "tokens-dialog" },
    el("div", { className: "dialog-head" }, el("h2", {}, "Models"), close),
    el("p", { className: "muted" },
      "Every account uses the server's providers. A model kept for admins is hidden from "
      + "everyone else and refused to them."),
    error, list, note);
  close.addEventListener("click", () => dialog.close());

  function row(model, kept) {
    const box = el("input", { type: "checkbox", checked: kept, ariaLabel: `${model}: admins only` });
    box.addEventListener("change", async () => {
      error.hidden = true;
      note.textContent = "";
      const data = await graphql(SET_ACCESS, { input: { model, adminsOnly: box.checked } });
      const payload = data.setModelAccess;
      if (payload.errors.length) {
        error.textContent = payload.errors[0].message;
        error.hidden = false;
        box.checked = !box.checked;
        return;
      }
      note.textContent = payload.adminsOnly
        ? `${model} is kept for admins.` : `${model} is open to everyone.`;
    });
    return el("li", {}, el("span", { className: "model-name" }, model),
      el("label", {}, box, " admins only"));
  }

  async function refresh() {
    const { providers } = await graphql(MODELS);
    const kept = new Set(providers.adminsOnly);
    const models = providers.providers.flatMap((p) => p.models);  // "provider/model"
    list.replaceChildren(...models.map((model) => row(model, kept.has(model))));
  }

  document.body.append(dialog);
  return { open: async () => { note.textContent = ""; await refresh(); dialog.showModal(); } };
}

async function start() {
  const response = await fetch("/auth/me");
  if (response.status === 401) {
    toLogin();
    return;
  }
  const me = await response.json();
  if (me.mode !== "accounts") return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/account.css";
  document.head.append(link);
  const bar = document.querySelector(".topbar");
  const help = document.getElementById("help-button");
  const name = el("span", { className: "account-name", id: "account-name" }, me.name);
  const tokens = el("button", { type: "button", className: "ghost", id: "tokens-button" }, "API tokens");
  const signOut = el("button", { type: "button", className: "ghost", id: "sign-out" }, "Sign out");
  const dialog = tokensDialog();
  tokens.addEventListener("click", () => dialog.open());
  signOut.addEventListener("click", async () => {
    await fetch("/auth/logout", { method: "POST" });
    location.assign("/login.html");
  });
  const controls = el("span", { className: "account" }, name, tokens);
  if (me.isAdmin) {
    const models = el("button", { type: "button", className: "ghost", id: "models-button" },
      "Models");
    const access = modelsDialog();
    models.addEventListener("click", () => access.open());
    controls.append(models);
  }
  controls.append(signOut);
  bar.insertBefore(controls, help);
}

start();
