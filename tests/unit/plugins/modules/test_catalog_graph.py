"""catalog_graph module: opm render-graph parity on the upstream writer fixtures, upgrade paths on kube-green."""

import json
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kubeforge.operators.plugins.modules import catalog_graph


def _shared():
    for parent in Path(__file__).resolve().parents:
        if (parent / "galaxy.yml").is_file():
            path = parent.parent / "shared" / "fbc-conformance"
            if not path.is_dir():
                pytest.fail("shared conformance data missing: %s" % path)
            return path
    pytest.fail("repository root not found")


EXPECTED = _shared() / "opm-testdata" / "alpha" / "declcfg" / "write_test_expected"
INPUT = EXPECTED / "TestWriteYAML.Success.yaml"
KUBE_GREEN = _shared() / "community-operators-prod" / "catalogs" / "v4.20" / "kube-green"


def run(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            catalog_graph.main()
    return json.loads(capsys.readouterr().out)


def test_package_filter_parity(capsys):
    res = run({"path": str(INPUT), "package": "boba-fett", "draw_v0_semantics": True}, capsys)
    assert res["mermaid"] == (EXPECTED / "TestWriteMermaidChannels.SuccessPackageNameFilter.minEdge=none.pkg=boba-fett.mmd").read_text()
    assert res["changed"] is False


def test_min_edge_parity(capsys):
    res = run({"path": str(INPUT), "package": "anakin", "min_edge": "anakin.v0.1.0", "draw_v0_semantics": True},
              capsys)
    assert res["mermaid"] == (EXPECTED / "TestWriteMermaidChannels.SuccessMinEdgeFilter.minEdge=anakin.v0.1.0.pkg=none.mmd").read_text()


def test_kube_green_graph_and_path(capsys):
    res = run({"path": str(KUBE_GREEN), "package": "kube-green", "from_version": "0.5.0"}, capsys)
    assert res["channel"] == "alpha" and res["head"] == "kube-green.v0.7.1"
    assert res["mermaid"].startswith("graph LR\n") and "kube-green.v0.7.0" in res["mermaid"]
    assert res["upgrade_path"] == ["kube-green.v0.5.0", "kube-green.v0.5.1", "kube-green.v0.5.2", "kube-green.v0.6.0",
                                   "kube-green.v0.7.0", "kube-green.v0.7.1"]
    assert len(res["channels"]["alpha"]["bundles"]) == 10
    head = run({"path": str(KUBE_GREEN), "package": "kube-green", "channel": "alpha", "from_version": "0.7.1"},
               capsys)
    assert head["upgrade_path"] == []


def test_channel_filter(capsys):
    full = run({"path": str(INPUT), "package": "anakin"}, capsys)
    only = run({"path": str(INPUT), "package": "anakin", "channel": "light"}, capsys)
    assert '%% channel "dark"' in full["mermaid"] and '%% channel "dark"' not in only["mermaid"]
    assert only["channel"] == "light"


@pytest.mark.parametrize("args,msg", [
    ({"package": "nope"}, "package nope not found"),
    ({"package": "kube-green", "channel": "beta"}, "has no channel beta"),
    ({"package": "kube-green", "min_edge": "x.v1"}, "unknown minimum edge name"),
    ({"package": "kube-green", "from_version": "9.9.9"}, "no upgrade edge from version"),
])
def test_errors(capsys, args, msg):
    res = run(dict(args, path=str(KUBE_GREEN)), capsys)
    assert res["failed"] is True and msg in res["msg"]
