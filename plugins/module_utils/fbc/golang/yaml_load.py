# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-yaml v2 decoding as sigs.k8s.io/yaml.Unmarshal does it: ``_FBCYAMLLoader`` / ``_load_yaml_document``, a
PyYAML loader producing the JSON-compatible data sigs.k8s.io/yaml yields (numbers as float64, map keys sorted and
stringified, bounded alias expansion); plain scalars typed by ``yaml_types.resolve``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import copy
import math

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
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_types import (
    BOOL,
    BOOL_VALUES,
    FLOAT,
    HINT_CHARS,
    INT,
    MERGE,
    NULL,
    STR,
    TIMESTAMP,
    go_parse_int,
    resolve,
)

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
