"""scc (custom least-privilege SCCs) and scc_access's pin_workloads on the testbed.

The testbed serves the SCC API from OpenShift's CRD, with the ten default SCCs and OpenShift's own SCC admission
(tests/testbed/scc_admission.py): these tests prove what the API server stores (the rendered object,
``priority: null``, our label), check mode, diff, idempotence, that only our SCCs are changed or deleted (the default
ones never), and that the pin annotation lands on (and leaves) a real Deployment's pod template;
test_scc_admission.py proves what admission then does with pods.
"""

import os

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.scc import scc_object

pytestmark = pytest.mark.testbed

GROUP, VERSION, PLURAL = "security.openshift.io", "v1", "securitycontextconstraints"
LABEL = "operators.kubeforge.io/created-by"
PIN = "openshift.io/required-scc"


@pytest.fixture
def sccs(api):
    """Names of SCCs to delete after the test (with the ClusterRoles scc_access may create for them)."""
    custom = client.CustomObjectsApi(api)
    names = []

    def make(prefix="kf-custom"):
        names.append(f"{prefix}-{os.urandom(3).hex()}")
        return names[-1]

    yield make, custom
    for name in names:
        for delete in (
            lambda n: custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, n),
            lambda n: client.RbacAuthorizationV1Api(api).delete_cluster_role("system:openshift:scc:" + n),
        ):
            try:
                delete(name)
            except ApiException:
                pass


def read(custom, name):
    try:
        return custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_create_check_mode_diff_idempotence_update_and_remove(run_module, kubeconfig, sccs):
    make, custom = sccs
    name = make()
    args = {"kubeconfig": kubeconfig, "name": name, "add_capabilities": ["SYS_NICE"], "run_as_user": "MustRunAsNonRoot"}

    predicted = run_module("scc", args, check_mode=True, diff=True)
    assert predicted["changed"] is True and not predicted.get("failed"), predicted
    assert predicted["scc"]["allowedCapabilities"] == ["NET_BIND_SERVICE", "SYS_NICE"]
    assert read(custom, name) is None  # the dry run stored nothing

    created = run_module("scc", args, diff=True)
    assert created["changed"] is True and not created.get("failed"), created
    assert created["diff"]["before"] == {} and created["diff"]["after"]["metadata"]["name"] == name
    assert "takes effect only where an SCC admission webhook enforces SCCs" in str(created["warnings"])
    stored = read(custom, name)
    # What the CRD keeps: priority is stored as an explicit null (the field is required and nullable), not dropped.
    assert "priority" in stored and stored["priority"] is None
    assert stored["metadata"]["labels"][LABEL] == "kubeforge.operators.scc"
    assert stored["allowedCapabilities"] == ["NET_BIND_SERVICE", "SYS_NICE"] and stored["requiredDropCapabilities"] == ["ALL"]
    assert stored["runAsUser"] == {"type": "MustRunAsNonRoot"} and stored["seccompProfiles"] == ["runtime/default"]
    assert {r["field"] for r in created["relaxations"]} == {"allowedCapabilities", "runAsUser"}
    for field, value in created["definition"].items():
        if field not in ("metadata",):
            assert stored.get(field) == value, field
    # check mode applied the same definition as a dry run: what it predicted is what was stored
    assert (predicted["definition"], predicted["relaxations"], predicted["warnings"]) == (created["definition"], created["relaxations"], created["warnings"])
    assert {k: v for k, v in predicted["scc"].items() if k != "metadata"} == {k: v for k, v in stored.items() if k != "metadata"}

    again = run_module("scc", args, diff=True)
    assert again["changed"] is False, again["diff"]
    assert run_module("scc", args, check_mode=True)["changed"] is False

    # Someone widens our SCC by hand: the next run takes the field back.
    custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, name, {"allowHostNetwork": True})
    restored = run_module("scc", args, diff=True)
    assert restored["changed"] is True and restored["diff"]["before"]["allowHostNetwork"] is True
    assert read(custom, name)["allowHostNetwork"] is False

    wider = run_module("scc", dict(args, volumes=["nfs"], description="for the demo"))
    assert wider["changed"] is True
    stored = read(custom, name)
    assert "nfs" in stored["volumes"] and stored["metadata"]["annotations"]["kubernetes.io/description"] == "for the demo"
    narrower = run_module("scc", args)  # options dropped from the spec are taken back
    assert narrower["changed"] is True
    stored = read(custom, name)
    assert "nfs" not in stored["volumes"] and "kubernetes.io/description" not in (stored["metadata"].get("annotations") or {})

    gone_predicted = run_module("scc", {"kubeconfig": kubeconfig, "name": name, "state": "absent"}, check_mode=True)
    assert gone_predicted["changed"] is True and read(custom, name) is not None
    gone = run_module("scc", {"kubeconfig": kubeconfig, "name": name, "state": "absent"}, diff=True)
    assert gone["changed"] is True and gone["scc"] is None and gone["diff"]["after"] == {}
    assert read(custom, name) is None
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": name, "state": "absent"})["changed"] is False


