"""lib.fakes.FakeDynamicClient answers as the API server does where the code under test depends on it."""

import pytest
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import NotFoundError
from lib.fakes import FakeDynamicClient, merge_patch


@pytest.mark.parametrize(
    "target, patch, merged",
    [  # RFC 7386 appendix A, the cases a Kubernetes merge patch meets
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch(target, patch, merged):
    assert merge_patch(target, patch) == merged


def cm(name, rv="5", **metadata):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict({"name": name, "namespace": "ns", "resourceVersion": rv}, **metadata)}


def test_resources_found_through_discovery_call_the_client_as_kubernetes_dynamic_does():
    client = FakeDynamicClient({"ConfigMap": [cm("a")]}, served={("v1", "ConfigMap")})
    resource = client.resources.get("v1", "ConfigMap")
    assert resource.get(name="a", namespace="ns")["metadata"]["name"] == "a"
    resource.patch({"data": {"k": "v"}}, name="a", namespace="ns", content_type="application/merge-patch+json", dry_run="All")
    assert "data" not in client.stored("ConfigMap", "a")  # a dry run stores nothing
    assert [(verb, params.get("dry_run")) for verb, _kind, params in client.calls] == [("GET", None), ("PATCH", "All")]


def test_deletes_honour_preconditions_and_finalizers():
    client = FakeDynamicClient({"ConfigMap": [cm("a"), cm("b", finalizers=["x"])]}, served={("v1", "ConfigMap")})
    resource = client.resources.get("v1", "ConfigMap")
    with pytest.raises(ApiException) as refused:
        resource.delete(name="a", namespace="ns", body={"preconditions": {"resourceVersion": "4"}})
    assert refused.value.status == 409
    assert resource.delete(name="b", namespace="ns")["metadata"]["deletionTimestamp"]
    assert client.stored("ConfigMap", "b")["metadata"]["deletionTimestamp"]
    resource.delete(name="a", namespace="ns", body={"preconditions": {"resourceVersion": "5"}})
    with pytest.raises(NotFoundError):
        client.stored("ConfigMap", "a")


def test_a_scripted_kind_answers_its_lists_in_order_then_the_last_again():
    client = FakeDynamicClient(served={("v1", "ConfigMap")})
    script = client.script("ConfigMap", [ApiException(status=503), {"items": [cm("a")]}])
    resource = client.resources.get("v1", "ConfigMap")
    with pytest.raises(ApiException):
        resource.get(namespace="ns")
    assert resource.get(namespace="ns") == resource.get(namespace="ns") == {"items": [cm("a")]}
    assert script.list_calls == [{"namespace": "ns"}] * 3
