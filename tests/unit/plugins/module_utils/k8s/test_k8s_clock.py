"""k8s.clock.Deadline: one clock for every duration and deadline of the cluster layers, read on a fake clock."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline


class FakeClock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.mark.parametrize(
    "timeout, passed, elapsed, remaining, floored, expired",
    [
        # (timeout, seconds passed, elapsed(), remaining(), remaining(floor=1), expired())
        (10, 0.0, 0.0, 10.0, 10.0, False),
        (10, 2.5004, 2.5, 7.4996, 7.4996, False),
        (10, 9.5, 9.5, 0.5, 1.0, False),  # a wait given less than its floor still looks once
        (10, 10.0, 10.0, 0.0, 1.0, True),
        (10, 12.0, 12.0, 0.0, 1.0, True),  # never negative
        (None, 5.0, 5.0, None, None, False),  # a stopwatch: no end
    ],
)
def test_deadline_reads_one_clock(timeout, passed, elapsed, remaining, floored, expired):
    clock = FakeClock()
    deadline = Deadline(timeout, clock=clock)
    clock.now += passed
    assert deadline.elapsed() == elapsed
    assert deadline.remaining() == (pytest.approx(remaining) if remaining is not None else None)
    assert deadline.remaining(floor=1) == (pytest.approx(floored) if floored is not None else None)
    assert deadline.expired() is expired


def test_the_clock_starts_when_the_deadline_is_made():
    clock = FakeClock(now=5.0)
    deadline = Deadline(3, clock=clock)
    assert deadline.started == 5.0 and deadline.timeout == 3
