# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by all unit tests.

``run_module(module, args, check_mode=False, diff=False)`` runs a module's ``main()`` with ``args`` as module
arguments and returns the JSON result it printed (``exit_json`` and ``fail_json`` alike; a failure has
``failed: true``).

This directory is on ``sys.path`` (pytest puts it there for this conftest), so test modules below it can import the
helper module ``unit_testlib``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common.warnings import _global_deprecations, _global_warnings
from ansible.module_utils.testing import patch_module_args


@pytest.fixture
def run_module(capsys):
    def run(module, args, check_mode=False, diff=False):
        if check_mode:
            args = dict(args, _ansible_check_mode=True)
        if diff:
            args = dict(args, _ansible_diff=True)
        # Ansible keeps warnings and deprecations in module-global lists: one module run must not see another's
        # importing controller code (ansible.parsing, ansible.plugins, ...) sends module warnings to Display instead
        assert not ansible_internal.is_controller, "an earlier test imported Ansible controller code"
        _global_warnings.clear()
        _global_deprecations.clear()
        with patch_module_args(args):
            with pytest.raises(SystemExit):
                module.main()
        return json.loads(capsys.readouterr().out)
    return run
