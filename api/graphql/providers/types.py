"""Configured providers and their models."""

from __future__ import annotations

import strawberry


@strawberry.type(description="A provider from providers.yaml (or the built-in offline one).")
class Provider:
    name: str = strawberry.field(description="The name used in model names.")
    available: bool = strawberry.field(description="False when its API key is not set.")
    reason: str | None = strawberry.field(description="Why it is unavailable.")
    models: list[str] = strawberry.field(
        description='Its models you may use, as "provider/model" (an admin sees every one; '
        "others, those not kept for admins)."
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
