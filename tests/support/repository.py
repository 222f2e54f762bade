"""Where the repository is: the tests read its files (scripts, locks, docs) by path.

Smriti itself knows no repository (an installed wheel has none): it finds what it
ships through api/bundled.py."""

from __future__ import annotations

from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
