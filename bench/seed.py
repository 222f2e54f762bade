"""Seed benchmark data straight into the database (bulk inserts through the
Tortoise models), never through the API — ten thousand sendMessage calls
would take longer than the whole benchmark.

Everything is written as the app would have written it: turns numbered
1..N per session, alternating USER / ASSISTANT, with a token count and the
session's ``last_sequence_number`` = N; checkpoints chained by parent with
hashes computed by ``api.domain.hashing.checkpoint_hash`` and a branch row
pointing at each branch's head. Must run inside the app's lifespan (the ORM
is initialised there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from tortoise import connections

from api.domain.hashing import checkpoint_hash
from api.domain.types import MAIN_BRANCH, CheckpointContent, MemoryScope, Role, SpaceRole
from api.store import models, spaces

OFFLINE_PROVIDER = "offline"
ECHO_MODEL = "echo"
AUTHOR = "user"
# Rows per executemany batch: large enough to be fast, small enough to keep
# memory flat.
BATCH_SIZE = 2000
# Characters per token for the seeded token_count: the same estimate the app
# falls back to when its tokenizer fails (api/providers/litellm/transport.py).
CHARS_PER_TOKEN = 4
# Seeded history lies in the past, far enough back that it precedes every
# request the benchmark sends.
CHECKPOINTS_START = timedelta(days=30)
TURNS_START = timedelta(days=1)
# One step between consecutive seeded rows; whole milliseconds, so every
# database stores the timestamp exactly and hashes verify everywhere.
ROW_STEP = timedelta(milliseconds=1)
# Checkpoints on each side branch of a lineage space ("maybe a few side branches").
SIDE_BRANCH_LENGTH = 10
SIDE_BRANCHES = ("side-1", "side-2", "side-3")

USER_TEXTS = (
    "Can we compare the two storage layouts again? I want the one that keeps "
    "reads flat as the history grows, and I am not sure the second index pays for itself.",
    "Let's pin down the retry policy: how many attempts, which errors count as "
    "transient, and what does the user see while we wait?",
    "Summarise where we are on the migration plan and list what is still blocking the "
    "cut-over to the new schema next week.",
    "What would change if we moved the background model to a smaller provider? "
    "Think about latency, cost and failure modes.",
)
ASSISTANT_TEXTS = (
    "Here is the comparison. The first layout reads the newest turns through the "
    "(session, sequence) index, so a window costs the same at any history length; the "
    "second adds a covering index that saves one lookup per row but doubles write "
    "amplification. Given the write-heavy workload I would keep the first and drop the "
    "extra index. Decision: keep layout A. Open question: do we need the created_at "
    "index for the boundary query, or can the sequence number answer it?",
    "Proposed policy: three attempts with exponential backoff starting at 500 ms, "
    "retrying only on timeouts, 429 and 5xx. Authentication and validation errors are "
    "returned immediately. The UI shows a spinner with the attempt count and lets the "
    "user cancel; the user's turn is kept either way so a retry never duplicates it.",
    "Status: the schema diff is reviewed, the backfill script is tested on a copy of "
    "production and takes about forty minutes. Blocking: the read replica lag alert is "
    "not wired up yet, and we still need a rollback rehearsal. TODO: schedule the "
    "rehearsal for Thursday.",
    "A smaller background model would cut drafting latency roughly in half and cost by "
    "about eighty percent. The risk is weaker extraction: more missed decisions and "
    "noisier entity lists. I suggest trying it on titles first, where quality matters "
    "least, and keeping the larger model for checkpoint drafts.",
)


@dataclass(frozen=True)
class LineageSpace:
    """A space holding one long chain of checkpoints (plus side branches)."""

    space_id: int
    size: int  # checkpoints on main
    newest_id: int  # head of main
    total: int  # checkpoints in the space, side branches included


@dataclass
class Seeded:
    """What was seeded, by id, for the measurements to address."""

    owner_id: int
    head_space_id: int = 0
    # HEAD-mode sessions in head_space_id, by earlier-turn count. A size with
    # several sessions is used round-robin (one send per session).
    head_sessions: dict[int, list[int]] = field(default_factory=dict)
    fresh_sessions: dict[int, list[int]] = field(default_factory=dict)
    cold_session_id: int = 0
    lineage_spaces: dict[int, LineageSpace] = field(default_factory=dict)
    # Sessions read whole, page by page (bench/reads.py), by turn count: no
    # send ever adds to them.
    read_sessions: dict[int, int] = field(default_factory=dict)


class _Ids:
    """Explicit primary keys, so parents and sessions are known before insert.

    The database is new, so every table starts at 1; PostgreSQL's sequences
    are moved past them afterwards (``fix_sequences``).
    """

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def take(self, table: str, count: int = 1) -> list[int]:
        start = self._next.get(table, 1)
        self._next[table] = start + count
        return list(range(start, start + count))


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _content(index: int, branch: str) -> CheckpointContent:
    """A checkpoint of typical size: every section present, a few items each."""
    return CheckpointContent(
        title=f"{branch} checkpoint {index}",
        objective="Keep context resolution cost flat as sessions and lineages grow.",
        summary=(
            f"Step {index}: reviewed storage layout, retry policy and migration plan; "
            "agreed to read windows through the sequence index."
        ),
        decisions=(f"Keep layout A (step {index})", "Retry only transient errors"),
        tasks=(f"Benchmark step {index}",),
        open_questions=("Is the created_at index needed?",),
        entities=("PostgreSQL", "SQLite", "LiteLLM"),
    )


class Seeder:
    """Bulk-inserts the benchmark's spaces, sessions, turns and checkpoints."""

    def __init__(self) -> None:
        self.ids = _Ids()
        self.now = datetime.now(UTC).replace(microsecond=0)

    async def owner(self) -> int:
        """The local user every request acts as (the app's own get-or-create)."""
        return await spaces.local_user_id()

    async def space(self, owner_id: int, name: str) -> int:
        """A space owned by ``owner_id``, with the owner's membership row that every
        read goes through (without it the space reads as null: a benchmark would time
        NOT_FOUND)."""
        (space_id,) = self.ids.take("space")
        await models.Space.create(
            id=space_id, name=name, owner_id=owner_id, created_at=self.now, updated_at=self.now
        )
        await models.SpaceMember.create(
            space_id=space_id, user_id=owner_id, role=SpaceRole.OWNER.value, created_at=self.now
        )
        return space_id

    async def sessions(
        self, owner_id: int, space_id: int | None, count: int, *, title: str
    ) -> list[int]:
        """``count`` titled sessions (so no background titling runs) on main."""
        ids = self.ids.take("session", count)
        await models.Session.bulk_create(
            [
                models.Session(
                    id=session_id,
                    title=f"{title} {n}",
                    space_id=space_id,
                    branch_name=MAIN_BRANCH,
                    active_provider=OFFLINE_PROVIDER,
                    active_model=ECHO_MODEL,
                    memory_scope=MemoryScope.LATEST_3.value,
                    owner_id=owner_id,
                    created_at=self.now,
                    updated_at=self.now,
                )
                for n, session_id in enumerate(ids)
            ],
            batch_size=BATCH_SIZE,
        )
        return ids

    async def turns(
        self, session_id: int, count: int, *, text: Callable[[int], str] | None = None
    ) -> None:
        """Turns 1..count, alternating USER / ASSISTANT, then last_sequence_number = count;
        ``text(sequence)`` writes a turn's content (default: the fixed sample texts)."""
        start = self.now - TURNS_START
        rows = []
        for sequence in range(1, count + 1):
            is_user = sequence % 2 == 1
            texts = USER_TEXTS if is_user else ASSISTANT_TEXTS
            content = (
                text(sequence) if text else f"#{sequence} {texts[(sequence // 2) % len(texts)]}"
            )
            rows.append(
                models.Turn(
                    session_id=session_id,
                    sequence_number=sequence,
                    role=(Role.USER if is_user else Role.ASSISTANT).value,
                    content=content,
                    provider=OFFLINE_PROVIDER,
                    model=ECHO_MODEL,
                    token_count=_tokens(content),
                    reply_to_sequence=None if is_user else sequence - 1,
                    created_at=start + sequence * ROW_STEP,
                )
            )
        for offset in range(0, len(rows), BATCH_SIZE):
            await models.Turn.bulk_create(rows[offset : offset + BATCH_SIZE])
        await models.Session.filter(id=session_id).update(last_sequence_number=count)

    async def chain(
        self,
        space_id: int,
        length: int,
        *,
        branch: str = MAIN_BRANCH,
        parent: models.Checkpoint | None = None,
        source_session_id: int | None = None,
        first_moment: datetime | None = None,
        content_of: Callable[[int, str], CheckpointContent] | None = None,
    ) -> list[models.Checkpoint]:
        """``length`` checkpoints, each the child of the previous (the first of
        ``parent``), with valid hashes; the branch row points at the last."""
        moment = first_moment or (self.now - CHECKPOINTS_START)
        ids = self.ids.take("checkpoint", length)
        rows: list[models.Checkpoint] = []
        previous = parent
        for n, checkpoint_id in enumerate(ids):
            moment += ROW_STEP
            content = (content_of or _content)(n + 1, branch)
            row = models.Checkpoint(
                id=checkpoint_id,
                hash=checkpoint_hash(
                    content,
                    space_id=space_id,
                    parent_hash=previous.hash if previous else None,
                    created_at=moment,
                    branch_name=branch,
                    author_agent=AUTHOR,
                ),
                space_id=space_id,
                parent_id=previous.id if previous else None,
                branch_name=branch,
                title=content.title,
                objective=content.objective,
                summary=content.summary,
                decisions=list(content.decisions),
                tasks=list(content.tasks),
                open_questions=list(content.open_questions),
                entities=list(content.entities),
                author_agent=AUTHOR,
                source_session_id=source_session_id,
                base_sequence=0,
                created_at=moment,
            )
            rows.append(row)
            previous = row
        for offset in range(0, len(rows), BATCH_SIZE):
            await models.Checkpoint.bulk_create(rows[offset : offset + BATCH_SIZE])
        (branch_id,) = self.ids.take("branch")
        await models.Branch.create(
            id=branch_id,
            space_id=space_id,
            name=branch,
            head_id=rows[-1].id,
            created_at=moment,
            updated_at=moment,
        )
        return rows

    async def lineage_space(
        self, owner_id: int, size: int, side_branches: Sequence[str]
    ) -> LineageSpace:
        """A space whose main is a chain of ``size``, with side branches forking
        off evenly along it (each ``SIDE_BRANCH_LENGTH`` long)."""
        space_id = await self.space(owner_id, f"Lineage of {size}")
        main = await self.chain(space_id, size)
        total = size
        sides = []
        for n, name in enumerate(side_branches, start=1):
            fork = main[size * n // (len(side_branches) + 1)]
            side = await self.chain(
                space_id,
                SIDE_BRANCH_LENGTH,
                branch=name,
                parent=fork,
                first_moment=main[-1].created_at + n * SIDE_BRANCH_LENGTH * ROW_STEP,
            )
            sides.append(side)
            total += SIDE_BRANCH_LENGTH
        head = main[-1]
        if sides:  # the first side branch merged back into main
            head = await self.merge(space_id, into=head, merged=sides[0][-1])
            total += 1
        return LineageSpace(space_id, size, head.id, total)

    async def merge(
        self, space_id: int, *, into: models.Checkpoint, merged: models.Checkpoint
    ) -> models.Checkpoint:
        """A merge checkpoint on ``into``'s branch (parent ``into``, merge parent
        ``merged``), hashed as mergeCheckpoints hashes it; the branch moves to it."""
        (checkpoint_id,) = self.ids.take("checkpoint")
        moment = max(into.created_at, merged.created_at) + ROW_STEP
        content = _content(0, f"merge of {merged.branch_name}")
        row = await models.Checkpoint.create(
            id=checkpoint_id,
            hash=checkpoint_hash(
                content,
                space_id=space_id,
                parent_hash=into.hash,
                created_at=moment,
                branch_name=into.branch_name,
                author_agent=AUTHOR,
                merge_parent_hash=merged.hash,
            ),
            space_id=space_id,
            parent_id=into.id,
            merge_parent_id=merged.id,
            branch_name=into.branch_name,
            title=content.title,
            objective=content.objective,
            summary=content.summary,
            decisions=list(content.decisions),
            tasks=list(content.tasks),
            open_questions=list(content.open_questions),
            entities=list(content.entities),
            author_agent=AUTHOR,
            base_sequence=0,
            created_at=moment,
        )
        await models.Branch.filter(space_id=space_id, name=into.branch_name).update(
            head_id=row.id, updated_at=moment
        )
        return row

    async def fix_sequences(self) -> None:
        """PostgreSQL: move id sequences past the explicit ids (SQLite needs nothing)."""
        conn = connections.get("default")
        if str(conn.capabilities.dialect) != "postgres":
            return
        for table in ("space", "session", "checkpoint", "branch"):
            await conn.execute_script(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )

    async def analyze(self) -> None:
        """PostgreSQL: refresh planner statistics, as autovacuum would shortly after
        a bulk load. SQLite is left as the app leaves it (the app never ANALYZEs)."""
        conn = connections.get("default")
        if str(conn.capabilities.dialect) == "postgres":
            await conn.execute_script("ANALYZE")


async def seed(
    *,
    head_checkpoints: int,
    head_sizes: Sequence[int],
    sessions_for_empty: int,
    fresh_sizes: Sequence[int],
    lineage_sizes: Sequence[int],
    read_turn_sizes: Sequence[int] = (),
) -> Seeded:
    """Seed everything the measurements use.

    * a HEAD space with a chain of ``head_checkpoints`` on main, saved (from
      another session) before any seeded turn, so the boundary is 0 and the
      window reads the sessions' long histories;
    * per size in ``head_sizes``, HEAD-mode sessions (LATEST_3) with that many
      turns — ``sessions_for_empty`` of them for size 0, so every send there
      really sees an empty history, one otherwise;
    * per size in ``fresh_sizes``, one session in no space (FRESH mode);
    * per size in ``lineage_sizes``, a lineage space (see ``lineage_space``);
    * per size in ``read_turn_sizes``, a session in no space read whole by pages.
    """
    seeder = Seeder()
    owner_id = await seeder.owner()
    seeded = Seeded(owner_id=owner_id)

    seeded.head_space_id = await seeder.space(owner_id, "Benchmark (HEAD mode)")
    (planning,) = await seeder.sessions(owner_id, seeded.head_space_id, 1, title="Planning")
    await seeder.chain(seeded.head_space_id, head_checkpoints, source_session_id=planning)
    (seeded.cold_session_id,) = await seeder.sessions(
        owner_id, seeded.head_space_id, 1, title="Cold start"
    )
    for size in head_sizes:
        count = sessions_for_empty if size == 0 else 1
        ids = await seeder.sessions(owner_id, seeded.head_space_id, count, title=f"HEAD {size}")
        for session_id in ids:
            if size:
                await seeder.turns(session_id, size)
        seeded.head_sessions[size] = ids
    for size in fresh_sizes:
        (session_id,) = await seeder.sessions(owner_id, None, 1, title=f"FRESH {size}")
        await seeder.turns(session_id, size)
        seeded.fresh_sessions[size] = [session_id]
    for size in lineage_sizes:
        seeded.lineage_spaces[size] = await seeder.lineage_space(owner_id, size, SIDE_BRANCHES)
    for size in read_turn_sizes:
        (session_id,) = await seeder.sessions(owner_id, None, 1, title=f"Read whole {size}")
        await seeder.turns(session_id, size)
        seeded.read_sessions[size] = session_id
    await seeder.fix_sequences()
    await seeder.analyze()
    return seeded
