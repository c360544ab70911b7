# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write DeclarativeConfigs byte-for-byte like opm's declcfg.WriteJSON / WriteYAML / WriteFS.

Ordering follows opm's writeToEncoder (fbc.md section 4): packages sorted by name; per package the package
blob(s), channels by name, bundles by name, that package's others (stable by schema), deprecations; then the
package-less others. Each object is first shaped like Go's encoding/json output of the declcfg struct (field
order, omitempty). JSON is then indented with 4 spaces; YAML goes through the port of go-yaml v2's emitter
(sigs.k8s.io/yaml.JSONToYAML) in golang/yaml_emit.py: sorted keys, 2-space indent, v2 quoting/folding rules and `\\U`
escapes for characters outside the BMP.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils import files
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import UnsafeNameError, WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import (
    get_ci,
    go_marshal_indent,
    go_sort_key,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_emit import yaml_document

# ----------------------------------------------------------------------------------------- Go struct shaping


def _props(props):
    return [{"type": p.get("type") or "", "value": p.get("value")} for p in props]


def go_package(p):
    out = {"schema": p.get("schema") or "", "name": p.get("name") or "",
           "defaultChannel": p.get("defaultChannel") or ""}
    icon = p.get("icon")
    if icon is not None:
        out["icon"] = {"base64data": icon.get("base64data"), "mediatype": icon.get("mediatype") or ""}
    if p.get("description"):
        out["description"] = p["description"]
    if p.get("properties"):
        out["properties"] = _props(p["properties"])
    return out


def _go_entry(e):
    out = {"name": e.get("name") or ""}
    if e.get("replaces"):
        out["replaces"] = e["replaces"]
    if e.get("skips"):
        out["skips"] = e["skips"]
    if e.get("skipRange"):
        out["skipRange"] = e["skipRange"]
    return out


def go_channel(c):
    entries = c.get("entries")
    out = {"schema": c.get("schema") or "", "name": c.get("name") or "", "package": c.get("package") or "",
           "entries": None if entries is None else [_go_entry(e) for e in entries]}
    if c.get("properties"):
        out["properties"] = _props(c["properties"])
    return out


def go_bundle(b):
    out = {"schema": b.get("schema") or ""}
    if b.get("name"):
        out["name"] = b["name"]
    if b.get("package"):
        out["package"] = b["package"]
    out["image"] = b.get("image") or ""
    if b.get("properties"):
        out["properties"] = _props(b["properties"])
    if b.get("relatedImages"):
        out["relatedImages"] = [{"name": r.get("name") or "", "image": r.get("image") or ""}
                                for r in b["relatedImages"]]
    return out


def _go_deprecation_entry(e):
    ref = e.get("reference") or {}
    out_ref = {"schema": ref.get("schema") or ""}
    if ref.get("name"):
        out_ref["name"] = ref["name"]
    return {"reference": out_ref, "message": e.get("message") or ""}


def go_deprecation(d):
    entries = d.get("entries")
    return {"schema": d.get("schema") or "", "package": d.get("package") or "",
            "entries": None if entries is None else [_go_deprecation_entry(e) for e in entries]}


def meta_str(obj, key):
    """Meta.Schema/Package/Name of an object. Meta folds keys with cases.Fold and rejects colliding ones; for these
    three ASCII names that fold agrees with encoding/json's, so the struct-field lookup finds the same key."""
    value = get_ci(obj, key)
    return value if isinstance(value, str) else ""


def ordered_objects(cfg):
    """Yield the Go-shaped objects of cfg in opm's writeToEncoder order."""
    by_pkg = {}

    def bucket(name):
        entry = by_pkg.get(name)
        if entry is None:
            entry = by_pkg[name] = ([], [], [], [], [])
        return entry

    for p in cfg.packages:
        if p.get("name"):
            bucket(p["name"])[0].append(p)
    for c in cfg.channels:
        if c.get("package"):
            bucket(c["package"])[1].append(c)
    for b in cfg.bundles:
        if b.get("package"):
            bucket(b["package"])[2].append(b)
    root_others = []
    for o in cfg.others:
        pkg = meta_str(o, "package")
        if pkg:
            bucket(pkg)[3].append(o)
        else:
            root_others.append(o)
    for d in cfg.deprecations:
        if d.get("package"):
            bucket(d["package"])[4].append(d)

    for name in sorted(by_pkg, key=go_sort_key):
        packages, channels, bundles, others, deprecations = by_pkg[name]
        for p in packages:
            yield go_package(p)
        for c in sorted(channels, key=lambda c: go_sort_key(c.get("name") or "")):
            yield go_channel(c)
        for b in sorted(bundles, key=lambda b: go_sort_key(b.get("name") or "")):
            yield go_bundle(b)
        yield from sorted(others, key=lambda o: go_sort_key(meta_str(o, "schema")))
        for d in deprecations:
            yield go_deprecation(d)
    yield from root_others


# ----------------------------------------------------------------------------------------- JSON

def json_document(obj, escape_html=False):
    """One object as Go's json.Encoder with SetIndent("", "    ") writes it (trailing newline included)."""
    try:
        return go_marshal_indent(obj, escape_html) + "\n"
    except (TypeError, ValueError) as e:
        raise WriteError("json: unsupported value: %s" % e) from None


def iter_json(cfg, escape_html=False):
    """opm's WriteJSON, one document string at a time."""
    for obj in ordered_objects(cfg):
        yield json_document(obj, escape_html)


def dumps_json(cfg, escape_html=False):
    """opm's WriteJSON as a string. escape_html=False is what opm uses (SetEscapeHTML(false))."""
    return "".join(iter_json(cfg, escape_html))


# ----------------------------------------------------------------------------------------- YAML (go-yaml v2)

def iter_yaml(cfg):
    """opm's WriteYAML, one document string at a time (each prefixed with '---\\n')."""
    for obj in ordered_objects(cfg):
        yield "---\n" + yaml_document(obj)


def dumps_yaml(cfg):
    """opm's WriteYAML as a string."""
    return "".join(iter_yaml(cfg))


# ----------------------------------------------------------------------------------------- files

def check_path_component(name, what="package"):
    """Reject names that would escape or break a directory layout (opm: must be a single local path element)."""
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise UnsafeNameError("invalid %s name %s: must be a single local path element"
                              % (what, json.dumps(name, ensure_ascii=False)))
    return name


_FORMATS = {"json": (iter_json, ".json"), "yaml": (iter_yaml, ".yaml")}


def iter_format(cfg, output_format, escape_html=False):
    """opm's WriteJSON or WriteYAML (output_format json|yaml), one document string at a time."""
    if output_format == "json":
        return iter_json(cfg, escape_html)
    if output_format == "yaml":
        return iter_yaml(cfg)
    raise WriteError("invalid output format %s" % json.dumps(output_format))


def dumps(cfg, output_format="yaml"):
    return "".join(iter_format(cfg, output_format))


def write_file(cfg, path, output_format="yaml", output=None):
    """opm's WriteJSON/WriteYAML into the file ``path``, streamed through a files.FileOutput (``output``: the
    caller's, committed by the caller; None: one of our own, committed here). Returns True when the file changed.
    Filesystem errors become WriteError naming the file."""
    try:
        if output is None:
            return files.write_file(path, iter_format(cfg, output_format))
        return output.write(path, iter_format(cfg, output_format))
    except OSError as e:
        raise WriteError("write file %s: %s" % (json.dumps(path), e.strerror or e), path=path) from None


def split_by_package(cfg):
    """(sorted package names, {package: DeclarativeConfig}, package-less others) like opm's configsByPackage."""
    by_pkg = {}

    def get(name):
        sub = by_pkg.get(name)
        if sub is None:
            sub = by_pkg[name] = DeclarativeConfig()
        return sub

    for p in cfg.packages:
        if p.get("name"):
            get(p["name"]).packages.append(p)
    for c in cfg.channels:
        if c.get("package"):
            get(c["package"]).channels.append(c)
    for b in cfg.bundles:
        if b.get("package"):
            get(b["package"]).bundles.append(b)
    root_others = []
    for o in cfg.others:
        pkg = meta_str(o, "package")
        if pkg:
            get(pkg).others.append(o)
        else:
            root_others.append(o)
    for d in cfg.deprecations:
        if d.get("package"):
            get(d["package"]).deprecations.append(d)
    return sorted(by_pkg, key=go_sort_key), by_pkg, root_others


def fs_layout(cfg, root_dir, output_format="yaml"):
    """opm's WriteFS layout: [(path, DeclarativeConfig)] = <root>/<pkg>/catalog.<ext> per package, plus
    <root>/catalog.<ext> for package-less others. Every package name is checked first (UnsafeNameError)."""
    if output_format not in _FORMATS:
        raise WriteError("invalid output format %s" % json.dumps(output_format))
    name = "catalog" + _FORMATS[output_format][1]
    names, by_pkg, root_others = split_by_package(cfg)
    for pkg in names:
        check_path_component(pkg, "package")
    layout = [(os.path.join(root_dir, pkg, name), by_pkg[pkg]) for pkg in names]
    if root_others:
        layout.append((os.path.join(root_dir, name), DeclarativeConfig(others=root_others)))
    return layout


def write_fs(cfg, root_dir, output_format="yaml", output=None):
    """opm's WriteFS (see fs_layout) through a files.FileOutput: every file is staged before any is replaced.

    ``output``: the caller's FileOutput (the caller commits); None: one of our own, committed here.
    Returns the paths of the layout.
    """
    layout = fs_layout(cfg, root_dir, output_format)
    own = output is None
    if own:
        output = files.FileOutput()
    try:
        for path, part in layout:
            write_file(part, path, output_format, output=output)
        if own:
            output.commit()
    finally:
        if own:
            output.discard()
    return [path for path, _part in layout]
