# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_upgrade_plan module glue: options, result shape, check mode and refusals through run_module.

The client is lib.fakes' FakeDynamicClient, patched in where KubeforgeModule creates its client; the module against
the testbed's OLM is tests/integration/olm/test_upgrade_plan.py.
"""

import functools
import json

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import module as kf_module
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import upgrade_plan as core
from ansible_collections.kubeforge.operators.plugins.modules import olm_upgrade_plan

OPERATORS = "operators.coreos.com/v1alpha1"
PROPS = {
    "properties": [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": "0.0.1"}}, {"type": core.MAX_OPENSHIFT_VERSION, "value": "4.20"}]
}
CSV = {
    "metadata": {"name": "kube-demo.v0.0.1", "namespace": "ns", "annotations": {core.PROPERTIES_ANNOTATION: json.dumps(PROPS)}},
    "spec": {"version": "0.0.1"},
    "status": {"phase": "Succeeded"},
}
CATALOG = [
    {"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable"},
    {"schema": "olm.channel", "package": "kube-demo", "name": "stable", "entries": [{"name": "kube-demo.v0.0.1"}]},
    {"schema": "olm.bundle", "name": "kube-demo.v0.0.1", "package": "kube-demo", "image": "r.example/b:1", "properties": PROPS["properties"]},
]


@pytest.fixture
def fake():
    return FakeDynamicClient({"ClusterServiceVersion": [CSV], "Subscription": []}, served={(OPERATORS, "ClusterServiceVersion"), (OPERATORS, "Subscription")})


@pytest.fixture
def run(run_module, monkeypatch, fake):
    monkeypatch.setattr(kf_module, "get_client", lambda module: fake)
    return functools.partial(run_module, olm_upgrade_plan)


@pytest.mark.parametrize("check_mode", [False, True])
def test_result_shape(run, check_mode):
    res = run({"openshift_version": "4.21"}, check_mode=check_mode)
    assert not res.get("failed"), res
    assert res["changed"] is False
    assert (res["target"], res["verdict"], res["blockers"]) == ("4.21", "blocked", ["ns/kube-demo.v0.0.1"])
    (op,) = res["operators"]
    assert set(op) == {
        "generation",
        "namespace",
        "name",
        "package",
        "channel",
        "installed_version",
        "source",
        "max_openshift_version",
        "blocks_upgrade",
        "block_reason",
        "target_catalog",
        "target_version",
        "path",
        "deprecations",
        "action",
    }
    assert set(op["action"]) == {"kind", "to_version", "to_channel", "reason"}
    assert res["olm_condition"]["reason"] == "IncompatibleOperatorsInstalled"
    assert op["block_reason"] in res["olm_condition"]["message"].splitlines()


def test_a_catalog_file_without_a_way_forward(run, tmp_path):
    path = tmp_path / "catalog.json"
    path.write_text("\n".join(json.dumps(d) for d in CATALOG))
    res = run({"openshift_version": "4.21", "catalogs": [{"source": "demo", "file": str(path)}]})
    # the CSV has no Subscription, so no catalog entry is its own
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in res["warnings"]]  # structured since ansible-core 2.19
    assert warnings == ["catalogs[0] (demo) is the catalog of no installed operator"]
    assert res["operators"][0]["action"]["kind"] == "unknown"


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "missing required arguments: openshift_version"),
        ({"openshift_version": "4.21", "catalogs": [{"source": "demo", "dir": "d", "file": "f"}]}, "parameters are mutually exclusive: image|dir|file"),
        ({"openshift_version": "4.21", "catalogs": [{"source": "demo"}]}, "one of the following is required: image, dir, file"),
        ({"openshift_version": "4.21", "catalogs": [{"dir": "d"}]}, "missing required arguments: source"),
        ({"openshift_version": "someday"}, "openshift_version 'someday' is not a version"),
    ],
)
def test_refusals(run, fake, args, message):
    res = run(args)
    assert res.get("failed") and message in res["msg"], res
    assert fake.requests == []


def test_the_registry_password_is_no_log():
    spec = olm_upgrade_plan.argspec()["catalogs"]["options"]["registry_auth"]["options"]
    assert spec["password"]["no_log"] is True
