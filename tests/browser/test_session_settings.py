"""A session's instructions and parameters from the notebook (issue 21 §2).

Given a session on the `lab` model (the scripted OpenAI stub), when the user
sets instructions and a temperature in "Settings" and sends a message, then
Show context holds the instructions as the system message, the stub received
them with the temperature and the stop list, and the reply cell says which
settings produced it. A value out of range is refused with the server's words.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.support import gql, open_app
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import SmritiServer

WIDTHS = [390, 1440]
PIRATE = "Answer as a pirate would."


@pytest.fixture(scope="module")
def server(lab_server: SmritiServer) -> SmritiServer:
    return lab_server


def new_session(server: SmritiServer, model: str = "offline/echo") -> str:
    created = gql(
        server.base_url,
        'mutation($m: String) { createSession(input: {title: "Tuning", model: $m}) '
        "{ session { id } } }",
        m=model,
    )
    session_id: str = created["createSession"]["session"]["id"]
    return session_id


@pytest.mark.parametrize("width", WIDTHS)
def test_instructions_and_a_temperature_reach_the_model_and_the_reply_says_so(
    page: Page, server: SmritiServer, fake: FakeOpenAI, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_app(page, server.base_url, f"/?session={new_session(server, 'lab/my-model')}")

    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.locator("#settings-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Instructions").fill(PIRATE)
    dialog.get_by_label("Temperature").fill("0.3")
    dialog.get_by_label("Stop sequences").fill("END")
    dialog.get_by_role("button", name="Save", exact=True).click()
    expect(dialog.locator("#settings-note")).to_have_text("Saved.")
    dialog.get_by_role("button", name="Close settings").click()
    expect(page.locator("#open-settings")).to_have_text("Settings (3)")

    page.get_by_role("button", name="Show context").click()
    system = page.locator(".ctx-message.system")
    expect(system).to_have_count(1)
    expect(system.locator("pre")).to_have_text(PIRATE)
    # The parameters are shown beside the messages they are sent with.
    expect(page.locator(".ctx-settings")).to_have_text('Sent with: temperature 0.3 · stop "END"')
    page.get_by_role("button", name="Close context").click()

    fake.reply("Arr, the gold be buried.")
    box = page.get_by_label("Message", exact=True)
    box.fill("Where is the gold?")
    box.press("Shift+Enter")
    # The server's first call to a LiteLLM model waits for LiteLLM's import.
    expect(page.locator("turn-cell.assistant")).to_have_count(1, timeout=60_000)

    body = fake.requests[-1]
    assert body["messages"][0] == {"role": "system", "content": PIRATE}
    assert (body["temperature"], body["stop"]) == (0.3, ["END"])
    tag = page.locator("turn-cell.assistant .settings-used")
    expect(tag).to_have_text('instructions · temperature 0.3 · stop "END"')
    expect(tag).to_have_attribute(
        "title", f'Asked with these settings:\nInstructions: {PIRATE}\ntemperature 0.3 · stop "END"'
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_a_temperature_out_of_range_is_refused_in_words(
    page: Page, server: SmritiServer, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    open_app(page, server.base_url, f"/?session={new_session(server)}")

    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.locator("#settings-dialog")
    dialog.get_by_label("Temperature").fill("2.5")
    dialog.get_by_role("button", name="Save", exact=True).click()

    expect(dialog.locator("#settings-error")).to_have_text(
        "temperature is from 0 to 2; 2.5 is out of range."
    )
    dialog.get_by_role("button", name="Close settings").click()
    expect(page.locator("#open-settings")).to_have_text("Settings")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_preset_saved_in_settings_is_chosen_from_the_model_picker(
    page: Page, server: SmritiServer, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    name = f"Pirate {width}"
    open_app(page, server.base_url, f"/?session={new_session(server, 'lab/my-model')}")
    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.locator("#settings-dialog")
    dialog.get_by_label("Instructions").fill(PIRATE)
    dialog.get_by_label("Top p").fill("0.5")
    dialog.get_by_label("Preset name").fill(name)
    dialog.get_by_role("button", name="Save as preset").click()
    expect(dialog.locator("#settings-note")).to_have_text(f"Preset “{name}” saved (lab/my-model).")
    dialog.get_by_role("button", name="Close settings").click()
    # Nothing was saved on this session: the preset only.
    expect(page.locator("#open-settings")).to_have_text("Settings")

    open_app(page, server.base_url, f"/?session={new_session(server)}")
    picker = page.get_by_label("Model", exact=True)
    expect(picker).to_have_value("offline/echo")
    option = picker.locator("optgroup[label='Presets'] option", has_text=name)
    picker.select_option(option.get_attribute("value"))

    expect(picker).to_have_value("lab/my-model")
    expect(page.locator("#open-settings")).to_have_text("Settings (2)")
    page.get_by_role("button", name="Show context").click()
    expect(page.locator(".ctx-message.system pre")).to_have_text(PIRATE)
