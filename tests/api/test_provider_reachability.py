"""`providers` tells the truth (issue 17): a server with nothing listening is not
reachable, a key marked optional does not make a provider unavailable.

Reachability is checked in the background: the first answer is CHECKING, and
the query never waits for a check.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.providers import ProviderRegistry
from api.runtime import provider_registry
from api.settings import Settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.graphql import GraphQLClient
from tests.support.ops import create_session, send

PROVIDERS = "{ providers { providers { name available reason reachability } } }"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def settings(database_url: str, tmp_path: Path, fake_openai: FakeOpenAI) -> Settings:
    path = tmp_path / "providers.yaml"
    path.write_text(
        "providers:\n"
        f'  lab: {{litellm_provider: openai, api_base: "{fake_openai.base_url}", '
        "api_key_env: SMRITI_TEST_UNSET_LAB_KEY, api_key_optional: true, models: [my-model]}\n"
        f'  ollama: {{api_base: "http://127.0.0.1:{closed_port()}", models: [llama3.1]}}\n'
        "  openai: {api_key_env: SMRITI_TEST_UNSET_OPENAI_KEY, models: [gpt-4o-mini]}\n"
    )
    return Settings(
        database_url=database_url,
        providers_file=path,
        provider_timeout_seconds=5.0,
        title_sessions=False,
        allowed_hosts=("smriti.test",),
    )


@pytest.fixture
def registry(settings: Settings) -> ProviderRegistry:
    return provider_registry(settings)


@pytest.fixture
async def app(settings: Settings, registry: ProviderRegistry) -> AsyncIterator[Starlette]:
    application = create_app(settings, registry=registry)
    async with application.router.lifespan_context(application):
        yield application


async def test_providers_say_what_is_reachable_once_checked(
    gql: GraphQLClient, registry: ProviderRegistry
) -> None:
    first = (await gql(PROVIDERS))["providers"]["providers"]
    await registry.reachability_checks.settled()
    checked = (await gql(PROVIDERS))["providers"]["providers"]

    expected = {
        "offline": (True, None, "REACHABLE"),
        "lab": (True, None, "REACHABLE"),  # its key is optional
        "ollama": (True, None, "UNREACHABLE"),  # nothing listens on its port
        "openai": (False, "SMRITI_TEST_UNSET_OPENAI_KEY is not set", "NOT_CHECKED"),
    }
    assert [(p["name"], p["reachability"]) for p in first] == [
        ("offline", "REACHABLE"),
        ("lab", "CHECKING"),
        ("ollama", "CHECKING"),
        ("openai", "NOT_CHECKED"),
    ]
    assert {p["name"]: (p["available"], p["reason"], p["reachability"]) for p in checked} == (
        expected
    )


async def test_a_provider_whose_key_is_optional_is_called_without_one(
    gql: GraphQLClient, fake_openai: FakeOpenAI
) -> None:
    sid = (await create_session(gql, model="lab/my-model", title="t"))["id"]
    fake_openai.reply("Hello.")

    sent = await send(gql, sid, "Hi")

    assert (sent["errors"], sent["assistantTurn"]["content"]) == ([], "Hello.")
    # The OpenAI format always carries a key: the placeholder, never an ambient one.
    assert fake_openai.authorizations == ["Bearer smriti-no-key"]
