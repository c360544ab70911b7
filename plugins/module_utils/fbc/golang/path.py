# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go's path.Match, as opm's .indexignore patterns use it: ``match_regex(pattern)``, the pattern as a regular
expression (None for a pattern Go refuses with ErrBadPattern)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def match_regex(pattern):
    """Translate Go's path.Match pattern to a regex; None if the pattern is malformed (Go: ErrBadPattern)."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\":
            i += 1
            if i >= n:
                return None
            out.append(re.escape(pattern[i]))
        elif c == "[":
            i += 1
            negate = i < n and pattern[i] == "^"
            if negate:
                i += 1
            items = []
            first = True
            while True:
                if i >= n:
                    return None
                if pattern[i] == "]" and not first:
                    break
                first = False
                lo = pattern[i]
                if lo == "\\":
                    i += 1
                    if i >= n:
                        return None
                    lo = pattern[i]
                i += 1
                if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
                    hi = pattern[i + 1]
                    if hi == "\\":
                        i += 1
                        if i + 1 >= n:
                            return None
                        hi = pattern[i + 1]
                    i += 2
                    if hi < lo:
                        return None
                    items.append("%s-%s" % (re.escape(lo), re.escape(hi)))
                else:
                    items.append(re.escape(lo))
            out.append("[%s%s]" % ("^" if negate else "", "".join(items)))
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error:
        return None
