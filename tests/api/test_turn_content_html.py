"""Turn.contentHtml: every turn's text as safe Markdown HTML, through the real API."""

from __future__ import annotations

from api.graphql.chat.turns import RENDER_INLINE_LIMIT
from api.rendering import render_markdown
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

TURNS_HTML = """query($id: ID!) { session(id: $id) {
  turns(first: 10) { edges { node { role content contentHtml } } } } }"""
NODE_HTML = "query($id: ID!) { node(id: $id) { ... on Turn { contentHtml } } }"


async def test_user_and_assistant_turns_carry_their_rendered_html(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    sent = await send(gql, sid, "Use **bold** <script>alert(1)</script>")
    assert sent["errors"] == []
    data = await gql(TURNS_HTML, id=sid)
    user, assistant = (e["node"] for e in data["session"]["turns"]["edges"])
    assert user["contentHtml"] == (
        "<p>Use <strong>bold</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )
    assert assistant["role"] == "ASSISTANT"
    assert assistant["contentHtml"] == render_markdown(assistant["content"])
    by_node = await gql(NODE_HTML, id=sent["userTurn"]["id"])
    assert by_node["node"]["contentHtml"] == user["contentHtml"]


async def test_a_long_turn_is_rendered_the_same_off_the_event_loop(gql: GraphQLClient) -> None:
    sid = (await create_session(gql, title="t"))["id"]
    content = "```python\n" + "print('x')\n" * (RENDER_INLINE_LIMIT // 10) + "```\n"
    sent = await send(gql, sid, content)
    assert sent["errors"] == []
    data = await gql(NODE_HTML, id=sent["userTurn"]["id"])
    assert data["node"]["contentHtml"] == render_markdown(content)
    assert data["node"]["contentHtml"].startswith(
        '<pre class="hl"><code class="language-python"><span class="hl-nb">print</span>'
    )
