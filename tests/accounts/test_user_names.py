"""User names: NFKC, unique without regard to case, nothing hidden or markup;
passwords: not only spaces (issue 16, section 2)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from tortoise.exceptions import IntegrityError

from api.domain.accounts import USER_NAME_RULE, user_name
from api.domain.sign_in import SignInLimits
from api.errors import InputError
from api.services import accounts
from api.store import models, sql
from api.store.database import StartupError
from tests.accounts.world import PASSWORD

migration = importlib.import_module("api.store.migrations.0009_sign_in")


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("ada", "ada"),
        ("  Ada ", "Ada"),
        ("\uff21\uff44\uff41", "Ada"),  # full-width letters
        ("Jose\u0301", "Jos\u00e9"),  # a combining accent, composed
        ("\u674e\u96f7", "\u674e\u96f7"),
        ("r\u00e9my.o-b_2", "r\u00e9my.o-b_2"),
    ],
)
def test_a_name_is_stored_normalised(given: str, stored: str) -> None:
    assert user_name(given) == stored


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "a" * 101,
        "a b",
        "a\u00a0b",  # no-break space
        "a\u200bb",  # zero-width space
        "a\u200db",  # zero-width joiner
        "a\u2060b",  # word joiner
        "\ufeffada",  # byte-order mark
        "ada\u202egnp",  # right-to-left override
        "a\u0000b",
        "a\x1bb",
        "a\u2028b",  # line separator
        "<b>ada</b>",
        "a&b",
        'a"b',
        "o'brien",
        "a`b",
        "a\ue000b",  # private use
    ],
)
def test_a_name_with_hidden_or_markup_characters_is_refused(name: str) -> None:
    with pytest.raises(InputError) as refused:
        user_name(name)
    assert (refused.value.message, refused.value.field) == (USER_NAME_RULE, "name")


async def test_names_are_unique_without_regard_to_case_or_width(app: object) -> None:
    await accounts.add_user("Ada", PASSWORD, is_admin=True)
    for other in ("ada", "ADA", "\uff21\uff44\uff41"):
        with pytest.raises(InputError) as refused:
            await accounts.add_user(other, PASSWORD, is_admin=False)
        assert refused.value.message == "There is already a user named 'Ada'."
    # The database refuses it too, whoever writes.
    with pytest.raises(IntegrityError):
        await models.User.create(name="aDa", name_key="ada", created_at="2025-01-01T00:00:00Z")
    with pytest.raises(InputError) as local:
        await accounts.add_user("LOCAL", PASSWORD, is_admin=False)
    assert local.value.message == "The name 'local' belongs to the user without an account."
    # Signing in takes the name in any case.
    actor, _ = await accounts.sign_in("ADA", PASSWORD, "192.0.2.1", SignInLimits())
    assert actor.name == "Ada"


@pytest.mark.parametrize("password", [" " * 12, "\t \u3000" * 4, "\n" * 9])
async def test_a_password_of_only_spaces_is_refused(app: object, password: str) -> None:
    with pytest.raises(InputError) as refused:
        await accounts.add_user("ada", password, is_admin=False)
    assert (refused.value.message, refused.value.field) == (
        "A password is more than spaces.",
        "password",
    )


async def test_the_migration_refuses_names_that_collide_and_keys_the_others(
    app: object,
) -> None:
    # Rows as they were before the migration: no key.
    for name in ("Ada", "bob", "ada", "\uff22\uff2f\uff22", "cy"):
        await models.User.create(name=name, created_at="2025-01-01T00:00:00Z")
    ids = {u.name: u.id for u in await models.User.all()}
    wide = "\uff22\uff2f\uff22"
    editor = SimpleNamespace(client=sql.connection())
    with pytest.raises(StartupError) as refused:
        await migration.refuse_collisions(None, editor)
    assert str(refused.value) == (
        "user names must differ by more than case or width from now on, and these do not: "
        f"'Ada' (id {ids['Ada']}) and 'ada' (id {ids['ada']}); "
        f"'bob' (id {ids['bob']}) and {wide!r} (id {ids[wide]}). "
        "Rename all but one of each (UPDATE smriti_user SET name = 'NEW' WHERE id = ID), "
        "then start again; nothing was changed."
    )
    await models.User.filter(name__in=["ada", "\uff22\uff2f\uff22"]).delete()
    await migration.refuse_collisions(None, editor)
    await migration.fill_name_keys(None, editor)
    keys = dict(await models.User.all().values_list("name", "name_key"))
    assert {k: v for k, v in keys.items() if k in ("Ada", "bob", "cy")} == {
        "Ada": "ada",
        "bob": "bob",
        "cy": "cy",
    }
