# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write DeclarativeConfigs byte-for-byte like opm's declcfg.WriteJSON / WriteYAML / WriteFS.

Ordering follows opm's writeToEncoder (fbc.md section 4): packages sorted by name; per package the package
blob(s), channels by name, bundles by name, that package's others (stable by schema), deprecations; then the
package-less others. Each object is first shaped like Go's encoding/json output of the declcfg struct (field
order, omitempty). JSON is then indented with 4 spaces; YAML goes through a port of go-yaml v2's emitter
(sigs.k8s.io/yaml.JSONToYAML): sorted keys, 2-space indent, v2 quoting/folding rules and `\\U` escapes for
characters outside the BMP.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import json
import math
import os
import re

from ansible_collections.kubeforge.operators.plugins.module_utils import files
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import goyaml
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import UnsafeNameError, WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.gosemantics import (
    get_ci,
    go_marshal_indent,
    go_sort_key,
)

# ----------------------------------------------------------------------------------------- Go struct shaping


def _props(props):
    return [{"type": p.get("type") or "", "value": p.get("value")} for p in props]


def go_package(p):
    out = {"schema": p.get("schema") or "", "name": p.get("name") or "",
           "defaultChannel": p.get("defaultChannel") or ""}
    icon = p.get("icon")
    if icon is not None:
        out["icon"] = {"base64data": icon.get("base64data"), "mediatype": icon.get("mediatype") or ""}
    if p.get("description"):
        out["description"] = p["description"]
    if p.get("properties"):
        out["properties"] = _props(p["properties"])
    return out


def _go_entry(e):
    out = {"name": e.get("name") or ""}
    if e.get("replaces"):
        out["replaces"] = e["replaces"]
    if e.get("skips"):
        out["skips"] = e["skips"]
    if e.get("skipRange"):
        out["skipRange"] = e["skipRange"]
    return out


def go_channel(c):
    entries = c.get("entries")
    out = {"schema": c.get("schema") or "", "name": c.get("name") or "", "package": c.get("package") or "",
           "entries": None if entries is None else [_go_entry(e) for e in entries]}
    if c.get("properties"):
        out["properties"] = _props(c["properties"])
    return out


def go_bundle(b):
    out = {"schema": b.get("schema") or ""}
    if b.get("name"):
        out["name"] = b["name"]
    if b.get("package"):
        out["package"] = b["package"]
    out["image"] = b.get("image") or ""
    if b.get("properties"):
        out["properties"] = _props(b["properties"])
    if b.get("relatedImages"):
        out["relatedImages"] = [{"name": r.get("name") or "", "image": r.get("image") or ""}
                                for r in b["relatedImages"]]
    return out


def _go_deprecation_entry(e):
    ref = e.get("reference") or {}
    out_ref = {"schema": ref.get("schema") or ""}
    if ref.get("name"):
        out_ref["name"] = ref["name"]
    return {"reference": out_ref, "message": e.get("message") or ""}


def go_deprecation(d):
    entries = d.get("entries")
    return {"schema": d.get("schema") or "", "package": d.get("package") or "",
            "entries": None if entries is None else [_go_deprecation_entry(e) for e in entries]}


def meta_str(obj, key):
    """Meta.Schema/Package/Name of an object. Meta folds keys with cases.Fold and rejects colliding ones; for these
    three ASCII names that fold agrees with encoding/json's, so the struct-field lookup finds the same key."""
    value = get_ci(obj, key)
    return value if isinstance(value, str) else ""


def ordered_objects(cfg):
    """Yield the Go-shaped objects of cfg in opm's writeToEncoder order."""
    by_pkg = {}

    def bucket(name):
        entry = by_pkg.get(name)
        if entry is None:
            entry = by_pkg[name] = ([], [], [], [], [])
        return entry

    for p in cfg.packages:
        if p.get("name"):
            bucket(p["name"])[0].append(p)
    for c in cfg.channels:
        if c.get("package"):
            bucket(c["package"])[1].append(c)
    for b in cfg.bundles:
        if b.get("package"):
            bucket(b["package"])[2].append(b)
    root_others = []
    for o in cfg.others:
        pkg = meta_str(o, "package")
        if pkg:
            bucket(pkg)[3].append(o)
        else:
            root_others.append(o)
    for d in cfg.deprecations:
        if d.get("package"):
            bucket(d["package"])[4].append(d)

    for name in sorted(by_pkg, key=go_sort_key):
        packages, channels, bundles, others, deprecations = by_pkg[name]
        for p in packages:
            yield go_package(p)
        for c in sorted(channels, key=lambda c: go_sort_key(c.get("name") or "")):
            yield go_channel(c)
        for b in sorted(bundles, key=lambda b: go_sort_key(b.get("name") or "")):
            yield go_bundle(b)
        yield from sorted(others, key=lambda o: go_sort_key(meta_str(o, "schema")))
        for d in deprecations:
            yield go_deprecation(d)
    yield from root_others


