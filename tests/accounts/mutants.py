"""Mutants of the policy's rules, and which test catches each (issue 28).

Each mutant changes one attribute of one rule of ``api.services.policy.RULES``:
its role one step up or down, ``writes``, ``admin``, ``author`` or
``calls_model`` flipped, or ``on`` changed to another kind. The table tests of
tests/accounts/test_authorization_matrix.py (those that need no app) run
in-process against every mutant; with ``--matrix`` each mutant of a field a
use case reads (role, writes, admin, author) also runs its operation's row of
the matrix against the app (one pytest run, about 4 s a mutant).

    python -m tests.accounts.mutants [--matrix] [OPERATION ...]

Prints one line per mutant: the operation, the change, and the tests that
failed ("SURVIVED" when none did). As a pytest plugin (``-p
tests.accounts.mutants``) it applies the mutant named by SMRITI_POLICY_MUTANT
("operation:field=value") before the tests run, to run any other test under it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from api.domain.types import SpaceRole
from api.services import policy
from api.services.policy import On, Rule
from api.settings import Settings

ROLES = [None, SpaceRole.VIEWER, SpaceRole.EDITOR, SpaceRole.OWNER]
# Read by the use cases at run time; the others only by the table tests.
RUNTIME_FIELDS = ("role", "writes", "admin", "author")


def mutants(rule: Rule) -> Iterator[tuple[str, Any]]:
    at = ROLES.index(rule.role)
    for step in (-1, 1):
        if 0 <= at + step < len(ROLES):
            yield "role", ROLES[at + step]
    for flag in ("writes", "admin", "author", "calls_model"):
        yield flag, not getattr(rule, flag)
    # Another kind of object, or none: the nearest confusions.
    others = {
        On.NOTHING: (On.OWN,),
        On.OWN: (On.READABLE, On.NOTHING),
        On.READABLE: (On.OWN,),
        On.SPACE: (On.CHECKPOINT, On.NOTHING),
        On.SESSION: (On.TURN, On.SPACE),
        On.TURN: (On.SESSION,),
        On.CHECKPOINT: (On.SPACE,),
        On.TOKEN: (On.OWN,),
        On.PRESET: (On.OWN,),
        On.NODE: (On.SPACE,),
    }
    for on in others[rule.on]:
        yield "on", on


def label(value: Any) -> str:
    return value.name if hasattr(value, "name") else str(value)


def parse(value: str) -> Any:
    if value in ("True", "False"):
        return value == "True"
    if value == "None":
        return None
    if value in SpaceRole.__members__:
        return SpaceRole[value]
    return On[value]


def apply(spec: str) -> None:
    operation, change = spec.split(":", 1)
    field, value = change.split("=", 1)
    rule = policy.RULES[operation]
    policy.RULES[operation] = dataclasses.replace(rule, **{field: parse(value)})


def pytest_configure(config: Any) -> None:
    spec = os.environ.get("SMRITI_POLICY_MUTANT")
    if spec:
        apply(spec)


def table_tests() -> dict[str, Callable[[], None]]:
    from tests.accounts import test_authorization_matrix as matrix

    return {
        name: getattr(matrix, name)
        for name in (
            "test_the_policy_gives_the_table",
            "test_each_rule_acts_on_what_its_operation_names",
            "test_the_rules_fields_combine_as_the_policy_says",
        )
    }


# As pytest collects this file when it is named (``--matrix``): one test per
# mutant in SMRITI_POLICY_MUTANTS, which passes when the operation's row of
# the matrix fails under the mutant (caught) and fails when the row passes.
def _specs() -> list[str]:
    return [spec for spec in os.environ.get("SMRITI_POLICY_MUTANTS", "").split(",") if spec]


@pytest.mark.parametrize("spec", _specs())
async def test_the_matrix_row_fails_under(settings: Settings, spec: str) -> None:
    from tests.accounts import test_authorization_matrix as matrix

    operation = spec.split(":", 1)[0]
    original = policy.RULES[operation]
    apply(spec)
    try:
        with pytest.raises(Exception):  # noqa: B017 (an assertion, or a crash: caught either way)
            await matrix.test_matrix(settings, operation)
    finally:
        policy.RULES[operation] = original


def run_matrix_rows(specs: list[str]) -> set[str]:
    """The mutants whose operation's row of the matrix fails, in one pytest run."""
    env = {**os.environ, "SMRITI_POLICY_MUTANTS": ",".join(specs), "SMRITI_TEST_DB": "sqlite"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:randomly", __file__],
        env=env,
        capture_output=True,
        text=True,
    )
    prefix = "PASSED " + os.path.relpath(__file__) + "::test_the_matrix_row_fails_under["
    return {
        line.removeprefix(prefix).removesuffix("]")
        for line in done.stdout.splitlines()
        if line.startswith(prefix)
    }


def main(argv: list[str]) -> int:
    with_matrix = "--matrix" in argv
    chosen = [a for a in argv if not a.startswith("--")] or sorted(policy.RULES)
    tests = table_tests()
    results: dict[str, list[str]] = {}
    runtime: list[str] = []
    for operation in chosen:
        original = policy.RULES[operation]
        for field, value in mutants(original):
            spec = f"{operation}:{field}={label(value)}"
            policy.RULES[operation] = dataclasses.replace(original, **{field: value})
            results[spec] = []
            for name, test in tests.items():
                try:
                    test()
                except AssertionError:
                    results[spec].append(name)
            policy.RULES[operation] = original
            if field in RUNTIME_FIELDS:
                runtime.append(spec)
    if with_matrix:
        for spec in run_matrix_rows(runtime):
            results[spec].append(f"test_matrix[{spec.split(':', 1)[0]}]")
    for spec, caught in results.items():
        print(spec, ", ".join(caught) or "SURVIVED")
    return 1 if any(not caught for caught in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
