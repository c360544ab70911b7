"""catalog_graph module: opm render-graph parity on the upstream writer fixtures, upgrade paths on kube-green."""

import functools

import pytest
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.modules import catalog_graph

EXPECTED = shared_conformance_data() / "opm-testdata" / "alpha" / "declcfg" / "write_test_expected"
INPUT = EXPECTED / "TestWriteYAML.Success.yaml"
KUBE_GREEN = shared_conformance_data() / "community-operators-prod" / "catalogs" / "v4.20" / "kube-green"


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_graph)


def test_package_filter_parity(run):
    res = run({"path": str(INPUT), "package": "boba-fett", "draw_v0_semantics": True})
    assert res["mermaid"] == (EXPECTED / "TestWriteMermaidChannels.SuccessPackageNameFilter.minEdge=none.pkg=boba-fett.mmd").read_text()
    assert res["changed"] is False


def test_min_edge_parity(run):
    res = run({"path": str(INPUT), "package": "anakin", "min_edge": "anakin.v0.1.0", "draw_v0_semantics": True})
    assert res["mermaid"] == (EXPECTED / "TestWriteMermaidChannels.SuccessMinEdgeFilter.minEdge=anakin.v0.1.0.pkg=none.mmd").read_text()


def test_kube_green_graph_and_path(run):
    res = run({"path": str(KUBE_GREEN), "package": "kube-green", "from_version": "0.5.0"})
    assert res["channel"] == "alpha" and res["head"] == "kube-green.v0.7.1"
    assert res["mermaid"].startswith("graph LR\n") and "kube-green.v0.7.0" in res["mermaid"]
    assert res["upgrade_path"] == ["kube-green.v0.5.0", "kube-green.v0.5.1", "kube-green.v0.5.2", "kube-green.v0.6.0",
                                   "kube-green.v0.7.0", "kube-green.v0.7.1"]
    assert len(res["channels"]["alpha"]["bundles"]) == 10
    head = run({"path": str(KUBE_GREEN), "package": "kube-green", "channel": "alpha", "from_version": "0.7.1"})
    assert head["upgrade_path"] == []


def test_channel_filter(run):
    full = run({"path": str(INPUT), "package": "anakin"})
    only = run({"path": str(INPUT), "package": "anakin", "channel": "light"})
    assert '%% channel "dark"' in full["mermaid"] and '%% channel "dark"' not in only["mermaid"]
    assert only["channel"] == "light"


@pytest.mark.parametrize("args,msg", [
    ({"package": "nope"}, "package nope not found"),
    ({"package": "kube-green", "channel": "beta"}, "has no channel beta"),
    ({"package": "kube-green", "min_edge": "x.v1"}, "unknown minimum edge name"),
    ({"package": "kube-green", "from_version": "9.9.9"}, "no upgrade edge from version"),
])
def test_errors(run, args, msg):
    res = run(dict(args, path=str(KUBE_GREEN)))
    assert res["failed"] is True and msg in res["msg"]
