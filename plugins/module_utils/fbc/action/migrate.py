# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""opm catalog migrations (``--migrate-level``), port of alpha/action/migrations.

Only one migration exists: ``bundle-object-to-csv-metadata`` (000_bundle_object_to_csv_metadata.go): for every
bundle that has an image and a CSV, drop all ``olm.bundle.object`` properties and append one ``olm.csv.metadata``
built from the CSV, unless the bundle already has an ``olm.csv.metadata`` property.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import json

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import MigrationError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import load_first_document

MIGRATE_NONE = "none"
MIGRATE_BUNDLE_OBJECT_TO_CSV_METADATA = "bundle-object-to-csv-metadata"
MIGRATE_ALL = "all"
MIGRATION_LEVELS = (MIGRATE_NONE, MIGRATE_BUNDLE_OBJECT_TO_CSV_METADATA, MIGRATE_ALL)

TYPE_BUNDLE_OBJECT = "olm.bundle.object"
TYPE_CSV_METADATA = "olm.csv.metadata"


def check_migrate_level(level):
    """Normalize a migrate level (None/"" -> "none"); raise MigrationError for unknown names."""
    if level in (None, ""):
        return MIGRATE_NONE
    if level not in MIGRATION_LEVELS:
        raise MigrationError("unknown migration level \"%s\"" % level)
    return level


def wants_csv_metadata(level):
    return check_migrate_level(level) in (MIGRATE_BUNDLE_OBJECT_TO_CSV_METADATA, MIGRATE_ALL)


def decode_bundle_object(value):
    """Decode an olm.bundle.object value ({"data": base64}) to a dict (YAML or JSON manifest)."""
    if not isinstance(value, dict):
        raise MigrationError("olm.bundle.object value must be an object")
    data = value.get("data")
    if not isinstance(data, str):
        raise MigrationError("olm.bundle.object value has no data")
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as e:
        raise MigrationError("illegal base64 data in olm.bundle.object: %s" % e) from e
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MigrationError("olm.bundle.object data: invalid UTF-8 at byte %d" % e.start) from None
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    try:
        return load_first_document(text)
    except ValueError as e:
        raise MigrationError(str(e)) from e


def csv_from_bundle(blob):
    """The first ClusterServiceVersion among a bundle's olm.bundle.object properties (Bundle.CsvJSON), or None."""
    for p in blob.get("properties") or ():
        if isinstance(p, dict) and p.get("type") == TYPE_BUNDLE_OBJECT:
            try:
                obj = decode_bundle_object(p.get("value"))
            except MigrationError:
                continue
            if isinstance(obj, dict) and obj.get("kind") == "ClusterServiceVersion":
                return obj
    return None


# --------------------------------------------------------------------------- CSV -> olm.csv.metadata

def _s(v):
    return v if isinstance(v, str) else ("" if v is None else _type_err("string", v))


def _type_err(want, v):
    raise MigrationError("json: cannot unmarshal %s into Go value of type %s" % (json_kind(v), want))


def _list(v):
    if v is None:
        return []
    if not isinstance(v, list):
        _type_err("[]", v)
    return v


def _dict(v):
    if v is None:
        return {}
    if not isinstance(v, dict):
        _type_err("struct", v)
    return v


def _str_map(v):
    d = _dict(v)
    out = {}
    for k in sorted(d):
        out[k] = _s(d[k])
    return out


def _put(out, key, value):
    # Go omitempty for strings, slices and maps.
    if value:
        out[key] = value


def _resources(v):
    out = []
    for r in _list(v):
        r = _dict(r)
        out.append({"name": _s(r.get("name")), "kind": _s(r.get("kind")), "version": _s(r.get("version"))})
    return out


def _descriptors(v):
    out = []
    for d in _list(v):
        d = _dict(d)
        item = {"path": _s(d.get("path"))}
        _put(item, "displayName", _s(d.get("displayName")))
        _put(item, "description", _s(d.get("description")))
        xd = [_s(x) for x in _list(d.get("x-descriptors"))]
        _put(item, "x-descriptors", xd)
        if d.get("value") is not None:
            item["value"] = d.get("value")
        out.append(item)
    return out


def _put_description_fields(item, d):
    # The fields CRDDescription and APIServiceDescription share, after their own (same order in both structs).
    _put(item, "displayName", _s(d.get("displayName")))
    _put(item, "description", _s(d.get("description")))
    _put(item, "resources", _resources(d.get("resources")))
    _put(item, "statusDescriptors", _descriptors(d.get("statusDescriptors")))
    _put(item, "specDescriptors", _descriptors(d.get("specDescriptors")))
    _put(item, "actionDescriptors", _descriptors(d.get("actionDescriptors")))
    return item


