"""Defining the Tortoise models reads no source file (a cost of every start)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tortoise.models import Model

from api.store import models

ROOT = Path(__file__).resolve().parents[2]

# Counts the models whose source inspect.getsource was asked for while
# api.store.models was imported (Tortoise asks for each model's, to find "#:"
# field comments, unless the model says _no_comments).
READS = """
import inspect
read = []
getsource = inspect.getsource
def counting(thing):
    read.append(getattr(thing, "__module__", ""))
    return getsource(thing)
inspect.getsource = counting
import api.store.models
print(read.count("api.store.models"))
"""


def test_importing_the_models_reads_none_of_their_source() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", READS], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert ran.stdout == "0\n"


def test_every_model_says_it_has_no_comments_to_read() -> None:
    defined = [
        thing
        for thing in vars(models).values()
        if isinstance(thing, type) and issubclass(thing, Model) and thing is not Model
    ]
    assert len(defined) == 14
    assert [m.__name__ for m in defined if vars(m).get("_no_comments") is not True] == []
