"""The ceiling bench/workers.py compares its measured speed-up with."""

from __future__ import annotations

import pytest

from bench.workers import ceiling


def test_one_worker_is_bound_by_its_own_core() -> None:
    # 8 ms of worker CPU a send: one core gives 125 sends/s, whatever else runs.
    assert ceiling(1, 2, 0.008, 0.002) == pytest.approx(125.0)


def test_more_workers_are_bound_by_all_the_cpu_a_send_costs() -> None:
    # Two workers could do 250/s, but 10 ms of CPU a send on 2 cores allows 200/s.
    assert ceiling(2, 2, 0.008, 0.002) == pytest.approx(200.0)
    assert ceiling(2, 2, 0.008, 0.002) / ceiling(1, 2, 0.008, 0.002) == pytest.approx(1.6)
    # With nothing else on the machine, the cores are the only bound.
    assert ceiling(2, 2, 0.008, 0.0) == pytest.approx(250.0)
    assert ceiling(4, 2, 0.008, 0.0) == pytest.approx(250.0)
