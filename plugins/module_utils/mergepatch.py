# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON merge patches (RFC 7386) computed from what is and what is wanted (pure, no imports)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def merge_patch(current, wanted):
    """The merge patch that turns ``current`` into ``wanted``: keys ``wanted`` lacks are set to null, mappings are
    patched key by key, anything else (lists included) is replaced."""
    if not isinstance(current, dict) or not isinstance(wanted, dict):
        return wanted
    patch = {key: None for key in current if key not in wanted}
    for key, value in wanted.items():
        if key not in current:
            patch[key] = value
        elif current[key] != value:
            patch[key] = merge_patch(current[key], value)
    return patch
