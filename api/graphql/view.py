"""The GraphQL endpoint: Strawberry's ASGI view with Smriti's context and rules."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import GraphQLError, parse
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.streaming import SSETransport
from strawberry.http.websocket_origin import normalize_allowed_origins
from strawberry.subscriptions import GRAPHQL_SSE_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ConnectionInitMessage,
    SubscribeMessage,
)
from strawberry.types.graphql import OperationType
from strawberry.utils.operation import get_operation_type

from .. import graphiql
from ..errors import ConfigError
from ..http.auth import (
    Authenticator,
    caller_of,
    forbidden_origin,
    same_origin,
    unauthenticated,
)
from ..services.base import Services
from ..services.connections import Opened
from .context import Context
from .event_stream import EventStream, EventStreamResponse
from .schema import build_schema

# Subscriptions over a websocket at /graphql, or as Server-Sent Events from a
# POST to /graphql with `Accept: text/event-stream` (graphql-sse, distinct
# connections mode). The legacy graphql-ws protocol is not offered.
SUBSCRIPTION_PROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_SSE_PROTOCOL)
EVENT_STREAM = "text/event-stream"
# The media types a JSON answer is: an Accept naming any of them gets JSON
# for a query or a mutation.
JSON_TYPES = frozenset(
    {
        "application/graphql-response+json",
        "application/graphql+json",
        "application/json",
        "application/*",
        "*/*",
    }
)
_SSE = SSETransport()


def only_event_stream(accept: str) -> bool:
    """Whether an Accept header takes an event stream and no JSON.

    graphql-sse's client sends exactly `Accept: text/event-stream` for every
    operation and reads every answer as a stream; a JSON body is to it a
    stream that broke before its end, and it sends the same POST again (five
    times). urql lists text/event-stream beside the JSON types and wants JSON.
    """
    accepted: set[str] = set()
    for part in accept.split(","):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 1.0
        if quality > 0:
            accepted.add(media.lower())
    return EVENT_STREAM in accepted and not accepted & JSON_TYPES


class TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws, with the caller named in connection_init when the
    handshake had no credentials: no valid token closes the socket with 4401.

    The caller is asked for again at every `subscribe` (each query, mutation
    or subscription): once its credential no longer holds, the socket's
    operations are stopped (a streamed reply is saved, interrupted) and the
    socket is closed with 4401. A revocation, a sign-out or a disabled user
    closes it the same way without waiting for its next operation
    (``api/services/connections.py``).
    """

    view: SmritiGraphQL
    opened: Opened | None = None

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        context = self.context
        if not context.has_actor and not self.connection_init_received:
            payload = message.get("payload") or {}
            auth = self.view.auth
            credential = auth.payload_credential(payload) if isinstance(payload, dict) else None
            actor = await auth.actor_for(credential) if credential else None
            if actor is None or credential is None:
                self.connection_init_received = True
                if self.connection_init_timeout_task:
                    self.connection_init_timeout_task.cancel()
                await self.websocket.close(code=4401, reason="Unauthorized")
                return
            context.act_as(actor, credential)
        await super().handle_connection_init(message)
        if self.connection_acknowledged and context.credential and self.opened is None:
            self.opened = self.view.services.connections.open(context.credential, self.end)

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        credential = self.context.credential
        if credential is not None and self.connection_acknowledged:
            actor = await self.view.auth.actor_for(credential)
            if actor is None:
                if self.opened is not None:
                    await self.view.services.connections.end(self.opened)
                else:
                    await self.end()
                return
            self.context.act_as(actor, credential)  # the rights it has now
        await super().handle_subscribe(message)

    async def end(self) -> None:
        """Its credential has ended: stop every operation, as a `complete`
        would (and wait for a streamed reply to be saved), then close 4401."""
        tasks = [operation.task for operation in self.operations.values() if operation.task]
        for operation_id in list(self.operations):
            await self.cleanup_operation(operation_id)
        for task in tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):  # the client may have left already
            await self.websocket.close(code=4401, reason="Unauthorized")

    async def shutdown(self) -> None:
        if self.opened is not None:
            self.view.services.connections.close(self.opened)
        await super().shutdown()


