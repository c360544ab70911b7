"""Testbed smoke tests: each proves one behaviour of the real control plane, KWOK and OLM processes."""

import json
import os
import time

import pytest
from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException
from testbed import config
from testbed.kube import wait_for, wait_for_resource

pytestmark = pytest.mark.testbed


def _restricted_container(name, image):
    return {
        "name": name,
        "image": image,
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            # No runAsUser: SCC admission assigns one from the namespace's block (1000 is outside it: refused).
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def test_version_reports_the_built_release(api, testbed):
    info = client.VersionApi(api).get_code()
    assert info.git_version == testbed.state["versions"]["kubernetes"]


def test_deployment_becomes_available_on_kwok_nodes(api, namespace):
    apps = client.AppsV1Api(api)
    labels = {"app": "web"}
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [_restricted_container("web", "example.invalid/web:v1")]}},
            },
        },
    )

    def available(dep):
        conds = {c.type: c.status for c in (dep.status.conditions or [])}
        return conds.get("Available") == "True" and (dep.status.ready_replicas or 0) == 2

    dep = wait_for(apps.list_namespaced_deployment, available, 90, "deployment web Available", namespace=namespace, field_selector="metadata.name=web")
    assert dep.status.available_replicas == 2
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=web").items
    assert len(pods) == 2
    assert all(p.spec.node_name.startswith("kwok-node-") for p in pods)


def test_daemonset_gets_one_ready_pod_per_node(api, namespace, testbed):
    apps = client.AppsV1Api(api)
    labels = {"app": "agent"}
    apps.create_namespaced_daemon_set(
        namespace,
        {
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [_restricted_container("agent", "example.invalid/agent:v1")]}},
            },
        },
    )
    nodes = testbed.state["nodes"]

    def all_ready(ds):
        st = ds.status
        return st.desired_number_scheduled == nodes and st.number_ready == nodes

    # One pod per node: allow more time on a large testbed (1000 nodes take about a minute).
    timeout = 60 + nodes * 0.2
    wait_for(apps.list_namespaced_daemon_set, all_ready, timeout, "daemonset agent on every node", namespace=namespace, field_selector="metadata.name=agent")
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=agent").items
    assert sorted(p.spec.node_name for p in pods) == sorted(f"kwok-node-{i}" for i in range(nodes))
    assert all(any(c.type == "Ready" and c.status == "True" for c in p.status.conditions) for p in pods)


def test_pod_with_marked_image_crash_loops_and_never_becomes_ready(api, namespace):
    core = client.CoreV1Api(api)
    core.create_namespaced_pod(
        namespace,
        {
            "metadata": {"name": "crasher"},
            "spec": {"containers": [_restricted_container("main", config.CRASHLOOP_IMAGE)]},
        },
    )

    def restarted(pod):
        statuses = pod.status.container_statuses or []
        return bool(statuses) and statuses[0].restart_count > 0

    pod = wait_for(core.list_namespaced_pod, restarted, 60, "crasher restartCount > 0", namespace=namespace, field_selector="metadata.name=crasher")
    assert pod.status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    # Not Ready now, and still not Ready after kwok had time to apply any other stage.
    time.sleep(3)
    pod = core.read_namespaced_pod("crasher", namespace)
    ready = [c.status for c in pod.status.conditions if c.type == "Ready"]
    assert ready == ["False"]
    assert pod.status.container_statuses[0].ready is False


