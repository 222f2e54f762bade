"""GraphiQL runs the README's subscription, and opens GraphiQL links (issue 18 §4)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlsplit

from playwright.sync_api import Page, Response, expect

from tests.browser.support import gql
from tests.support.servers import SmritiServer

# The README's example, anonymous, with its variables.
STREAM = """subscription($input: SendMessageInput!) {
  messageStream(input: $input) {
    __typename
    ... on StreamAssistantTurn { assistantTurn { sequenceNumber content } }
  }
}"""
EDITOR = ".graphiql-query-editor .CodeMirror"


def new_session(server: SmritiServer) -> str:
    created = gql(server.base_url, "mutation { createSession(input: {}) { session { id } } }")
    sid: str = created["createSession"]["session"]["id"]
    return sid


def last_sequence(server: SmritiServer, sid: str) -> int:
    data = gql(server.base_url, "query($s: ID!) { session(id: $s) { lastSequenceNumber } }", s=sid)
    number: int = data["session"]["lastSequenceNumber"]
    return number


def open_graphiql(page: Page, server: SmritiServer, variables: dict[str, object]) -> list[int]:
    """GraphiQL with ``variables``; the statuses of the operations it POSTs (all but
    its schema's introspection)."""
    page.goto(f"{server.graphql_url}?variables={quote(json.dumps(variables))}")
    expect(page.locator(EDITOR)).to_be_visible()
    statuses: list[int] = []

    def posted(response: Response) -> None:
        request = response.request
        if request.method == "POST" and "IntrospectionQuery" not in (request.post_data or ""):
            statuses.append(response.status)

    page.on("response", posted)
    return statuses


def replace_and_run(page: Page, document: str) -> None:
    """Put ``document`` in the editor and press Run in the same task: before the
    editor has parsed it (it does so 100 ms after the last change)."""
    page.evaluate(
        """(document) => {
          window.document.querySelector(".graphiql-query-editor .CodeMirror")
            .CodeMirror.setValue(document);
          window.document.querySelector('button[aria-label^="Execute query"]').click();
        }""",
        document,
    )


def test_the_readmes_anonymous_subscription_runs_right_after_it_is_typed(
    server: SmritiServer, page: Page
) -> None:
    sid = new_session(server)
    statuses = open_graphiql(page, server, {"input": {"sessionId": sid, "content": "hello"}})
    replace_and_run(page, STREAM)
    response = page.locator(".graphiql-response")
    expect(response).to_contain_text('"__typename": "StreamAssistantTurn"')
    expect(response).to_contain_text('"sequenceNumber": 2')
    assert statuses == []  # over the websocket, not a POST refused with 406
    assert last_sequence(server, sid) == 2


def test_a_renamed_subscription_runs_with_the_old_name_still_selected(
    server: SmritiServer, page: Page
) -> None:
    sid = new_session(server)
    statuses = open_graphiql(page, server, {"input": {"sessionId": sid, "content": "hello"}})
    named = STREAM.replace("subscription(", "subscription First(")
    page.evaluate(
        """(document) => window.document.querySelector(".graphiql-query-editor .CodeMirror")
            .CodeMirror.setValue(document)""",
        named,
    )
    # The editor has parsed it: GraphiQL's operation is now `First`.
    expect(page.locator(EDITOR)).to_contain_text("First")
    page.wait_for_function(
        """() => window.document.querySelector(".graphiql-query-editor .CodeMirror")
            .CodeMirror.operationName === "First" """
    )
    replace_and_run(page, STREAM.replace("subscription(", "subscription Second("))
    expect(page.locator(".graphiql-response")).to_contain_text('"sequenceNumber": 2')
    assert statuses == []
    assert last_sequence(server, sid) == 2


def test_a_graphiql_link_with_a_subscription_opens_graphiql_with_it(
    server: SmritiServer, page: Page
) -> None:
    sid = new_session(server)
    variables = json.dumps({"input": {"sessionId": sid, "content": "from a link"}})
    page.goto(f"{server.graphql_url}?query={quote(STREAM)}&variables={quote(variables)}")
    expect(page.locator(EDITOR)).to_contain_text("messageStream(input: $input)")
    expect(page.locator(".graphiql-editor-tool .CodeMirror").first).to_contain_text("from a link")
    kept = parse_qs(urlsplit(page.url).query)
    assert (kept["q"], kept["variables"]) == ([STREAM], [variables])
    assert last_sequence(server, sid) == 0  # opened, not run
    page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()
    expect(page.locator(".graphiql-response")).to_contain_text("You asked: from a link")
    assert last_sequence(server, sid) == 2
