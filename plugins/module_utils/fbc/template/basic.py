# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Basic catalog template (``olm.template.basic``), port of operator-registry alpha/template/basic, plus the
``render-template`` entry point with schema auto-detection (alpha/template/schema.go, cmd/opm/alpha/template).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    check_migrate_level,
    migrate_bundle,
    wants_csv_metadata,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleRenderError,
    FBCError,
    FbcTemplateError,
    TemplateParseError,
    TemplateSchemaError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.semver import go_quote
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import (
    go_json_kind,
    go_jsonify,
    load_first_document,
)

SCHEMA_BASIC = "olm.template.basic"
SCHEMA_SEMVER = "olm.semver"
SCHEMA_SUBSTITUTES = "olm.template.substitutes"
TEMPLATE_TYPES = {"basic": SCHEMA_BASIC, "semver": SCHEMA_SEMVER, "substitutes": SCHEMA_SUBSTITUTES}


def q(s):
    """Go %q for the strings used in messages."""
    return go_quote(s if isinstance(s, str) else str(s))


def check_safe_name(kind, name, error=TemplateParseError):
    """Reject names that would escape a directory when used as a path element (``../``, ``/``, NUL)."""
    if not isinstance(name, str):
        return
    if name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise error("invalid %s name %s: must be a single path element (no '/', '..')" % (kind, q(name)))


# --------------------------------------------------------------------------- Meta / typed decoding (LoadSlice)

def meta_of(obj):
    """declcfg.Meta (schema, package, name): case-insensitive keys, duplicate-key and type checks (core loader)."""
    if not isinstance(obj, dict):
        raise TemplateParseError("json: cannot unmarshal %s into Go value of type map[string]interface {}"
                                 % go_json_kind(obj))
    try:
        return core_load.meta_fields(go_jsonify(obj))
    except ValueError as e:
        raise TemplateParseError(str(e)) from e


def load_slice(entries):
    """declcfg.LoadSlice for template entries (core ``load.add_document``: schema dispatch, typed decode with unknown
    fields dropped, Others kept verbatim)."""
    cfg = DeclarativeConfig()
    for obj in entries:
        obj = go_jsonify(obj)
        try:
            core_load.add_document(cfg, obj, source=None)
        except FBCError as e:
            raise TemplateParseError(e.opm_message) from e
    return cfg


# --------------------------------------------------------------------------- basic template

def _as_document(data):
    if isinstance(data, (str, bytes)):
        return load_first_document(data)
    return go_jsonify(data)


def parse_basic_template(data):
    """Parse a basic template (str/bytes of the first YAML/JSON document, or an already decoded dict).

    Returns ``{"schema": ..., "entries": [...]}``.
    """
    try:
        doc = _as_document(data)
    except TemplateParseError as e:
        raise TemplateParseError("decoding template schema: %s" % e) from e
    if doc is None:
        raise TemplateParseError("decoding template schema: EOF")
    if not isinstance(doc, dict):
        raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go value of type "
                                 "basic.BasicTemplateData" % go_json_kind(doc))
    schema = ""
    entries = None
    for k, v in doc.items():
        if not isinstance(k, str):
            continue
        if k.casefold() == "schema":
            if v is not None and not isinstance(v, str):
                raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go struct field "
                                         "BasicTemplateData.schema of type string" % go_json_kind(v))
            schema = v or ""
        elif k.casefold() == "entries":
            if v is not None and not isinstance(v, list):
                raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go struct field "
                                         "BasicTemplateData.entries of type []*declcfg.Meta" % go_json_kind(v))
            entries = v
    if schema != SCHEMA_BASIC:
        raise TemplateSchemaError("template has unknown schema (%s), should be %s" % (q(schema), q(SCHEMA_BASIC)))
    for e in entries or ():
        if not isinstance(e, dict):
            raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go value of type "
                                     "map[string]interface {}" % go_json_kind(e))
    return {"schema": schema, "entries": list(entries or [])}


def is_bundle_template(b):
    """A template bundle entry: image set, no package/properties/relatedImages (a name is tolerated)."""
    return bool(b.get("schema")) and bool(b.get("image")) and not b.get("package") \
        and not b.get("properties") and not b.get("relatedImages")


def call_renderer(renderer, image):
    """Invoke a bundle renderer, turning foreign exceptions into BundleRenderError."""
    try:
        cfg = renderer(image)
    except FbcTemplateError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BundleRenderError("render reference %s: %s" % (q(image), e)) from e
    if not isinstance(cfg, DeclarativeConfig):
        raise BundleRenderError("render reference %s: renderer returned %s, expected DeclarativeConfig"
                                % (q(image), type(cfg).__name__))
    return cfg


def render_basic_template(data, renderer, migrate_level=None, strict_names=True):
    """Render a basic template with ``renderer(image) -> DeclarativeConfig``; returns the rendered config.

    Packages, channels, deprecations and others are passed through (typed decode), each bundle entry is replaced
    by the bundle(s) its image renders to, in template order. No validation (as opm render-template).
    """
    level = check_migrate_level(migrate_level)
    tpl = parse_basic_template(data)
    cfg = load_slice(tpl["entries"])
    if strict_names:
        for p in cfg.packages:
            check_safe_name("package", p.get("name"))
        for c in cfg.channels:
            check_safe_name("package", c.get("package"))
    out_bundles = []
    csvs = {}
    for b in cfg.bundles:
        if not is_bundle_template(b):
            raise TemplateParseError("unexpected fields present in basic template bundle")
        contributor = call_renderer(renderer, b["image"])
        ccsv = getattr(contributor, "csv_json", None) or {}
        for rb in contributor.bundles:
            if wants_csv_metadata(level):
                rb = migrate_bundle(rb, ccsv.get(rb.get("name")))
            if strict_names:
                check_safe_name("package", rb.get("package"))
            out_bundles.append(rb)
        csvs.update(ccsv)
    cfg.bundles = out_bundles
    cfg.csv_json = csvs
    return cfg


# --------------------------------------------------------------------------- render-template dispatcher

def detect_template_schema(data):
    """Schema of a template document (alpha/template/schema.go); data may be str/bytes or a decoded dict."""
    doc = _as_document(data)
    schema = None
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(k, str) and k.casefold() == "schema":
                schema = v
                if k == "schema":
                    break
    if not schema:
        raise TemplateSchemaError("template input missing required 'schema' field")
    if not isinstance(schema, str):
        raise TemplateSchemaError("template input has a non-string 'schema' field")
    if schema not in (SCHEMA_BASIC, SCHEMA_SEMVER):
        raise TemplateSchemaError("unknown template schema: %s" % schema)
    return schema


def render_template(data, renderer, template_type=None, migrate_level=None, opm_compat=None, strict_names=True):
    """``opm alpha render-template [TYPE] FILE``: TYPE in basic|semver (or the schema), auto-detected when None.

    ``opm_compat="v1.46"`` selects v1.46 behaviour for semver templates (inchworm linking, no package metadata).
    """
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if template_type is None:
        schema = detect_template_schema(data)
    else:
        schema = TEMPLATE_TYPES.get(template_type, template_type)
        if schema not in (SCHEMA_BASIC, SCHEMA_SEMVER):
            raise TemplateSchemaError("unknown template schema: %s" % template_type)
    if schema == SCHEMA_BASIC:
        return render_basic_template(data, renderer, migrate_level=migrate_level, strict_names=strict_names)
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.semver import render_semver_template
    return render_semver_template(data, renderer, migrate_level=migrate_level, opm_compat=opm_compat,
                                  strict_names=strict_names)
