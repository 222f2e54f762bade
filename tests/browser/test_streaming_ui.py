"""Replies stream into the notebook (messageStream over SSE); Stop keeps what was seen;
a reply says why it stopped; Continue (continueReplyStream) and Retry after a stop or
the token limit; sendMessage when no stream can be opened."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, Request, Route, expect

from api.domain.continuation import CONTINUE_INSTRUCTION
from tests.browser.support import (
    TURNS,
    gql,
    saved_turns,
    start,
    type_and_send,
)
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

# In-page: record each new length of the streaming reply's text until it is replaced.
WATCH_STREAMING_TEXT = """() => {
  window.__lengths = [];
  const record = () => {
    const body = document.querySelector(".cell.assistant.pending .cell-body");
    const length = body ? body.textContent.length : null;
    if (length !== null && window.__lengths.at(-1) !== length) window.__lengths.push(length);
  };
  new MutationObserver(record).observe(document.querySelector("notebook-view"),
    { subtree: true, childList: true, characterData: true });
}"""

STREAMING = ".cell.assistant.pending"


@pytest.fixture(scope="module")
def server(lab_server: SmritiServer) -> SmritiServer:
    return lab_server


def graphql_posts(page: Page) -> list[tuple[str, str]]:
    """(Accept header, body) of every POST /graphql the page makes from now on."""
    posts: list[tuple[str, str]] = []

    def seen(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/graphql"):
            posts.append((request.headers.get("accept", ""), request.post_data or ""))

    page.on("request", seen)
    return posts


def test_the_reply_grows_as_it_streams_then_becomes_the_saved_turn(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    sid = start(page, server)
    posts = graphql_posts(page)
    page.evaluate(WATCH_STREAMING_TEXT)
    fake.stream_chunks(["One", " two", " three", " four"], interval=0.3)
    type_and_send(page, "Count to four")

    # The user's cell at once, numbered as soon as the server has saved it.
    expect(page.locator(".cell.user")).to_contain_text("Count to four")
    expect(page.locator("turn-cell.user .cell-gutter")).to_have_text("In [1]")
    streaming = page.locator(STREAMING)
    expect(streaming.get_by_role("button", name="Stop")).to_be_visible()

    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    expect(page.locator(STREAMING)).to_have_count(0)
    expect(reply.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(reply.locator(".cell-body.markdown")).to_have_text("One two three four")
    expect(reply.locator(".tag")).to_have_count(0)
    expect(reply.get_by_role("button", name="Continue")).to_have_count(0)

    final = len("One two three four")
    lengths: list[int] = page.evaluate("window.__lengths")
    assert lengths == sorted(set(lengths)), lengths  # only ever grew
    assert len([n for n in lengths if 0 < n < final]) >= 2, lengths
    assert lengths[-1] == final
    assert saved_turns(server, sid) == [
        ("USER", "Count to four", False),
        ("ASSISTANT", "One two three four", False),
    ]
    sent = [body for accept, body in posts if "messageStream" in body or "sendMessage" in body]
    assert len(sent) == 1 and "subscription" in sent[0]
    assert [accept for accept, body in posts if body == sent[0]] == ["text/event-stream"]
    # The context line is refreshed after the stream: it now counts the two turns.
    expect(page.locator("composer-cell .ctx-line")).to_contain_text("2 turns")


def test_stop_keeps_the_partial_reply_then_continue_and_retry(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    sid = start(page, server)
    fake.stream_chunks(["Half", " a", " thought", " never sent"], hold_after=2)
    type_and_send(page, "Tell me a long story")
    streaming = page.locator(STREAMING)
    expect(streaming.locator(".cell-body")).to_have_text("Half a")
    held = len(fake.requests)
    streaming.get_by_role("button", name="Stop").click()

    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    expect(page.locator(STREAMING)).to_have_count(0)
    expect(reply.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(reply.locator(".tag.warn")).to_have_text("Stopped: interrupted")
    expect(reply.locator(".cell-body")).to_have_text("Half a")
    assert fake.wait_for_stream_end(held) == "client-closed"
    assert saved_turns(server, sid) == [
        ("USER", "Tell me a long story", False),
        ("ASSISTANT", "Half a", True),
    ]
    # Sent, so the stored draft is gone.
    assert page.evaluate(f"localStorage.getItem('smriti.draft.{sid}')") is None

    # Continue: the model goes on from its partial reply; the rest is the next cell.
    fake.reply(" story, and so it ended.")
    reply.get_by_role("button", name="Continue").click()
    expect(page.locator("turn-cell")).to_have_count(3)
    rest = page.locator("turn-cell").nth(2)
    expect(rest).to_have_class(re.compile(r"\bcontinuation\b"))
    expect(rest.locator(".cell-body")).to_have_text("story, and so it ended.")
    expect(page.get_by_role("button", name="Continue")).to_have_count(0)
    assert fake.requests[-1]["messages"][-2:] == [
        {"role": "assistant", "content": "Half a"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]

    # Stopped again, with Esc from outside the message box; then Retry asks again.
    fake.stream_chunks(["Second", " try", " lost"], hold_after=1)
    type_and_send(page, "Another story")
    expect(streaming.locator(".cell-body")).to_have_text("Second")
    page.get_by_label("Message", exact=True).press("Escape")  # leaves the message box
    page.keyboard.press("Escape")  # stops
    interrupted = page.locator("turn-cell.assistant").last
    expect(interrupted.locator(".tag.warn")).to_have_text("Stopped: interrupted")
    expect(interrupted.locator(".cell-body")).to_have_text("Second")

    fake.reply("A better story.")
    interrupted.get_by_role("button", name="Retry").click()
    expect(page.locator("turn-cell")).to_have_count(7)
    expect(page.locator("turn-cell").nth(5)).to_contain_text("Another story")
    expect(page.locator("turn-cell").nth(6)).to_contain_text("A better story.")
    assert saved_turns(server, sid)[2:] == [
        ("ASSISTANT", " story, and so it ended.", False),
        ("USER", "Another story", False),
        ("ASSISTANT", "Second", True),
        ("USER", "Another story", False),
        ("ASSISTANT", "A better story.", False),
    ]


def test_a_reply_cut_off_by_the_token_limit_says_so_and_continue_brings_the_rest(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    sid = start(page, server)
    fake.reply("Kyoto was the capital for", finish="length")
    type_and_send(page, "Tell me about Kyoto")
    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    label = reply.get_by_text("Stopped: token limit", exact=True)
    expect(label).to_be_visible()
    expect(label).to_have_attribute(
        "title", "The model reached the token limit for one answer before it finished."
    )
    reply_id = reply.evaluate("cell => cell.turn.id")
    posts = graphql_posts(page)

    fake.stream_chunks([" a", " thousand", " years."], interval=0.2)
    reply.get_by_role("button", name="Continue").click()
    # Streamed into a cell of its own under the reply, by the reply's model.
    streaming = page.locator(STREAMING)
    expect(streaming.locator(".cell-meta")).to_contain_text("lab/my-model")
    expect(streaming.get_by_role("button", name="Stop")).to_be_visible()

    cells = page.locator("turn-cell")
    expect(cells).to_have_count(3)
    rest = cells.nth(2)
    expect(rest.locator(".cell-body")).to_have_text("a thousand years.")
    expect(rest.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(rest.locator(".cell-gutter")).to_have_attribute("title", "Turn 3, continuing turn 2")
    expect(rest).to_have_class(re.compile(r"\bcontinuation\b"))
    expect(rest.locator(".tag.finish")).to_have_count(0)
    expect(page.get_by_role("button", name="Continue")).to_have_count(0)
    assert cells.evaluate_all("cells => cells.map((cell) => cell.dataset.seq)") == ["1", "2", "3"]
    sent = [(accept, body) for accept, body in posts if "continueReply" in body]
    assert [accept for accept, _ in sent] == ["text/event-stream"]
    assert json.loads(sent[0][1])["variables"] == {"input": {"turnId": reply_id}}
    assert fake.requests[-1]["messages"] == [
        {"role": "user", "content": "Tell me about Kyoto"},
        {"role": "assistant", "content": "Kyoto was the capital for"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    edges = gql(server.base_url, TURNS, s=sid)["session"]["turns"]["edges"]
    assert [
        (n["role"], n["content"], n["finishReason"], n["continuesSequence"])
        for n in (e["node"] for e in edges)
    ] == [
        ("USER", "Tell me about Kyoto", None, None),
        ("ASSISTANT", "Kyoto was the capital for", "LENGTH", None),
        ("ASSISTANT", " a thousand years.", "STOP", 2),
    ]


def test_a_provider_failure_mid_answer_shows_the_partial_reply_and_an_error(
    page: Page, server: SmritiServer, fake: FakeOpenAI
) -> None:
    sid = start(page, server)
    fake.stream_chunks(["Part", " one", " two"], fail_after=2)
    type_and_send(page, "Will this break?")
    error = page.locator(".cell.error")
    expect(error).to_contain_text("PROVIDER_")
    reply = page.locator("turn-cell.assistant")
    expect(reply.locator(".tag.warn")).to_have_text("Stopped: connection lost")
    expect(reply.locator(".cell-body")).to_have_text("Part one")
    assert saved_turns(server, sid) == [
        ("USER", "Will this break?", False),
        ("ASSISTANT", "Part one", True),
    ]
    # The exchange has its (partial) reply: Retry asks the question again.
    fake.reply("Whole answer.")
    error.get_by_role("button", name="Retry").click()
    expect(page.locator("turn-cell.assistant").last).to_contain_text("Whole answer.")
    expect(page.locator(".cell.error")).to_have_count(0)
    assert saved_turns(server, sid)[2:] == [
        ("USER", "Will this break?", False),
        ("ASSISTANT", "Whole answer.", False),
    ]


@pytest.mark.parametrize("refusal", ["status-415", "network-error", "not-a-stream"])
def test_without_a_stream_the_message_is_sent_with_send_message(
    page: Page, server: SmritiServer, refusal: str
) -> None:
    """A proxy that refuses or strips `text/event-stream`: sendMessage, same idempotencyKey."""

    def no_streams(route: Route) -> None:
        if "text/event-stream" not in route.request.headers.get("accept", ""):
            route.continue_()
        elif refusal == "status-415":
            route.fulfill(status=415, content_type="text/plain", body="no streams here")
        elif refusal == "network-error":
            route.abort("connectionreset")
        else:
            # The server answered in full, but the response arrives as one plain body.
            response = route.fetch()
            route.fulfill(response=response, headers={"content-type": "text/plain"})

    sid = start(page, server, model="offline/echo")
    posts = graphql_posts(page)
    page.route("**/graphql", no_streams)
    type_and_send(page, "Hello without streams")
    reply = page.locator("turn-cell.assistant")
    expect(reply).to_have_count(1)
    expect(reply.locator(".cell-gutter")).to_have_text("Out [1]")
    expect(reply).to_contain_text("Offline echo")
    expect(page.locator(".cell.pending, .cell.error")).to_have_count(0)

    stream = [json.loads(body) for accept, body in posts if "messageStream" in body]
    mutation = [json.loads(body) for accept, body in posts if "sendMessage" in body]
    assert len(stream) == 1 and len(mutation) == 1
    key = stream[0]["variables"]["input"]["idempotencyKey"]
    assert mutation[0]["variables"]["input"]["idempotencyKey"] == key
    turns = saved_turns(server, sid)
    assert len(turns) == 2  # nothing written twice
    assert turns[0] == ("USER", "Hello without streams", False)
