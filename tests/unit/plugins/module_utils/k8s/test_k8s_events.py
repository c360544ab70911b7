"""k8s/events.py: the Event body the modules record."""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import events


def test_event_about_a_namespaced_object():
    obj = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "ns", "uid": "u1"}}
    body = events.event_body(obj, "Warning", "CanaryHalted", "x" * 2000, 0)
    assert body["metadata"] == {"generateName": "agent.", "namespace": "ns"}
    assert body["involvedObject"] == {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "namespace": "ns", "uid": "u1"}
    assert (body["type"], body["reason"], len(body["message"])) == ("Warning", "CanaryHalted", events.MESSAGE_MAX)
    assert body["firstTimestamp"] == body["lastTimestamp"] == "1970-01-01T00:00:00Z"
    assert body["source"] == {"component": "kubeforge.operators"} and body["count"] == 1


def test_event_about_a_cluster_scoped_object_goes_to_default():
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "7"}}
    body = events.event_body(obj, "Normal", "Seen", "ok", 0)
    assert body["metadata"]["namespace"] == "default"
    assert body["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": "n1", "resourceVersion": "7"}
