"""Issue 21: an import of another app's conversation keeps every branch.

The line the app showed becomes the session, as before; each other line
becomes a conversation branch of it (branched from the line it shares the
longest prefix with, after that prefix), so an edited message or a
regenerated reply is an alternative of the same cell ("1 / 2"), with
its original times and models. Importing the file again creates nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.graphql import GraphQLClient

DATA = Path(__file__).parents[1] / "data"
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  sessions { id title } created branchesImported errors { code message } } }"""
FAMILY = """query($id: ID!) { node(id: $id) { ... on Session {
  id title familyId updatedAt branchedFrom { afterSequence session { id } }
  alternatives { sequenceNumber index sessions { id } }
  turns(first: 20) { edges { node {
    sequenceNumber role content provider model createdAt replyToSequence } } } } } }"""


async def session(gql: GraphQLClient, session_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(FAMILY, id=session_id))["node"]
    return found


def lines(found: dict[str, Any]) -> list[tuple[int, str, str | None, str, int | None]]:
    """Each turn as (sequence, content, model, createdAt, replyToSequence)."""
    return [
        (
            t["sequenceNumber"],
            t["content"],
            t["model"],
            t["createdAt"],
            t["replyToSequence"],
        )
        for t in (edge["node"] for edge in found["turns"]["edges"])
    ]


def alternatives(found: dict[str, Any]) -> list[tuple[int, int, list[str]]]:
    return [
        (a["sequenceNumber"], a["index"], [s["id"] for s in a["sessions"]])
        for a in found["alternatives"]
    ]


KYOTO_START = [
    (1, "What should I pack for Kyoto in May?", None, "2024-05-01T12:00:01.250000+00:00", None),
    (2, "Light layers and a rain jacket.", "gpt-4o", "2024-05-01T12:00:05+00:00", 1),
]


async def test_a_chatgpt_edited_message_becomes_an_alternative_of_its_cell(
    gql: GraphQLClient,
) -> None:
    text = (DATA / "chatgpt-conversations.json").read_text()
    result = (await gql(IMPORT, d=text))["importSpace"]
    assert (result["errors"], result["created"], result["branchesImported"]) == ([], 2, 1)
    kyoto_id = result["sessions"][0]["id"]
    kyoto = await session(gql, kyoto_id)
    [(position, index, [first, branch_id])] = alternatives(kyoto)
    assert (position, index, first) == (3, 0, kyoto_id)
    assert lines(kyoto) == [
        *KYOTO_START,
        (3, "And which temples first?", None, "2024-05-01T12:03:20+00:00", None),
        (4, "Kiyomizu-dera, early.", "gpt-4o-mini", "2024-05-01T12:03:30+00:00", 3),
    ]
    branch = await session(gql, branch_id)
    assert (branch["title"], branch["familyId"]) == ("Packing for Kyoto", kyoto["familyId"])
    assert branch["branchedFrom"] == {"afterSequence": 2, "session": {"id": kyoto_id}}
    assert alternatives(branch) == [(3, 1, [kyoto_id, branch_id])]
    assert lines(branch) == [
        *KYOTO_START,
        (3, "And shoes?", None, "2024-05-01T12:01:40+00:00", None),
        (4, "An abandoned answer.", "gpt-4o", "2024-05-01T12:01:45+00:00", 3),
    ]
    # Importing the file again creates nothing: no session, no branch.
    again = (await gql(IMPORT, d=text))["importSpace"]
    assert (again["created"], again["branchesImported"]) == (0, 0)
    assert [s["id"] for s in again["sessions"]] == [s["id"] for s in result["sessions"]]
    assert alternatives(await session(gql, kyoto_id)) == [(3, 0, [kyoto_id, branch_id])]


def chatgpt_message(node_id: str, parent: str | None, role: str, text: str, at: float) -> Any:
    return {
        "id": node_id,
        "parent": parent,
        "children": [],
        "message": {
            "id": node_id,
            "author": {"role": role},
            "create_time": at,
            "content": {"content_type": "text", "parts": [text]},
            "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
        },
    }