# ----------------------------------------------------------------------------------------- JSON

def json_document(obj, escape_html=False):
    """One object as Go's json.Encoder with SetIndent("", "    ") writes it (trailing newline included)."""
    try:
        return go_marshal_indent(obj, escape_html) + "\n"
    except (TypeError, ValueError) as e:
        raise WriteError("json: unsupported value: %s" % e) from None


def iter_json(cfg, escape_html=False):
    """opm's WriteJSON, one document string at a time."""
    for obj in ordered_objects(cfg):
        yield json_document(obj, escape_html)


def dumps_json(cfg, escape_html=False):
    """opm's WriteJSON as a string. escape_html=False is what opm uses (SetEscapeHTML(false))."""
    return "".join(iter_json(cfg, escape_html))


# ----------------------------------------------------------------------------------------- YAML (go-yaml v2)

_BEST_WIDTH = 80
_BEST_INDENT = 2

_BREAKS = "\r\n\x85\u2028\u2029"
# Characters go-yaml v2's is_printable rejects (tab, CR, C1 controls, BOM, U+FFFE/F, and everything outside the BMP).
# Written as positive classes: the negated forms ("[^\n\x20-\x7e\xa0-\ud7ff...]") match the same code points
# (checked over all of U+0000..U+10FFFF) but take ~8 ms to compile at every start-up. ASCII text, the usual case,
# is checked with a tiny class.
_SPECIAL_RE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff\U00010000-\U0010ffff]")
_SPECIAL_ASCII_RE = re.compile("[\x00-\x09\x0b-\x1f\x7f]")
_DQ_ESCAPE_RE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufeff\ufffe\uffff\U00010000-\U0010ffff\"\\\\\u2028\u2029]")
_ANY_BREAK_RE = re.compile("[\r\n\x85\u2028\u2029]")
# Strings that are certainly plain scalars without folding: no spaces, indicators or quotes, first character
# a letter (the only letter-initial non-strings are the bool/null words checked separately).
_SAFE_PLAIN_RE = re.compile(r"[A-Za-z][A-Za-z0-9._/@+=-]*\Z")
_BREAK_SPACE_RE = re.compile("[\r\n\x85\u2028\u2029] ")
_SPACE_BREAK_RE = re.compile(" [\r\n\x85\u2028\u2029]")
_COLON_WS_RE = re.compile(":(?:[ \t]|\\Z)")
_HASH_AFTER_WS_RE = re.compile("[ \t\r\n\x85\u2028\u2029\x00]#")
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")

_DQ_SIMPLE = {"\x00": "0", "\x07": "a", "\x08": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r",
              "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P"}


def resolves_to_non_string(s):
    """True if go-yaml v2 would read the plain scalar s as something other than a string."""
    return goyaml.resolve(s)[0] != goyaml.STR


_NEL_RUN_RE = re.compile(" *\x85[ \x85]*")


def _fold_nel(value):
    """opm writes YAML by re-parsing its JSON as YAML: a raw NEL (U+0085, the only line break Go's JSON encoder
    leaves unescaped) is then folded like a line break inside a double-quoted scalar. Reproduce that change."""
    def repl(m):
        breaks = m.group(0).count("\x85")
        return " " if breaks == 1 else "\n" * (breaks - 1)
    return _NEL_RUN_RE.sub(repl, value)


