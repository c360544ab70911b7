"""The one deadline loop of the tests: ``poll_until``, for waiting on state the tests cannot watch (or need not).

tests/testbed/kube.py's ``wait_for`` and ``wait_for_resource`` run their list-then-watch rounds through it.
"""

import time


class PollTimeout(AssertionError, TimeoutError):
    """The wait ran out: an AssertionError (a test failure) and a TimeoutError (what testbed waits raise).
    ``last`` is the last value observed."""

    def __init__(self, message, last):
        super().__init__(message)
        self.last = last


def poll_until(probe, timeout, interval=0.5, describe="the condition", until=bool, show=repr):
    """Call ``probe()`` every ``interval`` seconds until ``until(value)`` holds for the value it returns, and return
    that value; by default until the value is true.

    ``probe`` is called at least once and once more after the deadline, if it comes during a pause. Exceptions of
    ``probe`` and ``until`` (an assertion that the process being waited for still runs) end the wait. After
    ``timeout`` seconds raises PollTimeout naming ``describe`` and ``show(last value)``.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise PollTimeout(f"timed out after {timeout}s waiting for {describe}; last seen: {show(value)}", value)
        time.sleep(interval)
