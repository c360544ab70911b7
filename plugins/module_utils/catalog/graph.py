# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""catalog_graph: a package's upgrade graph in Mermaid, its channel heads and an upgrade path, from a catalog directory."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.mermaid import render_mermaid
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.graph import channel_head, to_jsonable, upgrade_path


def _only_channel(cfg, package, channel):
    chans = [c for c in cfg.channels if c.get("package") != package or c.get("name") == channel]
    return DeclarativeConfig(packages=cfg.packages, channels=chans, bundles=cfg.bundles,
                             deprecations=cfg.deprecations, others=cfg.others)


def execute(module):
    p = module.params
    cfg = load(p["path"])
    if p["package"] not in cfg.package_names():
        raise FBCError("package %s not found in %s" % (p["package"], p["path"]))
    model = convert_to_model(cfg, validate=False)
    summary = to_jsonable(model).get(p["package"], {})
    channel = p["channel"] or summary.get("defaultChannel")
    if p["channel"] and p["channel"] not in summary.get("channels", {}):
        raise FBCError("package %s has no channel %s" % (p["package"], p["channel"]))
    owner = next((c.get("package") for c in cfg.channels for e in c.get("entries") or () if e.get("name") == p["min_edge"]), None)
    if p["min_edge"] and owner and owner != p["package"]:
        raise FBCError("min_edge %s is a bundle of package %s, not of %s" % (p["min_edge"], owner, p["package"]))
    warnings = []
    graph_cfg = _only_channel(cfg, p["package"], p["channel"]) if p["channel"] else cfg
    text = render_mermaid(graph_cfg, min_edge_name=p["min_edge"] or "", package_name=p["package"],
                          draw_v0_semantics=p["draw_v0_semantics"], warn=warnings.append)
    result = dict(changed=False, mermaid=text, channel=channel, head=channel_head(model, p["package"], channel),
                  channels=summary.get("channels", {}), warnings=warnings)
    if p["from_version"]:
        result["upgrade_path"] = upgrade_path(model, p["package"], p["from_version"], channel)
    return result
