// The only module that talks to the network. Every GraphQL document is a named
// constant; the functions below return plain data (payload errors included).
import { LIST_FIELDS } from "./checkpoint-fields.js";
import { graphqlSse, StreamUnavailable } from "./stream.js";

export { StreamUnavailable };

const ENDPOINT = "/graphql";
const ERRORS = "errors { code message field }";

// Turn fields shared by every document (`...TurnFields`); `contentHtml` is the
// server's sanitised Markdown.
const TURN_FRAGMENT = `fragment TurnFields on Turn {
  id role content contentHtml provider model sequenceNumber interrupted finishReason
  providerFinishReason replyToSequence continuesSequence exchangeNumber author { name viaToken }
  settings { instructions temperature topP maxOutputTokens stop } }`;
const SETTINGS = "instructions temperature topP maxOutputTokens stop";
const SPACE_ACCESS = "viewerRole members { userName role }";
const SESSION_FIELDS = `id title familyId branchName model memoryScope lastSequenceNumber
  visibility authorName pinned archived tags
  space { id name ${SPACE_ACCESS} settings { ${SETTINGS} } }
  settings { ${SETTINGS} } inheritedSettings
  mount { baseSequence checkpoint { id shortHash title } }
  forkedFrom { id shortHash }
  branchedFrom { afterSequence session { id title } }
  alternatives { sequenceNumber index count sessions { id } }`;
// A checkpoint's list fields (served by the server from its field registry),
// and `select` asking each of them for `what` ("decisions { onlyA … }").
const LISTS = LIST_FIELDS.map((field) => field.name).join(" ");
const select = (what) => LIST_FIELDS.map((field) => `${field.name} { ${what} }`).join(" ");
// Each list's items with their ids: the checkpoint form sends them back so an
// edited item keeps its identity (issue 18).
const ITEM_FIELDS = LIST_FIELDS.map((field) => `${field.items} { id text }`).join(" ");
const CHECKPOINT_FIELDS = `id shortHash hash title objective summary ${LISTS}
  ${ITEM_FIELDS} branchName createdAt baseSequence parent { id shortHash }
  mergeParent { id shortHash } sourceSession { id title } sourceTurnRange { first last }
  author { name viaToken }`;

// The sidebar under a filter ($archived: false, all but the archived; true, only
// them; $tag: those with that tag): each space's sessions and those in no space,
// pinned first, and your pinned sessions on their own (the "Pinned" group on top).
const SIDEBAR_ROW = "id title authorName visibility pinned archived tags familyId branchCount";
export const SIDEBAR = `query($archived: Boolean, $tag: String) {
  spaces(first: 100) { edges { node { id name viewerRole
    sessions(first: 100, archived: $archived, tag: $tag, branches: LATEST_PER_FAMILY) {
      edges { node { ${SIDEBAR_ROW} } } } } } }
  sessions(first: 100, unattached: true, archived: $archived, tag: $tag,
    branches: LATEST_PER_FAMILY) {
    edges { node { ${SIDEBAR_ROW} } } }
  pinned: sessions(first: 100, pinned: true, archived: $archived, tag: $tag,
    branches: LATEST_PER_FAMILY) {
    edges { node { ${SIDEBAR_ROW} space { name } } } }
}`;
export const PROVIDERS = `{ providers { chatDefault
  providers { name available reason models reachability } } }`;
export const SESSION = `query($id: ID!) { session(id: $id) { ${SESSION_FIELDS} } }`;
export const TURNS_PAGE = `query($id: ID!, $before: String) { session(id: $id) {
  turns(last: 50, before: $before) { pageInfo { hasPreviousPage startCursor }
    edges { node { ...TurnFields } } } } }`;
export const LINEAGE = `query($id: ID!) { space(id: $id) { id name ${SPACE_ACCESS}
  branches { name head { id } }
  lineage(first: 1000) { edges { node { ${CHECKPOINT_FIELDS} } } } }
  verifyLineage(spaceId: $id) { ok checked
    firstBroken { reason checkpoint { id shortHash title } } } }`;
