"""Count the SQL statements a block of code issues (through Tortoise's client log)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.statements: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.statements.append(record.getMessage())


@contextmanager
def count_statements() -> Iterator[list[str]]:
    logger = logging.getLogger("tortoise.db_client")
    counter = _Counter()
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(counter)
    try:
        yield counter.statements
    finally:
        logger.removeHandler(counter)
        logger.setLevel(previous)
