"""The MCP Inspector's CLI mode (`@modelcontextprotocol/inspector --cli`, unmodified)
against /mcp of `smriti serve`, in local mode and in accounts mode with a bearer token.

It is installed at an exact version (tests/clients/inspector/package-lock.json, checked
by integrity hash) with `npm ci` into a git-ignored node_modules, apart from the GraphQL
clients of tests/clients/js: its tree is 120 packages, about 111 MB. The tests skip only
when node/npm are missing or the npm registry cannot be reached for that install; once
installed, the Inspector needs no network (it talks to the server on loopback only).

Each run has a HOME of its own: the Inspector keeps a catalog and secrets under
~/.mcp-inspector, and the bearer token must not be among them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.mcp.server import TOOLS
from tests.support.lineage import key
from tests.support.node_clients import OFFLINE
from tests.support.servers import SmritiServer, add_user

HERE = Path(__file__).resolve().parent.parent / "clients" / "inspector"
PACKAGE = "@modelcontextprotocol/inspector"
INSTALLED = HERE / "node_modules" / PACKAGE / "package.json"
LAUNCHER = HERE / "node_modules" / PACKAGE / "clients" / "launcher" / "build" / "index.js"
PASSWORD = "a long passphrase 7f3c"
CREATE = """mutation { createSpace(input: {name: "Plans", description: "What we chose"}) {
  space { id name description updatedAt } } }"""
# The Inspector's exit codes (its EXIT_CODES).
AUTH_REQUIRED = 3  # the server asked for authentication
TOOL_ERROR = 5  # the tool answered isError


def pinned_version() -> str:
    version: str = json.loads((HERE / "package.json").read_text())["dependencies"][PACKAGE]
    return version


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The Inspector's launcher, installed by `npm ci` unless the pinned version is there."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    if INSTALLED.exists() and json.loads(INSTALLED.read_text())["version"] == pinned_version():
        return LAUNCHER
    done = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        if any(code in done.stderr for code in OFFLINE):
            pytest.skip(f"the npm registry is unreachable: {done.stderr.strip()[-300:]}")
        raise AssertionError(f"npm ci failed:\n{done.stderr}")
    return LAUNCHER


@dataclass(frozen=True)
class Inspector:
    """`mcp-inspector --cli <server>/mcp --transport http … --format json`, as a CI job
    runs it: with a HOME of its own and a bearer token if given."""

    launcher: Path
    server: SmritiServer
    home: Path
    token: str | None = None

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        header = ["--header", f"Authorization: Bearer {self.token}"] if self.token else []
        self.home.mkdir(exist_ok=True)
        return subprocess.run(
            ["node", str(self.launcher), "--cli", f"{self.server.base_url}/mcp",
             "--transport", "http", *args, *header, "--format", "json"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ["PATH"], "HOME": str(self.home)},
        )  # fmt: skip

    def answer(self, *args: str) -> Any:
        done = self.run(*args)
        assert done.returncode == 0, (done.stdout, done.stderr)
        return json.loads(done.stdout)["result"]

    def tools(self) -> Any:
        return self.answer("--method", "tools/list")

    def call(self, tool: str, *args: str) -> Any:
        pairs = ["--tool-arg", *args] if args else []
        return self.answer("--method", "tools/call", "--tool-name", tool, *pairs)


def create_space(server: SmritiServer, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = httpx.post(server.graphql_url, json={"query": CREATE}, headers=headers).json()
    assert "errors" not in body, body
    space: dict[str, Any] = body["data"]["createSpace"]["space"]
    return space


def expected_tools() -> list[dict[str, Any]]:
    """The server's own tool list, as the Inspector should print it (camelCase JSON)."""
    return [
        {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
            "annotations": {"readOnlyHint": not tool.writes, "openWorldHint": False},
        }
        for tool in TOOLS
    ]


