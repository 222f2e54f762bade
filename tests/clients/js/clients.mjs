// Each third-party client, with its default settings, against a running `smriti serve`.
// Usage: node clients.mjs <client> <graphql-url> <session-id>
// Prints one JSON object: what the client returned, and every HTTP request it made
// (method, Accept, the response's status and content type), seen through a fetch spy.
import WebSocket from "ws";

const [client, url, sessionId] = process.argv.slice(2);
const wsUrl = url.replace(/^http/, "ws");

const requests = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const response = await realFetch(input, init);
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : {}));
  requests.push({
    method: init.method ?? (input instanceof Request ? input.method : "GET"),
    accept: headers.get("accept"),
    status: response.status,
    contentType: response.headers.get("content-type"),
  });
  return response;
};

const QUERY = "query Providers { providers { chatDefault } }";
const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) {
  userTurn { sequenceNumber content } assistantTurn { sequenceNumber } errors { code } } }`;
const STREAM = `subscription Stream($input: SendMessageInput!) { messageStream(input: $input) {
  __typename } }`;
const input = (content) => ({ input: { sessionId, content } });

async function collect(iterable) {
  const events = [];
  for await (const result of iterable) {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    events.push(result.data.messageStream.__typename);
  }
  return events;
}

/** Every result of an operation, in order (a query or mutation over SSE: one). */
async function results(iterable) {
  const all = [];
  for await (const result of iterable) all.push(result);
  return all;
}

async function urql() {
  const { Client, fetchExchange, gql } = await import("@urql/core");
  const urqlClient = new Client({ url, exchanges: [fetchExchange] });
  const query = await urqlClient.query(gql(QUERY), {}).toPromise();
  const mutation = await urqlClient.mutation(gql(SEND), input("from urql")).toPromise();
  if (query.error || mutation.error) throw new Error(String(query.error ?? mutation.error));
  return { query: query.data, mutation: mutation.data };
}

async function apollo() {
  const { ApolloClient, HttpLink, InMemoryCache, gql, split } = await import("@apollo/client");
  const { GraphQLWsLink } = await import("@apollo/client/link/subscriptions");
  const { getMainDefinition } = await import("@apollo/client/utilities");
  const { createClient } = await import("graphql-ws");
  const wsClient = createClient({ url: wsUrl, webSocketImpl: WebSocket });
  const link = split(
    ({ query }) => getMainDefinition(query).operation === "subscription",
    new GraphQLWsLink(wsClient),
    new HttpLink({ uri: url }),
  );
  const apolloClient = new ApolloClient({ link, cache: new InMemoryCache() });
  const query = await apolloClient.query({ query: gql(QUERY) });
  const mutation = await apolloClient.mutate({ mutation: gql(SEND), variables: input("from apollo") });
  const subscription = await new Promise((resolve, reject) => {
    const events = [];
    apolloClient
      .subscribe({ query: gql(STREAM), variables: input("streamed to apollo") })
      .subscribe({
        next: (result) => (result.error ? reject(result.error) : events.push(result.data.messageStream.__typename)),
        error: reject,
        complete: () => resolve(events),
      });
  });
  await wsClient.dispose();
  return { query: query.data, mutation: mutation.data, subscription };
}

async function graphqlWs() {
  const { createClient } = await import("graphql-ws");
  const wsClient = createClient({ url: wsUrl, webSocketImpl: WebSocket });
  const query = await wsClient.iterate({ query: QUERY }).next();
  const subscription = await collect(
    wsClient.iterate({ query: STREAM, variables: input("streamed over graphql-ws") }),
  );
  await wsClient.dispose();
  return { query: query.value.data, subscription };
}

async function graphqlSse() {
  const { createClient } = await import("graphql-sse");
  const sseClient = createClient({ url });
  // Every operation is one stream: a query or a mutation is one result, then complete.
  const query = await results(sseClient.iterate({ query: QUERY }));
  const mutation = await results(
    sseClient.iterate({ query: SEND, variables: input("from graphql-sse") }),
  );
  const subscription = await collect(
    sseClient.iterate({ query: STREAM, variables: input("streamed over graphql-sse") }),
  );
  sseClient.dispose();
  return { query, mutation, subscription };
}

// A document the server refuses: still one answer, never a retry.
async function graphqlSseRefused() {
  const { createClient } = await import("graphql-sse");
  const sseClient = createClient({ url });
  const refused = await results(
    sseClient.iterate({ query: "mutation { sendMessage(input: {}) { nope } }" }),
  );
  sseClient.dispose();
  return { refused: refused.map((result) => result.errors.map((error) => error.message)) };
}

// A mutation whose first connection breaks before the answer comes back: the
// client sends the same POST again, and the server must not run it twice. The
// message carries an idempotency key, as a message from any client that retries should.
async function graphqlSseRetried() {
  const { createClient } = await import("graphql-sse");
  const sseClient = createClient({ url });
  const variables = { input: { sessionId, content: "sent once", idempotencyKey: "retried-post" } };
  const mutation = await results(sseClient.iterate({ query: SEND, variables }));
  sseClient.dispose();
  return { mutation };
}

// webui/api.js as the browser loads it: beside the /checkpoint-fields.js the
// server writes from its registry (it is not a file of webui/).
async function webUiApi() {
  const { mkdtemp, copyFile, writeFile } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { pathToFileURL, fileURLToPath } = await import("node:url");
  // realFetch: what the clients under test send is recorded, not this.
  const served = await realFetch(new URL("/checkpoint-fields.js", url));
  if (!served.ok) throw new Error(`/checkpoint-fields.js: HTTP ${served.status}`);
  const directory = await mkdtemp(join(tmpdir(), "smriti-webui-"));
  const webui = fileURLToPath(new URL("../../../webui/", import.meta.url));
  for (const name of ["api.js", "stream.js"]) {
    await copyFile(join(webui, name), join(directory, name));
  }
  await writeFile(join(directory, "checkpoint-fields.js"), await served.text());
  return import(pathToFileURL(join(directory, "api.js")).href);
}

// What the web UI's sidebar asks (webui/api.js), and the 20 sessions ×
// 100 turns, with urql's defaults: queries go by GET.
async function urqlSidebar() {
  const { Client, fetchExchange, gql } = await import("@urql/core");
  const { SIDEBAR } = await webUiApi();
  const urqlClient = new Client({ url, exchanges: [fetchExchange] });
  const RECENT = `query Recent { sessions(first: 20) { edges { node { title
    turns(first: 100) { edges { node { sequenceNumber } } } } } } }`;
  const answers = {};
  for (const [name, document] of Object.entries({ sidebar: SIDEBAR, recent: RECENT })) {
    const result = await urqlClient.query(gql(document), {}).toPromise();
    if (result.error) throw new Error(String(result.error));
    answers[name] = { data: result.data, cost: result.extensions?.cost };
  }
  return answers;
}

const clients = {
  urql,
  "urql-sidebar": urqlSidebar,
  apollo,
  "graphql-ws": graphqlWs,
  "graphql-sse": graphqlSse,
  "graphql-sse-refused": graphqlSseRefused,
  "graphql-sse-retried": graphqlSseRetried,
};
const result = await clients[client]();
// Exit once the output is written: a pipe takes 64 KiB at a time, and exiting at once
// cut a large result (the sidebar's) at 65,536 characters.
process.stdout.write(JSON.stringify({ ...result, requests }) + "\n", () => process.exit(0));
