"""lib.polling.poll_until, and the testbed's list-then-watch waits that run their rounds through it."""

from types import SimpleNamespace

import pytest
from lib.polling import PollTimeout, poll_until
from testbed import kube


def counter(values):
    """A probe that returns ``values`` one after the other (the last one for ever), counting its calls."""
    calls = []

    def probe():
        calls.append(len(calls))
        return values[min(len(calls) - 1, len(values) - 1)]

    return probe, calls


def test_returns_the_first_value_that_holds():
    probe, calls = counter([0, None, 7, 8])
    assert poll_until(probe, 5, 0.001) == 7
    assert len(calls) == 3


def test_until_decides_on_the_observed_value():
    probe, calls = counter([{"phase": "Pending"}, {"phase": "Running"}])
    assert poll_until(probe, 5, 0.001, until=lambda obj: obj["phase"] == "Running") == {"phase": "Running"}
    assert len(calls) == 2


def test_timeout_names_the_wait_and_the_last_value():
    probe, calls = counter([{"phase": "Pending"}])
    with pytest.raises(PollTimeout) as caught:
        poll_until(probe, 0.05, 0.01, "the pod to run", until=lambda obj: obj["phase"] == "Running", show=lambda obj: obj["phase"])
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, TimeoutError)
    assert str(caught.value) == "timed out after 0.05s waiting for the pod to run; last seen: Pending"
    assert caught.value.last == {"phase": "Pending"}
    assert len(calls) >= 2


def test_a_failing_check_ends_the_wait_at_once():
    def until(value):
        raise AssertionError("the process ended")

    with pytest.raises(AssertionError, match="the process ended"):
        poll_until(lambda: 1, 60, 0.001, until=until)


# ------------------------------------------------------------------------------ testbed.kube (fake API calls)


def model(name, phase):
    return SimpleNamespace(metadata=SimpleNamespace(namespace="ns", name=name), status={"phase": phase})


class Item:
    def __init__(self, obj):
        self.obj = obj

    def to_dict(self):
        return self.obj


class WatchedResource:
    """A dynamic-client resource: a LIST of ``listed``, then a watch that sends ``events``."""

    def __init__(self, listed, events=()):
        self.listed, self.events, self.lists = listed, list(events), 0

    def get(self, namespace=None):
        self.lists += 1
        return SimpleNamespace(items=[Item(o) for o in self.listed], metadata=SimpleNamespace(resourceVersion="5"))

    def watch(self, namespace=None, resource_version=None, timeout=None):
        yield from self.events


def obj(name, phase):
    return {"metadata": {"namespace": "ns", "name": name}, "status": {"phase": phase}}


def running(o):
    return o["status"]["phase"] == "Running"


def test_wait_for_resource_finds_a_listed_object():
    resource = WatchedResource([obj("a", "Pending"), obj("b", "Running")])
    assert kube.wait_for_resource(resource, running, 5, "a running pod", "ns") == obj("b", "Running")
    assert resource.lists == 1


def test_wait_for_resource_takes_added_or_modified_events_only():
    deleted, modified = obj("a", "Running"), obj("b", "Running")
    resource = WatchedResource([obj("a", "Pending")], [{"type": "DELETED", "raw_object": deleted}, {"type": "MODIFIED", "raw_object": modified}])
    assert kube.wait_for_resource(resource, running, 5, "a running pod", "ns") is modified


def test_wait_for_resource_times_out_with_the_last_object_seen():
    resource = WatchedResource([obj("a", "Pending")])
    with pytest.raises(TimeoutError) as caught:
        kube.wait_for_resource(resource, running, 0.05, "a running pod", "ns")
    assert str(caught.value) == "timed out after 0.05s waiting for a running pod; last seen: ns/a status={'phase': 'Pending'}"
    assert resource.lists >= 2  # a new round after every watch


class QuietStream:
    def stream(self, amt=None, decode_content=False):
        yield from ()

    def close(self):
        pass

    def release_conn(self):
        pass


def test_wait_for_lists_then_watches_and_times_out_with_the_last_object():
    calls = []

    def list_pods(**kwargs):
        calls.append(kwargs)
        if kwargs.get("watch"):
            return QuietStream()
        return SimpleNamespace(items=[model("a", "Pending")], metadata=SimpleNamespace(resource_version="5"))

    with pytest.raises(TimeoutError, match=r"waiting for a running pod; last seen: ns/a status=\{'phase': 'Pending'\}"):
        kube.wait_for(list_pods, lambda pod: pod.status["phase"] == "Running", 0.05, "a running pod", namespace="ns")
    assert calls[0] == {"namespace": "ns"} and calls[1]["resource_version"] == "5" and calls[1]["namespace"] == "ns"
    assert kube.wait_for(list_pods, lambda pod: pod.metadata.name == "a", 5, "pod a", namespace="ns").metadata.name == "a"
