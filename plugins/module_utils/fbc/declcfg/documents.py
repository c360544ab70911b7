# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Split a catalog file into decoded documents, like opm's declcfg.LoadReader reads a stream.

Mirrors the reading half of operator-registry's alpha/declcfg/load.go: a stream is JSON if its first non-blank
byte is `{`, otherwise multi-document YAML split on `---` lines like k8s.io/apimachinery's YAMLReader (each
document decoded by golang.yaml_load); JSON numbers behave like float64 and nested mappings are key-sorted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import operator
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_load import (
    ALIAS_EXPANSION_BUDGET,
    AliasBudgetExceeded,
    _go_number,
    _load_yaml_document,
    yaml,
)

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
        except AliasBudgetExceeded:
            raise LoadError("YAML alias expansion exceeds %d nodes (possible alias bomb)" % ALIAS_EXPANSION_BUDGET,
                            path=source, context="document at line %d" % line) from None
        except yaml.YAMLError as e:
            raise LoadError("error converting YAML to JSON: %s" % _yaml_error_text(e, line), path=source,
                            context="document at line %d" % line) from None
        except (ValueError, RecursionError) as e:
            raise LoadError(str(e), path=source, context="document at line %d" % line) from None
        yield value, "document at line %d" % line


class _RawValue:
    """A top-level JSON/YAML value that is not an object, with the JSON text opm would have reported."""

    __slots__ = ("value", "raw", "via_yaml")

    def __init__(self, value, raw, via_yaml):
        self.value = value
        self.raw = raw
        self.via_yaml = via_yaml


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
