// What the user typed, per session, in localStorage: kept until it is sent.
const key = (sessionId) => `smriti.draft.${sessionId}`;

export function loadDraft(sessionId) {
  try {
    return localStorage.getItem(key(sessionId)) ?? "";
  } catch {
    return "";
  }
}

export function saveDraft(sessionId, text) {
  try {
    if (text) localStorage.setItem(key(sessionId), text);
    else localStorage.removeItem(key(sessionId));
  } catch {
    // Storage full or disabled: the text is still in the composer.
  }
}
