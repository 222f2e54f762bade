"""Smriti: a self-hosted workspace for thinking with language models."""

__version__ = "0.2.0"
