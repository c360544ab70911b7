"""DaemonSets for daemonset_canary's integration tests on the testbed's KWOK nodes, and reads of their rollout."""

import functools

from kubernetes import client

from lib.polling import poll_until

NODES = 20
V1 = "example.invalid/kubeforge/agent:v1"
V2 = "example.invalid/kubeforge/agent:v2"
CRASHLOOP = "example.invalid/kubeforge/crashloop:v1"
PREFIX = "operators.kubeforge.io/canary-"


def daemonset(name, max_unavailable=3):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeSelector": {"type": "kwok"}, "containers": [{"name": "agent", "image": V1}]},
            },
        },
    }


def wait_settled(apps, namespace, name, timeout=60):
    """Wait until the controller observed the DaemonSet and every scheduled node runs an available updated pod."""

    def settled(ds):
        st = ds.status
        return (
            (st.observed_generation or 0) >= ds.metadata.generation
            and (st.desired_number_scheduled or 0) >= NODES
            and st.updated_number_scheduled == st.desired_number_scheduled == st.number_available
        )

    read = functools.partial(apps.read_namespaced_daemon_set, name, namespace)
    return poll_until(read, timeout, 0.5, f"DaemonSet {name} to settle", until=settled, show=lambda ds: ds.status)


def create_daemonset(api, namespace, name, max_unavailable=3, min_ready_seconds=0):
    body = daemonset(name, max_unavailable)
    if min_ready_seconds:
        body["spec"]["minReadySeconds"] = min_ready_seconds
    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set(namespace, body)
    return wait_settled(apps, namespace, name)


def pods_by_image(api, namespace, name):
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"app={name}").items
    result = {}
    for pod in pods:
        if pod.metadata.deletion_timestamp is None:
            result.setdefault(pod.spec.containers[0].image, set()).add(pod.spec.node_name)
    return result


def canary_annotations(ds):
    return {k: v for k, v in (ds.metadata.annotations or {}).items() if k.startswith(PREFIX)}


def assert_rolled_out(api, namespace, name, max_unavailable):
    """Every node runs the new image, the original strategy is back and no canary annotation is left."""
    ds = wait_settled(client.AppsV1Api(api), namespace, name)
    images = pods_by_image(api, namespace, name)
    assert set(images) == {V2} and len(images[V2]) == ds.status.desired_number_scheduled, images
    assert ds.spec.update_strategy.type == "RollingUpdate"
    assert ds.spec.update_strategy.rolling_update.max_unavailable == max_unavailable
    assert not canary_annotations(ds), ds.metadata.annotations
    return ds
