# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes timestamps (RFC 3339 in UTC, as in ``lastTransitionTime``), for the pure cores."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import time


def parse_time(value):
    """Seconds since the epoch of a Kubernetes timestamp (``2026-11-23T15:33:10Z``, fractions ignored), or None."""
    if not value:
        return None
    try:
        return calendar.timegm(time.strptime(str(value).split(".", maxsplit=1)[0].rstrip("Z"), "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def format_time(epoch):
    """RFC 3339 UTC (``2026-11-23T15:33:10Z``) of epoch seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))
