"""pod_security against the testbed's real Pod Security admission: labels, the pods a new level would reject (the
API server's warnings), refusal, check mode, idempotence and restoring the previous labels."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.testbed

ENFORCE = "pod-security.kubernetes.io/enforce"


def pod(name, privileged):
    container = {"name": "c", "image": "example.invalid/kubeforge/agent:v1"}
    if privileged:
        container["securityContext"] = {"privileged": True}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


def labels(core, namespace):
    return {
        k: v for k, v in (core.read_namespace(namespace).metadata.labels or {}).items() if k.startswith("pod-security") or k.startswith("security.openshift")
    }


def test_relabel_report_refuse_restore(run_module, kubeconfig, namespace, api):
    core = client.CoreV1Api(api)
    core.patch_namespace(namespace, {"metadata": {"labels": {"pod-security.kubernetes.io/warn": "baseline"}}})
    core.create_namespaced_pod(namespace, pod("priv", privileged=True))
    args = {"kubeconfig": kubeconfig, "namespace": namespace}
    before = labels(core, namespace)

    predicted = run_module("pod_security", dict(args, enforce="restricted", warn="restricted", label_sync=False), check_mode=True, diff=True)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True and predicted["labels"][ENFORCE] == "restricted"
    assert "priv" in predicted["violations"] and "privileged" in predicted["violations"]["priv"]
    assert labels(core, namespace) == before  # a dry run

    refused = run_module("pod_security", dict(args, enforce="restricted", fail_on_violations=True))
    assert refused["failed"] and "would reject 1 running pod(s) (priv)" in refused["msg"], refused
    assert labels(core, namespace) == before
    # check mode predicts that refusal, instead of a change the real run would refuse
    predicted_refusal = run_module("pod_security", dict(args, enforce="restricted", fail_on_violations=True), check_mode=True)
    assert predicted_refusal["failed"] and "would reject 1 running pod(s) (priv)" in predicted_refusal["msg"], predicted_refusal

    applied = run_module("pod_security", dict(args, enforce="restricted", warn="restricted", label_sync=False))
    assert applied["changed"] is True and "priv" in applied["violations"], applied
    assert {k: predicted[k] for k in ("changed", "labels", "violations")} == {k: applied[k] for k in ("changed", "labels", "violations")}
    assert labels(core, namespace) == {
        ENFORCE: "restricted",
        "pod-security.kubernetes.io/warn": "restricted",
        "security.openshift.io/scc.podSecurityLabelSync": "false",
    }
    with pytest.raises(ApiException) as rejected:
        core.create_namespaced_pod(namespace, pod("priv-2", privileged=True))
    assert rejected.value.status == 403 and "violates PodSecurity" in rejected.value.body
    core.create_namespaced_pod(
        namespace,
        {
            **pod("plain", privileged=False),
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "example.invalid/kubeforge/agent:v1",
                        "securityContext": {
                            "runAsNonRoot": True,
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                    }
                ]
            },
        },
    )

    again = run_module("pod_security", dict(args, enforce="restricted", warn="restricted", label_sync=False))
    assert again["changed"] is False, again

    restored = run_module("pod_security", dict(args, state="absent"))
    assert restored["changed"] is True, restored
    assert labels(core, namespace) == before
    core.create_namespaced_pod(namespace, pod("priv-3", privileged=True))  # admitted again
    assert run_module("pod_security", dict(args, state="absent"))["changed"] is False


def test_unknown_namespace_and_bad_version(run_module, kubeconfig, namespace):
    missing = run_module("pod_security", {"kubeconfig": kubeconfig, "namespace": namespace + "-nope", "enforce": "baseline"})
    assert missing["failed"] and "does not exist" in missing["msg"]
    bad = run_module("pod_security", {"kubeconfig": kubeconfig, "namespace": namespace, "enforce": "baseline", "enforce_version": "1.35"})
    assert bad["failed"] and "neither 'latest'" in bad["msg"]
    nothing = run_module("pod_security", {"kubeconfig": kubeconfig, "namespace": namespace})
    assert nothing["failed"] and "needs at least one of enforce, audit, warn" in nothing["msg"], nothing