def test_only_our_sccs_are_changed_or_deleted(run_module, kubeconfig, sccs):
    make, custom = sccs
    name = make("kf-foreign")
    foreign = scc_object(name, volumes=["configMap"])
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, foreign)
    before = read(custom, name)
    for state in ("present", "absent"):
        refused = run_module("scc", {"kubeconfig": kubeconfig, "name": name, "state": state})
        assert refused["failed"] is True and "not created by kubeforge.operators.scc" in refused["msg"], refused
    after = read(custom, name)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]

    for default in ("restricted-v2", "anyuid", "privileged"):
        stored = read(custom, default)
        refused = run_module("scc", {"kubeconfig": kubeconfig, "name": default, "host_network": True})
        assert refused["failed"] is True and "never creates, modifies or deletes default SCCs" in refused["msg"]
        assert read(custom, default)["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


def test_for_workload(run_module, kubeconfig, sccs):
    make, custom = sccs
    name = make("kf-agent")
    agent = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "template": {
                "spec": {
                    "hostNetwork": True,
                    "containers": [
                        {
                            "name": "agent",
                            "image": "quay.io/demo/agent:1",
                            "securityContext": {"runAsUser": 1001, "capabilities": {"add": ["NET_ADMIN"]}},
                            "ports": [{"containerPort": 9100, "hostPort": 9100}],
                        }
                    ],
                    "volumes": [{"name": "proc", "hostPath": {"path": "/proc"}}],
                }
            }
        },
    }
    result = run_module("scc", {"kubeconfig": kubeconfig, "name": name, "for_workload": agent})
    assert result["changed"] is True and not result.get("failed"), result
    assert result["recommendation"] == "privileged"
    assert sorted(result["forced_by"]) == ["add_capabilities", "host_network", "host_ports", "run_as_user", "volumes"]
    stored = read(custom, name)
    assert (stored["allowHostNetwork"], stored["allowHostPorts"], stored["allowHostDirVolumePlugin"]) == (True, True, True)
    assert (stored["allowHostPID"], stored["allowPrivilegedContainer"], stored["allowPrivilegeEscalation"]) == (False, False, False)
    assert stored["allowedCapabilities"] == ["NET_BIND_SERVICE", "NET_ADMIN"] and stored["requiredDropCapabilities"] == ["ALL"]
    assert stored["runAsUser"] == {"type": "MustRunAsRange", "uidRangeMin": 1001, "uidRangeMax": 1001}
    assert stored["priority"] is None
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": name, "for_workload": agent})["changed"] is False


def deployment(name):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": {"team": "web"}},
                "spec": {"serviceAccountName": "web", "containers": [{"name": "web", "image": "quay.io/demo/web:1"}]},
            },
        },
    }


