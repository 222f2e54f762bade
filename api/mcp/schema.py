"""Tool arguments and answers as pydantic models, from which the published JSON
Schemas are derived and by which the arguments are checked: one declaration
per field, so a schema and its validator cannot disagree.

Portable schemas: a host may map each field to one type (a form, a function
declaration), so no schema here has a list of types. An argument that may be
left out is simply not required, with one type (null counts as left out, as
it always has): no argument schema names null. An answer's field that may be
null (`headId` before the first checkpoint) is `anyOf` a branch of its one
type and `{"type": "null"}` — left out would be another contract, absent is
not null — which is the form the MCP Inspector's portability lint
(`--strict`) recommends: it warns on a type list, and on a schema with no
type at all (which accepts anything).

A mistake in the arguments is an InputError naming the field (`settings.topP`
inside an object) in words a model can act on, GraphQL's INVALID: each field
says what it is (``Says``) rather than pydantic's own wording.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from ..errors import InputError

MAX_PAGE = 100


@dataclass(frozen=True, slots=True)
class Says:
    """What a field is, for the error when it is not: ``{name}`` stands for the
    field's path. ``by_error`` words a pydantic error type apart."""

    text: str
    by_error: tuple[tuple[str, str], ...] = ()

    def message(self, name: str, error: str) -> str:
        return dict(self.by_error).get(error, self.text).replace("{name}", name)


def says(what: str, **by_error: str) -> Says:
    """``says("a string")``: "`title` is a string."."""
    return Says(
        f"`{{name}}` is {what}.", tuple((k, f"`{{name}}` is {v}.") for k, v in by_error.items())
    )


def advertised(**keywords: Any) -> Any:
    """Published in the schema, checked by the use case (which answers with
    GraphQL's own code and words, OUT_OF_RANGE or EMPTY_CONTENT), not here."""
    return Field(json_schema_extra=keywords)


def absent(description: str) -> Any:
    """An answer's field that only some answers have (not required)."""
    return Field(None, description=description)


def choice(names: Iterable[str], what: str) -> Any:
    """A string that is one of ``names`` (an enum in the schema)."""
    allowed = tuple(names)

    def check(value: str) -> str:
        if value not in allowed:
            raise ValueError(value)
        return value

    return Annotated[
        str,
        AfterValidator(check),
        WithJsonSchema({"type": "string", "enum": list(allowed)}),
        says(what),
    ]


Id = Annotated[int, Field(ge=1), says("a positive whole number")]
Text = Annotated[str, says("a string")]
Strings = Annotated[list[str], says("a list of strings")]
Flag = Annotated[bool, says("true or false")]
Count = Annotated[int, Field(ge=1, le=MAX_PAGE), says(f"a whole number from 1 to {MAX_PAGE}")]


class Arguments(BaseModel):
    """A tool's arguments: camelCase names, nothing unknown, no coercion (a
    string is not a number, true is not 1)."""

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", strict=True, frozen=True, populate_by_name=False
    )

    @classmethod
    def parse(cls, given: dict[str, Any]) -> Any:
        try:
            return cls.model_validate(given)
        except ValidationError as exc:
            raise _input_error(cls, exc) from None

    def given(self, name: str) -> bool:
        """Whether the caller sent ``name`` (an attribute), null counting as not."""
        return name in self.model_fields_set and getattr(self, name) is not None


class Answer(BaseModel):
    """A tool's answer, for its output schema: camelCase names, nothing else."""

    model_config = ConfigDict(alias_generator=to_camel, extra="forbid")


# --- errors ------------------------------------------------------------------


