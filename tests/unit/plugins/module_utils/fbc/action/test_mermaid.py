# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of operator-registry alpha/declcfg/write_test.go TestWriteMermaidChannels (+ filter/skipRange cases)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from lib.fbc import SVG_SMALL_CIRCLE, WRITE_EXPECTED, cfg, new_test_bundle, new_test_channel, new_test_package, require_data

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.mermaid import MermaidWriter, render_mermaid
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError


@pytest.fixture(scope="module")
def config():
    return L.load_file(require_data(WRITE_EXPECTED / "TestWriteYAML.Success.yaml"))


@pytest.mark.parametrize("case,min_edge,pkg", [
    ("SuccessNoFilters", "", ""),
    ("SuccessMinEdgeFilter", "anakin.v0.1.0", ""),
    ("SuccessPackageNameFilter", "", "boba-fett"),
])
def test_write_mermaid_channels(config, case, min_edge, pkg):
    expected = (WRITE_EXPECTED / ("TestWriteMermaidChannels.%s.minEdge=%s.pkg=%s.mmd" % (case, min_edge or "none", pkg or "none"))).read_text()
    assert render_mermaid(config, min_edge_name=min_edge, package_name=pkg) == expected


def test_without_v0_semantics(config):
    out = render_mermaid(config, draw_v0_semantics=False)
    assert "linkStyle" not in out and " skipped\n" not in out
    assert "class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated\n" in out
    assert "style anakin fill:#989695\n" in out and "style anakin-light fill:#DCD0FF\n" in out


def test_unknown_min_edge(config):
    with pytest.raises(FBCError) as info:
        render_mermaid(config, min_edge_name="nope")
    assert str(info.value) == 'unknown minimum edge name: "nope"'


def _skiprange_cfg(skip_range):
    entries = [{"name": "p.v1.0.0"}, {"name": "p.v1.1.0", "replaces": "p.v1.0.0"},
               {"name": "p.v2.0.0", "replaces": "p.v1.1.0", "skipRange": skip_range}]
    return cfg(packages=[new_test_package("p", "s", SVG_SMALL_CIRCLE)], channels=[new_test_channel("p", "s", *entries)],
               bundles=[new_test_bundle("p", v) for v in ("1.0.0", "1.1.0", "2.0.0")])


def test_skip_range_edges():
    out = render_mermaid(_skiprange_cfg(">=1.0.0 <2.0.0"))
    assert '      p-s-p.v1.0.0["p.v1.0.0"]-- "skipRange(>=1.0.0 <2.0.0)" --> p-s-p.v2.0.0["p.v2.0.0"]\n' in out
    assert '      p-s-p.v1.1.0["p.v1.1.0"]-- "skipRange(>=1.0.0 <2.0.0)" --> p-s-p.v2.0.0["p.v2.0.0"]\n' in out
    # links: 0,1 skipRange, 2 replace (v2), 3 replace (v1.1); nothing is skipped
    assert "linkStyle" not in out


def test_invalid_skip_range_warns():
    warnings = []
    out = MermaidWriter(warn=warnings.append).write_channels(_skiprange_cfg(">v1"))
    assert warnings == ['warning: ignoring invalid SkipRange for package/edge "p"/"p.v2.0.0": Could not parse Range ">v1": '
                        'Could not parse comparator ">v" in ">v1"']
    assert "skipRange" not in out


def test_version_errors():
    bad = _skiprange_cfg("")
    bad.bundles[0]["properties"] = []
    with pytest.raises(FBCError) as info:
        render_mermaid(bad)
    assert str(info.value) == 'bundle "p.v1.0.0" has multiple "olm.package" properties, expected exactly 1'
