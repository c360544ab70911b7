# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mermaid upgrade-graph output like opm's declcfg.MermaidWriter (`opm alpha render-graph`).

Reproduces WriteChannels byte for byte, including the --minimum-edge and --package-name filters and the
"v0 semantics" decorations (fbc.md section 9).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import (
    PROPERTY_PACKAGE,
    SCHEMA_BUNDLE,
    SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.properties import parse_properties

_ZERO = semver.Version()


def bundle_versions(cfg):
    """getBundleVersions: bundle name -> Version (first bundle of a name wins)."""
    versions = {}
    for b in cfg.bundles:
        name = b.get("name") or ""
        if name in versions:
            continue
        try:
            props = parse_properties(b.get("properties"))
        except FBCError as e:
            raise FBCError("parse properties for bundle %s: %s" % (q(name), e)) from None
        if len(props.packages) != 1:
            raise FBCError("bundle %s has multiple %s properties, expected exactly 1" % (q(name), q(PROPERTY_PACKAGE)))
        raw = props.packages[0]["version"]
        try:
            versions[name] = semver.parse(raw)
        except semver.SemverError as e:
            raise FBCError("bundle %s has invalid version %s: %s" % (q(name), q(raw), e)) from None
    return versions


def _entry(e):
    return {"name": e.get("name") or "", "replaces": e.get("replaces") or "", "skips": list(e.get("skips") or ()),
            "skipRange": e.get("skipRange") or ""}


class MermaidWriter:
    """Options as in opm: min_edge_name, package_name filter, and v0 semantics (default True like
    NewMermaidWriter; `opm alpha render-graph` itself defaults --draw-v0-semantics to False)."""

    def __init__(self, min_edge_name="", package_name="", draw_v0_semantics=True, warn=None):
        self.min_edge_name = min_edge_name or ""
        self.package_name = package_name or ""
        self.draw_v0_semantics = draw_v0_semantics
        # opm prints invalid skipRange warnings to stderr; callers may collect them instead
        self.warn = warn if warn is not None else (lambda msg: None)

    def _min_edge_package(self, cfg):
        if not self.min_edge_name:
            return ""
        for c in cfg.channels:
            for e in c.get("entries") or ():
                if e.get("name") == self.min_edge_name:
                    return c.get("package") or ""
        return ""

    def _filter_channel(self, c, versions, min_version, min_edge_package):
        entries = [_entry(e) for e in c.get("entries") or ()]
        pkg = c.get("package") or ""
        if not self.min_edge_name and not self.package_name:
            return entries
        if self.package_name and pkg != self.package_name:
            return None
        if min_edge_package and pkg != min_edge_package:
            return None
        out = []
        for ce in entries:
            f = {"name": ce["name"], "replaces": "", "skips": [], "skipRange": ""}
            if not self.min_edge_name:
                f["skipRange"], f["replaces"], f["skips"] = ce["skipRange"], ce["replaces"], list(ce["skips"])
                if f["replaces"] or f["skips"] or f["skipRange"]:
                    out.append(f)
                elif not ce["replaces"] and not ce["skipRange"] and not ce["skips"]:
                    out.append(f)
            elif ce["name"] == self.min_edge_name:
                out.append(f)
            else:
                if ce["replaces"] and versions.get(ce["replaces"], _ZERO) >= min_version:
                    f["replaces"] = ce["replaces"]
                if ce["skips"]:
                    f["skips"] = [s for s in ce["skips"] if versions.get(s, _ZERO) >= min_version]
                if ce["skipRange"]:
                    try:
                        if semver.parse_range(ce["skipRange"])(min_version):
                            f["skipRange"] = ce["skipRange"]
                    except semver.SemverError:
                        pass
                if f["replaces"] or f["skips"] or f["skipRange"]:
                    out.append(f)
                elif (not ce["replaces"] and not ce["skipRange"] and not ce["skips"]
                      and versions.get(f["name"], _ZERO) >= min_version):
                    out.append(f)
        return out or None

    def write_channels(self, cfg):
        """Return the mermaid text for cfg."""
        channels = sorted(cfg.channels, key=lambda c: go_sort_key(c.get("name") or ""))
        versions = bundle_versions(cfg)
        min_version = _ZERO
        if self.min_edge_name:
            if self.min_edge_name not in versions:
                raise FBCError("unknown minimum edge name: %s" % q(self.min_edge_name))
            min_version = versions[self.min_edge_name]
        min_edge_package = self._min_edge_package(cfg)

        dep_packages, dep_channels, dep_bundles = set(), set(), set()
        for d in cfg.deprecations:
            for e in d.get("entries") or ():
                ref = e.get("reference") or {}
                schema = ref.get("schema")
                if schema == SCHEMA_PACKAGE:
                    dep_packages.add(d.get("package") or "")
                elif schema == SCHEMA_CHANNEL:
                    dep_channels.add(ref.get("name") or "")
                elif schema == SCHEMA_BUNDLE:
                    dep_bundles.add(ref.get("name") or "")

        pkgs = {}
        deprecated_package = ""
        deprecated_channel_ids = []
        decorated = {"deprecated": [], "skipped": [], "deprecatedskipped": []}
        link_id = 0
        skipped_link_ids = []

        def semantics(skipped_entities, edge, lid, capture_new):
            if not self.draw_v0_semantics:
                return
            if edge in skipped_entities:
                skipped_link_ids.append(str(lid))
            elif capture_new:
                skipped_entities.add(edge)

        for c in channels:
            entries = self._filter_channel(c, versions, min_version, min_edge_package)
            if entries is None:
                continue
            pkg = c.get("package") or ""
            ch_name = c.get("name") or ""
            out = pkgs.setdefault(pkg, [])
            channel_id = "%s-%s" % (pkg, ch_name)
            out.append("    %%%% channel %s\n" % q(ch_name))
            out.append("    subgraph %s[%s]\n" % (channel_id, q(ch_name)))
            if pkg in dep_packages:
                deprecated_package = pkg
            if ch_name in dep_channels:
                deprecated_channel_ids.append(channel_id)

            ordered = sorted(entries, key=lambda e: versions.get(e["name"], _ZERO), reverse=True)
            skipped_entities = set()
            for ce in ordered:
                entry_id = "%s-%s" % (channel_id, ce["name"])
                node = "%s[%s]" % (entry_id, q(ce["name"]))
                out.append("      %s\n" % node)
                in_dep = ce["name"] in dep_bundles
                in_skip = ce["name"] in skipped_entities
                if in_dep and in_skip:
                    decorated["deprecatedskipped"].append(entry_id)
                elif in_dep:
                    decorated["deprecated"].append(entry_id)
                elif in_skip:
                    decorated["skipped"].append(entry_id)
                for s in ce["skips"]:
                    out.append("      %s-%s[%s]-- skip --> %s\n" % (channel_id, s, q(s), node))
                    semantics(skipped_entities, s, link_id, True)
                    link_id += 1
                if ce["skipRange"]:
                    try:
                        rng = semver.parse_range(ce["skipRange"])
                    except semver.SemverError as e:
                        self.warn("warning: ignoring invalid SkipRange for package/edge %s/%s: %s"
                                  % (q(pkg), q(ce["name"]), e))
                    else:
                        for edge in entries:
                            if rng(versions.get(edge["name"], _ZERO)):
                                out.append('      %s-%s[%s]-- "skipRange(%s)" --> %s\n'
                                           % (channel_id, edge["name"], q(edge["name"]), ce["skipRange"], node))
                                semantics(skipped_entities, ce["name"], link_id, False)
                                link_id += 1
                if ce["replaces"]:
                    out.append("      %s-%s[%s]-- replace --> %s\n" % (channel_id, ce["replaces"], q(ce["replaces"]),
                                                                       node))
                    semantics(skipped_entities, ce["name"], link_id, False)
                    link_id += 1
            out.append("    end\n")

        lines = ["graph LR\n",
                 "  classDef deprecated fill:#E8960F\n",
                 "  classDef skipped stroke:#FF0000,stroke-width:4px\n",
                 "  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n"]
        for name in sorted(pkgs, key=go_sort_key):
            lines.append("  %%%% package %s\n" % q(name))
            lines.append("  subgraph %s\n" % q(name))
            lines.extend(pkgs[name])
            lines.append("  end\n")
        if deprecated_package:
            lines.append("style %s fill:#989695\n" % deprecated_package)
        for cid in deprecated_channel_ids:
            lines.append("style %s fill:#DCD0FF\n" % cid)
        for key in sorted(decorated):
            if decorated[key]:
                lines.append("class %s %s\n" % (",".join(sorted(decorated[key], key=go_sort_key)), key))
        if skipped_link_ids:
            lines.append("linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n" % ",".join(skipped_link_ids))
        return "".join(lines)


def render_mermaid(cfg, min_edge_name="", package_name="", draw_v0_semantics=True, warn=None):
    """Convenience wrapper around MermaidWriter.write_channels."""
    return MermaidWriter(min_edge_name, package_name, draw_v0_semantics, warn).write_channels(cfg)