async def test_a_three_way_tree_groups_each_cell_s_alternatives(gql: GraphQLClient) -> None:
    """u1 a1, then u2a a2a (the line shown) or u2b with two replies a2b1 and
    a2b2: the line of a2b2 leaves the one of a2b1 after u2b, so it is a
    branch of that branch, and u2b is one alternative of cell 3, not two."""
    base = 1714564800.0  # 2024-05-01T12:00:00Z
    nodes = [
        chatgpt_message("u1", None, "user", "Q", base + 1),
        chatgpt_message("a1", "u1", "assistant", "A", base + 2),
        chatgpt_message("u2a", "a1", "user", "Q2 first", base + 3),
        chatgpt_message("a2a", "u2a", "assistant", "A2 first", base + 4),
        chatgpt_message("u2b", "a1", "user", "Q2 edited", base + 5),
        chatgpt_message("a2b1", "u2b", "assistant", "A2 edited", base + 6),
        chatgpt_message("a2b2", "u2b", "assistant", "A2 regenerated", base + 7),
    ]
    for node in nodes:
        if node["parent"] is not None:
            next(n for n in nodes if n["id"] == node["parent"])["children"].append(node["id"])
    document = [
        {
            "title": "Three ways",
            "create_time": base,
            # Before the last message (a file may say so): no branch is updated
            # after the conversation, so the sidebar shows the line ChatGPT showed.
            "update_time": base + 6,
            "current_node": "a2a",
            "mapping": {node["id"]: node for node in nodes},
        }
    ]
    result = (await gql(IMPORT, d=json.dumps(document)))["importSpace"]
    assert (result["errors"], result["created"], result["branchesImported"]) == ([], 1, 2)
    root_id = result["sessions"][0]["id"]
    root = await session(gql, root_id)
    [(_, _, [_, edited_id])] = alternatives(root)
    edited = await session(gql, edited_id)
    [_, (_, _, [_, regenerated_id])] = alternatives(edited)
    regenerated = await session(gql, regenerated_id)
    assert alternatives(root) == [(3, 0, [root_id, edited_id])]
    assert alternatives(edited) == [
        (3, 1, [root_id, edited_id]),
        (4, 0, [edited_id, regenerated_id]),
    ]
    assert alternatives(regenerated) == [
        (3, 1, [root_id, edited_id]),
        (4, 1, [edited_id, regenerated_id]),
    ]
    assert regenerated["branchedFrom"] == {"afterSequence": 3, "session": {"id": edited_id}}
    assert [s["updatedAt"] for s in (root, edited, regenerated)] == [
        "2024-05-01T12:00:06+00:00",
        "2024-05-01T12:00:06+00:00",
        "2024-05-01T12:00:06+00:00",
    ]

    def at(seconds: int) -> str:
        return f"2024-05-01T12:00:0{seconds}+00:00"

    start = [(1, "Q", None, at(1), None), (2, "A", "gpt-4o", at(2), 1)]
    assert lines(root) == [
        *start,
        (3, "Q2 first", None, at(3), None),
        (4, "A2 first", "gpt-4o", at(4), 3),
    ]
    assert lines(edited) == [
        *start,
        (3, "Q2 edited", None, at(5), None),
        (4, "A2 edited", "gpt-4o", at(6), 3),
    ]
    assert lines(regenerated) == [
        *start,
        (3, "Q2 edited", None, at(5), None),
        (4, "A2 regenerated", "gpt-4o", at(7), 3),
    ]


async def test_a_claude_edited_question_becomes_an_alternative_of_its_cell(
    gql: GraphQLClient,
) -> None:
    text = (DATA / "claude-conversations.json").read_text()
    result = (await gql(IMPORT, d=text))["importSpace"]
    assert (result["errors"], result["created"], result["branchesImported"]) == ([], 3, 1)
    sourdough_id = result["sessions"][0]["id"]
    sourdough = await session(gql, sourdough_id)
    [(position, index, [first, branch_id])] = alternatives(sourdough)
    assert (position, index, first) == (3, 0, sourdough_id)
    branch = await session(gql, branch_id)
    assert branch["branchedFrom"] == {"afterSequence": 2, "session": {"id": sourdough_id}}
    assert alternatives(branch) == [(3, 1, [sourdough_id, branch_id])]
    assert lines(branch) == [
        *lines(sourdough)[:2],
        (3, "How much flour?", None, "2024-06-01T09:05:00+00:00", None),
        (4, "50 g.", None, "2024-06-01T09:05:08+00:00", 3),
    ]
    assert [t[1] for t in lines(sourdough)[2:]] == [
        "What temperature does it like?\n\n[attachment recipe.pdf not included in the export]",
        "About 24 °C.",
    ]
    again = (await gql(IMPORT, d=text))["importSpace"]
    assert (again["created"], again["branchesImported"]) == (0, 0)
    assert alternatives(await session(gql, sourdough_id)) == [(3, 0, [sourdough_id, branch_id])]


async def test_an_open_webui_regenerated_reply_becomes_an_alternative_of_its_cell(
    gql: GraphQLClient,
) -> None:
    text = (DATA / "openwebui-chat-export.json").read_text()
    result = (await gql(IMPORT, d=text))["importSpace"]
    assert (result["errors"], result["created"], result["branchesImported"]) == ([], 2, 1)
    blight_id = result["sessions"][0]["id"]
    blight = await session(gql, blight_id)
    [(position, index, [first, branch_id])] = alternatives(blight)
    assert (position, index, first) == (2, 0, blight_id)
    branch = await session(gql, branch_id)
    assert branch["branchedFrom"] == {"afterSequence": 1, "session": {"id": blight_id}}
    assert alternatives(branch) == [(2, 1, [blight_id, branch_id])]
    assert lines(branch) == [
        lines(blight)[0],
        (2, "Probably early blight.", "llama3.1:8b", "2024-06-01T09:00:05+00:00", 1),
    ]
    assert [t[1:3] for t in lines(blight)[1:]] == [
        ("Early blight (Alternaria): remove the lower leaves.", "mistral:7b"),
        ("Should I spray?", None),
        ("Copper spray, in dry weather.", "mistral:7b"),
    ]
    again = (await gql(IMPORT, d=text))["importSpace"]
    assert (again["created"], again["branchesImported"]) == (0, 0)
