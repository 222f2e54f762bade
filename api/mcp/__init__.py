"""Smriti over the Model Context Protocol: the reading tools an agent calls.

The only package that imports the official SDK (``mcp``). Like api/graphql it
reaches the data only through api/services, with the actor first, so a tool
sees what the same caller would see through GraphQL, under the same policy.
``tools`` describes and runs the tools and imports no SDK; ``server`` wraps
them for the SDK (stdio for `smriti mcp`, streamable HTTP for /mcp).
"""
