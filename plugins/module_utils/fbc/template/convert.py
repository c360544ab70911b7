# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``opm alpha convert-template basic``: full FBC -> basic template (alpha/template/converter, basic.FromReader).

Every document of a single FBC stream becomes one entry in input order, re-encoded with sorted keys (the Meta blob);
``olm.bundle`` documents are reduced to ``{"schema": "olm.bundle", "image": ...}``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import TemplateParseError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import (
    get_ci,
    go_jsonify,
    go_marshal_indent,
    go_sort_key,
    json_kind,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import SCHEMA_BASIC
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import load_all_documents, meta_of


def _sorted_blob(obj):
    """Meta.Blob: the object re-encoded from map[string]interface{} (keys sorted at every level)."""
    if isinstance(obj, dict):
        return {k: _sorted_blob(obj[k]) for k in sorted(obj, key=go_sort_key)}
    if isinstance(obj, list):
        return [_sorted_blob(v) for v in obj]
    return obj


def _entry(doc):
    schema, _pkg, _name = meta_of(doc)
    if schema == "olm.bundle":
        image = get_ci(doc, "image", "")
        if image is not None and not isinstance(image, str):
            raise TemplateParseError("parse bundle: json: cannot unmarshal %s into Go struct field Bundle.image of "
                                     "type string" % json_kind(image))
        return {"schema": "olm.bundle", "image": image or ""}
    return _sorted_blob(doc)


def convert_documents(docs):
    """Convert a sequence of FBC documents (dicts, stream order) to a basic template dict."""
    return {"schema": SCHEMA_BASIC, "entries": [_entry(go_jsonify(d)) for d in docs]}


def convert_fbc_stream(data, source=None):
    """Convert one FBC file's content (YAML stream or concatenated JSON; str/bytes) to a basic template dict.
    ``source`` (the file name) prefixes error messages, such as invalid UTF-8 with the offset of the first bad byte."""
    return convert_documents(load_all_documents(data, source=source))


def convert_declcfg(cfg):
    """Convert a loaded DeclarativeConfig (document order per package as the opm writers: package, channels and
    bundles sorted by name, others, deprecations; then package-less others)."""
    if not isinstance(cfg, DeclarativeConfig):
        raise TemplateParseError("expected a DeclarativeConfig")
    by_pkg = {}

    def grp(p):
        return by_pkg.setdefault(p or "", {"packages": [], "channels": [], "bundles": [], "others": [],
                                           "deprecations": []})
    for p in cfg.packages:
        grp(p.get("name"))["packages"].append(p)
    for c in cfg.channels:
        grp(c.get("package"))["channels"].append(c)
    for b in cfg.bundles:
        grp(b.get("package"))["bundles"].append(b)
    loose = []
    for o in cfg.others:
        if o.get("package"):
            grp(o.get("package"))["others"].append(o)
        else:
            loose.append(o)
    for d in cfg.deprecations:
        grp(d.get("package"))["deprecations"].append(d)
    docs = []
    for name in sorted(by_pkg, key=go_sort_key):
        g = by_pkg[name]
        docs.extend(g["packages"])
        docs.extend(sorted(g["channels"], key=lambda c: go_sort_key(c.get("name") or "")))
        docs.extend(sorted(g["bundles"], key=lambda b: go_sort_key(b.get("name") or "")))
        docs.extend(sorted(g["others"], key=lambda o: go_sort_key(o.get("schema") or "")))
        docs.extend(g["deprecations"])
    docs.extend(loose)
    return convert_documents(docs)


def dump_basic_template_json(tpl):
    """convert-template ``-o json``: json.MarshalIndent(..., "", "    ") with HTML escaping, plus newline."""
    return go_marshal_indent({"schema": tpl["schema"], "entries": tpl["entries"]}) + "\n"


def dump_basic_template_yaml(tpl, yaml_dumper=None):
    """convert-template ``-o yaml``: ``---\\n`` + JSONToYAML (go-yaml v2, keys sorted) + an extra newline.

    ``yaml_dumper(obj) -> str`` defaults to the core's go-yaml v2 emitter (``golang.yaml_emit.yaml_document``).
    """
    obj = {"schema": tpl["schema"], "entries": tpl["entries"]}
    if yaml_dumper is None:
        from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_emit import yaml_document
        yaml_dumper = yaml_document
    return "---\n" + yaml_dumper(obj) + "\n"
