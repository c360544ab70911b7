"""olm_operator_info module glue: options, result shape, warnings, check mode and failures through run_module.

The client is the fake of lib.olm_info (patched in where KubeforgeModule creates its client); the module
against the testbed's OLM is in tests/integration/olm/test_operator_info.py.
"""

import functools

import pytest
from lib.olm_info import NS, OPERATORS, cluster

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import module as kf_module
from ansible_collections.kubeforge.operators.plugins.modules import olm_operator_info


@pytest.fixture
def fake():
    return cluster()


@pytest.fixture
def run(run_module, monkeypatch, fake):
    monkeypatch.setattr(kf_module, "get_client", lambda module: fake)
    return functools.partial(run_module, olm_operator_info)


def test_one_operator(run, fake):
    res = run({"namespace": NS, "package": "kube-demo"})
    assert res["changed"] is False and not res.get("failed")
    assert "operators" not in res
    op = res["operator"]
    assert (op["present"], op["installed"], op["available_upgrades"], op["upgrade_available"]) == (True, True, ["0.0.2"], True)
    assert len(fake.requests) == 4


@pytest.mark.parametrize("option", ["subscription_name", "name"])
def test_subscription_name_and_its_alias(run, option):
    res = run({"namespace": NS, option: "other-sub"})
    assert res["operator"]["package"] == "kube-other"


def test_every_operator_and_check_mode_are_the_same(run):
    res = run({"namespace": NS})
    checked = run({"namespace": NS}, check_mode=True)
    assert [op["package"] for op in res["operators"]] == ["kube-demo", "kube-other"]
    assert "operator" not in res
    assert checked["operators"] == res["operators"] and checked["changed"] is False


def test_catalog_problems_are_ansible_warnings(run_module, monkeypatch):
    fake = cluster(served={(OPERATORS, "Subscription"), (OPERATORS, "ClusterServiceVersion"), (OPERATORS, "InstallPlan")})
    monkeypatch.setattr(kf_module, "get_client", lambda module: fake)
    res = run_module(olm_operator_info, {"namespace": NS, "package": "kube-demo"})
    assert not res.get("failed")
    assert res["operator"]["catalog"] is None
    # ansible-core 2.19 returns warnings as WarningSummary events, older releases as strings
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in res["warnings"]]
    assert warnings == [
        "catalog information is not reported: the packages.operators.coreos.com/v1 API is not served (OLM's packageserver serves PackageManifests)"
    ]


def test_catalog_options_choose_the_catalog_of_an_absent_package(run, fake):
    res = run({"namespace": NS, "package": "kube-demo", "catalog": "community", "catalog_namespace": "olm"})
    # kube-demo is subscribed: the Subscription's catalog wins over the options, and the result says so
    assert res["operator"]["catalog"]["catalog_source"] == "demo"
    warnings = [w["event"]["msg"] if isinstance(w, dict) else w for w in res["warnings"]]
    assert any("catalog and catalog_namespace are not used" in w for w in warnings), warnings
    fake.objects["Subscription"] = []
    res = run({"namespace": NS, "package": "kube-demo", "catalog": "community", "catalog_namespace": "olm"})
    assert res["operator"]["present"] is False
    assert res["operator"]["catalog"]["catalog_source"] == "community"


def test_contradicting_options_fail(run):
    res = run({"namespace": NS, "package": "kube-demo", "subscription_name": "other-sub"})
    assert res["failed"] is True
    assert res["msg"] == "Subscription other-sub is for package kube-other, not kube-demo"


def test_namespace_is_required(run):
    res = run({"package": "kube-demo"})
    assert res["failed"] is True and "namespace" in res["msg"]
