"""An admin over GraphQL: users, setUserDisabled, deleteUser, anyone's tokens."""

from __future__ import annotations

from api.settings import Settings
from api.store import models
from tests.accounts.world import World, accounts_app

ERR = "errors { code message field }"
USERS = "query { users { name isAdmin disabled apiTokens { id name revokedAt } } }"
DISABLE = (
    "mutation($n: String!, $d: Boolean!) { setUserDisabled(input: {name: $n, disabled: $d}) "
    f"{{ user {{ name disabled }} {ERR} }} }}"
)
DELETE = f"mutation($n: String!) {{ deleteUser(input: {{name: $n}}) {{ deletedName {ERR} }} }}"
REVOKE = (
    f"mutation($id: ID!) {{ revokeApiToken(input: {{id: $id}}) {{ apiToken {{ name }} {ERR} }} }}"
)
WHO = "query { viewer { name } }"


async def works(world: World, actor: str) -> bool:
    return (await world.post(actor, WHO)).status_code == 200


async def test_an_admin_lists_every_account_and_others_see_themselves(settings: Settings) -> None:
    async with accounts_app(settings) as world:
        listed = (await world.data("owner", USERS))["users"]
        assert [(u["name"], u["isAdmin"], u["disabled"]) for u in listed] == [
            ("owner", True, False),
            ("other", False, False),
            ("gone", False, True),
            ("editor", False, False),
            ("viewer", False, False),
            ("third", False, False),
        ]
        assert [t["name"] for t in listed[1]["apiTokens"]] == ["other"]
        mine = (await world.data("other", USERS))["users"]
        assert [u["name"] for u in mine] == ["other"]


async def test_an_admin_disables_and_enables_an_account(settings: Settings) -> None:
    async with accounts_app(settings) as world:
        assert await works(world, "other")
        off = await world.data("owner", DISABLE, n="OTHER", d=True)
        assert off == {
            "setUserDisabled": {"user": {"name": "other", "disabled": True}, "errors": []}
        }
        assert not await works(world, "other")
        on = await world.data("owner", DISABLE, n="other", d=False)
        assert on["setUserDisabled"]["user"] == {"name": "other", "disabled": False}
        assert await works(world, "other")
        myself = await world.data("owner", DISABLE, n="owner", d=True)
        assert myself["setUserDisabled"] == {
            "user": None,
            "errors": [
                {
                    "code": "INVALID",
                    "message": "You cannot disable or enable your own account.",
                    "field": "name",
                }
            ],
        }
        nobody = await world.data("owner", DISABLE, n="nobody", d=True)
        assert nobody["setUserDisabled"]["errors"] == [
            {"code": "NOT_FOUND", "message": "No user named 'nobody'.", "field": "name"}
        ]


async def test_deleting_an_account_is_refused_while_its_space_is_shared(
    settings: Settings,
) -> None:
    async with accounts_app(settings) as world:
        made = await world.data(
            "other", 'mutation { createSpace(input: {name: "Garden"}) { space { id } } }'
        )
        space = made["createSpace"]["space"]["id"]
        await world.data(
            "other",
            "mutation($s: ID!) { createSession(input: {spaceId: $s}) { session { id } } }",
            s=space,
        )
        await world.data(
            "other",
            'mutation($s: ID!) { addSpaceMember(input: {spaceId: $s, userName: "third", '
            "role: VIEWER}) { member { role } } }",
            s=space,
        )
        other_id = (await models.User.get(name="other")).id
        assert await models.Session.filter(owner_id=other_id).count() == 1
        refused = await world.data("owner", DELETE, n="other")
        assert refused["deleteUser"] == {
            "deletedName": None,
            "errors": [
                {
                    "code": "CONFLICT",
                    "message": "The account other owns spaces shared with others ('Garden'): remove their "
                    "members or delete those spaces first, or disable the account instead.",
                    "field": "name",
                }
            ],
        }
        assert await works(world, "other")
        await world.data(
            "other",
            'mutation($s: ID!) { removeSpaceMember(input: {spaceId: $s, userName: "third"}) '
            "{ space { id } } }",
            s=space,
        )
        deleted = await world.data("owner", DELETE, n="other")
        assert deleted == {"deleteUser": {"deletedName": "other", "errors": []}}
        assert not await works(world, "other")
        assert not await models.User.filter(name="other").exists()
        assert not await models.Space.filter(name="Garden").exists()
        assert await models.Session.filter(owner_id=other_id).count() == 0
        assert await models.ApiToken.filter(user_id=other_id).count() == 0
        again = await world.data("owner", DELETE, n="other")
        assert again["deleteUser"]["errors"][0]["code"] == "NOT_FOUND"


async def test_an_admin_revokes_anyones_token_and_a_user_only_their_own(
    settings: Settings,
) -> None:
    async with accounts_app(settings) as world:
        listed = (await world.data("owner", USERS))["users"]
        theirs = next(u for u in listed if u["name"] == "editor")["apiTokens"][0]["id"]
        stolen = await world.data("other", REVOKE, id=theirs)
        assert stolen["revokeApiToken"]["errors"][0]["code"] == "NOT_FOUND"
        assert await works(world, "editor")
        revoked = await world.data("owner", REVOKE, id=theirs)
        assert revoked == {"revokeApiToken": {"apiToken": {"name": "editing"}, "errors": []}}
        assert not await works(world, "editor")
