"""How failed sign-ins limit the next ones: pure rules over counts the store keeps.

Failures are counted per (name, address) and per address. Either reaching
``limit`` within ``window`` refuses that address (for that name, or at all)
until the failures age out: an attacker's own address is locked, never the
name's owner. Failures of one name summed over every address do not lock it:
past ``limit`` each attempt from an address the name has not signed in from
waits before the password is checked, twice as long per further failure, up
to ``max_delay``. A name attacked from many addresses so slows down, while
its owner, at an address they signed in from before, is never kept waiting.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class SignInLimits:
    limit: int = 10
    window: timedelta = timedelta(minutes=15)
    # The longest wait a name's failures put on a sign-in from a new address.
    max_delay: float = 30.0
    # An address a name signed in from this recently is the owner's: no wait.
    known_for: timedelta = timedelta(days=90)


@dataclass(frozen=True)
class SignInCounts:
    """What the store knows of one attempt's name and address, within the window."""

    pair_failures: int = 0
    pair_last_failed: datetime | None = None
    address_failures: int = 0
    # The oldest failure still counted against the address: it ages out first.
    address_oldest_failed: datetime | None = None
    name_failures: int = 0
    # Whether this name signed in from this address within ``known_for``.
    known_address: bool = False


@dataclass(frozen=True)
class SignInFailures:
    """One (name, address) row as an admin sees it."""

    name: str
    address: str
    failures: int
    last_failed_at: datetime


def sign_in_key(name: str) -> str:
    """The form of a name failures are counted by (and accounts are unique by):
    NFKC, case-folded, so "Ada", "ADA" and the full-width "Ada" are one name."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def retry_after(counts: SignInCounts, limits: SignInLimits, now: datetime) -> int:
    """Whole seconds until this address may try this name again; 0: it may now."""
    waits = []
    if counts.pair_failures >= limits.limit and counts.pair_last_failed is not None:
        waits.append(counts.pair_last_failed + limits.window - now)
    if counts.address_failures >= limits.limit and counts.address_oldest_failed is not None:
        waits.append(counts.address_oldest_failed + limits.window - now)
    if not waits:
        return 0
    seconds = max(wait.total_seconds() for wait in waits)
    return max(1, int(seconds) + (0 if seconds == int(seconds) else 1))


def name_delay(name_failures: int, limits: SignInLimits) -> float:
    """Seconds an attempt waits for its name's failures from every address:
    none below the limit, then 1, 2, 4, … up to ``max_delay``."""
    if name_failures < limits.limit:
        return 0.0
    return min(limits.max_delay, 2.0 ** min(name_failures - limits.limit, 30))


def delay(counts: SignInCounts, limits: SignInLimits) -> float:
    """The wait before this attempt's password is checked (none for the owner's address)."""
    return 0.0 if counts.known_address else name_delay(counts.name_failures, limits)