def _analyze(value):
    """go-yaml v2 yaml_emitter_analyze_scalar -> (multiline, block_plain, single_quoted, block_allowed)."""
    if not value:
        return False, True, True, False
    # Only block-context indicators matter: opm's YAML is always block style.
    block_ind = value[:3] in ("---", "...")
    first = value[0]
    followed_ws = len(value) == 1 or value[1] in " \t"
    if first in _FIRST_INDICATORS or (first in "?:-" and followed_ws):
        block_ind = True
    rest = value[1:]
    if not block_ind and rest:
        if ":" in rest and _COLON_WS_RE.search(rest):
            block_ind = True
        elif "#" in rest and _HASH_AFTER_WS_RE.search(value):
            block_ind = True
    special = (_SPECIAL_ASCII_RE if value.isascii() else _SPECIAL_RE).search(value) is not None
    line_breaks = _ANY_BREAK_RE.search(value) is not None
    block_plain = single_ok = block_ok = True
    if value[0] == " " or value[-1] == " " or value[0] in _BREAKS or value[-1] in _BREAKS:
        block_plain = False
    if value[-1] == " ":
        block_ok = False
    if line_breaks and _BREAK_SPACE_RE.search(value):
        block_plain = single_ok = False
    if special or (line_breaks and _SPACE_BREAK_RE.search(value)):
        block_plain = single_ok = block_ok = False
    if line_breaks or block_ind:
        block_plain = False
    return line_breaks, block_plain, single_ok, block_ok


