"""Smriti over the Model Context Protocol: the reading tools an agent calls.

The only package that imports the official SDK (``mcp``). Like api/graphql it
reaches the data only through api/services, with the actor first, so a tool
sees what the same caller would see through GraphQL, under the same policy.
The tools import no SDK: each is declared once (``tool``) with its arguments
and answer as pydantic models (``schema``: the published JSON Schemas and the
argument checks both come from them; ``shapes``: the objects the answers
share), in ``tools`` (reading), ``writing``, ``conversation``, ``session`` and
``branches``; ``server`` wraps them for the SDK (stdio for `smriti mcp`,
streamable HTTP for /mcp).
"""
