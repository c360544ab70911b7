# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-yaml v2's typing of plain scalars (resolve.go), as sigs.k8s.io/yaml uses it - what both the loader
(``yaml_load``) and the emitter (``yaml_emit``) of the Go behaviours opm's bytes depend on.

opm reads and writes YAML through sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 flavoured), which types plain scalars
differently from PyYAML: `y`/`n` are booleans, `1:20` and `1e3` are not what PyYAML thinks, timestamps stay
strings, integers follow Go's ParseInt(s, 0, 64) syntax: ``resolve``, ``is_timestamp``, ``go_parse_int`` and the
value tables.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import re

# ----------------------------------------------------------------------------------------- typing (resolve.go)

STR, BOOL, NULL, INT, FLOAT, TIMESTAMP, MERGE = "str", "bool", "null", "int", "float", "timestamp", "merge"

BOOL_VALUES = {}
for _v in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"):
    BOOL_VALUES[_v] = True
for _v in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"):
    BOOL_VALUES[_v] = False
NULL_VALUES = frozenset(["", "~", "null", "Null", "NULL"])
SPECIAL_FLOATS = {".nan": float("nan"), ".NaN": float("nan"), ".NAN": float("nan"),
                  ".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf"),
                  "+.inf": float("inf"), "+.Inf": float("inf"), "+.INF": float("inf"),
                  "-.inf": float("-inf"), "-.Inf": float("-inf"), "-.INF": float("-inf")}

# first characters for which resolve() can return something other than a string
HINT_CHARS = frozenset("+-0123456789yYnNtTfFoO~.")

_DOT_FLOAT_RE = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")
_YAML_STYLE_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_GO_INT_RE = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_TS_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})\Z")
_TS_FULL_RE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})([Tt ])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})"
                         r"(?:[.,][0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})?\Z")
BASE60_FLOAT_RE = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


def is_timestamp(s):
    """go-yaml v2 parseTimestamp (the four layouts it accepts)."""
    m = _TS_DATE_RE.match(s)
    if m:
        y, mo, d = (int(x) for x in m.groups())
        return 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1]
    m = _TS_FULL_RE.match(s)
    if not m:
        return False
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    sep, tz = m.group(4), m.group(8)
    # the space-separated layout has no zone; the T/t layouts require one
    if (sep == " ") != (tz is None):
        return False
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1]):
        return False
    return int(m.group(5)) < 24 and int(m.group(6)) < 60 and int(m.group(7)) < 60


def go_parse_int(plain):
    """strconv.ParseInt(plain, 0, 64), falling back to ParseUint; None when it does not parse."""
    m = _GO_INT_RE.match(plain)
    if not m:
        return None
    sign, digits = m.groups()
    prefix = digits[:2]
    if prefix in ("0x", "0X"):
        n = int(digits[2:], 16)
    elif prefix in ("0o", "0O"):
        n = int(digits[2:], 8)
    elif prefix in ("0b", "0B"):
        n = int(digits[2:], 2)
    elif len(digits) > 1 and digits[0] == "0":
        n = int(digits[1:], 8)
    else:
        n = int(digits)
    if sign == "-":
        n = -n
        return n if n >= INT64_MIN else None
    return n if n <= (UINT64_MAX if not sign else INT64_MAX) else None


def resolve(s):
    """(kind, value) for a plain scalar, kind being one of STR, BOOL, NULL, INT, FLOAT, TIMESTAMP, MERGE."""
    if s == "":
        return NULL, None
    c = s[0]
    if c not in HINT_CHARS:
        if s == "<<":
            return MERGE, s
        return STR, s
    if s in BOOL_VALUES:
        return BOOL, BOOL_VALUES[s]
    if s in NULL_VALUES:
        return NULL, None
    if s in SPECIAL_FLOATS:
        return FLOAT, SPECIAL_FLOATS[s]
    if c == ".":
        if _DOT_FLOAT_RE.match(s):
            return FLOAT, float(s)
        return STR, s
    if not (c in "+-" or "0" <= c <= "9"):
        return STR, s
    if "0" <= c <= "9" and len(s) > 4 and s[4] == "-" and is_timestamp(s):
        return TIMESTAMP, s
    plain = s.replace("_", "")
    n = go_parse_int(plain)
    if n is not None:
        return INT, n
    if _YAML_STYLE_FLOAT_RE.match(plain):
        f = float(plain)
        if f not in (float("inf"), float("-inf")):
            return FLOAT, f
    return STR, s