export const MEMBERS = `query($id: ID!) { space(id: $id) { id name ${SPACE_ACCESS} } }`;
export const CONTEXT_PREVIEW = `query($input: ContextPreviewInput!) {
  contextPreview(input: $input) { mode boundary tokenEstimate contextWindow model
    checkpoints { id shortHash title } turns { sequenceNumber }
    messages { role content sequenceNumbers includesNewMessage merged }
    settings { temperature topP maxOutputTokens stop } } }`;
export const COMPARE = `query($a: ID!, $b: ID!) { compareCheckpoints(a: $a, b: $b) {
  a { id shortHash title } b { id shortHash title } commonAncestor { id shortHash title }
  ${select("onlyA shared onlyB")} } }`;

const MERGE_FIELD = `items { id text origin matchedBy }
  itemConflicts { id ancestorText intoBranch intoText intoChange fromBranch fromText fromChange
    description matchedBy }
  dropped { id text removedOn keptOn matchedBy }`;
export const PREVIEW_MERGE = `query($input: PreviewMergeInput!) { previewMerge(input: $input) {
  into fastForward upToDate conflictCount suggestedTitle suggestedObjective suggestedSummary
  ours { id shortHash title } theirs { id shortHash title branchName } commonAncestor { id shortHash title }
  ${select(MERGE_FIELD)}
  warnings { field intoText fromText reason source } warningsNote } }`;

const mutation = (name, type, result) =>
  `mutation($input: ${type}!) { ${name}(input: $input) { ${result} ${ERRORS} } }`;
const SESSION_RESULT = `session { ${SESSION_FIELDS} }`;

const PRESET_FIELDS = `id name model settings { ${SETTINGS} }`;
export const PRESETS = `{ viewer { presets { ${PRESET_FIELDS} } } }`;
export const CREATE_PRESET = mutation("createPreset", "CreatePresetInput",
  `preset { ${PRESET_FIELDS} }`);
export const APPLY_PRESET = mutation("applyPreset", "ApplyPresetInput", SESSION_RESULT);
export const UPDATE_PRESET = mutation("updatePreset", "UpdatePresetInput",
  `preset { ${PRESET_FIELDS} }`);
export const DELETE_PRESET = mutation("deletePreset", "DeletePresetInput", "deletedId");
export const CREATE_SPACE = mutation("createSpace", "CreateSpaceInput", "space { id name }");
export const UPDATE_SPACE = mutation("updateSpace", "UpdateSpaceInput",
  `space { id name settings { ${SETTINGS} } }`);
export const DELETE_SPACE = mutation("deleteSpace", "DeleteSpaceInput", "deletedId");
export const CREATE_SESSION = mutation("createSession", "CreateSessionInput", SESSION_RESULT);
export const UPDATE_SESSION = mutation("updateSession", "UpdateSessionInput", SESSION_RESULT);
export const DELETE_SESSION = mutation("deleteSession", "DeleteSessionInput", "deletedId");
export const ATTACH_SPACE = mutation("attachSpace", "AttachSpaceInput", SESSION_RESULT);
export const DETACH_SPACE = mutation("detachSpace", "DetachSpaceInput", SESSION_RESULT);
export const MOUNT = mutation("mountCheckpoint", "MountCheckpointInput", SESSION_RESULT);
export const UNMOUNT = mutation("unmountCheckpoint", "UnmountCheckpointInput", SESSION_RESULT);
export const FORK = mutation("forkSession", "ForkSessionInput", SESSION_RESULT);
// A new branch of the conversation, sent: its session, the message answered, the reply.
const BRANCHED = `${SESSION_RESULT} userTurn { ...TurnFields } assistantTurn { ...TurnFields }`;
export const REGENERATE = mutation("regenerate", "RegenerateInput", BRANCHED);
export const EDIT_AND_RESEND = mutation("editAndResend", "EditAndResendInput", BRANCHED);
// The same, streamed: the message answered first (its session is the new branch).
const BRANCH_EVENTS = `__typename
    ... on StreamUserTurn { userTurn { ...TurnFields session { id } } }
    ... on StreamDelta { delta }
    ... on StreamAssistantTurn { assistantTurn { ...TurnFields } }
    ... on StreamFailed { ${ERRORS} partialReply { ...TurnFields } }`;
