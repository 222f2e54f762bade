"""Spaces: the Space type with its branches, lineage and sessions; spaces and
space; create, update and delete."""
