"""catalog_diff module: the committed catalog pair (a directory against a rendered file) through run_module, check
mode, the refusals of its options, and the errors naming the side."""

import functools
import json

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.modules import catalog_diff

PAIR = data_path("catalog-diff")
EXPECTED = json.loads((PAIR / "expected.json").read_text())


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_diff)


@pytest.mark.parametrize("check_mode", [False, True])
def test_pair_returns_the_action_result(run, check_mode):
    res = run({"old": str(PAIR / "old"), "new": str(PAIR / "new.yaml")}, check_mode=check_mode)
    assert res["changed"] is False and "failed" not in res
    expected = dict(EXPECTED)
    assert expected.pop("warnings") == []  # an empty warnings list is not returned
    for key, value in expected.items():
        assert res[key] == value, key
    assert "old_image" not in res and "new_image" not in res
    assert res["summary"][1] == "packages: 1 added, 1 removed (+ new-op; - gone-op)"


def test_same_catalog_differs_not(run):
    res = run({"old": str(PAIR / "old"), "new": str(PAIR / "old")})
    assert res["differs"] is False and res["heads"] == [] and res["packages"] == {"added": [], "removed": []}
    assert len(res["summary"]) == 2


def test_a_channel_without_one_head_is_a_warning(run, tmp_path):
    text = (
        (PAIR / "new.yaml")
        .read_text()
        .replace(
            "    replaces: alpha-op.v1.1.0\n---\nschema: olm.channel\npackage: alpha-op\nname: fast",
            "---\nschema: olm.channel\npackage: alpha-op\nname: fast",
            1,
        )
    )
    assert text != (PAIR / "new.yaml").read_text()
    (tmp_path / "two-heads.yaml").write_text(text)
    res = run({"old": str(PAIR / "old"), "new": str(tmp_path / "two-heads.yaml")})
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in res["warnings"]]  # structured since ansible-core 2.19
    assert warnings == ["new catalog: package alpha-op channel stable: multiple channel heads found in graph: alpha-op.v1.1.0, alpha-op.v1.2.0"]
    assert {"package": "alpha-op", "channel": "stable", "old": "alpha-op.v1.1.0", "new": None} in res["heads"]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"new": "NEW"}, "one of the following is required: old, old_image"),
        ({"old": "OLD", "old_image": "r.example/c:v1", "new": "NEW"}, "parameters are mutually exclusive: old|old_image"),
        ({"old": "missing-dir", "new": "NEW"}, "old catalog missing-dir does not exist"),
        ({"old": "OLD", "new": "BAD"}, 'new catalog: unknown package "nope" for channel "stable"'),
    ],
)
def test_refusals(run, tmp_path, args, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: olm.channel\npackage: nope\nname: stable\nentries: []\n")
    paths = {"OLD": str(PAIR / "old"), "NEW": str(PAIR / "new.yaml"), "BAD": str(bad)}
    res = run({k: paths.get(v, v) for k, v in args.items()})
    assert res.get("failed") is True and message in res["msg"], res