export const REGENERATE_STREAM = `subscription($input: RegenerateInput!) {
  regenerateStream(input: $input) { ${BRANCH_EVENTS} } }`;
export const EDIT_STREAM = `subscription($input: EditAndResendInput!) {
  editAndResendStream(input: $input) { ${BRANCH_EVENTS} } }`;
export const SEND_MESSAGE = mutation("sendMessage", "SendMessageInput",
  "userTurn { ...TurnFields } assistantTurn { ...TurnFields }");
// The reply streamed: StreamUserTurn, StreamDelta…, then StreamAssistantTurn or StreamFailed.
export const MESSAGE_STREAM = `subscription($input: SendMessageInput!) {
  messageStream(input: $input) { __typename
    ... on StreamUserTurn { userTurn { ...TurnFields } }
    ... on StreamDelta { delta }
    ... on StreamAssistantTurn { assistantTurn { ...TurnFields } }
    ... on StreamFailed { ${ERRORS} partialReply { ...TurnFields } } } }`;
export const CONTINUE_REPLY = mutation("continueReply", "ContinueReplyInput",
  "continuation { ...TurnFields }");
// A cut-off reply continued, streamed: StreamContinuing, StreamDelta…, then
// StreamAssistantTurn (the continuation) or StreamFailed.
export const CONTINUE_STREAM = `subscription($input: ContinueReplyInput!) {
  continueReplyStream(input: $input) { __typename
    ... on StreamDelta { delta }
    ... on StreamAssistantTurn { assistantTurn { ...TurnFields } }
    ... on StreamFailed { ${ERRORS} partialReply { ...TurnFields } } } }`;
export const DRAFT_CHECKPOINT = mutation("draftCheckpoint", "DraftCheckpointInput",
  `extracted { title objective summary ${LISTS} sourceTurnRange { first last } model }
  carried { checkpoint { id shortHash title } objective ${LISTS} ${ITEM_FIELDS} }`);
export const CREATE_CHECKPOINT = mutation("createCheckpoint", "CreateCheckpointInput",
  `checkpoint { ${CHECKPOINT_FIELDS} }`);
const MEMBER_RESULT = `space { id name ${SPACE_ACCESS} }`;
export const ADD_MEMBER = mutation("addSpaceMember", "AddSpaceMemberInput", MEMBER_RESULT);
export const UPDATE_MEMBER = mutation("updateSpaceMember", "UpdateSpaceMemberInput", MEMBER_RESULT);
export const REMOVE_MEMBER = mutation("removeSpaceMember", "RemoveSpaceMemberInput", MEMBER_RESULT);
export const MERGE_CHECKPOINTS = mutation("mergeCheckpoints", "MergeCheckpointsInput",
  "checkpoint { id } fastForward");

/** A transport failure or a top-level GraphQL error (a bug, or a query's bad input:
 * `code` is the error's `extensions.code`, e.g. INVALID, when the server gave one). */
export class ApiError extends Error {
  constructor(message, code = null) {
    super(message);
    this.code = code;
  }
}

const withFragments = (query) =>
  query.includes("...TurnFields") ? `${query}\n${TURN_FRAGMENT}` : query;

// Set once the user signs out: a request still in flight then answers 401, and
// its redirect (back here after sign-in) must not overtake the plain sign-in page.
let signingOut = false;

/** The sign-in page, coming back here after (accounts mode, once signed out). */
export function toLogin() {
  if (signingOut) return;
  location.assign(`/login.html?next=${encodeURIComponent(location.pathname + location.search)}`);
}

async function request(query, variables = {}) {
  const document = withFragments(query);
  let response;
  try {
    response = await fetch(ENDPOINT, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: document, variables }),
    });
  } catch (error) {
    throw new ApiError(`The server could not be reached (${error.message}).`);
  }
  if (response.status === 401) toLogin(); // the sign-in ended (accounts mode)
  if (response.status === 413) {
    throw new ApiError("The request is larger than the server accepts (its request body limit).",
      "TOO_LARGE");
  }
  const body = await response.json().catch(() => null);
  if (!body || body.errors?.length) {
    const error = body?.errors?.[0];
    throw new ApiError(error?.message ?? `HTTP ${response.status}`, error?.extensions?.code ?? null);
  }
  return body.data;
}

