"""olm_operator's operator_group_spec and namespace_labels against the testbed's real OLM v0: an OperatorGroup with
the extra spec OLM accepts (the operator installs), labels merged into an existing namespace, a namespace the module
creates with them, and an existing OperatorGroup that differs refused before anything changes."""

import pytest
from kubernetes import client
from lib.olm_catalog import CATALOG, GROUP

pytestmark = pytest.mark.testbed


FAIL_FORWARD = "TechPreviewUnsafeFailForward"


def test_extra_operator_group_spec_and_namespace_labels(run_module, kubeconfig, catalog_ns, custom, api):
    params = dict(
        kubeconfig=kubeconfig,
        namespace=catalog_ns,
        package="kube-demo",
        catalog=CATALOG,
        channel="stable",
        version="0.0.1",
        operator_group_spec={"upgradeStrategy": FAIL_FORWARD},
        namespace_labels={"pod-security.kubernetes.io/enforce": "baseline"},
    )
    # check mode: the OperatorGroup with its extra spec and the labels in the diff, nothing changed
    planned = run_module("olm_operator", params, check_mode=True, diff=True)
    assert not planned.get("failed") and planned["changed"] is True, planned.get("msg")
    diff = planned["diff"]
    assert diff["after"]["operator_group"]["spec"] == {"targetNamespaces": [catalog_ns], "upgradeStrategy": FAIL_FORWARD}, diff
    assert diff["before"]["namespace_labels"] == {"pod-security.kubernetes.io/enforce": None}, diff
    assert diff["after"]["namespace_labels"] == {"pod-security.kubernetes.io/enforce": "baseline"}, diff
    assert custom.list_namespaced_custom_object(GROUP, "v1", catalog_ns, "operatorgroups")["items"] == []
    assert "pod-security.kubernetes.io/enforce" not in (client.CoreV1Api(api).read_namespace(catalog_ns).metadata.labels or {})

    first = run_module("olm_operator", params)
    assert not first.get("failed"), first.get("msg")
    assert first["namespace_labels"] == {"pod-security.kubernetes.io/enforce": "baseline"} and first["installed_csv"] == "kube-demo.v0.0.1"
    labels = client.CoreV1Api(api).read_namespace(catalog_ns).metadata.labels
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline" and "kubernetes.io/metadata.name" in labels  # others kept
    (og,) = custom.list_namespaced_custom_object(GROUP, "v1", catalog_ns, "operatorgroups")["items"]
    assert og["spec"]["upgradeStrategy"] == FAIL_FORWARD and og["spec"]["targetNamespaces"] == [catalog_ns], og["spec"]

    assert run_module("olm_operator", params)["changed"] is False
    relabelled = run_module("olm_operator", dict(params, namespace_labels={"pod-security.kubernetes.io/enforce": "restricted", "team": "a"}), diff=True)
    assert relabelled["changed"] is True and relabelled["namespace_labels"] == {"pod-security.kubernetes.io/enforce": "restricted", "team": "a"}
    # the diff shows the labels that change (and what they were), and the Subscription as it is, not as created
    diff = relabelled["diff"]
    assert diff["before"]["namespace_labels"] == {"pod-security.kubernetes.io/enforce": "baseline", "team": None}, diff
    assert diff["after"]["namespace_labels"] == {"pod-security.kubernetes.io/enforce": "restricted", "team": "a"}, diff
    assert diff["before"]["subscription"] == diff["after"]["subscription"], diff

    differs = run_module("olm_operator", dict(params, operator_group_spec={"upgradeStrategy": "Default"}))
    assert differs.get("failed") and differs["reason"] == "OperatorGroupDiffers", differs
    assert "upgradeStrategy" in differs["msg"] and FAIL_FORWARD in differs["msg"], differs["msg"]
    # the targets are checked on every run, not only when the Subscription is created
    targets = run_module("olm_operator", dict(params, target_namespaces=["default"]))
    assert targets.get("failed") and targets["reason"] == "OperatorGroupDiffers" and "not the requested ['default']" in targets["msg"], targets


def test_config_is_made_equal_to_the_one_given(run_module, kubeconfig, catalog_ns, custom):
    """A key left out of config is removed from the Subscription (a merge patch alone would keep it), config: {}
    removes it whole, and the next run changes nothing."""
    params = dict(kubeconfig=kubeconfig, namespace=catalog_ns, package="kube-demo", catalog=CATALOG, channel="stable", version="0.0.1")
    env = [{"name": "LOG_LEVEL", "value": "debug"}]
    first = run_module("olm_operator", dict(params, config={"env": env, "annotations": {"team": "a"}}))
    assert not first.get("failed"), first.get("msg")

    def config():
        return custom.get_namespaced_custom_object(GROUP, "v1alpha1", catalog_ns, "subscriptions", "kube-demo")["spec"].get("config")

    assert config() == {"env": env, "annotations": {"team": "a"}}
    fewer = run_module("olm_operator", dict(params, config={"env": env}))
    assert fewer["changed"] is True and config() == {"env": env}, fewer
    assert run_module("olm_operator", dict(params, config={"env": env}))["changed"] is False
    cleared = run_module("olm_operator", dict(params, config={}))
    assert cleared["changed"] is True and config() is None, cleared
    assert run_module("olm_operator", dict(params, config={}))["changed"] is False


def test_a_namespace_the_module_creates_gets_the_labels(run_module, kubeconfig, catalog_ns, operator_ns, api):
    """OLM uses a CatalogSource only from the Subscription's own or the global catalog namespace, so the install into
    the new namespace fails in resolution - after the module created the namespace with its labels."""
    params = dict(kubeconfig=kubeconfig, namespace=operator_ns, package="kube-demo", catalog=CATALOG, catalog_namespace=catalog_ns, wait_timeout=60)
    result = run_module("olm_operator", dict(params, namespace_labels={"team": "a"}))
    assert result.get("failed") and result.get("reason") == "ConstraintsNotSatisfiable", result
    assert client.CoreV1Api(api).read_namespace(operator_ns).metadata.labels["team"] == "a"
