# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small helpers shared by the template layer: document decoding (via the core loader), Go-compatible JSON."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import math

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, TemplateParseError

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def go_json_kind(v):
    """The JSON kind Go's encoding/json names in "cannot unmarshal <kind> into Go value" errors (null for None)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def go_jsonify(obj):
    """Normalize a YAML-decoded value to what Go's YAML->JSON->interface{} round trip yields.

    Mapping keys become strings, integral floats become ints, dates become their string form.
    Returns the same object when nothing needs changing (no copies of big blobs).
    """
    t = type(obj)
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is dict:
        changed = False
        out = {}
        for k, v in obj.items():
            nk = k if isinstance(k, str) else _key_str(k)
            nv = go_jsonify(v)
            if nk is not k or nv is not v:
                changed = True
            out[nk] = nv
        return out if changed else obj
    if t is list:
        out = [go_jsonify(v) for v in obj]
        if all(a is b for a, b in zip(out, obj)):
            return obj
        return out
    if t is float:
        if math.isfinite(obj) and obj.is_integer() and _INT64_MIN <= obj <= _INT64_MAX:
            return int(obj)
        return obj
    if isinstance(obj, (datetime.date, datetime.datetime)):
        return obj.isoformat()
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if isinstance(obj, (tuple, set)):
        return [go_jsonify(v) for v in obj]
    return obj


def _key_str(k):
    if k is None:
        return "null"
    if k is True:
        return "true"
    if k is False:
        return "false"
    if isinstance(k, float) and k.is_integer():
        return str(int(k))
    return str(k)


def load_first_document(data):
    """Decode the first YAML/JSON document of ``data`` (str/bytes) like k8s YAMLOrJSONDecoder (core loader's
    ``iter_documents``: lazy, Go YAML resolution, alias-bomb guard). Returns None for an empty stream."""
    try:
        for doc, _position in core_load.iter_documents(data, source=None):
            return doc
    except FBCError as e:
        raise TemplateParseError(e.opm_message) from e
    except (ValueError, TypeError, RecursionError) as e:
        raise TemplateParseError(str(e)) from e
    return None


def load_all_documents(data):
    """Decode every document of a YAML stream or of concatenated JSON objects (empty YAML documents skipped)."""
    out = []
    try:
        for doc, _position in core_load.iter_documents(data, source=None):
            if doc is not None:
                out.append(doc)
    except FBCError as e:
        raise TemplateParseError(e.opm_message) from e
    except (ValueError, TypeError, RecursionError) as e:
        raise TemplateParseError(str(e)) from e
    return out


_HTML_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def go_html_escape(s):
    """Apply Go encoding/json's HTML escaping to an already-encoded JSON text."""
    if "<" in s or ">" in s or "&" in s or "\u2028" in s or "\u2029" in s:
        for a, b in _HTML_ESCAPES:
            s = s.replace(a, b)
    return s


def go_marshal(obj, sort_keys=False, escape_html=True):
    """Compact JSON as Go's json.Marshal (HTML escaping on by default)."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    return go_html_escape(s) if escape_html else s


def go_marshal_indent(obj, sort_keys=False, escape_html=True):
    """json.MarshalIndent(obj, "", "    ")."""
    s = json.dumps(obj, indent=4, ensure_ascii=False, sort_keys=sort_keys)
    return go_html_escape(s) if escape_html else s


def go_str_key(s):
    """Sort key giving Go's bytewise string order."""
    return s.encode("utf-8", "surrogatepass")


def get_ci(obj, key, default=None):
    """Case-insensitive field lookup (exact match preferred, as Go encoding/json)."""
    if key in obj:
        return obj[key]
    kf = key.casefold()
    found = default
    for k, v in obj.items():
        if isinstance(k, str) and k.casefold() == kf:
            found = v
    return found
