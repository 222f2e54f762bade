// The idempotencyKey each sent message went with, per session, in localStorage, until
// it is answered: Retry on an unanswered turn (also after a reload) resends with the
// same key, so the server answers that turn instead of saving the question twice.
const key = (sessionId) => `smriti.keys.${sessionId}`;

function read(sessionId) {
  try {
    return JSON.parse(localStorage.getItem(key(sessionId)) ?? "{}") ?? {};
  } catch {
    return {};
  }
}

function write(sessionId, keys) {
  try {
    if (Object.keys(keys).length) localStorage.setItem(key(sessionId), JSON.stringify(keys));
    else localStorage.removeItem(key(sessionId));
  } catch {
    // Storage full or disabled: Retry then asks the question again as a new message.
  }
}

export const keyFor = (sessionId, seq) => read(sessionId)[seq] ?? null;

export function rememberKey(sessionId, seq, idempotencyKey) {
  write(sessionId, { ...read(sessionId), [seq]: idempotencyKey });
}

export function forgetKey(sessionId, seq) {
  const keys = read(sessionId);
  delete keys[seq];
  write(sessionId, keys);
}