def _format_go_float(f):
    """strconv.FormatFloat(f, 'g', -1, 64) as go-yaml v2 prints float64 values."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    if f == 0:
        return "-0" if str(f).startswith("-") else "0"
    r = repr(f)
    sign = ""
    if r[0] == "-":
        sign, r = "-", r[1:]
    mant, _sep, exp = r.partition("e")
    exp = int(exp) if exp else 0
    int_part, _sep, frac = mant.partition(".")
    digits = (int_part + frac).lstrip("0")
    # decimal exponent of the first significant digit
    point = len(int_part) + exp if int_part != "0" else exp - (len(frac) - len(frac.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    x = point - 1
    # Go's shortest 'g' switches to exponent form at exponent < -4 or >= 6.
    if x < -4 or x >= 6:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return "%s%se%s%02d" % (sign, m, "-" if x < 0 else "+", abs(x))
    if point <= 0:
        return sign + "0." + "0" * (-point) + digits
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return sign + digits[:point] + "." + digits[point:]


def _letter(ch):
    return ch.isalpha()


def _key_less(a, b):
    """go-yaml v2 keyList.Less for two string keys (natural order)."""
    for i in range(min(len(a), len(b))):
        ca, cb = a[i], b[i]
        if ca == cb:
            continue
        al, bl = _letter(ca), _letter(cb)
        if al and bl:
            return ca < cb
        if al or bl:
            return bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + (ord(a[ai]) - 48 if "0" <= a[ai] <= "9" else 0)
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + (ord(b[bi]) - 48 if "0" <= b[bi] <= "9" else 0)
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return len(a) < len(b)


def _key_cmp(a, b):
    if _key_less(a, b):
        return -1
    if _key_less(b, a):  # pylint: disable=arguments-out-of-order  # swapped on purpose: is b < a?
        return 1
    return 0


_KEY_ORDER_CACHE = {}


def yaml_sorted_keys(keys):
    """Keys in go-yaml v2 map order; memoised because catalogs repeat the same key sets constantly."""
    k = tuple(keys)
    order = _KEY_ORDER_CACHE.get(k)
    if order is None:
        if all(x.isalpha() for x in k):
            order = sorted(k)
        else:
            order = sorted(k, key=functools.cmp_to_key(_key_cmp))
        if len(_KEY_ORDER_CACHE) < 50000:
            _KEY_ORDER_CACHE[k] = order
    return order


class _YAMLEmitter:
    """Block-style subset of go-yaml v2's emitter state machine, enough for JSON-shaped documents."""

    __slots__ = ("out", "column", "indent", "whitespace", "indention")

    def __init__(self):
        self.out = []
        self.column = 0
        self.indent = -1
        self.whitespace = True
        self.indention = True

    # -- low level
    def put(self, s):
        self.out.append(s)
        self.column += len(s)

    def put_break(self):
        self.out.append("\n")
        self.column = 0

    def write_indent(self):
        indent = self.indent if self.indent > 0 else 0
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        if self.column < indent:
            self.put(" " * (indent - self.column))
        self.whitespace = True
        self.indention = True

    def write_indicator(self, indicator, need_whitespace, is_whitespace, is_indention):
        if need_whitespace and not self.whitespace:
            self.put(" ")
        self.put(indicator)
        self.whitespace = is_whitespace
        self.indention = self.indention and is_indention

    def increase_indent(self, flow, indentless):
        old = self.indent
        if self.indent < 0:
            self.indent = _BEST_INDENT if flow else 0
        elif not indentless:
            self.indent += _BEST_INDENT
        return old

    # -- nodes
    def emit_node(self, value, mapping=False, sequence=False, simple_key=False):
        if isinstance(value, dict):
            if not value:
                self.write_indicator("{", True, True, False)
                self.write_indicator("}", False, False, False)
            else:
                self.emit_mapping(value)
        elif isinstance(value, list):
            if not value:
                self.write_indicator("[", True, True, False)
                self.write_indicator("]", False, False, False)
            else:
                self.emit_sequence(value, mapping)
        elif isinstance(value, str):
            self.emit_string(value, simple_key)
        else:
            self.emit_plain_token(self._scalar_text(value))

    @staticmethod
    def _scalar_text(value):
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, int):
            if goyaml.INT64_MIN <= value <= goyaml.UINT64_MAX:
                return str(value)
            return _format_go_float(float(value))
        if isinstance(value, float):
            return _format_go_float(value)
        raise WriteError("cannot encode value of type %s as YAML" % type(value).__name__)

    def emit_mapping(self, mapping):
        old = self.increase_indent(False, False)
        if any("\x85" in k for k in mapping):
            # keys fold like values (see _fold_nel); later duplicates win as in go-yaml's map decoding
            mapping = {_fold_nel(k) if "\x85" in k else k: v for k, v in mapping.items()}
        for key in yaml_sorted_keys(mapping):
            self.write_indent()
            simple = (len(key) <= 128 and _SAFE_PLAIN_RE.match(key) is not None) or not (
                _ANY_BREAK_RE.search(key) is not None or len(key.encode("utf-8")) > 128)
            if not simple:
                # go-yaml's check_simple_key failed: explicit "? key" / ": value" form
                self.write_indicator("?", True, False, True)
                self.emit_node(key, mapping=True)
                self.write_indent()
                self.write_indicator(":", True, False, True)
            else:
                self.emit_node(key, mapping=True, simple_key=True)
                self.write_indicator(":", False, False, False)
            self.emit_node(mapping[key], mapping=True)
        self.indent = old

    def emit_sequence(self, seq, mapping_context):
        old = self.increase_indent(False, mapping_context and not self.indention)
        for item in seq:
            self.write_indent()
            self.write_indicator("-", True, False, True)
            self.emit_node(item, sequence=True)
        self.indent = old

    def emit_plain_token(self, text):
        # numbers/bools/null: short plain scalars without spaces
        old = self.increase_indent(True, False)
        if not self.whitespace:
            self.put(" ")
        self.put(text)
        self.whitespace = False
        self.indention = False
        self.indent = old

    def emit_string(self, value, simple_key):
        if "\x85" in value:
            value = _fold_nel(value)
        if _SAFE_PLAIN_RE.match(value) is not None and value not in goyaml.BOOL_VALUES and value not in goyaml.NULL_VALUES:
            # fast path: single plain token, nothing to quote or fold
            if not self.whitespace:
                self.out.append(" ")
                self.column += 1
            self.out.append(value)
            self.column += len(value)
            self.whitespace = False
            self.indention = False
            return
        multiline, block_plain, single_ok, block_ok = _analyze(value)
        if "\n" in value:
            style = "|"
        elif value and not resolves_to_non_string(value) and not goyaml.BASE60_FLOAT_RE.match(value):
            style = ""
        else:
            style = '"'
        if simple_key and multiline:
            style = '"'
        if style == "":
            if not block_plain or (not value and simple_key):
                style = "'"
        if style == "'" and not single_ok:
            style = '"'
        if style == "|" and (not block_ok or simple_key):
            style = '"'
        old = self.increase_indent(True, False)
        allow_breaks = not simple_key
        if style == "":
            self.write_plain(value, allow_breaks)
        elif style == "'":
            self.write_single_quoted(value, allow_breaks)
        elif style == '"':
            self.write_double_quoted(value, allow_breaks)
        else:
            self.write_literal(value)
        self.indent = old

    def write_plain(self, value, allow_breaks):
        if not self.whitespace:
            self.put(" ")
        if not allow_breaks or self.column + len(value) <= _BEST_WIDTH + 1 or " " not in value:
            self.put(value)
        else:
            spaces = False
            i, n = 0, len(value)
            while i < n:
                ch = value[i]
                if ch == " ":
                    if not spaces and self.column > _BEST_WIDTH and not (i + 1 < n and value[i + 1] == " "):
                        self.write_indent()
                    else:
                        self.put(ch)
                    spaces = True
                    i += 1
                else:
                    j = value.find(" ", i)
                    if j < 0:
                        j = n
                    self.put(value[i:j])
                    self.indention = False
                    spaces = False
                    i = j
        self.whitespace = False
        self.indention = False

    def write_single_quoted(self, value, allow_breaks):
        self.write_indicator("'", True, False, False)
        if ((not allow_breaks or self.column + len(value) <= _BEST_WIDTH + 1 or " " not in value)
                and _ANY_BREAK_RE.search(value) is None):
            self.put(value.replace("'", "''"))
        else:
            # port of yaml_emitter_write_single_quoted_scalar: folds at spaces past the width, and writes
            # line-break characters (only U+2028/U+2029 can get here) followed by re-indentation
            spaces = False
            breaks = False
            n = len(value)
            for i, ch in enumerate(value):
                if ch == " ":
                    if (allow_breaks and not spaces and self.column > _BEST_WIDTH and 0 < i < n - 1
                            and value[i + 1] != " "):
                        self.write_indent()
                    else:
                        self.put(ch)
                    spaces = True
                elif ch in _BREAKS:
                    if not breaks and ch == "\n":
                        self.put_break()
                    if ch == "\n":
                        self.put_break()
                    else:
                        self.out.append(ch)
                        self.column = 0
                    self.indention = True
                    breaks = True
                else:
                    if breaks:
                        self.write_indent()
                    self.put("''" if ch == "'" else ch)
                    self.indention = False
                    spaces = False
                    breaks = False
        self.write_indicator("'", False, False, False)
        self.whitespace = False
        self.indention = False

    @staticmethod
    def _escape(ch):
        short = _DQ_SIMPLE.get(ch)
        if short is not None:
            return "\\" + short
        o = ord(ch)
        if o <= 0xFF:
            return "\\x%02X" % o
        if o <= 0xFFFF:
            return "\\u%04X" % o
        return "\\U%08X" % o

    def write_double_quoted(self, value, allow_breaks):
        self.write_indicator('"', True, False, False)
        needs_escape = _DQ_ESCAPE_RE.search(value) is not None
        if not needs_escape and (not allow_breaks or " " not in value
                                 or self.column + len(value) <= _BEST_WIDTH + 1):
            self.put(value)
        else:
            spaces = False
            n = len(value)
            put = self.put
            for i, ch in enumerate(value):
                if ch == " ":
                    if allow_breaks and not spaces and self.column > _BEST_WIDTH and 0 < i < n - 1:
                        self.write_indent()
                        if value[i + 1] == " ":
                            put("\\")
                    else:
                        put(" ")
                    spaces = True
                elif needs_escape and _DQ_ESCAPE_RE.match(ch):
                    put(self._escape(ch))
                    spaces = False
                else:
                    put(ch)
                    spaces = False
        self.write_indicator('"', False, False, False)
        self.whitespace = False
        self.indention = False

    def write_literal(self, value):
        self.write_indicator("|", True, False, False)
        if value[0] in " " + _BREAKS:
            self.write_indicator(str(_BEST_INDENT), False, False, False)
        if value[-1] not in _BREAKS:
            self.write_indicator("-", False, False, False)
        elif len(value) == 1 or value[-2] in _BREAKS:
            self.write_indicator("+", False, False, False)
        self.put_break()
        self.indention = True
        self.whitespace = True
        # go-yaml writes line by line: break characters end a line; indentation only precedes content.
        for line, brk in _split_lines(value):
            if line:
                self.write_indent()
                self.put(line)
                self.indention = False
            if brk:
                if brk == "\n":
                    self.put_break()
                else:
                    self.out.append(brk)
                    self.column = 0
                self.indention = True

    def document(self, obj):
        self.emit_node(obj)
        # document end: implicit, so only a final line break
        self.write_indent()
        # go-yaml's encoder.finish() clears open_ended before the stream end, so no "..." is ever written
        return "".join(self.out)


