"""The k8s adapter (plugins/module_utils/k8s) against the testbed's real API server."""

import os
import threading
import time

import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource, get_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import create_object, get_object, patch_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until

pytestmark = pytest.mark.testbed


def _configmap(name, data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_auth_from_k8s_auth_kubeconfig_environment(kubeconfig, monkeypatch):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig)
    client = get_client()
    namespaces = find_resource(client, "Namespace", "v1")
    names = [ns["metadata"]["name"] for ns in client.get(namespaces).to_dict()["items"]]
    assert "kube-system" in names


def test_server_side_dry_run_validates_without_persisting(kubeconfig, namespace):
    live = get_client(kubeconfig=kubeconfig)
    dry = K8SClient(configuration=live.configuration, client=live.client, dry_run=True)
    configmaps = find_resource(dry, "ConfigMap", "v1")

    result = create_object(dry, configmaps, _configmap("dry", {"a": "1"}), namespace=namespace)
    assert result.changed
    # The API server defaulted the object (creationTimestamp, uid) but did not store it.
    assert result.after["metadata"]["creationTimestamp"]
    assert get_object(live, configmaps, "dry", namespace) is None

    with pytest.raises(Exception) as err:
        create_object(dry, configmaps, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}, namespace=namespace)
    assert "Bad_Name" in str(err.value)


def test_watch_until_sees_a_later_change_and_times_out_with_the_last_object(kubeconfig, namespace):
    client = get_client(kubeconfig=kubeconfig)
    configmaps = find_resource(client, "ConfigMap", "v1")
    create_object(client, configmaps, _configmap("flag", {"state": "waiting"}), namespace=namespace)

    def flip():
        time.sleep(1.0)
        patch_object(client, configmaps, "flag", {"data": {"state": "done"}}, namespace=namespace)

    threading.Thread(target=flip, daemon=True).start()
    started = time.monotonic()
    obj = watch_until(client, "v1", "ConfigMap", "flag", namespace, lambda o: bool(o) and o["data"]["state"] == "done", timeout=30)
    assert obj["data"]["state"] == "done"
    assert time.monotonic() - started < 10

    with pytest.raises(ResourceTimeoutError) as err:
        watch_until(client, "v1", "ConfigMap", "flag", namespace, absent, timeout=2)
    assert err.value.last_object["data"]["state"] == "done"


def test_find_resource_refreshes_discovery_for_a_new_crd(kubeconfig):
    client = get_client(kubeconfig=kubeconfig)
    find_resource(client, "Namespace", "v1")  # warm the discovery cache before the CRD exists
    group = "t%s.kubeforge.io" % os.urandom(3).hex()
    crds = find_resource(client, "CustomResourceDefinition", "apiextensions.k8s.io/v1")
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets." + group},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
            ],
        },
    }
    create_object(client, crds, crd)
    try:
        established = watch_until(
            client,
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "widgets." + group,
            None,
            lambda o: any(c["type"] == "Established" and c["status"] == "True" for c in ((o or {}).get("status") or {}).get("conditions") or []),
            timeout=30,
        )
        assert established
        widgets = find_resource(client, "Widget", group + "/v1")
        assert widgets.kind == "Widget"
    finally:
        client.delete(crds, name="widgets." + group)
