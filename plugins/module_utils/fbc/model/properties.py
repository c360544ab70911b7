# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property decoding with opm's exact messages: property.Parse and the bundle release version.

Ports operator-registry alpha/property/property.go (the typed properties: olm.package, olm.gvk, olm.csv.metadata,
...) and model.NewRelease from alpha/model/model.go (v1.71 behaviour).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass, field
from typing import Any, Dict, List

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import PROPERTY_BUNDLE_OBJECT, PROPERTY_PACKAGE
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_fold_name, json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q

# ----------------------------------------------------------------------------------------- properties

PROPERTY_PACKAGE_REQUIRED = "olm.package.required"
PROPERTY_GVK = "olm.gvk"
PROPERTY_GVK_REQUIRED = "olm.gvk.required"
PROPERTY_CSV_METADATA = "olm.csv.metadata"
PROPERTY_CHANNEL = "olm.channel"

# Go struct name and string fields of the property types opm decodes into structs.
_STRING_STRUCTS = {
    PROPERTY_PACKAGE: ("Package", ("packageName", "version", "release")),
    PROPERTY_PACKAGE_REQUIRED: ("PackageRequired", ("packageName", "versionRange")),
    PROPERTY_GVK: ("GVK", ("group", "kind", "version")),
    PROPERTY_GVK_REQUIRED: ("GVKRequired", ("group", "kind", "version")),
}
_CSV_STRING_FIELDS = ("description", "displayName", "maturity", "minKubeVersion")
_CSV_STRING_MAPS = ("annotations", "labels")
_CSV_LIST_FIELDS = ("installModes", "keywords", "links", "maintainers", "nativeAPIs")


class _PropError(InvalidInputError):
    pass


_STRUCT_FIELD_MAPS = {typ: (struct, frozenset(fields), {go_fold_name(f): f for f in fields}, fields)
                      for typ, (struct, fields) in _STRING_STRUCTS.items()}


def _decode_struct(value, typ):
    """Decode like Go's encoding/json into a struct of string fields (see golang.json.fold_matches: keys in input
    order, exact name first, else go_fold_name; later keys overwrite earlier ones, a null is a no-op; unknown keys
    ignored). Every match is type-checked in input order: Go reports the first type error."""
    struct, exact, lowered, fields = _STRUCT_FIELD_MAPS[typ]
    out = dict.fromkeys(fields, "")
    if value is None:
        return out
    if not isinstance(value, dict):
        raise _PropError("json: cannot unmarshal %s into Go value of type property.%s" % (json_kind(value), struct))
    for key, v in value.items():
        name = key if key in exact else lowered.get(go_fold_name(key)) if isinstance(key, str) else None
        if name is None:
            continue
        if v is None:
            continue
        if not isinstance(v, str):
            raise _PropError("json: cannot unmarshal %s into Go struct field %s.%s of type string"
                             % (json_kind(v), struct, name))
        out[name] = v
    return out


_CSV_FIELD_KINDS = {}
for _f in _CSV_STRING_FIELDS:
    _CSV_FIELD_KINDS[go_fold_name(_f)] = (_f, "string")
for _f in _CSV_STRING_MAPS:
    _CSV_FIELD_KINDS[go_fold_name(_f)] = (_f, "map[string]string")
for _f in _CSV_LIST_FIELDS:
    _CSV_FIELD_KINDS[go_fold_name(_f)] = (_f, "[]")


