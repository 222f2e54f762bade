"""A continuation brief: where a branch of a space stands, in a few lines of
plain text an agent pastes into a prompt (`space_state`).

Everything the head holds is in it (its objective, summary and lists are the
user's words: nothing is dropped); what is compact is what surrounds it: one
line per branch, one per checkpoint changed since, and the items the lists
gained or lost since then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .compare import compare_items
from .types import CONTENT_LIST_FIELDS, Checkpoint, Space

# The checkpoints listed under "changed since"; the rest are counted.
CHANGED_LINES = 20


@dataclass(frozen=True, slots=True)
class SpaceState:
    space: Space
    branch: str
    head: Checkpoint | None  # None: the space has no checkpoint yet
    branches: tuple[tuple[str, Checkpoint], ...]  # by name, with their heads
    since: Checkpoint | datetime | None
    changed: tuple[Checkpoint, ...]  # on the branch's line after `since`, oldest first


def _ref(checkpoint: Checkpoint) -> str:
    return f'{checkpoint.id} {checkpoint.short_hash} "{checkpoint.content.title}"'


def render_state(state: SpaceState) -> str:
    head = state.head
    if head is None:
        return (
            f"Space {state.space.id} {state.space.name!r}, branch {state.branch}: "
            "no checkpoint yet."
        )
    content = head.content
    lines = [
        f"Space {state.space.id} {state.space.name!r}, branch {state.branch}: "
        f"head {_ref(head)} ({head.created_at:%Y-%m-%d %H:%M} UTC)",
    ]
    if content.objective:
        lines.append(f"Objective: {content.objective}")
    if content.summary:
        lines.append(f"Summary: {content.summary}")
    for field in CONTENT_LIST_FIELDS:
        items = getattr(content, field.attr)
        if items:
            lines += [f"{field.label}:", *(f"- {item}" for item in items)]
    others = [f"{name} → {_ref(tip)}" for name, tip in state.branches if name != state.branch]
    if others:
        lines += ["Other branches:", *(f"- {line}" for line in others)]
    lines += _since(state)
    return "\n".join(lines)


def _since(state: SpaceState) -> list[str]:
    since = state.since
    if since is None:
        return []
    where = (
        f"{since:%Y-%m-%d %H:%M} UTC"
        if isinstance(since, datetime)
        else f"checkpoint {_ref(since)}"
    )
    changed = state.changed
    if not changed:
        return [f"Nothing changed on {state.branch} since {where}."]
    lines = [f"Since {where}, {len(changed)} checkpoint(s) on {state.branch}:"]
    shown = changed[-CHANGED_LINES:]
    if len(changed) > len(shown):
        lines.append(f"- … {len(changed) - len(shown)} earlier")
    lines += [f"- {_ref(c)}" for c in shown]
    if isinstance(since, Checkpoint) and state.head is not None:
        # A time names no checkpoint to compare lists with.
        lines += _list_changes(since, state.head)
    return lines


def _list_changes(before: Checkpoint, head: Checkpoint) -> list[str]:
    lines = []
    for field in CONTENT_LIST_FIELDS:
        compared = compare_items(
            getattr(before.content, field.attr), getattr(head.content, field.attr)
        )
        if compared.only_b:
            lines.append(f"{field.label} added: " + "; ".join(compared.only_b))
        if compared.only_a:
            lines.append(f"{field.label} gone: " + "; ".join(compared.only_a))
    return lines


def continuation_prompt(brief: str) -> str:
    """The brief framed for a model that takes the work over (the prompt
    `continue_from_checkpoint`)."""
    return (
        "You are continuing work whose state is kept in Smriti, a memory of checkpoints. "
        "Below is where it stands: take the objective, the decisions and the open tasks "
        "and questions as settled context, and go on from them. When you reach new "
        "conclusions, save them as a checkpoint (the tool save_checkpoint) with the lists "
        "as they then stand.\n\n"
        f"{brief}"
    )