const nodes = (connection) => connection.edges.map((edge) => edge.node);
const run = async (doc, name, input) => (await request(doc, { input }))[name];

/** The sidebar under `filter` ({archived, tag}, store.js ALL_SESSIONS by default); the
 * branches of a conversation share one row, its latest branch's (the server groups them). */
export async function loadSidebar(filter = { archived: false, tag: null }) {
  const data = await request(SIDEBAR, { archived: filter.archived, tag: filter.tag });
  const spaces = nodes(data.spaces).map((space) => ({ ...space, sessions: nodes(space.sessions) }));
  return { spaces, unattached: nodes(data.sessions), pinned: nodes(data.pinned) };
}

export const loadProviders = async () => (await request(PROVIDERS)).providers;
export const loadSession = async (id) => (await request(SESSION, { id })).session;

export async function loadTurns(id, before = null) {
  const data = await request(TURNS_PAGE, { id, before });
  if (!data.session) return null;
  const { pageInfo, edges } = data.session.turns;
  return { turns: edges.map((edge) => edge.node), hasOlder: pageInfo.hasPreviousPage,
    cursor: pageInfo.startCursor };
}

export async function loadLineage(spaceId) {
  const data = await request(LINEAGE, { id: spaceId });
  const space = data.space;
  // The first checkpoint that fails verification carries why (its cell and node say so).
  const broken = data.verifyLineage?.firstBroken;
  const marked = nodes(space?.lineage ?? { edges: [] }).map((node) => broken?.checkpoint.id === node.id
    ? { ...node, broken: broken.reason } : node);
  return space ? { branches: space.branches, nodes: marked,
    verification: data.verifyLineage,
    space: { id: space.id, name: space.name, viewerRole: space.viewerRole, members: space.members } }
    : null;
}

/** Who is signed in, as /auth/me says ({mode: "accounts" | "local", name, isAdmin});
 * null when nobody is (a 401: account.js goes to the sign-in page). */
export async function loadMe() {
  const response = await fetch("/auth/me", { headers: { accept: "application/json" } });
  if (response.status === 401) return null;
  return (await response.json().catch(() => null)) ?? {};
}

/** {accounts, name}: whether the server has accounts, and who is signed in. */
export async function loadAccount() {
  const me = await loadMe();
  return { accounts: me?.mode === "accounts", name: me?.name ?? null };
}

/** Ends the sign-in, then opens the sign-in page (with no way back to here). */
export async function signOut() {
  signingOut = true;
  await fetch("/auth/logout", { method: "POST" });
  location.assign("/login.html");
}

// The account dialogs (account.js): API tokens, and which models are kept for admins.
export const API_TOKENS = `{ viewer { apiTokens { id name prefix readOnly createdAt lastUsedAt
  expiresAt revokedAt } } }`;
export const CREATE_API_TOKEN = mutation("createApiToken", "CreateApiTokenInput",
  "secret apiToken { id }");
export const REVOKE_API_TOKEN = mutation("revokeApiToken", "RevokeApiTokenInput", "apiToken { id }");
export const MODEL_ACCESS = "{ providers { adminsOnly providers { name available models } } }";
export const SET_MODEL_ACCESS = mutation("setModelAccess", "SetModelAccessInput", "model adminsOnly");

export const loadApiTokens = async () => (await request(API_TOKENS)).viewer.apiTokens;
export const createApiToken = (input) => run(CREATE_API_TOKEN, "createApiToken", input);
export const revokeApiToken = (id) => run(REVOKE_API_TOKEN, "revokeApiToken", { id });
/** {adminsOnly: ["provider/model"…], providers: [{name, available, models}]}. */
export const loadModelAccess = async () => (await request(MODEL_ACCESS)).providers;
export const setModelAccess = (input) => run(SET_MODEL_ACCESS, "setModelAccess", input);

export const loadMembers = async (spaceId) => (await request(MEMBERS, { id: spaceId })).space;
export const previewContext = async (input) =>
  (await request(CONTEXT_PREVIEW, { input })).contextPreview;
