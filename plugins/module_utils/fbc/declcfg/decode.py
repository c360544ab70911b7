# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed decode of the known schemas: a document reduced to the fields of opm's Go struct.

Mirrors the json.Unmarshal of a Meta blob into operator-registry's alpha/declcfg/declcfg.go types (Package,
Channel, Bundle, Deprecation): encoding/json's key matching and type errors, unknown fields dropped, []byte fields
re-encoded as canonical base64, and readBundleObjects' check of olm.bundle.object properties.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import fold_lookup, go_quote, json_kind


def _type_error(value, struct, field, go_type):
    return "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (
        json_kind(value), struct, field, go_type)


# Struct decoding goes through golang.json.fold_lookup (encoding/json key matching, last key wins); ``nullable``
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
