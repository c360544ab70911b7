# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the template modules: document decoding (via the core loader), name checks, Meta decoding and
the bundle-renderer call. Go semantics (quoting, JSON kinds, key folding, JSON encoding) are in fbc.golang.json."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleRenderError,
    FBCError,
    FbcTemplateError,
    TemplateParseError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_jsonify, go_quote, json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import (
    CREDENTIALS_MESSAGE,
    has_credentials,
    redact_reference,
    shown_reference,
)


def load_first_document(data, source=None):
    """Decode the first YAML/JSON document of ``data`` (str/bytes) like k8s YAMLOrJSONDecoder (core loader's
    ``iter_documents``: lazy, Go YAML resolution, alias-bomb guard). Returns None for an empty stream.

    ``source`` (the file name) prefixes error messages; bytes must be valid UTF-8 (an error names the offset of the
    first bad byte)."""
    try:
        for doc, _position in core_load.iter_documents(data, source=None):
            return doc
    except FBCError as e:
        raise TemplateParseError(e.opm_message, path=source) from e
    except (ValueError, TypeError, RecursionError) as e:
        raise TemplateParseError(str(e)) from e
    return None


def load_all_documents(data, source=None):
    """Decode every document of a YAML stream or of concatenated JSON objects (empty YAML documents skipped).
    ``source`` (the file name) prefixes error messages."""
    out = []
    try:
        for doc, _position in core_load.iter_documents(data, source=None):
            if doc is not None:
                out.append(doc)
    except FBCError as e:
        raise TemplateParseError(e.opm_message, path=source) from e
    except (ValueError, TypeError, RecursionError) as e:
        raise TemplateParseError(str(e)) from e
    return out


def as_document(data):
    """A template document: the first YAML/JSON document of str/bytes, else the decoded value (go_jsonify'd)."""
    if isinstance(data, (str, bytes)):
        return load_first_document(data)
    return go_jsonify(data)


def check_safe_name(kind, name, error=TemplateParseError):
    """Reject names that would escape a directory when used as a path element (``../``, ``/``, NUL)."""
    if not isinstance(name, str):
        return
    if name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise error("invalid %s name %s: must be a single path element (no '/', '..')" % (kind, go_quote(name)))


def meta_of(obj):
    """declcfg.Meta (schema, package, name): case-insensitive keys, duplicate-key and type checks (core loader)."""
    if not isinstance(obj, dict):
        raise TemplateParseError("json: cannot unmarshal %s into Go value of type map[string]interface {}"
                                 % json_kind(obj))
    try:
        return core_load.meta_fields(go_jsonify(obj))
    except ValueError as e:
        raise TemplateParseError(str(e)) from e


def call_renderer(renderer, image):
    """Invoke a bundle renderer, turning foreign exceptions into BundleRenderError.

    An image reference with credentials (``user:password@host/...``) is refused before any renderer sees it, and
    never echoed."""
    if isinstance(image, str) and has_credentials(image):
        raise BundleRenderError("render reference %s: %s" % (go_quote(redact_reference(image)), CREDENTIALS_MESSAGE))
    try:
        cfg = renderer(image)
    except FbcTemplateError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BundleRenderError("render reference %s: %s" % (go_quote(shown_reference(image)), e)) from e
    if not isinstance(cfg, DeclarativeConfig):
        raise BundleRenderError("render reference %s: renderer returned %s, expected DeclarativeConfig"
                                % (go_quote(shown_reference(image)), type(cfg).__name__))
    return cfg
