# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes label selectors in their string form (``zone=a,canary in (yes,true),!draining``), checked before use.

The API server evaluates the selector (the node LIST sends it as ``labelSelector``); this module only refuses what
the API server would refuse, with a message naming the bad part, before the rollout changes anything, and returns
the selector in a canonical form. The grammar is apimachinery's ``labels.Parse`` (pkg/labels/selector.go):
requirements separated by commas, each ``key``, ``!key``, ``key=value``, ``key==value``, ``key!=value``,
``key in (v1,v2)``, ``key notin (v1,v2)``, ``key>N`` or ``key<N``; keys are qualified names (an optional DNS
subdomain prefix and ``/``, then at most 63 characters of alphanumerics, ``-``, ``_`` and ``.``, starting and ending
alphanumeric); values are empty or the same 63-character form.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError

NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME = 63
MAX_PREFIX = 253
MAX_SELECTOR_CHARS = 4096

# Longest operators first, so "==" and "!=" are not read as "=".
EQUALITY_OPERATORS = ("==", "!=", "=", ">", "<")
SET_OPERATORS = ("notin", "in")


class SelectorError(InvalidInputError):
    """A label selector the API server would refuse."""


def _check_key(key, selector):
    if "/" in key:
        prefix, name = key.split("/", 1)
        if not prefix or len(prefix) > MAX_PREFIX or not all(DNS_LABEL.match(part) for part in prefix.split(".")):
            raise SelectorError(f"label selector {selector!r}: the prefix of key {key!r} must be a DNS subdomain (lower case, at most 253 characters)")
    else:
        name = key
    if not name or len(name) > MAX_NAME or not NAME.match(name):
        raise SelectorError(
            f"label selector {selector!r}: {key!r} is not a valid label key (at most 63 characters: alphanumerics, '-', '_' or '.', "
            "beginning and ending with an alphanumeric, after an optional DNS subdomain prefix and '/')"
        )


def _check_value(value, key, selector):
    if value and (len(value) > MAX_NAME or not NAME.match(value)):
        raise SelectorError(
            f"label selector {selector!r}: {value!r} is not a valid value for {key!r} (at most 63 characters: alphanumerics, '-', '_' or '.', "
            "beginning and ending with an alphanumeric)"
        )


def _split(selector):
    """The requirements of ``selector``: split at commas outside parentheses."""
    parts, depth, current = [], 0, []
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"label selector {selector!r}: unbalanced ')'")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SelectorError(f"label selector {selector!r}: unbalanced '('")
    parts.append("".join(current))
    return [part.strip() for part in parts]


def _requirement(text, selector):
    """One requirement in canonical form."""
    if not text:
        raise SelectorError(f"label selector {selector!r}: empty requirement (two commas in a row, or a comma at an end)")
    if text.startswith("!"):
        key = text[1:].strip()
        _check_key(key, selector)
        return "!" + key
    match = re.match(r"^(\S+?)\s+(notin|in)\s*\((.*)\)$", text)
    if match:
        key, operator, values = match.group(1), match.group(2), [v.strip() for v in match.group(3).split(",")]
        _check_key(key, selector)
        if values == [""]:
            raise SelectorError(f"label selector {selector!r}: {key} {operator} () needs at least one value")
        for value in values:
            _check_value(value, key, selector)
        return f"{key} {operator} ({','.join(sorted(set(values)))})"
    for operator in EQUALITY_OPERATORS:
        if operator in text:
            key, value = (part.strip() for part in text.split(operator, 1))
            _check_key(key, selector)
            if operator in (">", "<"):
                if not re.match(r"^-?[0-9]+$", value):
                    raise SelectorError(f"label selector {selector!r}: {key}{operator} needs an integer, not {value!r}")
                return f"{key}{operator}{value}"
            if any(c in value for c in "=!<>()"):
                raise SelectorError(f"label selector {selector!r}: cannot read the requirement {text!r}")
            _check_value(value, key, selector)
            return f"{key}{'!=' if operator == '!=' else '='}{value}"
    if any(c in text for c in " ()"):
        raise SelectorError(f"label selector {selector!r}: cannot read the requirement {text!r} (operators: =, ==, !=, in, notin, !, >, <)")
    _check_key(text, selector)
    return text


def parse_label_selector(selector):
    """``selector`` checked and in canonical form (requirements in the given order, set values sorted).

    Raises ``SelectorError`` (a ``ValueError``) for what the API server would refuse, and for an empty selector,
    which would select every node.
    """
    if not isinstance(selector, str):
        raise SelectorError(f"a label selector is a string such as 'zone=a,canary=true', not {type(selector).__name__}")
    text = selector.strip()
    if not text:
        raise SelectorError("the label selector is empty: it would select every node")
    if len(text) > MAX_SELECTOR_CHARS:
        raise SelectorError(f"the label selector is longer than {MAX_SELECTOR_CHARS} characters")
    return ",".join(_requirement(part, selector) for part in _split(text))