def _input_error(model: type[BaseModel], exc: ValidationError) -> InputError:
    error = exc.errors()[0]
    loc = [part for part in error["loc"]]
    path: list[str] = []
    said: Says | None = None
    current: type[BaseModel] | None = model
    for part in loc:
        if not isinstance(part, str):
            break  # inside a list: the list's own words
        info = _field(current, part)
        path.append(part)
        if info is None:
            if error["type"] == "extra_forbidden":
                name = ".".join(path)
                return InputError(f"Unknown argument `{name}`.", field=name)
            break
        found = _says(info.annotation, info.metadata)
        if found is not None:
            said = found
        current = _model_in(info.annotation)
    name = ".".join(path)
    if len(path) == len(loc) and (
        error["type"] == "missing" or (error["input"] is None and _required(model, path))
    ):
        return InputError(f"`{name}` is required.", field=name)
    if said is None:  # every field says what it is; pydantic's words as a last resort
        return InputError(f"`{name}`: {error['msg']}.", field=name)
    return InputError(said.message(name, error["type"]), field=name)


def _required(model: type[BaseModel], path: list[str]) -> bool:
    """Null for a required field is the field left out (as it always was)."""
    info = _field(model, path[0]) if len(path) == 1 else None
    return info is not None and info.is_required()


def _field(model: type[BaseModel] | None, alias: str) -> FieldInfo | None:
    if model is None:
        return None
    return _by_alias(model).get(alias)


@cache
def _by_alias(model: type[BaseModel]) -> dict[str, FieldInfo]:
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _unwrapped(annotation: Any) -> list[Any]:
    """The types an annotation may hold, Optional and Annotated taken apart."""
    if get_origin(annotation) is Annotated:
        return _unwrapped(get_args(annotation)[0])
    if get_origin(annotation) in (Union, pytypes.UnionType):
        return [t for arg in get_args(annotation) for t in _unwrapped(arg)]
    return [annotation]


def _says(annotation: Any, metadata: list[Any]) -> Says | None:
    found = [m for m in metadata if isinstance(m, Says)]
    if found:
        return found[-1]
    if get_origin(annotation) is Annotated:
        return _says(get_args(annotation)[0], list(get_args(annotation)[1:]))
    if get_origin(annotation) in (Union, pytypes.UnionType):
        for arg in get_args(annotation):
            if (inner := _says(arg, [])) is not None:
                return inner
    return None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    for one in _unwrapped(annotation):
        if isinstance(one, type) and issubclass(one, BaseModel):
            return one
    return None


# --- schemas -----------------------------------------------------------------


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return _portable(model, nullable=False)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    return _portable(model, nullable=True)


def _portable(model: type[BaseModel], *, nullable: bool) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True, mode="serialization" if nullable else "validation")
    defs = raw.pop("$defs", {})
    found: dict[str, Any] = _rewritten(raw, defs, nullable)
    found.setdefault("required", [])  # stated even when empty, as it always was
    return found


def _rewritten(node: Any, defs: dict[str, Any], nullable: bool) -> Any:
    """Refs inlined (a host may not follow them), titles dropped (pydantic's,
    from the attribute names), an argument that may be null made single-typed
    and an answer's that may be null a union of single-typed branches."""
    if isinstance(node, list):
        return [_rewritten(one, defs, nullable) for one in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _rewritten({**target, **rest}, defs, nullable)
    if "anyOf" in node and {"type": "null"} in node["anyOf"]:
        others = [one for one in node["anyOf"] if one != {"type": "null"}]
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        if nullable:  # each branch of one type, null the last (the Inspector's advice)
            branches = [_rewritten(one, defs, nullable) for one in others]
            return {**_rewritten(rest, defs, nullable), "anyOf": [*branches, {"type": "null"}]}
        merged = {**others[0], **rest} if len(others) == 1 else {"anyOf": others, **rest}
        return _rewritten(merged, defs, nullable)
    if node.get("default", 0) is None:
        node = {k: v for k, v in node.items() if k != "default"}  # left out: no default to state
    return {
        key: (
            {name: _rewritten(one, defs, nullable) for name, one in value.items()}
            if key == "properties"
            else _rewritten(value, defs, nullable)
        )
        for key, value in node.items()
        if key != "title" or not isinstance(value, str)
    }
