# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-yaml v2's emitter as sigs.k8s.io/yaml.JSONToYAML drives it: ``yaml_document`` - sorted keys
(``yaml_sorted_keys``), 2-space indent, v2 quoting/folding rules and `\\U` escapes for characters outside the BMP;
plain scalars that would read back as another type (``yaml_types.resolve``) are quoted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import math
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_types import (
    BASE60_FLOAT_RE,
    BOOL_VALUES,
    INT64_MIN,
    NULL_VALUES,
    STR,
    UINT64_MAX,
    resolve,
)

# ----------------------------------------------------------------------------------------- encoding (emitter)

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
    return resolve(s)[0] != STR


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
            if INT64_MIN <= value <= UINT64_MAX:
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
        if _SAFE_PLAIN_RE.match(value) is not None and value not in BOOL_VALUES and value not in NULL_VALUES:
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
        elif value and not resolves_to_non_string(value) and not BASE60_FLOAT_RE.match(value):
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
