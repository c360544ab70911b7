# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Basic catalog template (``olm.template.basic``), port of operator-registry alpha/template/basic.

Dispatch by schema (``render-template``) is in template.registry.
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
    FBCError,
    TemplateParseError,
    TemplateSchemaError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import fold_matches, go_jsonify, json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import (
    as_document,
    call_renderer,
    check_safe_name,
)

SCHEMA_BASIC = "olm.template.basic"


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

def parse_basic_template(data):
    """Parse a basic template (str/bytes of the first YAML/JSON document, or an already decoded dict).

    Returns ``{"schema": ..., "entries": [...]}``.
    """
    try:
        doc = as_document(data)
    except TemplateParseError as e:
        raise TemplateParseError("decoding template schema: %s" % e) from e
    if doc is None:
        raise TemplateParseError("decoding template schema: EOF")
    if not isinstance(doc, dict):
        raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go value of type "
                                 "basic.BasicTemplateData" % json_kind(doc))
    schema = ""
    entries = None
    for field, v in fold_matches(doc, ("schema", "entries")):  # struct decode: last key wins
        if field == "schema":
            if v is not None and not isinstance(v, str):
                raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go struct field "
                                         "BasicTemplateData.schema of type string" % json_kind(v))
            if v is not None:  # null into a string: no-op
                schema = v
        else:
            if v is not None and not isinstance(v, list):
                raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go struct field "
                                         "BasicTemplateData.entries of type []*declcfg.Meta" % json_kind(v))
            entries = v  # null into a slice: nil
    if schema != SCHEMA_BASIC:
        raise TemplateSchemaError("template has unknown schema (%s), should be %s" % (q(schema), q(SCHEMA_BASIC)))
    for e in entries or ():
        if not isinstance(e, dict):
            raise TemplateParseError("decoding template schema: json: cannot unmarshal %s into Go value of type "
                                     "map[string]interface {}" % json_kind(e))
    return {"schema": schema, "entries": list(entries or [])}


def is_bundle_template(b):
    """A template bundle entry: image set, no package/properties/relatedImages (a name is tolerated)."""
    return bool(b.get("schema")) and bool(b.get("image")) and not b.get("package") \
        and not b.get("properties") and not b.get("relatedImages")


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
