"""Password hashes run off the event loop, a bounded number at once."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.services import accounts
from api.settings import Settings
from tests.accounts.world import BASE_URL, PASSWORD

ORIGIN = {"Origin": BASE_URL}
SIGN_INS = 8


class Recorder:
    """Wraps the verification: which thread runs it, and how many run at once.

    Each call holds on until the bound is reached (or gives up after a few
    seconds, which on the loop's own thread it always does): no timing is asserted.
    """

    def __init__(self, verify: Any, bound: int) -> None:
        self.verify = verify
        self.bound = bound
        self.lock = threading.Lock()
        self.full = threading.Event()
        self.running = 0
        self.most = 0
        self.threads: set[int] = set()

    def __call__(self, stored: str, password: str) -> bool:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.add(threading.get_ident())
            if self.running >= self.bound:
                self.full.set()
        self.full.wait(timeout=3)
        try:
            return bool(self.verify(stored, password))
        finally:
            with self.lock:
                self.running -= 1


async def test_hashes_run_off_the_loop_and_at_most_the_bound_at_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(accounts._verify, accounts.HASH_THREADS)
    monkeypatch.setattr(accounts, "_verify", recorder)
    app = create_app(dataclasses.replace(settings, auth="accounts"))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL) as http,
    ):
        await accounts.add_user("ada", PASSWORD, is_admin=False)
        loop_thread = threading.get_ident()
        answers = await asyncio.gather(
            *(
                http.post(
                    "/auth/login",
                    json={"name": "ada", "password": f"wrong guess {n}"},
                    headers=ORIGIN,
                )
                for n in range(SIGN_INS)
            )
        )
    assert [a.status_code for a in answers] == [401] * SIGN_INS
    assert loop_thread not in recorder.threads
    assert accounts.HASH_THREADS == 2
    assert recorder.most == accounts.HASH_THREADS
    assert len(recorder.threads) == accounts.HASH_THREADS
