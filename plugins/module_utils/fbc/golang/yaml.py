# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-yaml v2 as sigs.k8s.io/yaml uses it, the YAML side of the Go behaviours opm's bytes depend on.

opm reads and writes YAML through sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 flavoured), which types plain scalars
differently from PyYAML: `y`/`n` are booleans, `1:20` and `1e3` are not what PyYAML thinks, timestamps stay
strings, integers follow Go's ParseInt(s, 0, 64) syntax.

- typing: ``resolve`` (go-yaml v2's resolve.go), ``is_timestamp``, ``go_parse_int`` and the value tables;
- decoding: ``_FBCYAMLLoader`` / ``_load_yaml_document``, a PyYAML loader producing the JSON-compatible data
  sigs.k8s.io/yaml.Unmarshal yields (numbers as float64, map keys sorted and stringified, bounded alias expansion);
- encoding: ``yaml_document``, a port of go-yaml v2's emitter as sigs.k8s.io/yaml.JSONToYAML drives it: sorted
  keys (``yaml_sorted_keys``), 2-space indent, v2 quoting/folding rules and `\\U` escapes for characters outside
  the BMP.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import calendar
import copy
import functools
import math
import re

try:
    import yaml
except ImportError:  # PyYAML ships with ansible-core; the modules report it with missing_required_lib
    import traceback

    yaml = None
    HAS_YAML = False
    YAML_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_YAML = True
    YAML_IMPORT_ERROR = None

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import WriteError

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


# ----------------------------------------------------------------------------------------- decoding

# Extra nodes that aliases may add to one document. Real catalogs use no aliases at all; this only stops
# "billion laughs" documents before they are expanded into memory.
ALIAS_EXPANSION_BUDGET = 10000

HAVE_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))
_BaseSafeLoader = getattr(yaml, "CSafeLoader", None) if HAVE_LIBYAML else None
if _BaseSafeLoader is None:  # pragma: no cover - depends on the PyYAML build
    # without PyYAML the loader class below is a placeholder; YAML input is refused by declcfg.documents._require_yaml()
    _BaseSafeLoader = yaml.SafeLoader if yaml is not None else object

_MAX_EXACT_FLOAT_INT = 2 ** 53


def _float_to_go_int(f):
    """The integer Go prints for an integral float64: its shortest decimal digits padded with zeros
    (12345678901234567890 -> 12345678901234567000), not the exact binary value Python's int() gives."""
    import decimal  # rare (integral floats beyond 2**53); imported on demand to keep start-up short

    return int(decimal.Decimal(repr(f)))


