"""schema.graphql is the exported schema, and the schema documents itself."""

from __future__ import annotations

from pathlib import Path

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
)

from api.graphql.schema import build_schema, export_schema

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schema.graphql"


def test_schema_file_is_current() -> None:
    assert SCHEMA_FILE.read_text() == export_schema(), (
        "schema.graphql is stale: run `smriti export-schema > schema.graphql`"
    )


def test_every_type_field_argument_and_enum_value_is_described() -> None:
    schema = build_schema()._schema
    missing: list[str] = []
    for name, kind in schema.type_map.items():
        if name.startswith("__") or name in {"String", "Int", "Float", "Boolean", "ID"}:
            continue
        if not kind.description:
            missing.append(name)
        if isinstance(kind, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field_name, field in kind.fields.items():
                if not field.description:
                    missing.append(f"{name}.{field_name}")
                for arg_name, arg in getattr(field, "args", {}).items():
                    if not arg.description:
                        missing.append(f"{name}.{field_name}({arg_name})")
        if isinstance(kind, GraphQLEnumType):
            for value_name, value in kind.values.items():
                if not value.description:
                    missing.append(f"{name}.{value_name}")
    assert missing == []