export const compareCheckpoints = async (a, b) =>
  (await request(COMPARE, { a, b })).compareCheckpoints;
export const previewMerge = async (input) =>
  (await request(PREVIEW_MERGE, { input })).previewMerge;

export const loadPresets = async () => (await request(PRESETS)).viewer.presets;
export const createPreset = (input) => run(CREATE_PRESET, "createPreset", input);
export const applyPreset = (input) => run(APPLY_PRESET, "applyPreset", input);
export const updatePreset = (input) => run(UPDATE_PRESET, "updatePreset", input);
export const deletePreset = (id) => run(DELETE_PRESET, "deletePreset", { id });
export const createSpace = (input) => run(CREATE_SPACE, "createSpace", input);
export const updateSpace = (input) => run(UPDATE_SPACE, "updateSpace", input);
export const deleteSpace = (id) => run(DELETE_SPACE, "deleteSpace", { id });
export const createSession = (input) => run(CREATE_SESSION, "createSession", input);
export const updateSession = (input) => run(UPDATE_SESSION, "updateSession", input);
export const deleteSession = (id) => run(DELETE_SESSION, "deleteSession", { id });
export const attachSpace = (input) => run(ATTACH_SPACE, "attachSpace", input);
export const detachSpace = (sessionId) => run(DETACH_SPACE, "detachSpace", { sessionId });
export const mountCheckpoint = (input) => run(MOUNT, "mountCheckpoint", input);
export const unmountCheckpoint = (sessionId) => run(UNMOUNT, "unmountCheckpoint", { sessionId });
export const forkSession = (input) => run(FORK, "forkSession", input);
export const sendMessage = (input) => run(SEND_MESSAGE, "sendMessage", input);
export const regenerate = (input) => run(REGENERATE, "regenerate", input);
export const editAndResend = (input) => run(EDIT_AND_RESEND, "editAndResend", input);
export const draftCheckpoint = (sessionId) =>
  run(DRAFT_CHECKPOINT, "draftCheckpoint", { sessionId });
export const createCheckpoint = (input) => run(CREATE_CHECKPOINT, "createCheckpoint", input);
export const addSpaceMember = (input) => run(ADD_MEMBER, "addSpaceMember", input);
export const updateSpaceMember = (input) => run(UPDATE_MEMBER, "updateSpaceMember", input);
export const removeSpaceMember = (input) => run(REMOVE_MEMBER, "removeSpaceMember", input);
export const mergeCheckpoints = (input) => run(MERGE_CHECKPOINTS, "mergeCheckpoints", input);

/**
 * messageStream over SSE: each event (`__typename` and its fields) as it arrives.
 * Throws StreamUnavailable when no stream could be opened (nothing arrived: the
 * caller may send with sendMessage and the same idempotencyKey), the signal's
 * AbortError once stopped (closing the connection stops the model; the server keeps
 * what it had as an interrupted reply), ApiError when the connection breaks.
 */
export const streamMessage = (input, signal) =>
  streamEvents(MESSAGE_STREAM, "messageStream", input, signal);

/** regenerateStream / editAndResendStream over SSE, reported as streamMessage reports
 * messageStream (StreamUnavailable when no stream could be opened: nothing was written). */
export const streamRegenerate = (input, signal) =>
  streamEvents(REGENERATE_STREAM, "regenerateStream", input, signal);
export const streamEditAndResend = (input, signal) =>
  streamEvents(EDIT_STREAM, "editAndResendStream", input, signal);

/** continueReplyStream over SSE, reported as streamMessage reports messageStream. */
export const streamContinuation = (input, signal) =>
  streamEvents(CONTINUE_STREAM, "continueReplyStream", input, signal);

async function* streamEvents(document, name, input, signal) {
  let first = true;
  try {
    const body = { query: withFragments(document), variables: { input } };
    for await (const result of graphqlSse(ENDPOINT, body, signal)) {
      const event = result.data?.[name];
      if (!event) {
        const message = result.errors?.[0]?.message ?? "The stream sent no event.";
        // A server that cannot stream this document has written nothing.
        throw first ? new StreamUnavailable(message) : new ApiError(message);
      }
      first = false;
      yield event;
    }
  } catch (error) {
    if (signal?.aborted || error instanceof StreamUnavailable || error instanceof ApiError) {
      throw error;
    }
    throw new ApiError(`The connection was lost (${error.message}).`);
  }
}

