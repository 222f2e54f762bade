// Where the sign-in page may send the user afterwards: a path of this server, else "/".

/**
 * `next` (already decoded from the query string) if it names a page of `origin`.
 * Checked by resolving it as the browser will (`new URL`, like `location.assign`),
 * plus what parsers read differently: a backslash counts as "/" and tabs and
 * newlines are dropped, so "/\evil.example" and "/%09/evil.example" leave the server.
 */
export function safeNext(next, origin) {
  if (typeof next !== "string" || !next.startsWith("/")) return "/";
  if (next.startsWith("//") || /[\\\u0000-\u001f\u007f]/.test(next)) return "/";
  let url;
  try {
    url = new URL(next, origin);
  } catch {
    return "/";
  }
  return url.origin === origin ? next : "/";
}
