# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options that would have no effect in the combination given are refused, never silently ignored (no Ansible import).

A module lists its :class:`Unused` rules beside its argument spec and hands them to ``runner.run_module``, which
calls :func:`refuse_unused` before anything runs. An option counts as given when its value is not None and differs
from its default (writing a default out, ``validate_certs: true`` say, changes nothing, so it is not refused); a rule
that depends on what only the run learns (a file's kind, a branch that exists) lives in the module's core instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError

# ``options`` (names) have an effect only when ``applies(params)`` is true; ``reason`` completes "... <has/have> no
# effect <reason>" - say when they do, e.g. "without push=true (they are for the registry of image)".
Unused = namedtuple("Unused", ["options", "applies", "reason"])


class OptionError(KubeforgeError, ValueError):
    """An option given where it has no effect, or contradicting another."""


def defaults_of(argument_spec):
    """``{option: default}`` of an argument spec (None where it has none)."""
    return {name: spec.get("default") for name, spec in (argument_spec or {}).items()}


def given(params, name, defaults):
    """True when ``name`` was set to something other than its default."""
    value = params.get(name)
    if value is None:
        return False
    if value == defaults.get(name):
        return False
    return not (value in ([], {}) and defaults.get(name) is None)


def unused_options(params, rules, defaults):
    """``[(options given, rule)]`` of the ``rules`` that do not apply to ``params`` (pure)."""
    found = []
    for rule in rules:
        if rule.applies(params):
            continue
        named = [name for name in rule.options if given(params, name, defaults)]
        if named:
            found.append((named, rule))
    return found


def refuse_unused(params, rules, defaults):
    """Raise :class:`OptionError` naming every option of ``params`` that one of ``rules`` says has no effect."""
    found = unused_options(params, rules, defaults)
    if found:
        raise OptionError("; ".join(f"{', '.join(named)} {'has' if len(named) == 1 else 'have'} no effect {rule.reason}" for named, rule in found))
