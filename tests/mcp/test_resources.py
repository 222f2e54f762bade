"""Resources and the prompt with the SDK's own client, over stdio and
streamable HTTP: each space's main head and any checkpoint, as the Markdown
GraphQL's export writes; `continue_from_checkpoint` frames space_state's brief."""

from __future__ import annotations

import pytest
from mcp import MCPError
from mcp_types import TextContent, TextResourceContents

from api.domain.brief import continuation_prompt
from tests.mcp.support import agent, call
from tests.support.graphql import GraphQLClient
from tests.support.lineage import forked_space, key


async def test_heads_and_checkpoints_are_markdown_as_the_export_writes_them(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space = key(built["space"])
    c1, c2 = built["main"][1], built["main"][2]
    exported = (
        await gql(
            "query($s: ID!) { exportSpace(input: {spaceId: $s, format: MARKDOWN}) { document } }",
            s=built["space"],
        )
    )["exportSpace"]["document"]
    async with agent(database_url, transport) as session:
        listed = (await session.list_resources()).resources
        templates = (await session.list_resource_templates()).resource_templates
        head = (await session.read_resource(f"smriti://spaces/{space}/head")).contents
        one = (await session.read_resource(f"smriti://checkpoints/{key(c1['id'])}")).contents
        with pytest.raises(MCPError) as missing:
            await session.read_resource("smriti://checkpoints/999")
        with pytest.raises(MCPError) as unknown:
            await session.read_resource("smriti://elsewhere/1")
    assert [(r.uri, r.name, r.mime_type) for r in listed] == [
        (f"smriti://spaces/{space}/head", "Lineage: head of main", "text/markdown")
    ]
    assert [t.uri_template for t in templates] == ["smriti://checkpoints/{id}"]
    assert isinstance(head[0], TextResourceContents) and isinstance(one[0], TextResourceContents)
    assert head[0].text.startswith(f"### Checkpoint `{c2['hash'][:7]}` · C2\n")
    assert f"- Parent: `{c1['hash'][:7]}`" in head[0].text
    assert head[0].text in exported and one[0].text in exported
    assert one[0].text.startswith(f"### Checkpoint `{c1['hash'][:7]}` · C1\n")
    assert (missing.value.code, missing.value.message, missing.value.data) == (
        -32002,
        "No such checkpoint.",
        {"code": "NOT_FOUND", "field": "uri"},
    )
    assert (unknown.value.code, unknown.value.data) == (
        -32602,
        {"code": "INVALID", "field": "uri"},
    )


async def test_the_continue_prompt_frames_space_states_brief(
    gql: GraphQLClient, database_url: str, transport: str
) -> None:
    built = await forked_space(gql)
    space, c0 = key(built["space"]), built["main"][0]
    async with agent(database_url, transport) as session:
        prompts = (await session.list_prompts()).prompts
        state = await call(session, "space_state", spaceId=space, since=key(c0["id"]))
        framed = await session.get_prompt(
            "continue_from_checkpoint", {"spaceId": str(space), "since": str(key(c0["id"]))}
        )
        with pytest.raises(MCPError) as no_space:
            await session.get_prompt("continue_from_checkpoint", {"spaceId": "999"})
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [
        ("continue_from_checkpoint", ["spaceId", "branch", "since"])
    ]
    assert len(framed.messages) == 1
    message = framed.messages[0]
    assert message.role == "user" and isinstance(message.content, TextContent)
    assert message.content.text == continuation_prompt(state["brief"])
    assert (no_space.value.code, no_space.value.message, no_space.value.data) == (
        -32002,
        "No such space.",
        {"code": "NOT_FOUND", "field": "spaceId"},
    )
