"""Sign-in, sessions, tokens and the two modes, in process."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import httpx

from api.app import create_app
from api.domain.accounts import secret_hash
from api.services import accounts
from api.settings import Settings
from api.store import accounts as account_store
from api.store import models
from tests.accounts.world import BASE_URL, PASSWORD
from tests.support.graphql import GraphQLClient

WHO = "query { viewer { name isAdmin readOnly tokenName apiTokens { name } } }"
ORIGIN = {"Origin": BASE_URL}


def client(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL)  # type: ignore[arg-type]


async def test_local_mode_is_the_local_user_and_has_no_tokens(gql: GraphQLClient) -> None:
    assert await gql(WHO) == {
        "viewer": {
            "name": "local",
            "isAdmin": True,
            "readOnly": False,
            "tokenName": None,
            "apiTokens": [],
        }
    }
    created = await gql(
        'mutation { createApiToken(input: {name: "x"}) { secret errors { code message } } }'
    )
    assert created == {
        "createApiToken": {
            "secret": None,
            "errors": [
                {
                    "code": "INVALID",
                    "message": "API tokens need accounts: create the first with "
                    "`smriti users add NAME --admin`.",
                }
            ],
        }
    }


async def test_the_first_account_keeps_the_local_data_and_turns_accounts_on(
    gql: GraphQLClient,
) -> None:
    made = await gql('mutation { createSpace(input: {name: "Before"}) { space { id } } }')
    space_id = made["createSpace"]["space"]["id"]
    account, adopted = await accounts.add_user("ada", PASSWORD, is_admin=True)
    assert adopted is True
    _, second = await accounts.add_user("bob", PASSWORD, is_admin=False)
    assert second is False
    # A running server notices at the first request that carries credentials...
    _, secret = await accounts.create_token(
        account.id, name="t", read_only=False, expires_in_days=None
    )
    mine = await gql.http.post(
        "/graphql",
        json={
            "query": "query($id: ID!) { space(id: $id) { name } }",
            "variables": {"id": space_id},
        },
        headers={"Authorization": f"Bearer {secret}"},
    )
    # ...and from then on a request without them gets 401.
    response = await gql.http.post("/graphql", json={"query": WHO})
    assert response.status_code == 401
    assert mine.json() == {
        "data": {"space": {"name": "Before"}},
        "extensions": mine.json()["extensions"],
    }


async def test_sign_in_sets_a_safe_cookie_and_sign_out_ends_it(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, auth="accounts"))
    async with app.router.lifespan_context(app), client(app) as http:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        signed = await http.post(
            "/auth/login", json={"name": "ada", "password": PASSWORD}, headers=ORIGIN
        )
        assert signed.status_code == 200
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
        value = signed.cookies["smriti_session"]
        # Only the hash is stored.
        assert await models.WebSession.filter(session_hash=secret_hash(value)).count() == 1
        assert not await models.WebSession.filter(session_hash=value).exists()
        who = await http.post("/graphql", json={"query": WHO}, headers=ORIGIN)
        assert who.json()["data"]["viewer"]["name"] == "ada"
        # A cookie-authenticated POST without this server's Origin is refused.
        assert (await http.post("/graphql", json={"query": WHO})).status_code == 403
        assert (
            await http.post(
                "/graphql", json={"query": WHO}, headers={"Origin": "http://evil.example"}
            )
        ).status_code == 403
        # A login from another origin is refused too.
        assert (
            await http.post("/auth/login", json={"name": "ada", "password": PASSWORD})
        ).status_code == 403
        assert (await http.post("/auth/logout", headers=ORIGIN)).status_code == 200
        assert (await http.post("/graphql", json={"query": WHO}, headers=ORIGIN)).status_code == 401
        # GraphiQL without a session: sign in first.
        page = await http.get("/graphql", headers={"Accept": "text/html"})
        assert (page.status_code, page.headers["location"]) == (303, "/login.html?next=/graphql")
        # ...and back to the link's document: `q` stays encoded inside `next`.
        page = await http.get("/graphql?q=%7B%20a%20%7D", headers={"Accept": "text/html"})
        assert (page.status_code, page.headers["location"]) == (
            303,
            "/login.html?next=/graphql%3Fq%3D%257B%2520a%2520%257D",
        )


async def test_https_cookies_are_secure(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, auth="accounts", allowed_hosts=("smriti.test",)))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="https://smriti.test"
        ) as http,
    ):
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        signed = await http.post(
            "/auth/login",
            json={"name": "ada", "password": PASSWORD},
            headers={"Origin": "https://smriti.test"},
        )
        assert "Secure" in signed.headers["set-cookie"]


async def test_failed_sign_ins_lock_out_with_retry_after(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, auth="accounts", sign_in_failures=3))
    async with app.router.lifespan_context(app), client(app) as http:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        for _ in range(3):
            wrong = await http.post(
                "/auth/login", json={"name": "ada", "password": "guess guess"}, headers=ORIGIN
            )
            assert (wrong.status_code, wrong.json()) == (
                401,
                {"error": "Wrong user name or password."},
            )
        locked = await http.post(
            "/auth/login", json={"name": "ada", "password": PASSWORD}, headers=ORIGIN
        )
        assert locked.status_code == 429
        wait = int(locked.headers["retry-after"])
        assert 0 < wait <= 900
        assert locked.json() == {
            "error": f"Too many failed sign-ins: try again in {wait} seconds.",
            "retryAfterSeconds": wait,
        }
        # An unknown name counts against the address too: the same lock-out.
        other = await http.post(
            "/auth/login", json={"name": "nobody", "password": "x"}, headers=ORIGIN
        )
        assert other.status_code == 429


async def test_an_idle_session_expires(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, auth="accounts", session_idle_seconds=60))
    async with app.router.lifespan_context(app), client(app) as http:
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        await http.post("/auth/login", json={"name": "ada", "password": PASSWORD}, headers=ORIGIN)
        await models.WebSession.all().update(last_seen_at=datetime.now(UTC) - timedelta(seconds=61))
        assert (await http.post("/graphql", json={"query": WHO}, headers=ORIGIN)).status_code == 401
        assert await models.WebSession.all().count() == 0


async def test_last_used_is_written_at_most_once_a_minute(settings: Settings) -> None:
    app = create_app(dataclasses.replace(settings, auth="accounts"))
    async with app.router.lifespan_context(app):
        account, _ = await accounts.add_user("ada", PASSWORD, is_admin=False)
        token, secret = await accounts.create_token(
            account.id, name="t", read_only=True, expires_in_days=None
        )
        assert token.prefix == secret[:10] and token.last_used_at is None
        actor = await accounts.actor_for_token(secret)
        assert actor is not None and (actor.name, actor.read_only, actor.token_name) == (
            "ada",
            True,
            "t",
        )
        first = (await account_store.tokens(account.id))[0].last_used_at
        assert first is not None
        await accounts.actor_for_token(secret)
        assert (await account_store.tokens(account.id))[0].last_used_at == first
        assert await models.ApiToken.filter(token_hash=secret).count() == 0
        assert (
            await accounts.actor_for_token(secret[:-1] + ("A" if secret[-1] != "A" else "B"))
            is None
        )