def test_restricted_namespace_rejects_a_privileged_pod(api):
    core = client.CoreV1Api(api)
    name = "t-psa-restricted-" + os.urandom(3).hex()
    core.create_namespace({"metadata": {"name": name, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    try:
        with pytest.raises(ApiException) as err:
            core.create_namespaced_pod(
                name,
                {
                    "metadata": {"name": "priv"},
                    "spec": {"containers": [{"name": "c", "image": "example.invalid/priv:v1", "securityContext": {"privileged": True}}]},
                },
            )
        assert err.value.status == 403
        message = json.loads(err.value.body)["message"]
        assert 'violates PodSecurity "restricted:latest"' in message
        assert "privileged" in message
        # A compliant pod is accepted in the same namespace: the rejection is PSA's, not a blanket deny.
        core.create_namespaced_pod(name, {"metadata": {"name": "ok"}, "spec": {"containers": [_restricted_container("c", "example.invalid/ok:v1")]}})
    finally:
        core.delete_namespace(name)


def test_olm_installs_kube_demo_through_manual_install_plan(api, namespace, testbed):
    dyn = dynamic.DynamicClient(api)
    catalogs = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="CatalogSource")
    groups = dyn.resources.get(api_version="operators.coreos.com/v1", kind="OperatorGroup")
    subs = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="Subscription")
    plans = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="InstallPlan")
    csvs = dyn.resources.get(api_version="operators.coreos.com/v1alpha1", kind="ClusterServiceVersion")

    source = "kube-demo-" + namespace[-6:]
    catalogs.create(
        namespace=namespace,
        body={
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": source, "namespace": namespace},
            "spec": {"sourceType": "grpc", "address": testbed.catalog_address, "displayName": "kube-demo test catalog"},
        },
    )
    groups.create(
        namespace=namespace,
        body={
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og", "namespace": namespace},
            "spec": {"targetNamespaces": [namespace]},
        },
    )
    subs.create(
        namespace=namespace,
        body={
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": "kube-demo", "namespace": namespace},
            "spec": {
                "name": "kube-demo",
                "channel": "stable",
                "source": source,
                "sourceNamespace": namespace,
                "installPlanApproval": "Manual",
                "startingCSV": "kube-demo.v0.0.1",
            },
        },
    )

    plan = wait_for_resource(plans, lambda p: p.get("status", {}).get("phase") == "RequiresApproval", 120, "InstallPlan RequiresApproval", namespace)
    assert plan["spec"]["clusterServiceVersionNames"] == ["kube-demo.v0.0.1"]
    assert plan["spec"]["approved"] is False
    plans.patch(namespace=namespace, name=plan["metadata"]["name"], body={"spec": {"approved": True}}, content_type="application/merge-patch+json")

    def succeeded(csv):
        return csv["metadata"]["name"] == "kube-demo.v0.0.1" and csv.get("status", {}).get("phase") == "Succeeded"

    csv = wait_for_resource(csvs, succeeded, 180, "CSV kube-demo.v0.0.1 Succeeded", namespace)
    assert csv["spec"]["version"] == "0.0.1"
    deployment = client.AppsV1Api(api).read_namespaced_deployment("kube-demo-controller-manager", namespace)
    assert deployment.status.available_replicas == 1
    crd = client.ApiextensionsV1Api(api).read_custom_resource_definition("kubedemos.demo.kubeforge.io")
    assert crd.spec.group == "demo.kubeforge.io"


def test_scc_crd_stores_security_context_constraints(api, testbed):
    # OpenShift's SCC API is there for the SCC modules' tests: objects are stored, nothing enforces them.
    if not testbed.state.get("scc_crd"):
        pytest.fail("the running testbed was started --without-scc; restart it with the SCC CRD")
    dyn = dynamic.DynamicClient(api)
    sccs = dyn.resources.get(api_version="security.openshift.io/v1", kind="SecurityContextConstraints")
    name = "t-scc-" + os.urandom(3).hex()
    # The shape of OpenShift's restricted-v2 SCC; the CRD's schema requires every one of these fields.
    sccs.create(
        body={
            "apiVersion": "security.openshift.io/v1",
            "kind": "SecurityContextConstraints",
            "metadata": {"name": name},
            "allowHostDirVolumePlugin": False,
            "allowHostIPC": False,
            "allowHostNetwork": False,
            "allowHostPID": False,
            "allowHostPorts": False,
            "allowPrivilegeEscalation": False,
            "allowPrivilegedContainer": False,
            "allowedCapabilities": ["NET_BIND_SERVICE"],
            "defaultAddCapabilities": None,
            "fsGroup": {"type": "MustRunAs"},
            "priority": None,
            "readOnlyRootFilesystem": False,
            "requiredDropCapabilities": ["ALL"],
            "runAsUser": {"type": "MustRunAsRange"},
            "seLinuxContext": {"type": "MustRunAs"},
            "seccompProfiles": ["runtime/default"],
            "supplementalGroups": {"type": "RunAsAny"},
            "users": [],
            "groups": [],
            "volumes": ["configMap", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"],
        }
    )
    try:
        stored = sccs.get(name=name)
        assert stored.runAsUser.type == "MustRunAsRange"
        assert stored.requiredDropCapabilities == ["ALL"]
        assert stored.allowPrivilegedContainer is False
    finally:
        sccs.delete(name=name)
