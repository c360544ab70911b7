# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# Wait options (plugins/module_utils/k8s/args.py: wait_argspec()). Waiting uses the Kubernetes watch API.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  wait:
    description:
      - Whether to wait until the object reaches the state described by the module before returning.
      - Waiting uses the Kubernetes watch API (no polling interval); the module returns as soon as the state is
        reached.
      - A wait rides out an API server restart (connection refused, HTTP 5xx or 429) of up to two minutes and goes on
        where it was; an API server away longer fails the module.
      - Nothing is waited for in check mode.
    type: bool
    default: false
  wait_timeout:
    description:
      - How long to wait, in seconds, when O(wait=true).
      - On timeout the module fails and returns the last state it saw of the object.
    type: int
    default: 120
"""