def test_pin_and_unpin_a_deployment(run_module, kubeconfig, namespace, api, sccs):
    make, _custom = sccs
    name = make("kf-pin")
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment(namespace, deployment("web"))
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": name, "add_capabilities": ["SYS_NICE"]})["changed"] is True

    def template():
        dep = apps.read_namespaced_deployment("web", namespace)
        return dep.metadata.generation, dep.spec.template.metadata.annotations or {}

    generation, annotations = template()
    assert PIN not in annotations
    pin = [{"kind": "Deployment", "name": "web", "namespace": namespace}]
    args = {"kubeconfig": kubeconfig, "scc": name, "service_accounts": [f"{namespace}/web"], "pin_workloads": pin}

    predicted = run_module("scc_access", args, check_mode=True, diff=True)
    assert predicted["changed"] is True and not predicted.get("failed"), predicted
    assert predicted["pinned"] == [{"kind": "Deployment", "name": "web", "namespace": namespace, "previous": None, "required_scc": name, "changed": True}]
    assert template() == (generation, annotations)  # the dry run changed nothing

    pinned = run_module("scc_access", args, diff=True)
    assert pinned["changed"] is True and pinned["pinned"][0]["required_scc"] == name, pinned
    assert pinned["diff"]["before"]["pinned"] == {f"Deployment {namespace}/web": None}
    assert pinned["diff"]["after"]["pinned"] == {f"Deployment {namespace}/web": name}
    assert not any("does not grant" in str(w) for w in pinned.get("warnings", []))
    new_generation, annotations = template()
    assert annotations == {"team": "web", PIN: name} and new_generation == generation + 1  # a new template: the Deployment rolls
    again = run_module("scc_access", args)
    assert again["changed"] is False and again["pinned"][0]["changed"] is False

    # Pinning to another SCC is refused while ours holds; unpinning with another SCC's name leaves ours alone.
    other = make("kf-other")
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": other})["changed"] is True
    refused = run_module("scc_access", dict(args, scc=other))
    assert refused["failed"] is True and f"pinned to SCC {name}, not {other}" in refused["msg"]
    left = run_module("scc_access", dict(args, scc=other, state="absent", service_accounts=[]))
    assert left["changed"] is False and left["pinned"][0]["previous"] == name and template()[1][PIN] == name

    # A warning when the pods' service account is not among the ones this task grants.
    warned = run_module("scc_access", dict(args, service_accounts=[f"{namespace}/someone-else"]))
    assert any(f"service account {namespace}/web" in str(w) for w in warned["warnings"]), warned

    unpinned = run_module("scc_access", dict(args, state="absent"), diff=True)
    assert unpinned["changed"] is True and unpinned["pinned"][0] == {
        "kind": "Deployment",
        "name": "web",
        "namespace": namespace,
        "previous": name,
        "required_scc": None,
        "changed": True,
    }
    assert template()[1] == {"team": "web"}
    assert run_module("scc_access", dict(args, state="absent"))["changed"] is False

    missing = run_module("scc_access", dict(args, pin_workloads=[{"kind": "StatefulSet", "name": "nope", "namespace": namespace}]))
    assert missing["failed"] is True and f"StatefulSet {namespace}/nope" in missing["msg"] and "does not exist" in missing["msg"]


def test_a_started_job_cannot_be_pinned(run_module, kubeconfig, namespace, api, sccs):
    make, _custom = sccs
    name = make("kf-job")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "quay.io/demo/once:1"}]}}},
    }
    client.BatchV1Api(api).create_namespaced_job(namespace, job)
    unknown = run_module("scc_access", {"kubeconfig": kubeconfig, "scc": name, "pin_workloads": [{"kind": "Job", "name": "once", "namespace": namespace}]})
    assert unknown["failed"] is True and f"SCC {name}: it does not exist" in unknown["msg"], unknown
    assert run_module("scc", {"kubeconfig": kubeconfig, "name": name})["changed"] is True
    # Pins only (no subjects): the Job's template is immutable once the Job exists.
    result = run_module("scc_access", {"kubeconfig": kubeconfig, "scc": name, "pin_workloads": [{"kind": "Job", "name": "once", "namespace": namespace}]})
    assert result["failed"] is True and "pin it in its manifest" in result["msg"] and "immutable" in result["msg"], result
    assert len(result["msg"]) < 700