/** sendMessage, reported as the events messageStream would have sent. */
export async function* sendMessageEvents(input) {
  const payload = await sendMessage(input);
  if (payload.userTurn) yield { __typename: "StreamUserTurn", userTurn: payload.userTurn };
  if (payload.assistantTurn) {
    yield { __typename: "StreamAssistantTurn", assistantTurn: payload.assistantTurn };
  } else {
    yield { __typename: "StreamFailed", errors: payload.errors, partialReply: null };
  }
}

/** continueReply, reported as the events continueReplyStream would have sent. */
export async function* continueReplyEvents(input) {
  const payload = await run(CONTINUE_REPLY, "continueReply", input);
  if (payload.continuation) {
    yield { __typename: "StreamAssistantTurn", assistantTurn: payload.continuation };
  } else {
    yield { __typename: "StreamFailed", errors: payload.errors, partialReply: null };
  }
}

// What an import made (or found already here), as the sidebar lists it.
export const IMPORT_SPACE = mutation("importSpace", "ImportSpaceInput",
  `spaces { id name viewerRole sessions(first: 100) { edges { node { id title authorName visibility } } } }
  sessions { id title } created format branchesImported`);

/**
 * importSpace: a Smriti JSON export, a ChatGPT or a Claude conversations.json or an
 * Open WebUI chat export, as text. {spaces (each with its sessions), sessions (in no
 * space), created, format, branchesImported (the conversation branches it created), errors};
 * ApiError with code TOO_LARGE when it is larger than the server's body limit.
 */
export async function importDocument(document) {
  const payload = await run(IMPORT_SPACE, "importSpace", { document });
  return { ...payload, spaces: payload.spaces.map((space) => ({ ...space, sessions: nodes(space.sessions) })) };
}

export const EXPORT_SESSION = `query($input: ExportSessionInput!) {
  exportSession(input: $input) { document mediaType fileName } }`;
export const EXPORT_SPACE = `query($input: ExportSpaceInput!) {
  exportSpace(input: $input) { document mediaType fileName } }`;

/** A session (MARKDOWN, IPYNB, JSON: a session in no space) or its space (SPACE_JSON)
 * as { document, mediaType, fileName }. */
export async function exportDocument(session, format) {
  if (format === "SPACE_JSON") {
    const input = { spaceId: session.space.id, format: "JSON" };
    return (await request(EXPORT_SPACE, { input })).exportSpace;
  }
  return (await request(EXPORT_SESSION, { input: { sessionId: session.id, format } })).exportSession;
}

// Search hits, 20 a page; each node with what grouping and opening it need (a
// checkpoint's space is aliased: Space! there, Space elsewhere, cannot share a name).
export const SEARCH_PAGE = 20;
export const SEARCH = `query($query: String!, $spaceId: ID, $kinds: [SearchKind!], $after: String) {
  search(query: $query, spaceId: $spaceId, kinds: $kinds, first: ${SEARCH_PAGE}, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { cursor kind snippet node { __typename
      ... on Turn { id role sequenceNumber replyToSequence exchangeNumber
        session { id title space { id name } } }
      ... on Checkpoint { id shortHash title branchName sourceSession { id }
        checkpointSpace: space { id name } }
      ... on Session { id title space { id name } }
      ... on Space { id name } } } } }`;

/** One page of hits ({kind, snippet, node}), best first; ApiError (code INVALID) for a bad query. */
export async function search({ query, spaceId = null, kinds = null, after = null }) {
  const { edges, pageInfo } = (await request(SEARCH, { query, spaceId, kinds, after })).search;
  const plain = ({ checkpointSpace, ...node }) => (checkpointSpace ? { ...node, space: checkpointSpace } : node);
  return { hits: edges.map(({ kind, snippet, node }) => ({ kind, snippet, node: plain(node) })),
    hasMore: pageInfo.hasNextPage, cursor: pageInfo.endCursor };
}
