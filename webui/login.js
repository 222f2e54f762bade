// The sign-in page: POST /auth/login (JSON), then back to where the user was going.
import { safeNext } from "./next.js";

const form = document.getElementById("login-form");
const error = document.getElementById("login-error");

function destination() {
  // Only a path on this server: never an open redirect.
  return safeNext(new URLSearchParams(location.search).get("next"), location.origin);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.hidden = true;
  const data = new FormData(form);
  let response;
  try {
    response = await fetch("/auth/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: data.get("name"), password: data.get("password") }),
    });
  } catch {
    error.textContent = "The server cannot be reached.";
    error.hidden = false;
    return;
  }
  if (response.ok) {
    location.assign(destination());
    return;
  }
  const body = await response.json().catch(() => ({}));
  error.textContent = body.error || `Sign-in failed (${response.status}).`;
  error.hidden = false;
  document.getElementById("login-password").select();
});