def _go_number(value):
    """Mimic Go decoding every JSON number into float64 (opm's Meta map), then re-encoding it."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_MAX_EXACT_FLOAT_INT <= value <= _MAX_EXACT_FLOAT_INT:
            return value
        try:
            f = float(value)
        except OverflowError:
            raise InvalidInputError("json: unsupported value: number out of float64 range") from None
        return _float_to_go_int(f) if abs(f) < 1e21 else f
    if not math.isfinite(value):
        raise InvalidInputError("json: unsupported value: %s" % ("NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"))
    if value.is_integer() and abs(value) < 1e21:
        return int(value) if abs(value) <= _MAX_EXACT_FLOAT_INT else _float_to_go_int(value)
    return value


def _go_map_key(key):
    # sigs.k8s.io/yaml turns non-string YAML keys into strings when converting to JSON.
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        key = _go_number(key)
    return str(key)


_TAG_PREFIX = "tag:yaml.org,2002:"


class _FBCYAMLLoader(_BaseSafeLoader):
    """Safe loader producing JSON-compatible data the way sigs.k8s.io/yaml (go-yaml v2) does.

    The composer calls resolve/descend_resolver/ascend_resolver once per node. As Python methods they took ~40 %
    of a load, so they are C builtins taking the same arguments: a node without an explicit tag gets
    slice(kind, value, implicit) as its tag, and the converter below reads implicit (the slice's step) itself,
    typing plain scalars with go-yaml v2's rules (resolve); PyYAML's YAML 1.1 resolvers are never
    consulted. No path resolvers are registered, so descending needs no bookkeeping.
    """

    resolve = slice
    descend_resolver = slice
    ascend_resolver = tuple


def _is_plain(tag):
    """A scalar written plain (untagged): its type comes from its text."""
    return tag.__class__ is slice and tag.step[0]


if yaml is not None:
    _SCALAR_NODE = yaml.ScalarNode
    _MAPPING_NODE = yaml.MappingNode
    _SEQUENCE_NODE = yaml.SequenceNode
else:  # pragma: no cover - PyYAML missing: no node is ever built (YAML input is refused by declcfg.documents._require_yaml())
    _SCALAR_NODE = _MAPPING_NODE = _SEQUENCE_NODE = None
_MAP_TAG = _TAG_PREFIX + "map"
_SET_TAG = _TAG_PREFIX + "set"
_SEQ_TAG = _TAG_PREFIX + "seq"
_HINT_CHARS = HINT_CHARS
_PLAIN_CONVERTERS = {
    STR: lambda v: v,
    # go-yaml v2 keeps timestamp-looking scalars as strings when decoding into interface{}
    TIMESTAMP: lambda v: v,
    MERGE: lambda v: v,
    NULL: lambda v: None,
    BOOL: lambda v: v,
    INT: _go_number,
    FLOAT: _go_number,
}


class _Converter:
    """Turns a composed node graph into plain data much faster than PyYAML's generic constructor.

    Aliases make the composer reuse node objects; every reuse is counted with the size of the subtree it
    expands to, so "billion laughs" documents fail once ALIAS_EXPANSION_BUDGET extra nodes are reached,
    before anything big is built. Explicit tags (!!binary, !!int "1", ...) use the loader's constructor table.
    """

    def __init__(self, loader):
        self.loader = loader
        self.done = {}  # id(collection node) -> (value, expanded size)
        self.expanded = 0
        self.size = 0

    def _plain(self, value, node):
        kind, typed = resolve(value)
        if kind == FLOAT:
            try:
                return _go_number(typed)
            except ValueError as e:
                raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None
        return _PLAIN_CONVERTERS[kind](typed)

    def convert(self, node):
        cls = node.__class__
        if cls is _SCALAR_NODE:
            self.size += 1
            tag = node.tag
            if tag.__class__ is slice:
                value = node.value
                if tag.step[0] and not (value and value[0] not in _HINT_CHARS):
                    return self._plain(value, node)
                return value
            return self._explicit(node)
        seen = self.done.get(id(node))
        if seen is not None:
            self.expanded += seen[1]
            self.size += seen[1]
            if self.expanded > ALIAS_EXPANSION_BUDGET:
                raise AliasBudgetExceeded()
            return copy.deepcopy(seen[0])
        start = self.size
        tag = node.tag
        implicit = tag.__class__ is slice
        if cls is _MAPPING_NODE and (implicit or tag == _MAP_TAG or tag == _SET_TAG):
            value = self._mapping(node)
        elif cls is _SEQUENCE_NODE and (implicit or tag == _SEQ_TAG):
            convert = self.convert
            value = [convert(child) for child in node.value]
        elif cls is _MAPPING_NODE or cls is _SEQUENCE_NODE:
            value = self._explicit(node)
        else:
            raise yaml.constructor.ConstructorError(None, None, "unexpected node %s" % cls.__name__, node.start_mark)
        self.size += 1
        self.done[id(node)] = (value, self.size - start)
        return value

    def _mapping(self, node):
        out = {}
        convert = self.convert
        scalar, hint = _SCALAR_NODE, _HINT_CHARS
        for key_node, value_node in node.value:
            # inline fast paths for the overwhelmingly common plain/quoted string keys and values
            tag = key_node.tag
            if key_node.__class__ is scalar and tag.__class__ is slice and tag.step[0]:
                key = key_node.value
                if key == "<<":
                    return self._merged_mapping(node)
                self.size += 1
                if not key or key[0] in hint:
                    key = _go_map_key(self._plain(key, key_node))
            else:
                key = convert(key_node)
                if key.__class__ is not str:
                    if isinstance(key, (list, dict)):
                        raise yaml.constructor.ConstructorError(None, None, "found unhashable key", key_node.start_mark)
                    key = _go_map_key(key)
            if value_node.__class__ is scalar:
                tag = value_node.tag
                if tag.__class__ is slice:
                    value = value_node.value
                    if not tag.step[0] or (value and value[0] not in hint):
                        self.size += 1
                        out[key] = value
                        continue
            out[key] = convert(value_node)
        # keys sorted like Go's encoding of a map (later duplicates already won)
        return dict(sorted(out.items()))

    def _merged_mapping(self, node):
        _retag_merge_keys(node)
        self.loader.flatten_mapping(node)
        return self._mapping(node)

    def _explicit(self, node):
        fn = self.loader.yaml_constructors.get(node.tag)
        if fn is None:
            # go-yaml v2 ignores unknown local tags and decodes by node kind
            if node.__class__ is _SCALAR_NODE:
                return node.value
            if node.__class__ is _SEQUENCE_NODE:
                return [self.convert(child) for child in node.value]
            node = yaml.MappingNode(_TAG_PREFIX + "map", node.value, node.start_mark, node.end_mark)
            return self.convert(node)
        return fn(self, node)


class AliasBudgetExceeded(KubeforgeError):
    """A document whose aliases expand beyond ALIAS_EXPANSION_BUDGET nodes (declcfg.documents reports it as a
    LoadError naming the file and document)."""


def _retag_merge_keys(node):
    """Let PyYAML's flatten_mapping recognise our plain '<<' keys as merge keys (go-yaml v2 merges them too)."""
    for key_node, _value_node in node.value:
        if key_node.__class__ is _SCALAR_NODE and _is_plain(key_node.tag) and key_node.value == "<<":
            key_node.tag = _TAG_PREFIX + "merge"


def _load_yaml_document(text, loader_class=None):
    loader = (loader_class or _FBCYAMLLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return _Converter(loader).convert(node)
    finally:
        loader.dispose()


def _scalar(node):
    if node.__class__ is not _SCALAR_NODE:
        raise yaml.constructor.ConstructorError(None, None, "expected a scalar node, but found %s" % node.id,
                                                node.start_mark)
    return node.value


def _construct_int(conv, node):
    value = _scalar(node)
    n = go_parse_int(value.replace("_", ""))
    if n is None:
        raise yaml.constructor.ConstructorError(None, None, "cannot decode !!str `%s` as a !!int" % value,
                                                node.start_mark)
    return _go_number(n)


def _construct_float(conv, node):
    value = _scalar(node)
    kind, f = resolve(value)
    if kind == INT:
        f = float(f)
    elif kind != FLOAT:
        raise yaml.constructor.ConstructorError(None, None, "cannot decode !!str `%s` as a !!float" % value,
                                                node.start_mark)
    try:
        return _go_number(f)
    except ValueError as e:
        raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None


def _construct_bool(conv, node):
    value = _scalar(node)
    if value in BOOL_VALUES:
        return BOOL_VALUES[value]
    raise yaml.constructor.ConstructorError(None, None, "cannot decode !!str `%s` as a !!bool" % value, node.start_mark)


def _construct_null(conv, node):
    return None


def _construct_str(conv, node):
    return _scalar(node)


def _construct_binary(conv, node):
    # go-yaml v2 decodes !!binary into a string; JSON then carries the raw bytes as text.
    try:
        raw = base64.b64decode(_scalar(node).encode("ascii"))
    except (binascii.Error, UnicodeEncodeError) as e:
        raise yaml.constructor.ConstructorError(None, None, "failed to decode base64 data: %s" % e,
                                                node.start_mark) from None
    # Not an input decode: the file itself is valid UTF-8 text; Go's JSON encoding of the decoded bytes replaces
    # invalid sequences with U+FFFD, and so do we (opm parity).
    return raw.decode("utf-8", "replace")


def _construct_map(conv, node):
    return conv.convert(yaml.MappingNode(_TAG_PREFIX + "map", node.value, node.start_mark, node.end_mark))


def _construct_seq(conv, node):
    if node.__class__ is _MAPPING_NODE:
        # !!omap / !!pairs written as mappings
        return _construct_map(conv, node)
    return [conv.convert(child) for child in node.value]


_FBCYAMLLoader.yaml_constructors = {
    _TAG_PREFIX + "str": _construct_str,
    _TAG_PREFIX + "int": _construct_int,
    _TAG_PREFIX + "float": _construct_float,
    _TAG_PREFIX + "bool": _construct_bool,
    _TAG_PREFIX + "null": _construct_null,
    _TAG_PREFIX + "binary": _construct_binary,
    _TAG_PREFIX + "timestamp": _construct_str,
    _TAG_PREFIX + "map": _construct_map,
    _TAG_PREFIX + "set": _construct_map,
    _TAG_PREFIX + "omap": _construct_seq,
    _TAG_PREFIX + "pairs": _construct_seq,
    _TAG_PREFIX + "seq": _construct_seq,
}


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
