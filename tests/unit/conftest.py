# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by all unit tests.

``run_module(module, args, check_mode=False, diff=False)`` runs a module's ``main()`` in the test's own process
(lib.runners.run_module_in_process) with ``args`` as module arguments and returns the JSON result it printed
(``exit_json`` and ``fail_json`` alike; a failure has ``failed: true``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

import pytest
from lib.runners import run_module_in_process


@pytest.fixture
def run_module(capsys):
    """``run_module(module, args, check_mode=False, diff=False) -> result``: in-process (run_module_in_process)."""
    return functools.partial(run_module_in_process, capsys=capsys)
