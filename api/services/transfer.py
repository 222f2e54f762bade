"""Verifying, exporting and importing whole spaces."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

from ..domain import documents, imports
from ..domain.accounts import Actor
from ..domain.export_format import (
    DocumentWriter,
    Export,
    read_json,
    to_document,
)
from ..domain.types import Session, Space
from ..domain.verification import Verification, verify_lineage
from ..errors import ErrorCode, InputError
from ..providers import ProviderRegistry
from ..store import members, transfer
from . import access, policy


async def verify(actor: Actor, space_id: int) -> Verification:
    """Recompute every checkpoint hash and parent link of a space the actor is a member of."""
    rule = policy.allow(actor, "verifyLineage")
    await access.space(actor, space_id, rule.role)
    return verify_lineage(
        await transfer.space_checkpoints(space_id),
        hash_space_id=await transfer.hash_space_id(space_id),
    )


async def space_ids(actor: Actor) -> list[int]:
    """The spaces the actor is a member of (what `smriti verify` checks)."""
    policy.allow(actor, "spaces")
    return await transfer.space_ids(actor.user_id)


async def export_spaces(actor: Actor, space_ids: list[int]) -> Export:
    """Spaces the actor is a member of, with the sessions they may read
    (NotFound for one they are not a member of)."""
    rule = policy.allow(actor, "exportSpace")
    for space_id in space_ids:
        await access.space(actor, space_id, rule.role)
    exported = [await transfer.space_export(i, actor.user_id) for i in space_ids]
    return Export(spaces=tuple(exported), sessions=())


async def export_session(actor: Actor, session_id: int) -> Export:
    """A session in no space. One in a space is exported with its space: its
    checkpoints and the lineage they hang in are part of what it means."""
    rule = policy.allow(actor, "exportSession")
    session = await access.session(actor, session_id, rule)
    if session.space_id is not None:
        raise InputError(
            "This session belongs to a space: export the space, which holds its lineage.",
            code=ErrorCode.WRONG_SPACE,
            field="sessionId",
        )
    sessions = await transfer.session_exports(session.owner_id, [session.id])
    return Export(spaces=(), sessions=tuple(sessions))


def to_json(export: Export) -> str:
    document = to_document(export, exported_at=datetime.now(UTC))
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


async def json_chunks(
    actor: Actor, *, space_id: int | None = None, session_id: int | None = None
) -> AsyncIterator[str]:
    """The JSON export of one space, one space-less session, or (neither given)
    everything the user may read, a space at a time: the same bytes as
    ``to_json``, for `smriti export` to write as they are read. What is refused
    (NotFound, WRONG_SPACE) is refused before the first chunk."""
    writer = DocumentWriter(datetime.now(UTC))
    if session_id is not None:
        alone = await export_session(actor, session_id)
        yield writer.head() + writer.sessions()
        for item in alone.sessions:
            yield writer.session(item)
        yield writer.tail()
        return
    rule = policy.allow(actor, "exportSpace")
    if space_id is not None:
        await access.space(actor, space_id, rule.role)
        space_ids = [space_id]
    else:
        space_ids = await transfer.space_ids(actor.user_id)
    yield writer.head()
    for one in space_ids:
        yield writer.space(await transfer.space_export(one, actor.user_id))
    yield writer.sessions()
    if space_id is None:
        policy.allow(actor, "exportSession")
        for item in await transfer.session_exports(actor.user_id, None):
            yield writer.session(item)
    yield writer.tail()


@dataclass(frozen=True, slots=True)
class ImportReport:
    spaces: list[tuple[Space, bool]]  # each space, and whether this import created it
    sessions: list[tuple[Session, bool]]  # sessions in no space, likewise
    source: str  # "smriti", "chatgpt", "claude" or "openwebui"
    branches: list[int]  # for each session, the branches of it this import created


async def import_document(actor: Actor, text: str, registry: ProviderRegistry) -> ImportReport:
    """Recreate a JSON export, or the conversations of a ChatGPT, a Claude
    or an Open WebUI export.

    Every checkpoint hash of an export is verified first, then it is written
    in one transaction; a tampered or malformed document is refused
    (InputError) with nothing written. Another app's conversations become
    sessions in no space that go on talking to the chat default model: each
    its current line, with every other line as a conversation branch of it
    (alternatives of the same cells), written in the same transaction.
    """
    policy.allow(actor, "importSpace")
    document = read_json(text)
    ref = registry.resolve(None, require_available=False)
    read = imports.read(
        document,
        provider=ref.provider,
        model=ref.model,
        count_tokens=lambda content: registry.count_tokens(content, ref),
    )
    done = await transfer.import_export(actor.user_id, read.export, read.branches)
    branches = [
        len(found) if created else 0
        for (_, created), found in zip(done.sessions, read.branches, strict=True)
    ]
    return ImportReport(done.spaces, done.sessions, read.source, branches)


async def session_items(actor: Actor, session_id: int) -> tuple[Session, list[documents.Item]]:
    """A session with its turns and the checkpoints saved from it (those the
    reader may read), in order."""
    rule = policy.allow(actor, "exportSession")
    await access.session(actor, session_id, rule)
    exported = await transfer.session_export(session_id)
    saved = await transfer.checkpoints_from_session(session_id)
    readable = await members.roles(actor.user_id, sorted({c.space_id for c in saved}))
    saved = [c for c in saved if c.space_id in readable]
    return exported.session, documents.in_order(exported.turns, saved)


@dataclass(frozen=True, slots=True)
class Document:
    """A readable document and the name (without its suffix) to save it under:
    its session's title or its space's name (``documents.file_stem``)."""

    text: str
    stem: str


def session_stem(session: Session) -> str:
    return documents.file_stem(session.title, f"smriti-session-{session.id}")


def space_stem(space: Space) -> str:
    return documents.file_stem(space.name, f"smriti-space-{space.id}")


def export_stem(export: Export) -> str:
    """The name to save a JSON export of one space or one session under."""
    if len(export.spaces) == 1 and not export.sessions:
        return space_stem(export.spaces[0].space)
    if len(export.sessions) == 1 and not export.spaces:
        return session_stem(export.sessions[0].session)
    return "smriti-export"


async def session_markdown(actor: Actor, session_id: int) -> Document:
    session, items = await session_items(actor, session_id)
    return Document(documents.session_markdown(session, items), session_stem(session))


async def session_notebook(actor: Actor, session_id: int) -> Document:
    session, items = await session_items(actor, session_id)
    notebook = documents.session_notebook(session, items)
    text = json.dumps(notebook, ensure_ascii=False, indent=1) + "\n"
    return Document(text, session_stem(session))


async def lineage_markdown(actor: Actor, space_id: int) -> Document:
    [item] = (await export_spaces(actor, [space_id])).spaces
    hashes = {c.id: c.hash for c in item.checkpoints}
    branches = [documents.LineageBranch(b.name, hashes[b.head_id]) for b in item.branches]
    text = documents.lineage_markdown(item.space, item.checkpoints, branches)
    return Document(text, space_stem(item.space))
