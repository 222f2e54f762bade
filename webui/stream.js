// GraphQL over Server-Sent Events (graphql-sse, "distinct connections" mode), read
// with fetch: POST {query, variables} with `Accept: text/event-stream`, then
// `event: next` blocks (data: one GraphQL result) until `event: complete`.
// EventSource is not used: it can only GET, and the server refuses GET streams.
// Used only by api.js.

/** The stream could not be opened and nothing arrived (the caller may fall back). */
export class StreamUnavailable extends Error {}

/** One SSE block ("event: next\ndata: {...}") as {event, data}. */
function parseBlock(block) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    if (colon === 0) continue; // a comment
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return { event, data: data.join("\n") };
}

/**
 * Yield each GraphQL result ({data, errors}) the server sends, until it completes.
 * Throws StreamUnavailable when the response is not a stream, the signal's
 * AbortError when aborted, another Error when the connection breaks mid-way.
 * Stopping early (break, return, abort) closes the connection, which is how the
 * server is told to stop.
 */
export async function* graphqlSse(url, body, signal) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST", signal, body: JSON.stringify(body),
      headers: { "content-type": "application/json", accept: "text/event-stream" },
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new StreamUnavailable(`The stream could not be opened (${error.message}).`);
  }
  const type = response.headers.get("content-type") ?? "";
  if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
    response.body?.cancel().catch(() => {});
    throw new StreamUnavailable(
      `The server did not stream (HTTP ${response.status}, ${type || "no content type"}).`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      // Normalise line ends; a trailing "\r" waits in case "\n" follows.
      const cut = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
      buffer = buffer.slice(0, cut).replace(/\r\n?/g, "\n") + buffer.slice(cut);
      let end;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const { event, data } = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event === "complete") return;
        if (event === "next" && data) yield JSON.parse(data);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  throw new Error("the stream ended before it was complete");
}
