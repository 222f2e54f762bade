"""Another app's conversation as a tree (api.domain.import_tree): the messages
kept hang from their nearest kept ancestor, the current line is what is
imported, and ``lines`` gives every root-to-leaf path with where it leaves
the current line — checked on examples and as properties of any tree."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.domain import chatgpt, claude, import_tree, openwebui
from api.domain.import_tree import Conversation, Line, Message, Node
from api.domain.types import Role
from api.errors import InputError

DATA = Path(__file__).parents[1] / "data"
T0 = datetime(2024, 5, 1, tzinfo=UTC)


def message(text: str, role: Role = Role.USER, minute: int | None = None) -> Message:
    when = None if minute is None else T0 + timedelta(minutes=minute)
    return Message(role=role, text=text, model=None, created_at=when)


def tree(nodes: list[Node], current: str | None) -> Conversation:
    return import_tree.conversation(
        title="t", created_at=T0, updated_at=T0, nodes=nodes, current_id=current, where="here"
    )


def ids(kept: tuple[import_tree.Kept, ...]) -> list[str]:
    return [k.id for k in kept]


def test_a_message_not_kept_is_skipped_and_its_children_hang_from_the_one_above() -> None:
    conversation = tree(
        [
            Node("root", None, None),  # ChatGPT's empty root
            Node("u1", "root", message("q")),
            Node("tool", "u1", None),  # a tool call, not imported
            Node("a1", "tool", message("a", Role.ASSISTANT)),
            Node("hidden", "a1", None),  # the current node itself is not kept
        ],
        "hidden",
    )
    assert [(k.id, k.parent_id) for k in conversation.messages] == [
        ("u1", None),
        ("a1", "u1"),
    ]
    assert conversation.current_id == "a1"
    assert ids(import_tree.current_line(conversation)) == ["u1", "a1"]
    assert import_tree.lines(conversation) == (Line(("u1", "a1"), 2),)
    assert import_tree.other_lines(conversation) == ()


def test_lines_say_where_each_branch_leaves_the_current_line() -> None:
    conversation = tree(
        [
            Node("u1", None, message("q1")),
            Node("a1", "u1", message("a1", Role.ASSISTANT)),
            Node("u2a", "a1", message("edited")),
            Node("u2b", "a1", message("q2")),
            Node("a2b", "u2b", message("a2", Role.ASSISTANT)),
            Node("a2c", "u2b", message("regenerated", Role.ASSISTANT)),
            Node("u1x", None, message("another first message")),
        ],
        "a2c",
    )
    assert import_tree.lines(conversation) == (
        Line(("u1", "a1", "u2a"), 2),
        Line(("u1", "a1", "u2b", "a2b"), 3),
        Line(("u1", "a1", "u2b", "a2c"), 4),
        Line(("u1x",), 0),
    )
    assert [line.ids[-1] for line in import_tree.other_lines(conversation)] == [
        "u2a",
        "a2b",
        "u1x",
    ]


def test_a_current_message_with_children_leaves_them_as_other_lines() -> None:
    conversation = tree(
        [Node("u1", None, message("q")), Node("a1", "u1", message("a", Role.ASSISTANT))],
        "u1",
    )
    assert import_tree.other_lines(conversation) == (Line(("u1", "a1"), 1),)


@pytest.mark.parametrize(
    ("nodes", "current", "problem"),
    [
        ([Node("a", "nowhere", message("x"))], "a", "'nowhere'"),
        ([Node("a", "b", message("x")), Node("b", "a", message("y"))], "a", "'a'"),
        ([Node("a", None, message("x"))], "gone", "'gone'"),
    ],
)
def test_a_parent_not_in_the_file_or_a_loop_is_invalid_where_the_messages_are(
    nodes: list[Node], current: str, problem: str
) -> None:
    with pytest.raises(InputError) as caught:
        tree(nodes, current)
    assert (caught.value.field, str(caught.value)) == (
        "here",
        f"here must be a tree holding node {problem}.",
    )


def test_without_a_current_message_the_newest_leaf_is_taken() -> None:
    nodes = [
        Node("u1", None, message("q", minute=0)),
        Node("a1", "u1", message("a", Role.ASSISTANT, minute=9)),
        Node("a2", "u1", message("b", Role.ASSISTANT, minute=5)),
        Node("a3", "u1", message("c", Role.ASSISTANT, minute=9)),  # a tie: the later one
    ]
    times = {n.id: n.message.created_at for n in nodes if n.message}
    assert import_tree.newest_leaf(nodes, lambda n: times[n.id]) == "a3"
    assert import_tree.newest_leaf(nodes[:3], lambda n: times[n.id]) == "a1"
    assert import_tree.newest_leaf([], lambda n: None) is None
    # No times at all: the last message of the file.
    assert import_tree.newest_leaf(nodes, lambda n: None) == "a3"


def test_attachments_are_fenced_or_noted_and_a_fence_outgrows_the_text() -> None:
    assert import_tree.with_attachments("Look", [("a.md", "```py\nx\n```")], ["b.pdf"]) == (
        "Look\n\n[attachment a.md, its text as the export holds it]\n"
        "````\n```py\nx\n```\n````\n\n[attachment b.pdf not included in the export]"
    )
    assert import_tree.with_attachments("  ", [], ["b.pdf"]) == (
        "[attachment b.pdf not included in the export]"
    )


def test_each_format_of_the_test_files_has_its_branches() -> None:
    kyoto = chatgpt.tree(json.loads((DATA / "chatgpt-conversations.json").read_text())[0], "c")
    assert import_tree.lines(kyoto) == (
        Line(("u1", "a1", "u2a", "a2a"), 2),
        Line(("u1", "a1", "u2b", "a2b"), 4),
    )
    sourdough = claude.tree(json.loads((DATA / "claude-conversations.json").read_text())[0], "c")
    assert import_tree.lines(sourdough) == (
        Line(("h1", "a1", "h2a", "a2a"), 2),
        Line(("h1", "a1", "h2b", "a2b"), 4),
    )
    [blight, _] = json.loads((DATA / "openwebui-chat-export.json").read_text())
    garden = openwebui.tree(blight["chat"], "c", None, T0, None)
    assert import_tree.lines(garden) == (
        Line(("u1", "a1"), 1),
        Line(("u1", "a1b", "u2", "a2"), 4),
    )


# --- properties: any forest, any messages kept, any current message --------------------


@st.composite
def forests(draw: st.DrawFn) -> tuple[Conversation, list[Node]]:
    size = draw(st.integers(min_value=0, max_value=30))
    nodes = []
    for index in range(size):
        parent = draw(st.integers(min_value=-1, max_value=index - 1))
        kept = draw(st.booleans())
        nodes.append(
            Node(
                f"n{index}",
                None if parent < 0 else f"n{parent}",
                message(f"m{index}") if kept else None,
            )
        )
    order = draw(st.permutations(nodes))  # a file may list children before parents
    current = draw(st.sampled_from([None, *[n.id for n in nodes]]))
    return tree(list(order), current), nodes


@settings(max_examples=300, deadline=None)
@given(forests())
def test_lines_cover_the_tree_once_each_and_leave_the_current_line_where_they_say(
    drawn: tuple[Conversation, list[Node]],
) -> None:
    conversation, _ = drawn
    parents = {k.id: k.parent_id for k in conversation.messages}
    has_children = {k.parent_id for k in conversation.messages}
    leaves = [k.id for k in conversation.messages if k.id not in has_children]
    current = ids(import_tree.current_line(conversation))
    found = import_tree.lines(conversation)

    # One line per leaf, each leaf once, and every kept message on some line.
    assert sorted(line.ids[-1] for line in found) == sorted(leaves)
    assert {i for line in found for i in line.ids} == set(parents)
    for line in found:
        # A path: a root first, then each message's child.
        assert parents[line.ids[0]] is None
        assert all(parents[b] == a for a, b in zip(line.ids, line.ids[1:], strict=False))
        # It shares exactly leaves_at messages with the current line.
        shared = line.leaves_at
        assert list(line.ids[:shared]) == current[:shared]
        assert shared <= min(len(line.ids), len(current))
        if shared < min(len(line.ids), len(current)):
            assert line.ids[shared] != current[shared]

    # The current line ends at the nearest kept message at or above the one chosen.
    if current:
        assert parents[current[0]] is None
        assert conversation.current_id == current[-1]
    # The other lines are all but the current one, when it ends at a leaf.
    others = import_tree.other_lines(conversation)
    assert len(others) == len(found) - (1 if tuple(current) in {ln.ids for ln in found} else 0)
    assert all(line.ids != tuple(current) for line in others)
    assert import_tree.count_other_lines(conversation) == len(others)
    # Only the current line itself runs all along it to its end.
    assert [ln for ln in found if ln.leaves_at == len(ln.ids) == len(current) and current] == [
        ln for ln in found if ln.ids == tuple(current) and current
    ]


def test_a_chatgpt_message_keeps_the_names_of_the_files_it_attached() -> None:
    # conversations.json names a message's files in metadata.attachments
    # ({id, name, size, mimeType}); the files themselves are elsewhere, or gone.
    conversation = {
        "title": "Receipts",
        "create_time": 1714564800.0,
        "current_node": "u1",
        "mapping": {
            "u1": {
                "parent": None,
                "message": {
                    "author": {"role": "user"},
                    "create_time": 1714564801.0,
                    "content": {"content_type": "text", "parts": ["Total these"]},
                    "metadata": {
                        "attachments": [
                            {"id": "file-1", "name": "march.pdf", "size": 9, "mimeType": "x"},
                            {"id": "file-2"},
                        ]
                    },
                },
            },
            "u2": {
                "parent": "u1",
                "message": {
                    "author": {"role": "user"},
                    "content": {"content_type": "multimodal_text", "parts": [{"asset": "x"}]},
                    "metadata": {"attachments": [{"name": "photo.jpg"}]},
                },
            },
        },
    }
    read = chatgpt.conversations([conversation], provider="offline", model="echo", count_tokens=len)
    [session] = read.export.sessions
    assert [t.content for t in session.turns] == [
        "Total these\n\n[attachment march.pdf not included in the export]\n\n"
        "[attachment (a file without a name) not included in the export]"
    ]
    # An image alone is a message too (its note), on a branch past the current node:
    # a branch of the session after its turn 1 (no time: the conversation's start).
    [[branch]] = read.branches
    assert (branch.origin, branch.after, [t.content for t in branch.turns]) == (
        0,
        1,
        ["[attachment photo.jpg not included in the export]"],
    )
    assert branch.created_at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    tree = chatgpt.tree(conversation, "c")
    assert [k.message.text for k in tree.messages][1] == (
        "[attachment photo.jpg not included in the export]"
    )
