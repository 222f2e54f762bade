"""`smriti serve` as a user runs it: a real process, a real port."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from api.store.database import sqlite_url
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

SECRET = "sk-test-NEVER-LEAK-4242"


def test_serve_answers_graphql_and_shows_graphiql(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "served.sqlite3")
    with SmritiServer(url) as server:
        body = httpx.post(
            server.graphql_url,
            json={"query": "{ providers { chatDefault background providers { name available } } }"},
        ).json()
        assert body == {
            "data": {
                "providers": {
                    "chatDefault": "offline/echo",
                    "background": "offline/extractor",
                    "providers": body["data"]["providers"]["providers"],
                }
            },
            "extensions": {"cost": {"nodes": 1 + 100, "limit": 50_000}},
        }
        names = {p["name"]: p["available"] for p in body["data"]["providers"]["providers"]}
        assert names["offline"] is True
        page = httpx.get(server.graphql_url, headers={"Accept": "text/html"})
        assert page.status_code == 200
        assert "graphiql" in page.text.lower()
        home = httpx.get(server.base_url + "/")
        assert home.status_code == 200
        assert "/graphql" in home.text
    assert (tmp_path / "served.sqlite3").exists()


def test_a_malformed_providers_file_stops_startup_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "providers.yaml"
    bad.write_text("chat_default: offline/echo\nproviders:\n  lab:\n    models: not-a-list\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "api",
            "serve",
            "--providers",
            str(bad),
            "--database",
            sqlite_url(tmp_path / "x.sqlite3"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"smriti: {bad}:4:")


def test_an_api_key_never_reaches_responses_logs_or_the_database(tmp_path: Path) -> None:
    providers = tmp_path / "providers.yaml"
    database = tmp_path / "secret.sqlite3"
    with FakeOpenAI(api_key="sk-the-right-key") as fake:
        providers.write_text(
            "providers:\n  lab:\n    litellm_provider: openai\n"
            f'    api_base: "{fake.base_url}"\n    api_key_env: LAB_API_KEY\n    models: [m]\n'
        )
        server = SmritiServer(
            sqlite_url(database), providers=providers, env={"LAB_API_KEY": SECRET}
        )
        with server:
            created = httpx.post(
                server.graphql_url,
                json={
                    "query": 'mutation { createSession(input: {title: "t", model: "lab/m"}) { session { id } } }'
                },
            ).json()
            sid = created["data"]["createSession"]["session"]["id"]
            sent = httpx.post(
                server.graphql_url,
                timeout=60,
                json={
                    "query": 'mutation($s: ID!) { sendMessage(input: {sessionId: $s, content: "hi"}) '
                    "{ userTurn { content } errors { code message field } } }",
                    "variables": {"s": sid},
                },
            )
            listed = httpx.post(
                server.graphql_url,
                json={"query": "{ providers { providers { name available reason models } } }"},
            )
        assert fake.authorizations[-1] == f"Bearer {SECRET}"  # it was really sent …
        output = server.output
    payload = sent.json()["data"]["sendMessage"]
    assert [e["code"] for e in payload["errors"]] == ["PROVIDER_AUTH"]
    assert payload["userTurn"] == {"content": "hi"}
    # … and nowhere else.
    assert SECRET not in sent.text
    assert SECRET not in listed.text
    assert SECRET not in output
    for path in tmp_path.iterdir():
        if path.name.startswith("secret.sqlite3"):
            assert SECRET.encode() not in path.read_bytes()
