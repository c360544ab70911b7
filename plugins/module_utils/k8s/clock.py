# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one clock of the cluster layers: ``Deadline(timeout)`` started when made, read as ``elapsed()`` (a result's
``duration``), ``remaining()`` (what is left for the next wait) and ``expired()``, as kubernetes.core's waiter keeps
one clock for every deadline. A monotonic clock: wall-clock jumps move no deadline.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

# What every Deadline reads; a decision that compares moments itself (a soak, an outage's length) reads it too.
monotonic = time.monotonic


class Deadline:
    """Started at creation; ``timeout`` None for a stopwatch without an end (``remaining`` is then None)."""

    def __init__(self, timeout=None, clock=monotonic):
        self._clock = clock
        self.started = clock()
        self.timeout = timeout

    def elapsed(self):
        """Seconds since the start, to the millisecond: the ``duration`` of results."""
        return round(self._clock() - self.started, 3)

    def remaining(self, floor=0.0):
        """Seconds left, never below ``floor`` (a wait given less than ``floor`` still looks once)."""
        if self.timeout is None:
            return None
        return max(floor, self.started + self.timeout - self._clock())

    def expired(self):
        return self.timeout is not None and self._clock() >= self.started + self.timeout
