"""observe(): several kinds listed and watched at once, against the testbed's real API server."""

import threading
import time

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource, get_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import create_object, delete_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe

pytestmark = pytest.mark.testbed


def _configmap(name):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": name}}


def _secret(name):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "stringData": {"k": name}}


def test_reacts_to_changes_of_several_kinds(kubeconfig, namespace):
    client = get_client(kubeconfig=kubeconfig)
    configmaps, secrets = find_resource(client, "ConfigMap", "v1"), find_resource(client, "Secret", "v1")
    create_object(client, configmaps, _configmap("early"), namespace=namespace)
    sources = [Source("maps", "v1", "ConfigMap", namespace), Source("one-secret", "v1", "Secret", namespace, "wanted")]
    seen = []

    def on_change(snapshot):
        seen.append({key: sorted(items) for key, items in snapshot.items()})
        if "wanted" in snapshot["one-secret"] and "early" not in snapshot["maps"]:
            return snapshot
        return None

    def act():
        time.sleep(0.5)
        create_object(client, secrets, _secret("other"), namespace=namespace)  # not selected by name
        create_object(client, secrets, _secret("wanted"), namespace=namespace)
        delete_object(client, configmaps, "early", namespace)

    worker = threading.Thread(target=act)
    worker.start()
    started = time.monotonic()
    snapshot = observe(client, sources, on_change, timeout=30)
    worker.join()
    assert time.monotonic() - started < 10
    assert sorted(snapshot["one-secret"]) == ["wanted"]
    assert "early" not in snapshot["maps"]
    # The first call came after both initial lists: the ConfigMap created before was already there.
    assert "early" in seen[0]["maps"] and seen[0]["one-secret"] == []


def test_times_out_with_partial_result_and_ticks_without_events(kubeconfig, namespace):
    client = get_client(kubeconfig=kubeconfig)
    calls = []

    def on_change(snapshot):
        calls.append(time.monotonic())

    with pytest.raises(ResourceTimeoutError) as caught:
        observe(client, [Source("maps", "v1", "ConfigMap", namespace)], on_change, timeout=2.5, tick=0.5, on_timeout=lambda s: {"maps": sorted(s["maps"])})
    assert caught.value.result["maps"] == ["kube-root-ca.crt"] or caught.value.result["maps"] == []
    assert len(calls) >= 3  # no events, but the tick re-ran the decision
