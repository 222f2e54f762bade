"""Configured providers and their models."""

from __future__ import annotations

import enum

import strawberry


@strawberry.enum(
    description="Whether anything answered at a provider's address when Smriti last checked "
    "(a connection opened and closed; checked in the background, at most every 15 seconds "
    "per server process, never while a request waits)."
)
class ProviderReachability(enum.Enum):
    REACHABLE = strawberry.enum_value(
        "REACHABLE", description="Something is listening there (the offline provider: always)."
    )
    UNREACHABLE = strawberry.enum_value(
        "UNREACHABLE",
        description="Nothing answered: the connection was refused or timed out, or the "
        "name did not resolve; a message sent to it fails (PROVIDER_UNREACHABLE) until it "
        "is up.",
    )
    CHECKING = strawberry.enum_value(
        "CHECKING", description="Not known yet: the first check is under way; ask again shortly."
    )
    NOT_CHECKED = strawberry.enum_value(
        "NOT_CHECKED",
        description="Not checked: a hosted service at its usual address (reachable when "
        "the internet is; the first call tells).",
    )


@strawberry.type(description="A provider from providers.yaml (or the built-in offline one).")
class Provider:
    name: str = strawberry.field(description="The name used in model names.")
    available: bool = strawberry.field(
        description="False when it needs an API key and its variable is not set (a key "
        "marked optional never makes it unavailable). Says nothing of the network: see "
        "reachability."
    )
    reason: str | None = strawberry.field(description="Why it is unavailable.")
    models: list[str] = strawberry.field(
        description='Its models you may use, as "provider/model" (an admin sees every one; '
        "others, those not kept for admins)."
    )
    reachability: ProviderReachability = strawberry.field(
        description="Whether anything answered at its address when last checked."
    )


@strawberry.type(description="The providers and the default models.")
class Providers:
    providers: list[Provider] = strawberry.field(description="Every configured provider.")
    chat_default: str = strawberry.field(
        description="The model your new sessions use: the configured default, or, when an "
        "admin kept it for admins, the first model you may use."
    )
    background: str = strawberry.field(
        description="The background-intelligence model (drafts and titles)."
    )
    admins_only: list[str] = strawberry.field(
        description="The models an admin kept for admins (setModelAccess); empty for "
        "anyone but an admin."
    )
