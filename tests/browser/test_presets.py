"""Renaming and deleting a preset from the settings dialog (issue 21 §2).

Given a preset applied to one session, when the user renames it in "Your
presets" (keyboard only: the name field, Enter), then the model picker and the
list show the new name without a reload; when they delete it, it is gone from
both, and the session it was applied to keeps its instructions and top p.
The dialog fits at 390 and 1440 px and axe finds nothing serious. Deleting takes
two presses (the first arms the button, as the sidebar's delete buttons do); an
armed button left alone for four seconds goes back to "Delete".
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import blocking, run_axe, summary
from tests.browser.support import gql, open_app
from tests.support.servers import SmritiServer

PIRATE = "Answer as a pirate would."
SETTINGS = "settings { instructions topP }"


def new_session(server: SmritiServer, title: str) -> str:
    created = gql(
        server.base_url,
        "mutation($t: String!) { createSession(input: {title: $t}) { session { id } } }",
        t=title,
    )
    session_id: str = created["createSession"]["session"]["id"]
    return session_id


def preset_applied(server: SmritiServer, name: str, session_id: str) -> str:
    made = gql(
        server.base_url,
        'mutation($n: String!) { createPreset(input: {name: $n, model: "offline/echo", '
        'settings: {instructions: "'
        + PIRATE
        + '", topP: 0.5}}) { preset { id } errors { code } } }',
        n=name,
    )
    preset_id: str = made["createPreset"]["preset"]["id"]
    applied = gql(
        server.base_url,
        "mutation($s: ID!, $p: ID!) { applyPreset(input: {sessionId: $s, presetId: $p}) "
        "{ errors { code } } }",
        s=session_id,
        p=preset_id,
    )
    assert applied["applyPreset"]["errors"] == []
    return preset_id


def fits(page: Page) -> bool:
    """Nothing of the dialog is cut off sideways."""
    return bool(
        page.evaluate(
            "() => { const d = document.querySelector('#settings-dialog');"
            " const r = d.getBoundingClientRect();"
            " return d.scrollWidth <= d.clientWidth && r.left >= 0"
            " && r.right <= window.innerWidth; }"
        )
    )


@pytest.mark.parametrize("width", [390, 1440])
def test_a_preset_is_renamed_and_deleted_from_the_settings_dialog(
    browser: Browser, server: SmritiServer, width: int
) -> None:
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme="light", bypass_csp=True
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    old, new = f"Pirate {width}", f"Sea dog {width}"
    used = new_session(server, f"Used {width}")
    preset_applied(server, old, used)
    open_app(page, server.base_url, f"/?session={new_session(server, f'Other {width}')}")
    page.evaluate("window.notReloaded = true")
    picker = page.get_by_label("Model", exact=True)
    presets = picker.locator("optgroup[label='Presets'] option")
    expect(presets.filter(has_text=old)).to_have_text([f"{old} (offline/echo)"])

    page.get_by_role("button", name="Settings", exact=True).click()
    dialog = page.locator("#settings-dialog")
    listed = dialog.get_by_role("region", name="Your presets")
    name_field = listed.get_by_label(f"Name of preset {old}")
    expect(name_field).to_have_value(old)
    assert fits(page)
    assert summary(blocking(run_axe(page))) == []

    # Keyboard only: the name field, a new name, Enter.
    name_field.focus()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type(new)
    page.keyboard.press("Enter")
    note = dialog.locator("#settings-note")
    expect(note).to_have_text(f"Preset renamed “{new}”.")
    expect(presets.filter(has_text=new)).to_have_text([f"{new} (offline/echo)"])
    expect(presets.filter(has_text=old)).to_have_count(0)
    expect(listed.get_by_label(f"Name of preset {new}")).to_have_value(new)
    # The settings form around it was not submitted: this session has none of its own.
    expect(page.locator("#open-settings")).to_have_text("Settings")
    assert fits(page)

    delete = listed.get_by_role("button", name=f"Delete preset {new}")
    delete.focus()
    # The first Enter only arms the button: nothing is deleted yet.
    page.keyboard.press("Enter")
    armed = listed.get_by_role("button", name=f"Confirm delete preset {new}")
    expect(armed).to_have_text("Delete?")
    expect(armed).to_be_focused()
    expect(listed.get_by_label(f"Name of preset {new}")).to_have_value(new)
    assert new in [
        p["name"]
        for p in gql(server.base_url, "{ viewer { presets { name } } }")["viewer"]["presets"]
    ]
    page.keyboard.press("Enter")
    expect(note).to_have_text(f"Preset “{new}” deleted; sessions that used it keep their settings.")
    expect(dialog.locator(f"[aria-label='Name of preset {new}']")).to_have_count(0)
    expect(presets.filter(has_text=new)).to_have_count(0)
    assert summary(blocking(run_axe(page))) == []
    assert page.evaluate("window.notReloaded") is True

    names = [
        p["name"]
        for p in gql(server.base_url, "{ viewer { presets { name } } }")["viewer"]["presets"]
    ]
    assert old not in names and new not in names
    kept = gql(server.base_url, f"query($s: ID!) {{ session(id: $s) {{ {SETTINGS} }} }}", s=used)
    assert kept["session"]["settings"] == {"instructions": PIRATE, "topP": 0.5}
    assert errors == []
    context.close()


def test_an_armed_preset_delete_lapses_and_deletes_nothing(
    browser: Browser, server: SmritiServer
) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 800}, bypass_csp=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.clock.install()
    name = "Lapsing"
    preset_applied(server, name, new_session(server, "Lapse used"))
    open_app(page, server.base_url, f"/?session={new_session(server, 'Lapse other')}")
    page.get_by_role("button", name="Settings", exact=True).click()
    listed = page.locator("#settings-dialog").get_by_role("region", name="Your presets")
    delete = listed.get_by_role("button", name=f"Delete preset {name}")
    delete.click()
    armed = listed.get_by_role("button", name=f"Confirm delete preset {name}")
    expect(armed).to_have_text("Delete?")
    page.clock.run_for(3_900)
    expect(armed).to_have_text("Delete?")
    page.clock.run_for(200)
    expect(delete).to_have_text("Delete")
    expect(armed).to_have_count(0)
    # Armed anew by the next press, not deleted by it.
    delete.click()
    expect(armed).to_have_text("Delete?")
    names = [
        p["name"]
        for p in gql(server.base_url, "{ viewer { presets { name } } }")["viewer"]["presets"]
    ]
    assert names.count(name) == 1
    context.close()