def assert_space_calls(inspector: Inspector) -> None:
    """list_spaces and space_state on a space made through GraphQL, exactly."""
    made = create_space(inspector.server, inspector.token)
    space = key(made["id"])

    spaces = inspector.call("list_spaces")
    state = inspector.call("space_state", f"spaceId={space}")

    assert spaces == {
        "content": [{"type": "text", "text": f"{space} Plans"}],
        "structuredContent": {
            "spaces": [
                {
                    "id": space,
                    "name": "Plans",
                    "description": "What we chose",
                    "updatedAt": made["updatedAt"],
                }
            ],
            "hasMore": False,
        },
        "isError": False,
    }
    brief = f"Space {space} 'Plans', branch main: no checkpoint yet."
    assert state == {
        "content": [{"type": "text", "text": brief}],
        "structuredContent": {
            "brief": brief,
            "tokens": -(-len(brief) // 4),
            "headId": None,
            "branches": [],
            "changedIds": [],
        },
        "isError": False,
    }


def assert_the_servers_tools(listed: Any) -> None:
    names = [tool["name"] for tool in listed["tools"]]
    assert names == [tool.name for tool in TOOLS]
    assert {"list_spaces", "space_state", "search", "save_checkpoint", "merge"} <= set(names)
    assert listed == {"tools": expected_tools()}


def test_local_mode_lists_the_servers_tools_and_calls_them(
    inspector: Path, database_url: str, tmp_path: Path
) -> None:
    with SmritiServer(database_url) as server:
        local = Inspector(inspector, server, tmp_path / "home")
        assert_the_servers_tools(local.tools())
        assert_space_calls(local)


def test_accounts_mode_with_a_bearer_token_and_refused_without(
    inspector: Path, database_url: str, tmp_path: Path
) -> None:
    add_user(database_url, "ada", PASSWORD)
    made = subprocess.run(
        [*SmritiServer(database_url).program, "tokens", "create", "--user", "ada",
         "--name", "inspector", "--json", "--database", database_url],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    token: str = json.loads(made.stdout)["token"]
    home = tmp_path / "home"
    with SmritiServer(database_url) as server:
        refused = Inspector(inspector, server, home).run("--method", "tools/list")
        agent = Inspector(inspector, server, home, token)
        assert_the_servers_tools(agent.tools())
        assert_space_calls(agent)

    # Without the header the server answers 401; the Inspector would start an
    # OAuth sign-in, which it cannot do without a terminal, and says so.
    assert refused.returncode == AUTH_REQUIRED, (refused.stdout, refused.stderr)
    assert json.loads(refused.stderr)["error"]["code"] == "auth_required"
    assert refused.stdout == ""
    # The token went in a header, and was kept nowhere.
    kept = [path for path in home.rglob("*") if path.is_file() and token in path.read_text()]
    assert kept == []


def test_a_tool_error_reaches_the_inspector_as_a_tool_error(
    inspector: Path, database_url: str, tmp_path: Path
) -> None:
    with SmritiServer(database_url) as server:
        done = Inspector(inspector, server, tmp_path / "home").run(
            "--method", "tools/call", "--tool-name", "verify_lineage", "--tool-arg", "spaceId=999"
        )

    assert done.returncode == TOOL_ERROR, (done.stdout, done.stderr)
    # The Inspector checks any structuredContent against the tool's output schema,
    # errors included (2.12.0, core/mcp/toolOutputValidation.ts): a tool error carries
    # GraphQL's error object in `_meta` instead, and the Inspector shows it as sent.
    assert json.loads(done.stdout)["result"] == {
        "content": [{"type": "text", "text": "NOT_FOUND: No such space."}],
        "_meta": {
            "smriti/error": {"code": "NOT_FOUND", "message": "No such space.", "field": "spaceId"}
        },
        "isError": True,
    }


def test_the_tool_schemas_pass_the_inspectors_portability_lint(
    inspector: Path, database_url: str, tmp_path: Path
) -> None:
    """`--strict` lints every tool schema (a list of types, a schema that checks
    nothing, …) and prints what it finds; it found 92 warnings before the
    schemas were derived from the tools' models."""
    with SmritiServer(database_url) as server:
        done = Inspector(inspector, server, tmp_path / "home").run(
            "--method", "tools/list", "--strict"
        )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert list(json.loads(done.stdout)) == ["result"]  # no "schemaFindings"