def _crd_description(d):
    d = _dict(d)
    item = {"name": _s(d.get("name")), "version": _s(d.get("version")), "kind": _s(d.get("kind"))}
    return _put_description_fields(item, d)


def _apiservice_description(d):
    d = _dict(d)
    item = {"name": _s(d.get("name")), "group": _s(d.get("group")), "version": _s(d.get("version")),
            "kind": _s(d.get("kind"))}
    _put(item, "deploymentName", _s(d.get("deploymentName")))
    port = d.get("containerPort")
    if port not in (None, 0):
        if not isinstance(port, int) or isinstance(port, bool):
            _type_err("int32", port)
        item["containerPort"] = port
    return _put_description_fields(item, d)


def _owned_required(v, conv):
    d = _dict(v)
    out = {}
    _put(out, "owned", [conv(x) for x in _list(d.get("owned"))])
    _put(out, "required", [conv(x) for x in _list(d.get("required"))])
    return out


def _string_fields(v, *fields):
    # A Go struct of omitempty string fields (in field order).
    d = _dict(v)
    out = {}
    for field in fields:
        _put(out, field, _s(d.get(field)))
    return out


def _app_link(v):
    return _string_fields(v, "name", "url")


def _maintainer(v):
    return _string_fields(v, "name", "email")


def csv_metadata(csv):
    """Build the olm.csv.metadata value (property.CSVMetadata field order) from a CSV dict."""
    csv = _dict(csv)
    meta = _dict(csv.get("metadata"))
    spec = _dict(csv.get("spec"))
    out = {}
    _put(out, "annotations", _str_map(meta.get("annotations")))
    out["apiServiceDefinitions"] = _owned_required(spec.get("apiservicedefinitions"), _apiservice_description)
    out["crdDescriptions"] = _owned_required(spec.get("customresourcedefinitions"), _crd_description)
    _put(out, "description", _s(spec.get("description")))
    _put(out, "displayName", _s(spec.get("displayName")))
    modes = []
    for m in _list(spec.get("installModes")):
        m = _dict(m)
        sup = m.get("supported")
        if sup is not None and not isinstance(sup, bool):
            _type_err("bool", sup)
        modes.append({"type": _s(m.get("type")), "supported": bool(sup)})
    _put(out, "installModes", modes)
    _put(out, "keywords", [_s(k) for k in _list(spec.get("keywords"))])
    _put(out, "labels", _str_map(meta.get("labels")))
    _put(out, "links", [_app_link(x) for x in _list(spec.get("links"))])
    _put(out, "maintainers", [_maintainer(x) for x in _list(spec.get("maintainers"))])
    _put(out, "maturity", _s(spec.get("maturity")))
    _put(out, "minKubeVersion", _s(spec.get("minKubeVersion")))
    gvks = []
    for g in _list(spec.get("nativeAPIs")):
        g = _dict(g)
        gvks.append({"group": _s(g.get("group")), "version": _s(g.get("version")), "kind": _s(g.get("kind"))})
    _put(out, "nativeAPIs", gvks)
    out["provider"] = _app_link(spec.get("provider"))
    return out


def migrate_bundle(blob, csv=None):
    """Apply bundle-object-to-csv-metadata to one bundle blob.

    Returns ``blob`` itself when nothing changes, else a shallow copy with a new property list (the input is never
    mutated, so blobs shared with a lookup catalog stay intact). ``csv`` is the bundle's CSV dict (CsvJSON); when
    None it is decoded from the bundle's olm.bundle.object properties.
    """
    if not blob.get("image"):
        return blob
    props = blob.get("properties") or []
    kept = []
    for p in props:
        t = p.get("type") if isinstance(p, dict) else None
        if t == TYPE_CSV_METADATA:
            return blob
        if t != TYPE_BUNDLE_OBJECT:
            kept.append(p)
    if csv is None:
        csv = csv_from_bundle(blob)
    if csv is None:
        return blob
    kept.append({"type": TYPE_CSV_METADATA, "value": csv_metadata(csv)})
    out = dict(blob)
    out["properties"] = kept
    return out


def migrate(cfg, level, csvs=None):
    """Apply the migrations of ``level`` to every bundle of a DeclarativeConfig in place (bundle list entries may be
    replaced by migrated copies). ``csvs`` optionally maps bundle name -> CSV dict."""
    if not wants_csv_metadata(level):
        return cfg
    csvs = csvs or {}
    bundles = cfg.bundles
    for i, b in enumerate(bundles):
        bundles[i] = migrate_bundle(b, csvs.get(b.get("name")))
    return cfg