_LINE_SPLIT_RE = re.compile("([\r\n\x85\u2028\u2029])")


def _split_lines(value):
    parts = _LINE_SPLIT_RE.split(value)
    for i in range(0, len(parts), 2):
        yield parts[i], parts[i + 1] if i + 1 < len(parts) else ""


def yaml_document(obj):
    """One object as sigs.k8s.io/yaml.JSONToYAML (go-yaml v2) prints it, without the leading '---'."""
    return _YAMLEmitter().document(obj)


def iter_yaml(cfg):
    """opm's WriteYAML, one document string at a time (each prefixed with '---\\n')."""
    for obj in ordered_objects(cfg):
        yield "---\n" + yaml_document(obj)


def dumps_yaml(cfg):
    """opm's WriteYAML as a string."""
    return "".join(iter_yaml(cfg))


# ----------------------------------------------------------------------------------------- files

def check_path_component(name, what="package"):
    """Reject names that would escape or break a directory layout (opm: must be a single local path element)."""
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise UnsafeNameError("invalid %s name %s: must be a single local path element"
                              % (what, json.dumps(name, ensure_ascii=False)))
    return name


_FORMATS = {"json": (iter_json, ".json"), "yaml": (iter_yaml, ".yaml")}


def iter_format(cfg, output_format, escape_html=False):
    """opm's WriteJSON or WriteYAML (output_format json|yaml), one document string at a time."""
    if output_format == "json":
        return iter_json(cfg, escape_html)
    if output_format == "yaml":
        return iter_yaml(cfg)
    raise WriteError("invalid output format %s" % json.dumps(output_format))


