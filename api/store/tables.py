"""One table spec per entity: its table's name and the columns read of it,
derived from its Tortoise model (the schema of record), from which every
SELECT list, INSERT and row position of the store comes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tortoise import fields as tortoise_fields
from tortoise.fields.relational import ForeignKeyFieldInstance, OneToOneFieldInstance
from tortoise.models import Model

from . import models


@dataclass(frozen=True, slots=True)
class Table:
    """A table as the store reads and writes it.

    ``columns``: what a row of the entity holds, in the model's order (a mapper
    in ``rows`` reads a row by these positions); ``json``: the columns whose
    values go in as JSON text; ``defaults``: the model's defaults, for the
    columns an insert does not name."""

    name: str
    columns: tuple[str, ...]
    # Every column of the table, read or not (what an insert may name).
    stored: frozenset[str]
    json: frozenset[str]
    defaults: Mapping[str, Any]
    position: Mapping[str, int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", {c: i for i, c in enumerate(self.columns)})

    def select(self, alias: str | None = None) -> str:
        """The columns as a SELECT list (each qualified by ``alias``, if given)."""
        if alias is None:
            return ", ".join(self.columns)
        return ", ".join(f"{alias}.{column}" for column in self.columns)

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` for an insert, with the model's defaults for the columns
        they leave out and JSON columns as text (what both drivers accept)."""
        unknown = values.keys() - self.stored
        if unknown:
            raise ValueError(f"{self.name} has no column {sorted(unknown)}")
        written: dict[str, Any] = {}
        for column, default in self.defaults.items():
            if column not in values:
                written[column] = default() if callable(default) else default
        written.update(values)
        for column in self.json & written.keys():
            written[column] = json_text(written[column])
        return written


def json_text(value: Any) -> str | None:
    """A value for a JSON column (text both drivers accept)."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _column(name: str, spec: tortoise_fields.Field[Any]) -> str | None:
    """The field's column, None for a relation that has none in this table."""
    if isinstance(spec, ForeignKeyFieldInstance | OneToOneFieldInstance):
        return spec.source_field or f"{name}_id"
    if isinstance(spec, tortoise_fields.relational.RelationalField):
        return None
    return spec.source_field or name


def table(model: type[Model], *, unread: Iterable[str] = ()) -> Table:
    """The spec of ``model``'s table: all its columns but ``unread`` (columns
    the entity does not carry, still written by the statements that name them)."""
    skipped = set(unread)
    columns: list[str] = []
    stored: set[str] = set()
    as_json: set[str] = set()
    defaults: dict[str, Any] = {}
    for name, spec in model._meta.fields_map.items():
        column = _column(name, spec)
        if column is None:
            continue
        stored.add(column)
        if isinstance(spec, tortoise_fields.JSONField):
            as_json.add(column)
        if spec.default is not None:
            defaults[column] = spec.default
        if column in skipped:
            skipped.discard(column)
            continue
        columns.append(column)
    if skipped:
        raise ValueError(f"{model._meta.db_table} has no column {sorted(skipped)}")
    return Table(
        model._meta.db_table, tuple(columns), frozenset(stored), frozenset(as_json), defaults
    )


USER = table(models.User)
API_TOKEN = table(models.ApiToken)
WEB_SESSION = table(models.WebSession)
SIGN_IN = table(models.SignIn)
SPACE = table(models.Space, unread=["origin_space_id"])
SPACE_MEMBER = table(models.SpaceMember)
MODEL_ACCESS = table(models.ModelAccess)
PRESET = table(models.Preset)
SESSION = table(models.Session)
SESSION_TAG = table(models.SessionTag)
TURN = table(models.Turn, unread=["copied_from_id"])
CHECKPOINT = table(models.Checkpoint)
BRANCH = table(models.Branch)