def _check_csv_metadata(value):
    """Type checks Go's decode of olm.csv.metadata would fail on (the fields the engine can judge)."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise _PropError("json: cannot unmarshal %s into Go value of type property.CSVMetadata" % json_kind(value))
    for key, v in value.items():
        if v is None:
            continue
        spec = _CSV_FIELD_KINDS.get(go_fold_name(key)) if isinstance(key, str) else None
        if spec is None:
            continue
        name, kind = spec
        if kind == "string":
            if v.__class__ is not str:
                raise _PropError("json: cannot unmarshal %s into Go struct field CSVMetadata.%s of type string"
                                 % (json_kind(v), name))
        elif kind == "[]":
            if v.__class__ is not list:
                raise _PropError("json: cannot unmarshal %s into Go struct field CSVMetadata.%s of type []"
                                 % (json_kind(v), name))
        else:
            if v.__class__ is not dict:
                raise _PropError("json: cannot unmarshal %s into Go struct field CSVMetadata.%s of type "
                                 "map[string]string" % (json_kind(v), name))
            for item in v.values():
                if item is not None and item.__class__ is not str:
                    raise _PropError("json: cannot unmarshal %s into Go struct field CSVMetadata.%s of type string"
                                     % (json_kind(item), name))


def _check_struct(value, typ):
    """Validate a string-field struct property without building it (only olm.package values are needed)."""
    if value.__class__ is dict:
        for v in value.values():
            if v is not None and v.__class__ is not str:
                return _decode_struct(value, typ)  # slow path finds the offending field (if it is one)
        return None
    return _decode_struct(value, typ)


@dataclass
class ParsedProperties:
    """property.Properties: decoded olm.package values, counts of the other typed properties, unknown ones."""

    packages: List[Dict[str, str]] = field(default_factory=list)
    packages_required: int = 0
    gvks: int = 0
    gvks_required: int = 0
    bundle_objects: int = 0
    csv_metadatas: int = 0
    channels: List[Dict[str, Any]] = field(default_factory=list)
    others: List[Dict[str, Any]] = field(default_factory=list)


def parse_properties(props):
    """property.Parse; raises FBCError('parse property[%d] of type %q: %v')."""
    out = ParsedProperties()
    for i, prop in enumerate(props or ()):
        typ = prop.get("type") or ""
        try:
            if "value" not in prop:
                # Go: a nil json.RawMessage cannot be unmarshalled
                raise _PropError("unexpected end of JSON input")
            value = prop["value"]
            if typ == PROPERTY_PACKAGE:
                out.packages.append(_decode_struct(value, typ))
            elif typ in _STRING_STRUCTS:
                # only counted: the engine never needs the decoded GVK / required-package values
                _check_struct(value, typ)
                if typ == PROPERTY_GVK:
                    out.gvks += 1
                elif typ == PROPERTY_GVK_REQUIRED:
                    out.gvks_required += 1
                else:
                    out.packages_required += 1
            elif typ == PROPERTY_BUNDLE_OBJECT:
                if value is not None and not isinstance(value, dict):
                    raise _PropError("json: cannot unmarshal %s into Go value of type property.BundleObject"
                                     % json_kind(value))
                out.bundle_objects += 1
            elif typ == PROPERTY_CSV_METADATA:
                _check_csv_metadata(value)
                out.csv_metadatas += 1
            elif typ == PROPERTY_CHANNEL:
                if value is not None and not isinstance(value, dict):
                    raise _PropError("json: cannot unmarshal %s into Go value of type property.Channel"
                                     % json_kind(value))
                out.channels.append(value or {})
            else:
                out.others.append(prop)
        except _PropError as e:
            raise FBCError("parse property[%d] of type %s: %s" % (i, q(typ), e)) from None
    return out


# ----------------------------------------------------------------------------------------- release

RELEASE_MAX_LENGTH = 20


def parse_release(rel):
    """model.NewRelease: dot-separated pre-release identifiers, at most 20 characters."""
    if rel == "":
        return ()
    if len(rel) > RELEASE_MAX_LENGTH:
        raise semver.SemverError("invalid release %s: exceeds maximum length of %d characters"
                                 % (q(rel), RELEASE_MAX_LENGTH))
    parts, errs = [], []
    for i, segment in enumerate(rel.split(".")):
        try:
            parts.append(semver.PRVersion.parse(segment))
        except semver.SemverError as e:
            errs.append("segment %d: %s" % (i, e))
    if errs:
        # errors.Join separates with newlines
        raise semver.SemverError("invalid release %s: %s" % (q(rel), "\n".join(errs)))
    return tuple(parts)
