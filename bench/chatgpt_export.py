"""A generated ChatGPT data export (``conversations.json``) of any size.

``python -m bench.chatgpt_export OUT [--conversations C] [--messages N]
[--alternatives M] [--text-chars T] [--seed S]``

Each conversation is what ChatGPT writes (``api/domain/chatgpt.py`` reads it):
a ``mapping`` of nodes with ``parent`` and ``children``, a hidden system
message under an empty root, then a line of N messages, user and assistant in
turn, ending at ``current_node``. M alternatives hang off that line as the app
makes them: a regenerated reply (another assistant message under the same
question) or an edited message (another user message under the same parent,
with its own reply), at positions spread evenly along the line, the same
from run to run (``--seed``). Texts are T characters, each starting with its
conversation and node so no two are equal.

The file is written a conversation at a time: generating 200 MB holds one
conversation in memory. ``generate`` returns what it wrote, so a benchmark
knows the messages and lines to expect.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

START = 1_714_564_800  # 2024-05-01T12:00:00Z, the first conversation's start
_WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "seven",
    "tired",
    "walruses",
    "argue",
    "about",
    "tides",
    "maps",
    "lanterns",
    "rivers",
    "and",
    "the",
    "slow",
    "arithmetic",
    "of",
    "winter",
]


@dataclass(frozen=True, slots=True)
class Generated:
    conversations: int
    messages: int  # imported messages: the lines' and the alternatives' own
    alternatives: int  # other lines (each a conversation branch when imported)
    bytes: int


def filler(chars: int, rng: random.Random) -> str:
    """About ``chars`` characters of words (a pool reused by every message)."""
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def conversation(
    index: int,
    *,
    messages: int,
    alternatives: int,
    text_chars: int,
    rng: random.Random,
    pool: str,
) -> tuple[dict[str, Any], int]:
    """Conversation ``index``, and how many messages it holds to import."""
    started = START + index * 86_400
    mapping: dict[str, dict[str, Any]] = {}

    def text(node_id: str) -> str:
        head = f"c{index} {node_id}: "
        offset = rng.randrange(max(1, len(pool) - text_chars))
        return head + pool[offset : offset + max(0, text_chars - len(head))]

    def add(node_id: str, parent: str | None, role: str | None, when: float) -> None:
        message = None
        if role is not None:
            message = {
                "id": node_id,
                "author": {"role": role},
                "create_time": when,
                "content": {"content_type": "text", "parts": [text(node_id)]},
                "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
            }
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            mapping[parent]["children"].append(node_id)

    add("root", None, None, started)
    add("sys", "root", "system", started)
    mapping["sys"]["message"]["metadata"] = {"is_visually_hidden_from_conversation": True}
    line = [f"m{i}" for i in range(1, messages + 1)]
    for i, node_id in enumerate(line):
        role = "user" if i % 2 == 0 else "assistant"
        add(node_id, line[i - 1] if i else "sys", role, started + 10 * (i + 1))
    kept = messages
    # Alternatives at positions spread along the line (a few jittered by the seed).
    for k in range(alternatives):
        at = min(messages - 1, (k + 1) * messages // (alternatives + 1) + rng.randrange(2))
        if at < 0:
            break
        parent = line[at - 1] if at else "sys"
        when = started + 10 * (messages + k + 1)
        if at % 2 == 1:  # a reply: regenerated
            add(f"r{k}", parent, "assistant", when)
            kept += 1
        else:  # a message of the user's: edited, and answered
            add(f"e{k}", parent, "user", when)
            add(f"e{k}a", f"e{k}", "assistant", when + 1)
            kept += 2
    document = {
        "title": f"Generated conversation {index}",
        "create_time": started,
        "update_time": started + 10 * (messages + alternatives + 2),
        "conversation_id": f"conv-{index}",
        "current_node": line[-1] if line else "sys",
        "mapping": mapping,
    }
    return document, kept


def generate(
    out: TextIO,
    *,
    conversations: int,
    messages: int,
    alternatives: int,
    text_chars: int = 200,
    seed: int = 29,
) -> Generated:
    rng = random.Random(seed)
    pool = filler(max(4 * text_chars, 4096), rng)
    written = total = 0
    written += out.write("[")
    for index in range(conversations):
        document, kept = conversation(
            index,
            messages=messages,
            alternatives=alternatives,
            text_chars=text_chars,
            rng=rng,
            pool=pool,
        )
        written += out.write(("," if index else "") + "\n" + json.dumps(document))
        total += kept
    written += out.write("\n]\n")
    return Generated(conversations, total, conversations * alternatives, written)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.chatgpt_export", description=__doc__)
    parser.add_argument("out", help="The file to write (- for standard output).")
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--messages", type=int, default=4000, help="On each current line.")
    parser.add_argument("--alternatives", type=int, default=400, help="In each conversation.")
    parser.add_argument("--text-chars", type=int, default=200, help="Of each message.")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args(argv)
    options = {
        "conversations": args.conversations,
        "messages": args.messages,
        "alternatives": args.alternatives,
        "text_chars": args.text_chars,
        "seed": args.seed,
    }
    if args.out == "-":
        made = generate(sys.stdout, **options)
    else:
        with Path(args.out).open("w", encoding="utf-8") as file:
            made = generate(file, **options)
    print(
        f"{made.conversations:,} conversations, {made.messages:,} messages, "
        f"{made.alternatives:,} alternatives, {made.bytes / 1e6:,.1f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
