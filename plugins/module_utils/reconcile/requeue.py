# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Requeue periods as ansible-operator reads them: Go ``time.ParseDuration`` strings (``30s``, ``1m30s``, ``2h``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt

# The units of Go's time.ParseDuration, in seconds.
UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")  # ASCII digits, as Go
# ansible-operator's reconcile loop has no upper bound, but a requeue beyond a day is almost surely a typo.
MAX_SECONDS = 86400.0


class RequeueError(KubeforgeError):
    """A requeue period that ansible-operator could not parse or that makes no sense."""


def parse(period):
    """Seconds of a Go duration string; ``RequeueError`` names what is wrong. Negative or zero periods are refused
    (ansible-operator would requeue at once, in a loop)."""
    text = str(period).strip()
    if text.isdigit():
        raise RequeueError(f"requeue period {text!r} has no unit: write {text}s (Go duration units: h, m, s, ms)")
    if text.startswith("-"):
        raise RequeueError(f"requeue period {excerpt(text)!r} must be longer than zero")
    position, seconds = 0, 0.0
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        seconds += float(match.group(1)) * UNITS[match.group(2)]
        position = match.end()
    if not text or position != len(text):
        raise RequeueError(f"requeue period {excerpt(text)!r} is not a Go duration such as 30s, 1m30s or 2h")
    if seconds <= 0:
        raise RequeueError(f"requeue period {text!r} must be longer than zero")
    if seconds > MAX_SECONDS:
        raise RequeueError(f"requeue period {text!r} is longer than a day; use the watch's reconcilePeriod for that")
    return seconds
