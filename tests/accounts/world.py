"""An accounts-mode app with users, tokens and the owner's objects, for the tests."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from starlette.applications import Starlette

from api.app import create_app
from api.services import accounts
from api.settings import Settings
from api.store import accounts as account_store
from api.store import models

PASSWORD = "correct horse battery"
BASE_URL = "http://smriti.test"


@dataclass
class World:
    app: Starlette
    http: httpx.AsyncClient
    # Actor name -> the Authorization header it sends (None: none at all).
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)

    async def post(self, actor: str, query: str, **variables: Any) -> httpx.Response:
        return await self.http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers=self.headers[actor],
        )

    async def data(self, actor: str, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.post(actor, query, **variables)
        body = response.json()
        assert response.status_code == 200 and "errors" not in body, body
        result: dict[str, Any] = body["data"]
        return result


async def _token(user_id: int, name: str, *, read_only: bool = False) -> str:
    _, secret = await accounts.create_token(
        user_id, name=name, read_only=read_only, expires_in_days=None
    )
    return secret


@asynccontextmanager
async def accounts_app(settings: Settings) -> AsyncIterator[World]:
    """Users owner (admin), other, editor, viewer, third, disabled; the owner's
    tokens: full, read-only, revoked, expired, and a spare one to revoke; one
    token each for other, editor and viewer. Memberships are made by the tests
    (``tests/accounts/test_authorization_matrix.build_objects``)."""
    app = create_app(dataclasses.replace(settings, auth="accounts"))
    async with app.router.lifespan_context(app):
        owner, _ = await accounts.add_user("owner", PASSWORD, is_admin=True)
        other, _ = await accounts.add_user("other", PASSWORD, is_admin=False)
        disabled, _ = await accounts.add_user("gone", PASSWORD, is_admin=False)
        editor, _ = await accounts.add_user("editor", PASSWORD, is_admin=False)
        viewer, _ = await accounts.add_user("viewer", PASSWORD, is_admin=False)
        await accounts.add_user("third", PASSWORD, is_admin=False)
        tokens = {
            "owner": await _token(owner.id, "full"),
            "other": await _token(other.id, "other"),
            "editor": await _token(editor.id, "editing"),
            "viewer": await _token(viewer.id, "viewing"),
            "read_only": await _token(owner.id, "reader", read_only=True),
            "revoked": await _token(owner.id, "old"),
            "expired": await _token(owner.id, "short"),
            "disabled": await _token(disabled.id, "theirs"),
        }
        listed = {t.name: t for t in await account_store.tokens(owner.id)}
        await account_store.revoke_token(owner.id, listed["old"].id)
        await models.ApiToken.filter(id=listed["short"].id).update(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)
        )
        await account_store.disable("gone")
        spare, _ = await accounts.create_token(
            owner.id, name="spare", read_only=False, expires_in_days=30
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            world = World(app=app, http=http)
            world.headers = {name: {"Authorization": f"Bearer {t}"} for name, t in tokens.items()}
            world.headers["anonymous"] = {}
            from api.graphql.core import ids

            world.ids["spareToken"] = ids.encode("ApiToken", spare.id)
            yield world
