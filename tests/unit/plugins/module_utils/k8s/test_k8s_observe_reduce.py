"""observe with ``Source.reduce``: the snapshot holds what ``reduce`` keeps of each listed and watched object (a
deleted one is removed by name), and a source without it holds the objects whole.

The dynamic client and its watch stream are fakes; the canary rollout watches its pods this way on the testbed
(tests/integration/canary/).
"""

import threading

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import observe as kf_observe


def config_map(name, version, payload):
    return {"kind": "ConfigMap", "metadata": {"name": name, "resourceVersion": version, "managedFields": [{"manager": "m"}]}, "data": {"payload": payload}}


def config_maps(listed_seen):
    """``(client, script)``: ConfigMaps listing cm-listed, then watching cm-added added, cm-listed modified and
    cm-listed deleted, once ``listed_seen`` (an Event) is set: the listing has been decided on."""
    client = FakeDynamicClient(served={("v1", "ConfigMap")})
    events = [
        listed_seen,
        {"type": "ADDED", "object": config_map("cm-added", "11", "a")},
        {"type": "MODIFIED", "object": config_map("cm-listed", "12", "b")},
        {"type": "DELETED", "object": config_map("cm-listed", "13", "b")},
    ]
    return client, client.script("ConfigMap", [{"metadata": {"resourceVersion": "10"}, "items": [config_map("cm-listed", "9", "x")]}], [events])


def only_payload(obj):
    return {"metadata": {"name": obj["metadata"]["name"]}, "payload": obj["data"]["payload"]}


@pytest.mark.parametrize(
    "reduce, first, last",
    [
        (only_payload, {"cm-listed": {"metadata": {"name": "cm-listed"}, "payload": "x"}}, {"cm-added": {"metadata": {"name": "cm-added"}, "payload": "a"}}),
        (None, {"cm-listed": config_map("cm-listed", "9", "x")}, {"cm-added": config_map("cm-added", "11", "a")}),
    ],
)
def test_the_snapshot_holds_what_reduce_keeps_of_every_listed_and_watched_object(reduce, first, last):
    listed_seen = threading.Event()
    client, _script = config_maps(listed_seen)
    snapshots = []

    def on_change(snapshot):
        snapshots.append({name: dict(obj) for name, obj in snapshot["maps"].items()})
        listed_seen.set()
        return snapshot["maps"] if "cm-listed" not in snapshot["maps"] else None

    try:
        outcome = kf_observe.observe(client, [kf_observe.Source("maps", "v1", "ConfigMap", "ns", reduce=reduce)], on_change, 20)
    finally:
        client.stop_watches()
    assert snapshots[0] == first
    assert outcome == last
