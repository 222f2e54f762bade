"""GraphiQL at /graphql works with no network beyond the server itself."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Page, Route, expect

from api.graphiql import VENDOR_DIR, assets
from tests.browser.support import gql
from tests.support.repository import REPOSITORY_ROOT
from tests.support.servers import SmritiServer


def test_graphiql_loads_and_runs_a_query_with_every_other_host_blocked(
    server: SmritiServer, page: Page
) -> None:
    page_html = page.context.request.get(server.graphql_url, headers={"Accept": "text/html"})
    missing = [
        a.local_path for a in assets(page_html.text()) if not (VENDOR_DIR / a.local_path).is_file()
    ]
    assert not missing, (
        f"GraphiQL assets missing under {VENDOR_DIR.relative_to(REPOSITORY_ROOT)}: {missing}; "
        "run scripts/fetch-graphiql-assets"
    )
    blocked: list[str] = []

    def only_this_server(route: Route) -> None:
        if urlsplit(route.request.url).hostname in {"127.0.0.1", "localhost"}:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(server.graphql_url)
    editor = page.locator(".graphiql-query-editor .CodeMirror")
    expect(editor).to_be_visible()
    editor.click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("Delete")
    # insert_text, not type: GraphiQL closes brackets as they are typed.
    page.keyboard.insert_text("{ providers { chatDefault } }")
    page.get_by_role("button", name="Execute query (Ctrl-Enter)").click()
    expect(page.locator(".graphiql-response")).to_contain_text('"chatDefault": "offline/echo"')
    assert blocked == []
    assert gql(server.base_url, "{ providers { chatDefault } }") == {
        "providers": {"chatDefault": "offline/echo"}
    }
