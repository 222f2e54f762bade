"""Failed sign-ins per name and address, shared by every worker (table sign_in)."""

from __future__ import annotations

from datetime import datetime

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F
from tortoise.functions import Min, Sum

from ..domain.sign_in import SignInCounts, SignInFailures
from . import models
from .writes import finished

# Longer than any name or address counted: the rest is cut off before storing.
NAME_CHARS = 100
ADDRESS_CHARS = 64


def _key(name: str, address: str) -> tuple[str, str]:
    return name[:NAME_CHARS], address[:ADDRESS_CHARS]


async def counts(
    name: str, address: str, *, since: datetime, known_since: datetime
) -> SignInCounts:
    """The failures after ``since`` of this pair, this address and this name."""
    name, address = _key(name, address)
    recent = models.SignIn.filter(last_failed_at__gte=since)
    pair = await models.SignIn.get_or_none(name=name, address=address)
    by_address = (
        await recent.filter(address=address)
        .annotate(total=Sum("failures"), oldest=Min("last_failed_at"))
        .group_by("address")
        .values("total", "oldest")
    )
    by_name = (
        await recent.filter(name=name)
        .annotate(total=Sum("failures"))
        .group_by("name")
        .values("total")
    )
    fresh = pair is not None and pair.last_failed_at is not None and pair.last_failed_at >= since
    return SignInCounts(
        pair_failures=pair.failures if pair is not None and fresh else 0,
        pair_last_failed=pair.last_failed_at if pair is not None and fresh else None,
        address_failures=int(by_address[0]["total"] or 0) if by_address else 0,
        address_oldest_failed=by_address[0]["oldest"] if by_address else None,
        name_failures=int(by_name[0]["total"] or 0) if by_name else 0,
        known_address=pair is not None
        and pair.signed_in_at is not None
        and pair.signed_in_at >= known_since,
    )


@finished
async def failed(name: str, address: str, *, now: datetime, since: datetime) -> None:
    """One more failure of this pair (the first of a new window if the last is older)."""
    name, address = _key(name, address)
    pair = models.SignIn.filter(name=name, address=address)
    for _ in range(2):
        if await pair.filter(last_failed_at__gte=since).update(
            failures=F("failures") + 1, last_failed_at=now
        ):
            break
        if await pair.update(failures=1, last_failed_at=now):
            break
        try:
            await models.SignIn.create(name=name, address=address, failures=1, last_failed_at=now)
            break
        except IntegrityError:
            continue  # another worker created it a moment ago: count on it
    # Rows that only remember failures are forgotten once those age out.
    await models.SignIn.filter(last_failed_at__lt=since, signed_in_at__isnull=True).delete()


@finished
async def succeeded(name: str, address: str, *, now: datetime) -> None:
    """This name signed in from this address: its failures there are forgiven,
    and the address is known as the owner's."""
    name, address = _key(name, address)
    updated = await models.SignIn.filter(name=name, address=address).update(
        failures=0, last_failed_at=None, signed_in_at=now
    )
    if not updated:
        try:
            await models.SignIn.create(name=name, address=address, signed_in_at=now)
        except IntegrityError:
            await models.SignIn.filter(name=name, address=address).update(
                failures=0, last_failed_at=None, signed_in_at=now
            )


async def recent_failures(since: datetime) -> list[SignInFailures]:
    """Every (name, address) with failures after ``since``, the latest first."""
    rows = await models.SignIn.filter(last_failed_at__gte=since, failures__gt=0).order_by(
        "-last_failed_at", "name", "address"
    )
    return [
        SignInFailures(
            name=row.name,
            address=row.address,
            failures=row.failures,
            last_failed_at=row.last_failed_at,  # type: ignore[arg-type]
        )
        for row in rows
    ]


@finished
async def clear(*, name: str | None = None, address: str | None = None) -> int:
    """Forget the failures of a name (every address) or of an address (every
    name); how many (name, address) pairs had some."""
    query = models.SignIn.filter(failures__gt=0)
    if name is not None:
        query = query.filter(name=name[:NAME_CHARS])
    if address is not None:
        query = query.filter(address=address[:ADDRESS_CHARS])
    return int(await query.update(failures=0, last_failed_at=None))
