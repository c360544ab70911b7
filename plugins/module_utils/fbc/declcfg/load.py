# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Load File-Based Catalogs like opm's declcfg.LoadFS / LoadReader.

Parity points (fbc.md section 1): every regular file is parsed except `.indexignore` files and paths excluded
by them (gitignore semantics, nested ignore files); a file is a JSON stream if its first non-blank byte is `{`,
otherwise multi-document YAML split on `---` lines like k8s' YAMLReader; top-level schema/package/name keys
match case-insensitively; nested mappings are key-sorted (opm re-encodes every blob from a Go map); numbers
behave like float64; known schemas are reduced to their Go struct fields; unknown schemas go to `others`.

Unlike opm, errors name the file and document/object (LoadError.opm_message keeps opm's own text), walking
is in deterministic order, YAML alias expansion is bounded, and big YAML trees may be parsed by several
processes when CPUs are idle.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import contextlib
import copy
import gc
import json
import math
import operator
import os
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

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import EXCERPT_LIMIT, InvalidInputError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import goyaml
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import (
    SCHEMA_BUNDLE,
    SCHEMA_CHANNEL,
    SCHEMA_DEPRECATIONS,
    SCHEMA_PACKAGE,
    DeclarativeConfig,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError, decode_utf8
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.gosemantics import (
    cases_fold,
    fold_lookup,
    go_marshal,
    go_quote,
    go_sort_key,
    json_kind,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.files import is_temp_name

INDEX_IGNORE_FILENAME = ".indexignore"

# Extra nodes that aliases may add to one document. Real catalogs use no aliases at all; this only stops
# "billion laughs" documents before they are expanded into memory.
ALIAS_EXPANSION_BUDGET = 10000

HAVE_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))
_BaseSafeLoader = getattr(yaml, "CSafeLoader", None) if HAVE_LIBYAML else None
if _BaseSafeLoader is None:  # pragma: no cover - depends on the PyYAML build
    # without PyYAML the loader class below is a placeholder; YAML input is refused by _require_yaml()
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
    typing plain scalars with go-yaml v2's rules (goyaml.resolve); PyYAML's YAML 1.1 resolvers are never
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
else:  # pragma: no cover - PyYAML missing: no node is ever built (YAML input is refused by _require_yaml())
    _SCALAR_NODE = _MAPPING_NODE = _SEQUENCE_NODE = None
_MAP_TAG = _TAG_PREFIX + "map"
_SET_TAG = _TAG_PREFIX + "set"
_SEQ_TAG = _TAG_PREFIX + "seq"
_HINT_CHARS = goyaml.HINT_CHARS
_PLAIN_CONVERTERS = {
    goyaml.STR: lambda v: v,
    # go-yaml v2 keeps timestamp-looking scalars as strings when decoding into interface{}
    goyaml.TIMESTAMP: lambda v: v,
    goyaml.MERGE: lambda v: v,
    goyaml.NULL: lambda v: None,
    goyaml.BOOL: lambda v: v,
    goyaml.INT: _go_number,
    goyaml.FLOAT: _go_number,
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
        kind, typed = goyaml.resolve(value)
        if kind == goyaml.FLOAT:
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
                raise _AliasBudgetExceeded()
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


class _AliasBudgetExceeded(Exception):
    pass


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
    n = goyaml.go_parse_int(value.replace("_", ""))
    if n is None:
        raise yaml.constructor.ConstructorError(None, None, "cannot decode !!str `%s` as a !!int" % value,
                                                node.start_mark)
    return _go_number(n)


def _construct_float(conv, node):
    value = _scalar(node)
    kind, f = goyaml.resolve(value)
    if kind == goyaml.INT:
        f = float(f)
    elif kind != goyaml.FLOAT:
        raise yaml.constructor.ConstructorError(None, None, "cannot decode !!str `%s` as a !!float" % value,
                                                node.start_mark)
    try:
        return _go_number(f)
    except ValueError as e:
        raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None


def _construct_bool(conv, node):
    value = _scalar(node)
    if value in goyaml.BOOL_VALUES:
        return goyaml.BOOL_VALUES[value]
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


# ----------------------------------------------------------------------------------------- ignore files

def _go_glob_to_regex(pattern):
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


class _IgnorePattern:
    """go-git gitignore.Pattern as used by github.com/joelanford/ignore."""

    __slots__ = ("domain", "parts", "inclusion", "dir_only", "is_glob")

    def __init__(self, line, domain):
        self.domain = domain
        self.inclusion = line.startswith("!")
        if self.inclusion:
            line = line[1:]
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        self.dir_only = line.endswith("/")
        if self.dir_only:
            line = line[:-1]
        self.is_glob = "/" in line
        self.parts = [(p, _go_glob_to_regex(p)) for p in line.split("/")]

    def match(self, path, is_dir):
        """None (no match), True (exclude) or False (re-include)."""
        if len(path) <= len(self.domain) or path[:len(self.domain)] != self.domain:
            return None
        path = path[len(self.domain):]
        ok = self._glob_match(path, is_dir) if self.is_glob else self._simple_match(path, is_dir)
        if not ok:
            return None
        return not self.inclusion

    def _simple_match(self, path, is_dir):
        rx = self.parts[0][1]
        if rx is None:
            return False
        for i, name in enumerate(path):
            if not rx.match(name):
                continue
            if self.dir_only and not is_dir and i == len(path) - 1:
                return False
            return True
        return False

    def _glob_match(self, path, is_dir):
        matched = False
        can_traverse = False
        path = list(path)
        for i, (part, rx) in enumerate(self.parts):
            if part == "":
                can_traverse = False
                continue
            if part == "**":
                if i == len(self.parts) - 1:
                    break
                can_traverse = True
                continue
            if "**" in part or rx is None:
                return False
            if not path:
                return False
            if can_traverse:
                can_traverse = False
                while path:
                    e = path.pop(0)
                    if rx.match(e):
                        matched = True
                        break
                    if not path:
                        matched = False
            else:
                if not rx.match(path[0]):
                    return False
                matched = True
                path.pop(0)
        if matched and self.dir_only and not is_dir and not path:
            matched = False
        return matched


class IgnoreMatcher:
    """All `.indexignore` patterns of a tree; the last matching pattern decides (gitignore rules)."""

    def __init__(self, patterns):
        self.patterns = patterns

    def match(self, rel_path, is_dir=False):
        parts = rel_path.split("/")
        for pattern in reversed(self.patterns):
            result = pattern.match(parts, is_dir)
            if result is not None:
                return result
        return False


def _walk(root):
    """Yield (relative posix path, is_dir) in Go fs.WalkDir order (lexical, directories entered in place).

    Unlike opm, the temporaries of an interrupted kubeforge writer are skipped (files.is_temp_name)."""
    def rec(abs_dir, rel_dir):
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except OSError as e:
            raise LoadError("open %s: %s" % (rel_dir or ".", e.strerror or e), path=abs_dir) from None
        for entry in entries:
            if is_temp_name(entry.name):
                continue  # a writer's temporary file or spool directory (files.FileOutput), never catalog content
            rel = entry.name if not rel_dir else rel_dir + "/" + entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            yield rel, is_dir, entry
            if is_dir:
                yield from rec(entry.path, rel)
    return rec(root, "")


def _load_ignore_patterns(root, entries):
    patterns = []
    for rel, is_dir, entry in entries:
        if is_dir or entry.name != INDEX_IGNORE_FILENAME:
            continue
        domain = rel.split("/")[:-1]
        try:
            with open(entry.path, "rb") as f:
                text = decode_utf8(f.read(), entry.path)
        except OSError as e:
            raise LoadError("read ignore file: %s" % (e.strerror or e), path=entry.path) from None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            patterns.append(_IgnorePattern(line, domain))
    return IgnoreMatcher(patterns)


def list_catalog_files(root):
    """Relative paths of the files LoadFS would parse under root, in walk order."""
    root = os.fspath(root)
    if not os.path.exists(root):
        raise LoadError("open %s: no such file or directory" % root, path=root)
    if not os.path.isdir(root):
        raise LoadError("%s is not a directory" % json.dumps(root, ensure_ascii=False), path=root)
    entries = list(_walk(root))
    matcher = _load_ignore_patterns(root, entries)
    files = []
    for rel, is_dir, entry in entries:
        if is_dir or entry.name == INDEX_IGNORE_FILENAME or matcher.match(rel, False):
            continue
        if not entry.is_file():
            # Sockets, fifos and dangling links cannot be catalog content; opm would fail opening them.
            if entry.is_symlink() and not os.path.exists(entry.path):
                raise LoadError("open %s: no such file or directory" % rel, path=entry.path)
            if not entry.is_file():
                continue
        files.append(rel)
    return files


# ----------------------------------------------------------------------------------------- documents

_SEPARATOR_RE = re.compile(r"^---([^\n]*)(?:\n|\Z)", re.M)


def _split_yaml_documents(text, source):
    """Split like k8s.io/apimachinery YAMLReader: a line starting with '---' ends the current document.

    Returns (document text, first line number) pairs; empty documents are dropped as k8s does.
    """
    docs = []
    pos = 0
    line = 1
    for m in _SEPARATOR_RE.finditer(text):
        rest = m.group(1).strip()
        if rest and not rest.startswith("#"):
            raise LoadError("invalid Yaml document separator: %s" % rest, path=source)
        if m.start() > pos:
            docs.append((text[pos:m.start()], line))
        line += text.count("\n", pos, m.end())
        pos = m.end()
    if pos < len(text):
        docs.append((text[pos:], line))
    return docs


def _require_yaml(source):
    """YAML input needs PyYAML (JSON streams do not); refuse it with a clear error when the library is missing."""
    if yaml is None:
        raise LoadError("the PyYAML Python library is required to parse YAML (JSON input works without it)",
                        path=source)


def _yaml_error_text(e, first_line):
    """A one-line YAML error with positions relative to the whole file."""
    if isinstance(e, yaml.MarkedYAMLError):
        parts = [p for p in (e.context, e.problem) if p]
        mark = e.problem_mark or e.context_mark
        text = "; ".join(parts) or type(e).__name__
        if mark is not None:
            text += " (line %d, column %d)" % (first_line + mark.line, mark.column + 1)
        return text
    return str(e).replace("\n", " ")


def _yaml_documents(text, source):
    for doc, line in _split_yaml_documents(text, source):
        try:
            value = _load_yaml_document(doc)
        except _AliasBudgetExceeded:
            raise LoadError("YAML alias expansion exceeds %d nodes (possible alias bomb)" % ALIAS_EXPANSION_BUDGET,
                            path=source, context="document at line %d" % line) from None
        except yaml.YAMLError as e:
            raise LoadError("error converting YAML to JSON: %s" % _yaml_error_text(e, line), path=source,
                            context="document at line %d" % line) from None
        except (ValueError, RecursionError) as e:
            raise LoadError(str(e), path=source, context="document at line %d" % line) from None
        yield value, "document at line %d" % line


_FIRST = operator.itemgetter(0)


def _pairs_hook(pairs):
    # Sort keys like Go re-encoding a map; the sort is stable, so with duplicate keys the last still wins.
    return dict(sorted(pairs, key=_FIRST))


def _json_float(s):
    return _go_number(float(s))


def _json_int(s):
    return _go_number(int(s))


def _json_constant(s):
    raise InvalidInputError("invalid character '%s' looking for beginning of value" % s[0])


_JSON_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook, parse_float=_json_float, parse_int=_json_int,
                                 parse_constant=_json_constant)
_WS = re.compile(r"[ \t\n\r]*")


def _json_documents(text, source):
    pos = _WS.match(text, 0).end()
    n = len(text)
    index = 0
    while pos < n:
        try:
            obj, end = _JSON_DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise LoadError("invalid JSON: %s (line %d column %d)" % (e.msg, e.lineno, e.colno), context="object %d" % index,
                            path=source) from None
        except (ValueError, RecursionError) as e:
            raise LoadError(str(e), path=source, context="object %d" % index) from None
        if obj.__class__ is not dict and obj is not None:
            obj = _RawValue(obj, text[pos:end], False)
        yield obj, "object %d" % index
        index += 1
        pos = _WS.match(text, end).end()


def iter_documents(data, source="<input>"):
    """Yield (decoded document, position label) from a YAML-or-JSON stream (bytes or str)."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise LoadError("invalid UTF-8 at byte %d" % e.start, path=source) from None
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = text.lstrip(" \t\r\n")
    if stripped.startswith("{"):
        return _json_documents(text, source)
    if stripped:
        _require_yaml(source)
    return _yaml_documents(text, source)


# ----------------------------------------------------------------------------------------- typed decode

def _type_error(value, struct, field, go_type):
    return "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
        json_kind(value), struct, field, go_type)


# Struct decoding goes through gosemantics.fold_lookup (encoding/json key matching, last key wins); ``nullable``
# names the fields of nil-able Go type (slices, pointers, []byte, json.RawMessage), which a JSON null resets;
# a null into a string or struct field is a no-op. Top-level keys cannot collide (meta_fields rejects that first);
# nested objects can.


def _decode_string(value, struct, field):
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(_type_error(value, struct, field, "string"))
    return value


def _decode_string_list(value, struct, field):
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidInputError(_type_error(value, struct, field, "[]string"))
    for item in value:
        if item is not None and not isinstance(item, str):
            raise InvalidInputError(_type_error(item, struct, field, "string"))
    return ["" if item is None else item for item in value]


def _decode_properties(value, struct):
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidInputError(_type_error(value, struct, "properties", "[]property.Property"))
    out = []
    for item in value:
        if item is None:
            out.append({"type": ""})
            continue
        if not isinstance(item, dict):
            raise InvalidInputError(_type_error(item, struct, "properties", "property.Property"))
        fields = fold_lookup(item, ("type", "value"), nullable=("value",))
        prop = {"type": _decode_string(fields.get("type"), "Property", "properties.type") or ""}
        # A missing value stays missing: Go keeps a nil RawMessage, which later fails to parse.
        if "value" in fields:
            prop["value"] = fields["value"]
        out.append(prop)
    return out


def _decode_object_list(value, struct, field, go_type, decode_item):
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidInputError(_type_error(value, struct, field, "[]" + go_type))
    out = []
    for item in value:
        if item is None:
            item = {}
        if not isinstance(item, dict):
            raise InvalidInputError(_type_error(item, struct, field, go_type))
        out.append(decode_item(item))
    return out


def _set(out, key, value):
    if value is not None:
        out[key] = value


def decode_package(obj):
    f = fold_lookup(obj, ("schema", "name", "defaultChannel", "icon", "description", "properties"),
                    nullable=("icon", "properties"))
    out = {"schema": _decode_string(f.get("schema"), "Package", "schema") or ""}
    _set(out, "name", _decode_string(f.get("name"), "Package", "name"))
    _set(out, "defaultChannel", _decode_string(f.get("defaultChannel"), "Package", "defaultChannel"))
    icon = f.get("icon")
    if icon is not None:
        if not isinstance(icon, dict):
            raise InvalidInputError(_type_error(icon, "Package", "icon", "declcfg.Icon"))
        fi = fold_lookup(icon, ("base64data", "mediatype"), nullable=("base64data",))
        data = _decode_string(fi.get("base64data"), "Icon", "icon.base64data")
        out_icon = {}
        if data is not None:
            out_icon["base64data"] = normalize_base64(data)
        _set(out_icon, "mediatype", _decode_string(fi.get("mediatype"), "Icon", "icon.mediatype"))
        out["icon"] = out_icon
    _set(out, "description", _decode_string(f.get("description"), "Package", "description"))
    _set(out, "properties", _decode_properties(f.get("properties"), "Package"))
    return out


def _decode_entry(item):
    f = fold_lookup(item, ("name", "replaces", "skips", "skipRange"), nullable=("skips",))
    out = {}
    _set(out, "name", _decode_string(f.get("name"), "ChannelEntry", "entries.name"))
    _set(out, "replaces", _decode_string(f.get("replaces"), "ChannelEntry", "entries.replaces"))
    _set(out, "skips", _decode_string_list(f.get("skips"), "ChannelEntry", "entries.skips"))
    _set(out, "skipRange", _decode_string(f.get("skipRange"), "ChannelEntry", "entries.skipRange"))
    return out


def decode_channel(obj):
    f = fold_lookup(obj, ("schema", "name", "package", "entries", "properties"), nullable=("entries", "properties"))
    out = {"schema": _decode_string(f.get("schema"), "Channel", "schema") or ""}
    _set(out, "name", _decode_string(f.get("name"), "Channel", "name"))
    _set(out, "package", _decode_string(f.get("package"), "Channel", "package"))
    _set(out, "entries", _decode_object_list(f.get("entries"), "Channel", "entries", "declcfg.ChannelEntry",
                                             _decode_entry))
    _set(out, "properties", _decode_properties(f.get("properties"), "Channel"))
    return out


def _decode_related_image(item):
    f = fold_lookup(item, ("name", "image"), nullable=())
    out = {}
    _set(out, "name", _decode_string(f.get("name"), "RelatedImage", "relatedImages.name"))
    _set(out, "image", _decode_string(f.get("image"), "RelatedImage", "relatedImages.image"))
    return out


def decode_bundle(obj):
    f = fold_lookup(obj, ("schema", "name", "package", "image", "properties", "relatedImages"),
                    nullable=("properties", "relatedImages"))
    out = {"schema": _decode_string(f.get("schema"), "Bundle", "schema") or ""}
    _set(out, "name", _decode_string(f.get("name"), "Bundle", "name"))
    _set(out, "package", _decode_string(f.get("package"), "Bundle", "package"))
    _set(out, "image", _decode_string(f.get("image"), "Bundle", "image"))
    _set(out, "properties", _decode_properties(f.get("properties"), "Bundle"))
    _set(out, "relatedImages", _decode_object_list(f.get("relatedImages"), "Bundle", "relatedImages",
                                                   "declcfg.RelatedImage", _decode_related_image))
    return out


def _decode_deprecation_entry(item):
    f = fold_lookup(item, ("reference", "message"), nullable=())
    out = {}
    ref = f.get("reference")
    out_ref = {}
    if ref is not None:
        if not isinstance(ref, dict):
            raise InvalidInputError(_type_error(ref, "DeprecationEntry", "entries.reference", "declcfg.PackageScopedReference"))
        fr = fold_lookup(ref, ("schema", "name"), nullable=())
        _set(out_ref, "schema", _decode_string(fr.get("schema"), "PackageScopedReference", "entries.reference.schema"))
        _set(out_ref, "name", _decode_string(fr.get("name"), "PackageScopedReference", "entries.reference.name"))
    out["reference"] = out_ref
    _set(out, "message", _decode_string(f.get("message"), "DeprecationEntry", "entries.message"))
    return out


def decode_deprecation(obj):
    f = fold_lookup(obj, ("schema", "package", "entries"), nullable=("entries",))
    out = {"schema": _decode_string(f.get("schema"), "Deprecation", "schema") or ""}
    _set(out, "package", _decode_string(f.get("package"), "Deprecation", "package"))
    _set(out, "entries", _decode_object_list(f.get("entries"), "Deprecation", "entries", "declcfg.DeprecationEntry",
                                             _decode_deprecation_entry))
    return out


def _base64_error(data):
    """None if data decodes like Go's []byte JSON field (std encoding, CR/LF ignored), else Go's message."""
    cleaned = data.replace("\r", "").replace("\n", "") if ("\n" in data or "\r" in data) else data
    try:
        base64.b64decode(cleaned, validate=True)
        if len(cleaned) % 4 == 0:
            return None
    except (binascii.Error, ValueError):
        pass
    try:
        normalize_base64(data)
    except ValueError as e:
        return str(e)
    return "illegal base64 data at input byte %d" % len(cleaned)


def normalize_base64(data):
    """Decode like Go's []byte JSON field (std encoding, CR/LF ignored) and re-encode canonically."""
    cleaned = data.replace("\r", "").replace("\n", "")
    if len(cleaned) % 4:
        raise InvalidInputError("illegal base64 data at input byte %d" % (len(cleaned) - len(cleaned) % 4))
    bad = re.search(r"[^A-Za-z0-9+/=]", cleaned)
    if bad:
        raise InvalidInputError("illegal base64 data at input byte %d" % bad.start())
    try:
        raw = base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInputError("illegal base64 data at input byte %d" % max(cleaned.find("="), 0)) from None
    return base64.b64encode(raw).decode("ascii")


def _check_bundle_objects(bundle):
    """opm's readBundleObjects: every olm.bundle.object value must be {"data": <base64>}."""
    for i, prop in enumerate(bundle.get("properties") or ()):
        if prop["type"] != "olm.bundle.object":
            continue
        value = prop.get("value")
        err = None
        if "value" not in prop:
            err = "unexpected end of JSON input"
        elif value is None:
            continue
        elif not isinstance(value, dict):
            err = "json: cannot unmarshal %s into Go value of type property.BundleObject" % json_kind(value)
        else:
            data = fold_lookup(value, ("data",), nullable=("data",)).get("data")
            if data is not None and not isinstance(data, str):
                err = _type_error(data, "BundleObject", "data", "[]uint8")
            elif data is not None:
                err = _base64_error(data)
        if err:
            raise InvalidInputError("read bundle objects: package %s, bundle %s: parse property at index %d as bundle "
                                    "object: %s" % (go_quote(bundle.get("package", "")), go_quote(bundle.get("name", "")), i, err))


# ----------------------------------------------------------------------------------------- meta + builder

_META_KEYS = ("schema", "package", "name")


def _go_t_verb(value):
    """Go's %t applied to a decoded JSON value (opm's error message uses %t by mistake)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "%!t(<nil>)"
    if isinstance(value, str):
        return "%%!t(string=%s)" % value
    if isinstance(value, (int, float)):
        return "%%!t(float64=%s)" % _go_v_verb(value)
    if isinstance(value, list):
        return "[%s]" % " ".join(_go_t_verb(v) for v in value)
    return "map[%s]" % " ".join("%s:%s" % (_go_t_verb(k), _go_t_verb(v)) for k, v in sorted(value.items()))


def _go_v_verb(value):
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
        return "[%s]" % " ".join(_go_v_verb(v) for v in value)
    if isinstance(value, dict):
        return "map[%s]" % " ".join("%s:%s" % (k, _go_v_verb(v)) for k, v in sorted(value.items()))
    return str(value)


def meta_fields(obj):
    """(schema, package, name) of a decoded document with opm's case-insensitive key rules; raises ValueError."""
    folded = {}
    for key in obj:
        folded.setdefault(cases_fold(key), []).append(key)
    dups = ["duplicate keys for key %s: [%s]" % (go_quote(k), " ".join(sorted(v, key=go_sort_key))) for k, v in folded.items()
            if len(v) > 1]
    if dups:
        raise InvalidInputError(dups[0] if len(dups) == 1 else "[%s]" % ", ".join(sorted(dups)))
    values = []
    for name in _META_KEYS:
        keys = folded.get(name)
        if not keys:
            values.append("")
            continue
        value = obj[keys[0]]
        if not isinstance(value, str):
            raise InvalidInputError("expected value for key %s to be a string, got %s: %s"
                                    % (go_quote(keys[0]), excerpt(_go_t_verb(value)), excerpt(_go_v_verb(value))))
        values.append(value)
    return tuple(values)


_DECODERS = {
    SCHEMA_PACKAGE: ("parse package", decode_package),
    SCHEMA_CHANNEL: ("parse channel", decode_channel),
    SCHEMA_BUNDLE: ("parse bundle", decode_bundle),
    SCHEMA_DEPRECATIONS: ("parse deprecation", decode_deprecation),
}


def _pretty_unmarshal_error(message, raw, offset):
    """prettyunmarshaler.JSONUnmarshalError.Pretty(): the error plus the indented document with a marker."""
    marker = " <=="
    head = "%s at offset %d (indicated by%s)\n" % (message, offset, marker)
    try:
        pretty = json.dumps(json.loads(raw), indent=4, ensure_ascii=False)
    except ValueError:
        pretty = raw
    if offset == len(raw):
        return head + pretty + marker
    p = 0
    for i, ch in enumerate(raw):
        if i == offset:
            break
        while pretty[p] != ch:
            p += 1
            if p >= len(pretty):
                return message
        p += 1
    return head + pretty[:p] + marker + " " + pretty[p:]


class _RawValue:
    """A top-level JSON/YAML value that is not an object, with the JSON text opm would have reported."""

    __slots__ = ("value", "raw", "via_yaml")

    def __init__(self, value, raw, via_yaml):
        self.value = value
        self.raw = raw
        self.via_yaml = via_yaml


def _not_an_object_error(doc, raw, via_yaml):
    kind = json_kind(doc)
    # encoding/json reports the offset after '[' for arrays, after the whole literal for scalars
    offset = 1 if kind == "array" else len(raw)
    message = _pretty_unmarshal_error(
        "json: cannot unmarshal %s into Go value of type map[string]interface {}" % kind, raw, offset)
    if via_yaml:
        # sigs.k8s.io/yaml wraps the JSON error
        message = "error unmarshaling JSON: while decoding JSON: " + message
    return excerpt(message, 2 * EXCERPT_LIMIT)  # the document dump is input: quote a bounded excerpt


def add_document(cfg, doc, source="<input>", position=None):
    """Dispatch one decoded document into cfg (opm's fbcBuilder.addMeta).

    Errors carry opm's text as opm_message; the file and the document position / object name are context.
    """
    where = position or ""
    raw = None
    via_yaml = True
    if doc.__class__ is _RawValue:
        doc, raw, via_yaml = doc.value, doc.raw, doc.via_yaml
    if not isinstance(doc, dict):
        if doc is None:
            raise LoadError("object '' is missing root schema field", path=source, context=where)
        if raw is None:
            # sigs.k8s.io/yaml re-encodes the YAML value with json.Marshal (HTML escaping on)
            raw = go_marshal(doc, sort_keys=True)
        raise LoadError(_not_an_object_error(doc, raw, via_yaml), path=source, context=where)
    try:
        schema, package, name = meta_fields(doc)
    except ValueError as e:
        raise LoadError(str(e), path=source, context=where) from None
    decoder = _DECODERS.get(schema)
    if decoder is not None:
        label, fn = decoder
        try:
            obj = fn(doc)
            if schema == SCHEMA_BUNDLE:
                _check_bundle_objects(obj)
        except ValueError as e:
            msg = str(e)
            if not msg.startswith("read bundle objects"):
                msg = "%s: %s" % (label, msg)
            if name:
                where = "%s%s %s" % (where + ": " if where else "", schema, go_quote(excerpt(name)))
            raise LoadError(msg, path=source, context=where) from None
        if schema == SCHEMA_PACKAGE:
            cfg.packages.append(obj)
        elif schema == SCHEMA_CHANNEL:
            cfg.channels.append(obj)
        elif schema == SCHEMA_BUNDLE:
            cfg.bundles.append(obj)
        else:
            cfg.deprecations.append(obj)
    elif schema == "":
        raise LoadError("object '%s\n' is missing root schema field" % excerpt(go_marshal(doc, sort_keys=True, escape_html=False)),
                        path=source, context=where)
    else:
        cfg.others.append(doc)


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building a catalog's objects.

    Loading allocates millions of dicts and lists and frees none of them (no reference cycles), yet each
    allocation burst triggers full collections that walk them all: measured on a 12,000-bundle catalog,
    pausing cut load time by 30-45 % with the same peak memory. The previous state is restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_bytes(data, source="<input>", cfg=None):
    """opm's LoadReader: parse one YAML-or-JSON stream into a DeclarativeConfig."""
    cfg = cfg if cfg is not None else DeclarativeConfig()
    with gc_paused():
        for doc, position in iter_documents(data, source):
            add_document(cfg, doc, source, position)
    return cfg


def load_file(path, cfg=None):
    """opm's LoadFile for one file path."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LoadError("open: %s" % (e.strerror or e), path=path) from None
    return load_bytes(data, source=path, cfg=cfg)


# YAML parsing is CPU bound and PyYAML holds the GIL, so big YAML trees are split across processes (opm parses
# files concurrently too). JSON parses ~15x faster than YAML in C, so shipping results between processes would
# cost more than it saves; small and mid-size trees are not worth the forks and ~25 MiB of interpreter per worker
# either. Size is counted in lines, not bytes: opm writes one node per line, and long base64 lines are cheap.
PARALLEL_MIN_YAML_LINES = 150000


def count_lines(paths, limit):
    """Newlines in the files, counted until limit is reached (unreadable files are left to the loader)."""
    lines = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                lines += f.read().count(b"\n")
        except OSError:
            continue
        if lines >= limit:
            break
    return lines


def _is_json_file(path):
    with open(path, "rb") as f:
        head = f.read(4096)
    return head.lstrip(b" \t\r\n").startswith(b"{")


def _load_shipped(path):
    """Worker side: parse one file and ship its config with marshal (the fastest stdlib codec for JSON-shaped
    data; it keeps key order and exact values). Returns (path, data or None, error or None)."""
    import marshal

    try:
        with gc_paused():
            part = load_file(path)
    except LoadError as e:
        return path, None, (e.opm_message, e.path, e.context)
    return path, marshal.dumps([part.packages, part.channels, part.bundles, part.deprecations, part.others]), None


def _load_parallel(paths, workers):
    import marshal
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(workers)
    results = []
    with pool:
        # biggest files first, one at a time, so every worker stays busy until the end; the parent decodes each
        # result while the workers parse the next files
        for path, data, error in pool.imap_unordered(_load_shipped, sorted(paths, key=os.path.getsize, reverse=True)):
            results.append((path, DeclarativeConfig(*marshal.loads(data)) if data is not None else None, error))
    return results


def usable_cpus():
    """CPUs this process may run on. Like opm, big trees are parsed on all of them whatever the machine's load:
    the 1-minute load average lags and counts our own earlier work, so it kept the parallel path off (measured
    on a 2-core host: 2 parser processes load a 205 MiB YAML catalog 10-20 % faster than one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _default_workers(paths):
    cpus = usable_cpus()
    if cpus < 2 or len(paths) < 2 or not hasattr(os, "fork"):
        return 1
    try:
        yaml_paths = [p for p in paths if not _is_json_file(p)]
    except OSError:
        return 1
    return cpus if count_lines(yaml_paths, PARALLEL_MIN_YAML_LINES) >= PARALLEL_MIN_YAML_LINES else 1


def load_fs(root, workers=None):
    """opm's LoadFS: load every catalog file under directory root, merged in (deterministic) walk order.

    workers: number of processes; by default the CPU count when the tree holds at least
    PARALLEL_MIN_YAML_LINES lines of YAML, else 1. On failure the error of the first bad file in walk order is raised.
    """
    root = os.fspath(root)
    paths = [os.path.join(root, *rel.split("/")) for rel in list_catalog_files(root)]
    if workers is None:
        workers = _default_workers(paths)
    workers = max(1, min(workers, len(paths)))
    cfg = DeclarativeConfig()
    if workers == 1:
        with gc_paused():
            for path in paths:
                load_file(path, cfg=cfg)
        return cfg
    try:
        results = _load_parallel(paths, workers)
    except (OSError, ImportError, RuntimeError, AssertionError):
        # no usable process pool (restricted environment): parse serially
        return load_fs(root, workers=1)
    order = {p: i for i, p in enumerate(paths)}
    results.sort(key=lambda r: order[r[0]])
    for _path, part, error in results:
        if error is not None:
            # another group may have failed on a later file too: report the first bad file in walk order
            raise LoadError(error[0], path=error[1], context=error[2])
        cfg.merge(part)
    return cfg


def load(path, workers=1):
    """Load a directory (load_fs) or a single file (load_file).

    workers: parser processes for a directory; 1 (the default) parses serially, None lets load_fs decide. Callers
    that keep the loaded catalog next to large output (rendering) stay serial: with parallel parsing their peak
    memory went above opm's, while read-only validation gains 1.5-2x on big YAML trees at 0.7x opm's memory.
    """
    path = os.fspath(path)
    with gc_paused():
        if os.path.isdir(path):
            return load_fs(path, workers=workers)
        return load_file(path)
