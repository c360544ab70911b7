# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options that pace a canary rollout, shared by ``daemonset_canary`` and ``fleet_rollout`` (its ``canary``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def rollout_options():
    """Argument spec entries of the rollout's pace and failure thresholds (see daemonset_canary's documentation)."""
    return {
        "batch": {"type": "str", "default": "10%"},
        "canary_timeout": {"type": "int", "default": 300},
        "rollout_timeout": {"type": "int", "default": 1800},
        "crash_restarts": {"type": "int", "default": 3},
        "canary_ready_seconds": {"type": "int", "default": 5},
    }


def rollout_defaults():
    """The defaults of ``rollout_options``."""
    return {name: option["default"] for name, option in rollout_options().items()}
