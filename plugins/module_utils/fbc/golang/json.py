# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go's encoding/json and strconv behaviours the FBC engine reproduces, each implemented once: opm's messages,
orderings and bytes depend on them (go-yaml's are in golang.yaml_types, yaml_load and yaml_emit).

- quoting: ``go_quote`` (strconv.Quote, the ``%q`` verb);
- ordering: ``go_sort_key`` (Go compares strings bytewise);
- decoding: ``json_kind`` (the kind named in encoding/json's "cannot unmarshal <kind>" errors), ``go_fold_name`` /
  ``fold_lookup`` / ``fold_matches`` / ``get_ci`` (encoding/json's struct-field matching), ``cases_fold``
  (golang.org/x/text/cases.Fold, declcfg.Meta's key folding), ``go_jsonify`` (the YAML -> JSON -> interface{}
  round trip of sigs.k8s.io/yaml);
- encoding: ``go_json_float``, ``go_json_escape``, ``go_marshal`` (json.Marshal), ``go_marshal_indent``
  (json.MarshalIndent / an Encoder with SetIndent("", "    ")). The one Go JSON encoder of the collection
  (olmv1.installer_rbac builds on it too).

A leaf module: it imports nothing from the engine but its errors, so every layer (semver, declcfg, model, template,
action) can use it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import math
import re
from json import encoder as _json_encoder

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import WriteError

# ----------------------------------------------------------------------------------------- quoting

_PLAIN_ASCII_RE = re.compile(r'[\x20\x21\x23-\x5b\x5d-\x7e]*\Z')


def go_quote(s):
    """Go's strconv.Quote (the %q verb). A non-str value is quoted as its str() (messages quote names that a broken
    input may have made numbers or None)."""
    if not isinstance(s, str):
        s = str(s)
    if _PLAIN_ASCII_RE.match(s):
        return '"' + s + '"'
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif ch == "\a":
            out.append("\\a")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\v":
            out.append("\\v")
        elif o < 0x80:
            out.append("\\x%02x" % o)
        elif ch.isprintable():
            out.append(ch)
        elif 0xD800 <= o <= 0xDFFF:
            # Lone surrogates cannot exist in valid UTF-8; Go would have replaced them with U+FFFD.
            out.append("\\ufffd")
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    out.append('"')
    return "".join(out)


# ----------------------------------------------------------------------------------------- ordering

def go_sort_key(s):
    """Sort key of Go's string order (bytewise on UTF-8); for str that equals code-point order except with lone
    surrogates."""
    return s.encode("utf-8", "surrogatepass")


# ----------------------------------------------------------------------------------------- decoding

def json_kind(value):
    """The JSON kind encoding/json names in "json: cannot unmarshal <kind> into Go ..." (UnmarshalTypeError.Value).

    bool, number, string, array, object for decoded JSON. Go never reports null (null decodes into anything: a no-op
    or a nil), so "null" only appears in messages we write where opm would panic or go on silently. Values that
    go_jsonify converts get the kind of their conversion (dates/bytes: string, tuples/sets: array); anything else,
    which no decoder produces, is "value".
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (str, bytes, datetime.date)):
        return "string"
    if isinstance(value, (list, tuple, set)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "value"


# encoding/json matches a key to a field with foldName (fold.go: ASCII letters upper-cased, other runes replaced by
# the smallest rune of their unicode.SimpleFold orbit). Over the whole Unicode range exactly two non-ASCII runes
# fold onto ASCII: U+017F LATIN SMALL LETTER LONG S (-> S) and U+212A KELVIN SIGN (-> K); U+0130 and U+0131 fold
# to themselves (caseOrbit). Every json tag opm decodes is ASCII, so mapping those two and lower-casing ASCII
# decides every key/field comparison exactly. str.lower() misses U+017F; str.casefold() over-matches
# (U+00DF -> "ss", U+FB06 -> "st", ...).
_GO_ASCII_FOLDS = {0x017F: "s", 0x212A: "k"}


def go_fold_name(name):
    """encoding/json's foldName, exact for comparisons against ASCII field names (keys that fold equal to one)."""
    if name.isascii():
        return name.lower()
    return "".join(c.lower() if c < "\x80" else c for c in name.translate(_GO_ASCII_FOLDS))


def cases_fold(key):
    """golang.org/x/text/cases.Fold(): full Unicode case folding, which str.casefold() implements.

    Not encoding/json's rule: declcfg.Meta decodes a document into map[string]interface{} and extractUniqueMetaKeys
    folds every key this way, rejecting keys that collide ("duplicate keys for key %q: %v") before taking
    schema/package/name, so no "last key wins" applies there (declcfg.builder.meta_fields). Struct decoding uses go_fold_name.
    For the ASCII names schema, package and name both folds match the same keys, so get_ci finds Meta's key.
    """
    return key.casefold()


_FIELD_INDEX = {}


def _folded_fields(fields):
    index = _FIELD_INDEX.get(fields)
    if index is None:
        index = {}
        for f in fields:
            index.setdefault(go_fold_name(f), f)  # encoding/json: the first declared field wins a fold collision
        if len(_FIELD_INDEX) < 1024:
            _FIELD_INDEX[fields] = index
    return index


def fold_matches(obj, fields):
    """Yield (field, value) for every key of the JSON object ``obj`` that encoding/json assigns to one of the struct
    fields ``fields`` (their JSON names, a tuple), in input order.

    encoding/json (decode.go, decodeState.object) reads keys in input order and matches each one to a field
    exactly (``byExactName``), else case-insensitively (``byFoldedName[foldName(key)]``); a field matched again is
    decoded again, so the LAST matching key wins, exact or not. Type errors are saved, not fatal: Go reports the
    first one in input order, which is why type checks must see every match, not only the winner. Keys that are
    not str are skipped (JSON keys are strings).
    """
    folded = None
    for key, value in obj.items():
        if key in fields:
            yield key, value
        elif isinstance(key, str):
            if folded is None:
                folded = _folded_fields(fields)
            name = folded.get(go_fold_name(key))
            if name is not None:
                yield name, value


def fold_lookup(obj, fields, nullable=None):
    """{field: value} as encoding/json leaves the struct fields ``fields`` after decoding ``obj`` (fold_matches).

    ``nullable``: the fields of nil-able Go type (slice, map, pointer, interface, json.RawMessage), reset by a JSON
    null; a null into any other field (string, bool, number, struct) is a no-op, so an earlier value survives and a
    lone null leaves the field unassigned. None: every field is nil-able (a null always overwrites).
    Only assigned fields are in the result.
    """
    result = {}
    folded = None
    for key, value in obj.items():
        if key in fields:
            name = key
        else:
            if not isinstance(key, str):
                continue
            if folded is None:
                folded = _folded_fields(fields)
            name = folded.get(go_fold_name(key))
            if name is None:
                continue
        if value is None and nullable is not None and name not in nullable:
            continue
        result[name] = value
    return result


def get_ci(obj, key, default=None, nullable=False):
    """The value encoding/json decodes into the struct field with JSON name ``key`` (fold_lookup of one field).

    ``nullable=False`` for a string/bool/number/struct field (a null is ignored), True for a slice/map/pointer
    field (a null wins like any value). ``default`` when no key assigns the field.
    """
    found = fold_lookup(obj, (key,), nullable=(key,) if nullable else ())
    return found.get(key, default)


_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


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


# ----------------------------------------------------------------------------------------- encoding

_HTML_ESCAPES = (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"))


def go_json_escape(text, escape_html=True):
    """Turn Python's JSON text (ensure_ascii=False) into encoding/json's: U+2028/U+2029 are always escaped (Go does
    it "unconditionally"), <, > and & only with HTML escaping (json.Marshal's default; opm's encoders turn it off
    with SetEscapeHTML(false))."""
    if "\u2028" in text:
        text = text.replace("\u2028", "\\u2028")
    if "\u2029" in text:
        text = text.replace("\u2029", "\\u2029")
    if escape_html:
        for raw, esc in _HTML_ESCAPES:
            if raw in text:
                text = text.replace(raw, esc)
    return text


def go_json_float(f):
    """Go encoding/json's float64 text: shortest digits, fixed notation for 1e-6 <= |f| < 1e21, else
    exponent notation without a leading zero in the exponent (1e-07 -> 1e-7)."""
    if not math.isfinite(f):
        raise WriteError("json: unsupported value: %s" % ("NaN" if math.isnan(f) else "+Inf" if f > 0 else "-Inf"))
    a = abs(f)
    r = repr(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        if len(r) >= 4 and r[-4] == "e" and r[-3] == "-" and r[-2] == "0":
            r = r[:-2] + r[-1]
        return r
    if "e" in r:
        import decimal  # rare (tiny or huge floats); imported on demand to keep start-up short

        r = format(decimal.Decimal(r), "f")
    if r.endswith(".0"):
        r = r[:-2]
    return r


# Python's C encoder writes floats with repr(), which differs from Go only for integral values ("2.0", "-0.0"),
# exponent forms ("1e-05", "1e+16") and NaN/Infinity. Those are rare (decoders turn integral floats into ints):
# a walk over the containers finds them, and only then is the text re-scanned token by token.
_STRING_OR_PY_FLOAT_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(-?(?:Infinity|NaN|\d+(?:\.\d+(?:e[-+]\d+)?|e[-+]\d+)))')


def _has_repr_only_float(obj):
    stack = [obj]
    pop = stack.pop
    push = stack.extend
    while stack:
        o = pop()
        if isinstance(o, str):
            continue
        if isinstance(o, dict):
            push(o.values())
        elif isinstance(o, (list, tuple)):
            push(o)
        elif isinstance(o, float):
            a = abs(o)
            if not (1e-4 <= a < 1e16) or o.is_integer():  # also true for NaN and infinities
                return True
    return False


def _go_float_token(m):
    token = m.group(1)
    return m.group(0) if token is None else go_json_float(float(token))


def go_marshal(obj, sort_keys=False, escape_html=True):
    """Go's json.Marshal (compact; HTML escaping on by default, off like an Encoder with SetEscapeHTML(false)).

    ``sort_keys`` for values that Go holds as maps (encoding/json sorts map keys bytewise).
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    if _has_repr_only_float(obj):
        text = _STRING_OR_PY_FLOAT_RE.sub(_go_float_token, text)
    return go_json_escape(text, escape_html)


def _unserializable(o):
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


class _NotPlainJSON(Exception):
    """A value the fast encoder leaves to the standard library's (tuples, subclasses, non-string keys)."""


_encode_str = _json_encoder.encode_basestring  # the C implementation when available
_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}


def _plain_scalar(v):
    cls = v.__class__
    if cls is bool or v is None:
        return _JSON_CONSTANTS[v]
    if cls is int:
        return int.__repr__(v)
    if cls is float:
        return go_json_float(v)
    raise _NotPlainJSON()


def _encode_plain(o, indent, append):
    """Append the 4-space-indented JSON of o, a tree of plain dicts/lists/scalars, to a list.

    Same text as the standard library's indenting encoder, which is pure Python and passes every chunk up
    through each nesting level's generator; appending to one list costs O(nodes) and runs ~3x faster.
    indent is the newline plus the indentation of o's own line.
    """
    inner = indent + "    "
    if o.__class__ is dict:
        if not o:
            append("{}")
            return
        sep = "{" + inner
        for k, v in o.items():
            if k.__class__ is not str:
                raise _NotPlainJSON()
            cls = v.__class__
            if cls is str:
                append(sep + _encode_str(k) + ": " + _encode_str(v))
            elif cls is dict or cls is list:
                append(sep + _encode_str(k) + ": ")
                _encode_plain(v, inner, append)
            else:
                append(sep + _encode_str(k) + ": " + _plain_scalar(v))
            sep = "," + inner
        append(indent + "}")
        return
    if not o:
        append("[]")
        return
    sep = "[" + inner
    for v in o:
        cls = v.__class__
        if cls is str:
            append(sep + _encode_str(v))
        elif cls is dict or cls is list:
            append(sep)
            _encode_plain(v, inner, append)
        else:
            append(sep + _plain_scalar(v))
        sep = "," + inner
    append(indent + "]")


def _json_text(obj):
    """json.dumps(obj, indent=4, ensure_ascii=False) with Go's float formatting."""
    if obj.__class__ is dict or obj.__class__ is list:
        parts = []
        try:
            _encode_plain(obj, "\n", parts.append)
            return "".join(parts)
        except _NotPlainJSON:
            pass  # the standard encoder below handles (or rejects) every other value
        except RecursionError:
            raise InvalidInputError("nesting too deep") from None
    make = getattr(_json_encoder, "_make_iterencode", None)
    if make is None:  # pragma: no cover - every CPython 3 has it
        return json.dumps(obj, indent=4, ensure_ascii=False, allow_nan=False)
    iterencode = make({}, _unserializable, _json_encoder.encode_basestring, "    ", go_json_float, ": ", ",",
                      False, False, False)
    return "".join(iterencode(obj, 0))


def go_marshal_indent(obj, escape_html=True):
    """json.MarshalIndent(obj, "", "    ") (no trailing newline); escape_html=False as SetEscapeHTML(false).

    Keys keep the dict's order (callers sort the values Go holds as maps). Raises TypeError/ValueError for values
    JSON cannot hold, WriteError for NaN/Inf.
    """
    return go_json_escape(_json_text(obj), escape_html)
