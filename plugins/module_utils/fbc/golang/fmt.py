# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go's fmt verbs as opm's error messages print decoded JSON values and its structs: ``v_verb`` (%v), ``t_verb``
(%t, which opm uses by mistake for a value of any type) and ``v_package_scoped_reference`` (%v of a struct)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote


def t_verb(value):
    """Go's %t applied to a decoded JSON value (opm's error message uses %t by mistake)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "%!t(<nil>)"
    if isinstance(value, str):
        return "%%!t(string=%s)" % value
    if isinstance(value, (int, float)):
        return "%%!t(float64=%s)" % v_verb(value)
    if isinstance(value, list):
        return "[%s]" % " ".join(t_verb(v) for v in value)
    return "map[%s]" % " ".join("%s:%s" % (t_verb(k), t_verb(v)) for k, v in sorted(value.items()))


def v_verb(value):
    """Go's %v of a decoded JSON value (numbers are float64)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        f = float(value)
        if f.is_integer() and abs(f) < 1e21:
            return "%d" % f
        return repr(f)
    if isinstance(value, list):
        return "[%s]" % " ".join(v_verb(v) for v in value)
    if isinstance(value, dict):
        return "map[%s]" % " ".join("%s:%s" % (k, v_verb(v)) for k, v in sorted(value.items()))
    return str(value)


def v_package_scoped_reference(ref):
    """Go's %v of a declcfg.PackageScopedReference (opm prints the struct in its deprecation errors)."""
    return "declcfg.PackageScopedReference{Schema:%s, Name:%s}" % (go_quote(ref.get("schema") or ""), go_quote(ref.get("name") or ""))