def dumps(cfg, output_format="yaml"):
    return "".join(iter_format(cfg, output_format))


def write_file(cfg, path, output_format="yaml", output=None):
    """opm's WriteJSON/WriteYAML into the file ``path``, streamed through a files.FileOutput (``output``: the
    caller's, committed by the caller; None: one of our own, committed here). Returns True when the file changed.
    Filesystem errors become WriteError naming the file."""
    try:
        if output is None:
            return files.write_file(path, iter_format(cfg, output_format))
        return output.write(path, iter_format(cfg, output_format))
    except OSError as e:
        raise WriteError("write file %s: %s" % (json.dumps(path), e.strerror or e), path=path) from None


def split_by_package(cfg):
    """(sorted package names, {package: DeclarativeConfig}, package-less others) like opm's configsByPackage."""
    by_pkg = {}

    def get(name):
        sub = by_pkg.get(name)
        if sub is None:
            sub = by_pkg[name] = DeclarativeConfig()
        return sub

    for p in cfg.packages:
        if p.get("name"):
            get(p["name"]).packages.append(p)
    for c in cfg.channels:
        if c.get("package"):
            get(c["package"]).channels.append(c)
    for b in cfg.bundles:
        if b.get("package"):
            get(b["package"]).bundles.append(b)
    root_others = []
    for o in cfg.others:
        pkg = meta_str(o, "package")
        if pkg:
            get(pkg).others.append(o)
        else:
            root_others.append(o)
    for d in cfg.deprecations:
        if d.get("package"):
            get(d["package"]).deprecations.append(d)
    return sorted(by_pkg, key=go_sort_key), by_pkg, root_others


def fs_layout(cfg, root_dir, output_format="yaml"):
    """opm's WriteFS layout: [(path, DeclarativeConfig)] = <root>/<pkg>/catalog.<ext> per package, plus
    <root>/catalog.<ext> for package-less others. Every package name is checked first (UnsafeNameError)."""
    if output_format not in _FORMATS:
        raise WriteError("invalid output format %s" % json.dumps(output_format))
    name = "catalog" + _FORMATS[output_format][1]
    names, by_pkg, root_others = split_by_package(cfg)
    for pkg in names:
        check_path_component(pkg, "package")
    layout = [(os.path.join(root_dir, pkg, name), by_pkg[pkg]) for pkg in names]
    if root_others:
        layout.append((os.path.join(root_dir, name), DeclarativeConfig(others=root_others)))
    return layout


def write_fs(cfg, root_dir, output_format="yaml", output=None):
    """opm's WriteFS (see fs_layout) through a files.FileOutput: every file is staged before any is replaced.

    ``output``: the caller's FileOutput (the caller commits); None: one of our own, committed here.
    Returns the paths of the layout.
    """
    layout = fs_layout(cfg, root_dir, output_format)
    own = output is None
    if own:
        output = files.FileOutput()
    try:
        for path, part in layout:
            write_file(part, path, output_format, output=output)
        if own:
            output.commit()
    finally:
        if own:
            output.discard()
    return [path for path, _part in layout]
