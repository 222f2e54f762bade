"""Notebook cells: a fork's first message, dimming behind a mount, the cell numbers."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from tests.browser.support import (
    create_space,
    gql,
    new_session,
    open_app,
    save_checkpoint,
    send,
)
from tests.support.servers import SmritiServer


def test_the_first_message_of_a_fork_goes_below_its_checkpoint_cell(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Forked")
    new_session(page, "Forked")
    send(page, "Plan Japan.")
    save_checkpoint(page, "Japan plan")
    page.locator("checkpoint-cell summary").click()
    page.locator("checkpoint-cell").get_by_role("button", name="Fork").click()
    expect(page.locator("session-header")).to_contain_text(re.compile(r"Branch (?!main)"))
    expect(page.locator("checkpoint-cell")).to_contain_text("Japan plan")

    send(page, "Go to Kyoto instead of Osaka.")
    assert page.locator("checkpoint-cell turn-cell").count() == 0
    assert page.locator("checkpoint-cell + #turn-1 + #turn-2").count() == 1
    question = page.locator("#turn-1 .cell-body").bounding_box()
    assert question and question["width"] > 400  # not one letter per line
    labels = [page.locator(f"#turn-{n} .cell-gutter").bounding_box() for n in (1, 2)]
    assert labels[0] and labels[1]
    assert labels[0]["y"] + labels[0]["height"] <= labels[1]["y"]  # In [1] above Out [1]
    expect(page.locator("#turn-1 .cell-gutter")).to_have_text("In [1]")
    expect(page.locator("#turn-2 .cell-gutter")).to_have_text("Out [1]")


def test_checkpoint_cells_above_the_mount_divider_are_dimmed(
    page: Page, server: SmritiServer
) -> None:
    open_app(page, server.base_url)
    create_space(page, "Dimmed")
    new_session(page, "Dimmed")
    send(page, "Plan Peru.")
    save_checkpoint(page, "Peru plan")
    send(page, "Add Bolivia.")
    page.locator("checkpoint-cell summary").click()
    page.locator("checkpoint-cell").get_by_role("button", name="Mount").click()
    expect(page.locator(".mount-divider")).to_be_visible()
    expect(page.locator("checkpoint-cell")).to_have_class(re.compile(r"\bdimmed\b"))
    expect(page.locator("turn-cell.dimmed")).to_have_count(4)
    page.locator("session-header").get_by_role("button", name="Unmount").click()
    expect(page.locator(".mount-divider")).to_have_count(0)
    expect(page.locator("checkpoint-cell")).not_to_have_class(re.compile(r"\bdimmed\b"))


def test_the_favicon_and_the_way_back_from_graphiql(page: Page, server: SmritiServer) -> None:
    open_app(page, server.base_url)
    icon = page.locator("link[rel=icon]").get_attribute("href")
    assert icon == "/favicon.svg"
    response = page.request.get(server.base_url + icon)
    assert response.status == 200 and response.headers["content-type"] == "image/svg+xml"
    assert response.text().startswith("<svg")
    page.get_by_role("link", name="GraphiQL").click()
    back = page.get_by_role("link", name="Back to the notebook")
    expect(back).to_be_visible()
    back.click()
    expect(page.locator("smriti-app[data-ready]")).to_be_attached()


# One ChatGPT conversation whose reply does not say which model wrote it.
UNNAMED_MODEL = [
    {
        "title": "No slug",
        "create_time": 1714564800.0,
        "current_node": "a1",
        "mapping": {
            "u1": {
                "id": "u1",
                "parent": None,
                "children": ["a1"],
                "message": {
                    "id": "u1",
                    "author": {"role": "user"},
                    "create_time": 1714564801.0,
                    "content": {"content_type": "text", "parts": ["Which way to Nara?"]},
                    "metadata": {},
                },
            },
            "a1": {
                "id": "a1",
                "parent": "u1",
                "children": [],
                "message": {
                    "id": "a1",
                    "author": {"role": "assistant"},
                    "create_time": 1714564802.0,
                    "content": {"content_type": "text", "parts": ["The Kintetsu line."]},
                    "metadata": {},
                },
            },
        },
    }
]
IMPORT = """mutation($d: String!) { importSpace(input: {document: $d}) {
  sessions { id } errors { message } } }"""


def test_only_replies_name_their_model_and_an_unnamed_one_names_its_provider(
    page: Page, server: SmritiServer
) -> None:
    imported = gql(server.base_url, IMPORT, d=json.dumps(UNNAMED_MODEL))["importSpace"]
    assert imported["errors"] == []
    open_app(page, server.base_url, f"/?session={imported['sessions'][0]['id']}")
    expect(page.locator("#turn-2 .cell-meta")).to_have_text("chatgpt")  # not "chatgpt/null"
    expect(page.locator("#turn-1 .cell-meta")).to_have_text("")

    new_session(page, None)
    send(page, "Plan Japan.")
    expect(page.locator("#turn-2 .cell-meta")).to_have_text("offline/echo")
    expect(page.locator("#turn-1 .cell-meta")).to_have_text("")  # the question: no model
