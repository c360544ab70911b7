"""daemonset_canary on the testbed's real node: a container that really crashes (exit code 1, or 0 where it
should run for good) halts the canary (and rolls back) on exactly that node, as the kubelet reports it; a good image
completes. The DaemonSet selects only the real node: its pods run under containerd and runc, their readiness and
crashes come from the kubelet."""

import functools

import pytest
from kubernetes import client
from lib.canary_objects import (
    NODES as CANARY_NODES,
)
from lib.canary_objects import (
    PREFIX,
    daemonset,
)
from lib.polling import poll_until

pytestmark = pytest.mark.testbed
NODES = CANARY_NODES  # the KWOK nodes every canary test file shares (the nodes fixture reads it)


def real_daemonset(name, image, real_node):
    """The canary tests' DaemonSet (lib.canary_objects), on the real node only: the KWOK nodes are left alone."""
    body = daemonset(name, max_unavailable=3)
    pod = body["spec"]["template"]["spec"]
    pod.update(nodeSelector=real_node["node_selector"], tolerations=real_node["tolerations"], terminationGracePeriodSeconds=2)
    pod["containers"][0]["image"] = image
    return body


def settled(apps, namespace, name, image):
    def done(ds):
        st = ds.status
        return (
            (st.observed_generation or 0) >= ds.metadata.generation
            and st.desired_number_scheduled == 1
            and st.updated_number_scheduled == st.number_available == 1
            and ds.spec.template.spec.containers[0].image == image
        )

    read = functools.partial(apps.read_namespaced_daemon_set, name, namespace)
    return poll_until(read, 90, 0.5, f"DaemonSet {name} on the real node", until=done, show=lambda ds: ds.status)


def live_pods(api, namespace, name):
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"app={name}").items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


@pytest.fixture
def agent(api, namespace, real_node):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set(namespace, real_daemonset("agent", real_node["images"]["pause"], real_node))
    return settled(apps, namespace, "agent", real_node["images"]["pause"])


def test_real_crash_loop_halts_on_that_node(run_module, kubeconfig, namespace, api, real_node, agent):
    crash = real_node["images"]["crash"]
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": crash}, "canary_timeout": 150}

    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "halted", failed
    assert "CrashLoopBackOff" in failed["msg"] and real_node["name"] in failed["msg"], failed["msg"]
    # both ways back are offered; the DaemonSet has one node, so its canary was the whole DaemonSet (warned of)
    assert "undo=true (without template or images" in failed["msg"] and "on_failure=rollback and the same template" in failed["msg"], failed["msg"]
    assert "runs on a single node: the canary is the whole DaemonSet" in str(failed.get("warnings")), failed.get("warnings")
    pods = live_pods(api, namespace, "agent")
    assert [(p.spec.node_name, p.spec.containers[0].image) for p in pods] == [(real_node["name"], crash)]
    status = pods[0].status.container_statuses[0]
    assert status.restart_count >= 3, status
    terminated = status.state.terminated or status.last_state.terminated
    assert terminated.exit_code == 1, status
    ds = client.AppsV1Api(api).read_namespaced_daemon_set("agent", namespace)
    assert ds.metadata.annotations[PREFIX + "phase"] == "halted"
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1


def test_real_crash_loop_rolls_back(run_module, kubeconfig, namespace, api, real_node, agent):
    args = {
        "kubeconfig": kubeconfig,
        "namespace": namespace,
        "name": "agent",
        "images": {"agent": real_node["images"]["crash"]},
        "on_failure": "rollback",
        "canary_timeout": 150,
    }
    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "rolledback", failed
    ds = settled(client.AppsV1Api(api), namespace, "agent", real_node["images"]["pause"])
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3
    pods = live_pods(api, namespace, "agent")
    assert [(p.spec.containers[0].image, p.status.phase) for p in pods] == [(real_node["images"]["pause"], "Running")]


def test_a_container_that_exits_0_again_and_again_halts(run_module, kubeconfig, namespace, api, real_node, agent):
    """A program that ends (exit code 0) where it should run for good: the kubelet restarts it with back-off and
    reports its last termination (Completed, exit code 0) in between, never CrashLoopBackOff."""
    template = real_daemonset("agent", real_node["images"]["olm-util"], real_node)["spec"]["template"]
    template["spec"]["containers"][0]["command"] = ["/bin/cp", "/bin/cpb", "/dev/shm/cpb"]  # copies one file: exits 0 at once
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "template": template, "crash_restarts": 2, "canary_timeout": 150}
    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "halted", failed
    assert "CrashLoopBackOff" in failed["msg"] and real_node["name"] in failed["msg"], failed["msg"]
    status = live_pods(api, namespace, "agent")[0].status.container_statuses[0]
    terminated = status.state.terminated or status.last_state.terminated
    assert terminated.exit_code == 0 and status.restart_count >= 2, status


def test_good_image_completes(run_module, kubeconfig, namespace, api, real_node, agent):
    new = real_node["images"]["pause@digest"]
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": new}}
    done = run_module("daemonset_canary", args)
    assert not done.get("failed") and done["phase"] == "done", done
    ds = settled(client.AppsV1Api(api), namespace, "agent", new)
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3 and not any(k.startswith(PREFIX) for k in ds.metadata.annotations or {})
    pods = live_pods(api, namespace, "agent")
    assert [(p.spec.node_name, p.spec.containers[0].image, p.status.phase) for p in pods] == [(real_node["name"], new, "Running")]


def test_missing_image_halts(run_module, kubeconfig, namespace, api, real_node, agent):
    registry = real_node["images"]["pause"].split("/", 1)[0]
    missing = f"{registry}/kubeforge-testbed/missing:v1"  # the testbed registry answers 404 for it
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": missing}, "canary_timeout": 120}
    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "halted", failed
    assert "ErrImagePull" in failed["msg"] or "ImagePullBackOff" in failed["msg"], failed["msg"]
    assert real_node["name"] in failed["msg"]