class ClosingStreamingResponse(StreamingResponse):
    """A streamed answer whose stream is closed however the response ends.

    Starlette iterates the stream with ``async for``: a client that goes away
    leaves it suspended, unclosed. Closing it runs in a task of its own, so a
    cancelled request cannot stop it half-way (closing a reply's stream saves
    what was received: docs/architecture.md#a-reply-cut-off-is-saved).
    """

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            iterator = self.body_iterator
            if isinstance(iterator, AsyncGenerator):
                await asyncio.shield(asyncio.ensure_future(iterator.aclose()))


class SmritiGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with Smriti's per-request context."""

    graphql_transport_ws_handler_class = TransportWSHandler

    def __init__(
        self,
        services: Services,
        auth: Authenticator,
        *,
        vendor_dir: Path = graphiql.VENDOR_DIR,
        **kwargs: Any,
    ) -> None:
        super().__init__(build_schema(services.settings), **kwargs)
        self.services = services
        # For a websocket's connection_init and the check at each of its
        # operations; an HTTP request's caller is found by the middleware.
        self.auth = auth
        self.max_query_tokens = services.settings.max_query_tokens
        # Decided once: the assets are fetched at install time, not while serving.
        self.local_ide_html = graphiql.local_page(super().graphql_ide_html, vendor_dir)
        self.ide_policy = graphiql.content_security_policy(self.graphql_ide_html)

    @property
    def graphql_ide_html(self) -> str:
        """Strawberry's GraphiQL page; on local asset copies when all are fetched."""
        return graphiql.with_notebook_link(self.local_ide_html or super().graphql_ide_html)

    async def render_graphql_ide(self, request: Request) -> HTMLResponse:
        return HTMLResponse(
            self.graphql_ide_html, headers={"Content-Security-Policy": self.ide_policy}
        )

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        """What every answer to ``request`` starts from; for a POST that accepts
        only an event stream (graphql-sse), that media type (``create_response``)."""
        sub_response = await super().get_sub_response(request)
        if (
            isinstance(request, Request)
            and request.method == "POST"
            and only_event_stream(request.headers.get("accept", ""))
        ):
            sub_response.media_type = EVENT_STREAM
        return sub_response

    def _stream_result(self, request: Any, result: Any, transport: Any) -> Any:
        """A subscription's events: over SSE an ``EventStream`` (each event sent
        by the task that reads it: ``api/graphql/event_stream.py``); otherwise
        Strawberry's text stream, closed with the response.

        Strawberry reads the subscription in a task of its own and hands the
        response its text through a queue; when the client goes away while that
        task waits on the queue, neither the text stream nor the subscription is
        ever closed (``async for`` does not close what it iterates), so the
        reply under way was saved only when the garbage collector got to it,
        or not at all before shutdown. Here the text stream closes the
        subscription after itself, and ``ClosingStreamingResponse`` closes the
        text stream however the response ends.
        """
        if isinstance(transport, SSETransport):

            async def events() -> AsyncGenerator[str, None]:
                pending: list[Any] = []
                async for value in result:
                    response, pending = await self._process_stream_result(request, value, pending)
                    yield transport.encode_next(response, self.encode_json_string)
                yield transport.encode_complete()

            heartbeat = transport.heartbeat_message(self.encode_json_string)
            return EventStream(events, result, heartbeat, transport.heartbeat_interval)

        merged = super()._stream_result(request, result, transport)

        async def stream() -> AsyncGenerator[str, None]:
            text = merged()
            try:
                async for chunk in text:
                    yield chunk
            finally:
                try:
                    await text.aclose()  # stops Strawberry's reading task
                finally:
                    await result.aclose()  # then the subscription, if left open

        return stream

    async def create_streaming_response(
        self,
        request: Request | WebSocket,
        stream: Callable[[], AsyncIterator[str]],
        sub_response: Response,
        headers: Mapping[str, str],
    ) -> Response:
        status_code = sub_response.status_code or 200
        headers = {**sub_response.headers, **headers}
        if isinstance(stream, EventStream):
            return EventStreamResponse(stream, status_code=status_code, headers=headers)
        return ClosingStreamingResponse(stream(), status_code=status_code, headers=headers)

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        """A query's or mutation's result: JSON, or for a request that accepts
        only an event stream, that result as one `next` event and `complete`
        (graphql-sse's distinct connections mode answers every operation so).

        Either way the operation has run to its end before anything is sent,
        as for JSON: a client that goes away does not stop a mutation half-way,
        and no answer is ever a reason for graphql-sse to send it again.
        """
        if sub_response.media_type != EVENT_STREAM or isinstance(response_data, list):
            return super().create_response(response_data, sub_response)
        body = _SSE.encode_next(response_data, self.encode_json_string) + _SSE.encode_complete()
        response = Response(body, status_code=sub_response.status_code or 200, headers=_SSE.headers)
        response.headers.raw.extend(sub_response.headers.raw)
        response.background = sub_response.background
        return response

    def decode_json(self, data: str | bytes) -> object:
        """A request body or a GET parameter: a JSON object (or a batch list).

        Strawberry turns only JSONDecodeError into a 400; invalid UTF-8, nesting
        too deep for the parser and a bare value would each be a 500.
        """
        try:
            decoded = json.loads(data)
        except UnicodeDecodeError:
            raise HTTPException(400, "The request body is not valid UTF-8.") from None
        except RecursionError:
            raise HTTPException(400, "The request body is JSON nested too deeply.") from None
        except ValueError as exc:
            raise HTTPException(400, f"The request body is not valid JSON: {exc}") from None
        if not isinstance(decoded, dict | list):
            raise HTTPException(400, "The request body must be a JSON object.")
        return decoded

    async def parse_http_body(
        self, request: AsyncHTTPRequestAdapter
    ) -> GraphQLRequestData | list[GraphQLRequestData]:
        """Strawberry picks the transport from the Accept header alone; here the
        operation decides: only a subscription is ever streamed, and never for a GET.

        A GET needs no CORS preflight, so any page can send one (an <img>, an
        EventSource): it may read, never write, and a subscription writes turns.
        A query or a mutation runs to its end, then is answered as JSON or, for
        graphql-sse's Accept, as one event (``create_response``). Clients such
        as urql list text/event-stream in Accept beside JSON and get JSON.
        """
        parsed = await super().parse_http_body(request)
        if isinstance(parsed, list):  # batching is off: Strawberry has refused it
            return parsed
        if not isinstance(parsed.operation_name, str | None):
            raise HTTPException(400, "The operation's `operationName` must be a string or null.")
        operation = operation_type(parsed.query, parsed.operation_name, self.max_query_tokens)
        if request.method == "GET":
            if operation is OperationType.SUBSCRIPTION:
                raise HTTPException(
                    405, "Subscriptions are not allowed over GET: use a POST or a websocket."
                )
            return dataclasses.replace(parsed, protocol="http")
        if operation is not OperationType.SUBSCRIPTION:
            return dataclasses.replace(parsed, protocol="http")
        if parsed.protocol == "http":
            raise HTTPException(
                406,
                "A subscription is a stream: send it with `Accept: text/event-stream` "
                "(graphql-sse) or over a websocket (graphql-transport-ws).",
            )
        return parsed

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The caller (found by ``Authenticate``, in front of this endpoint)
        admitted or refused before Strawberry sees the request.

        A browser opening a GraphiQL link (`/graphql?query=…`, Accept naming
        text/html) is sent to the page with the document in its editor
        (``graphiql_link``): such a GET is never executed.

        Accounts mode: an HTTP request (query, mutation, SSE) without valid
        credentials gets 401; a browser's POST from another origin 403. A
        websocket may name its caller in connection_init instead (TransportWSHandler).
        """
        if scope["type"] == "http":
            link = graphiql_link(Request(scope, receive))
            if link is not None:
                await RedirectResponse(link, 303)(scope, receive, send)
                return
        caller = caller_of(scope)
        if scope["type"] == "http" and caller.accounts:
            request = Request(scope, receive)
            if caller.actor is None:
                if request.method == "GET" and "text/html" in request.headers.get("accept", ""):
                    # GraphiQL: sign in first, then come back (to its link's document).
                    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                    location = f"/login.html?next={quote(back, safe='/')}"
                    await RedirectResponse(location, 303)(scope, receive, send)
                    return
                await unauthenticated()(scope, receive, send)
                return
            if caller.by_cookie and request.method != "GET" and not same_origin(request):
                await forbidden_origin()(scope, receive, send)
                return
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope, receive))
        except HTTPException as exc:
            response = refusal(exc)
        await response(scope, receive, send)

    async def get_context(self, request: Request | WebSocket, response: Any) -> Context:
        caller = caller_of(request.scope)
        # A websocket without a credential in accounts mode acts as nobody
        # until its connection_init names one.
        return Context(
            self.services,
            caller.actor,
            credential=caller.credential,
            over_websocket=isinstance(request, WebSocket),
        )


def refusal(exc: HTTPException) -> Response:
    """A request refused before it ran, as a GraphQL error response.

    Strawberry answers these in plain text; GraphiQL's fetcher (and most
    clients) read every answer as JSON, so a text body showed there as
    "Unexpected token 'A'…" instead of the reason.
    """
    return JSONResponse(
        {"data": None, "errors": [{"message": exc.reason, "extensions": {"code": "BAD_REQUEST"}}]},
        status_code=exc.status_code,
    )


def graphiql_link(request: Request) -> str | None:
    """Where a browser opening `/graphql?query=…` is sent: GraphiQL's page with
    the document in its editor (the page reads `q`, `variables` and `headers`),
    or None for any other request.

    A link is a navigation (a GET whose Accept names text/html); Strawberry would
    run its `query` and show the answer, or a bare refusal for a subscription.
    """
    params = request.query_params
    if (
        request.method != "GET"
        or "text/html" not in request.headers.get("accept", "")
        or "query" not in params
    ):
        return None
    kept = {"q": params["query"]} | {
        name: params[name] for name in ("variables", "headers") if name in params
    }
    return f"{request.url.path}?{urlencode(kept, quote_via=quote)}"


def operation_type(
    query: str | None, operation_name: str | None, max_tokens: int
) -> OperationType | None:
    """The type of the operation a request names; None when it cannot be told
    (Strawberry then answers the syntax or operation-name error itself)."""
    if query is None:
        return None
    # Clients send the same few documents over and over: parsing one again to
    # tell its type cost ~0.5 ms a request. Keyed by a digest, so the cache
    # holds 32 bytes per document whatever its length.
    key = hashlib.blake2b(
        f"{max_tokens}\0{operation_name!r}\0{query}".encode(), digest_size=32
    ).digest()
    if key in _operation_types:
        _operation_types.move_to_end(key)
        return _operation_types[key]
    try:
        found = get_operation_type(parse(query, max_tokens=max_tokens), operation_name)
    except (GraphQLError, RuntimeError):
        found = None
    _operation_types[key] = found
    if len(_operation_types) > OPERATION_TYPES_KEPT:
        _operation_types.popitem(last=False)
    return found


OPERATION_TYPES_KEPT = 512
# The operation types of the documents seen last (one event loop: no lock).
_operation_types: OrderedDict[bytes, OperationType | None] = OrderedDict()


def graphql_view(
    services: Services, auth: Authenticator, *, vendor_dir: Path = graphiql.VENDOR_DIR
) -> SmritiGraphQL:
    """The /graphql endpoint (HTTP, websocket, SSE) for ``services``, behind
    ``Authenticate`` (api/http/auth.py) with ``auth``."""
    allowed = services.settings.allowed_origins
    try:
        normalize_allowed_origins(allowed)
    except ValueError as exc:
        raise ConfigError(f"SMRITI_ALLOWED_ORIGINS: {exc}") from None
    # A websocket from a browser page is accepted from the same origin (Origin
    # host == Host) and from allowed_origins; one without Origin is no browser's.
    return SmritiGraphQL(
        services,
        auth,
        vendor_dir=vendor_dir,
        subscription_protocols=SUBSCRIPTION_PROTOCOLS,
        allowed_origins=allowed,
    )
