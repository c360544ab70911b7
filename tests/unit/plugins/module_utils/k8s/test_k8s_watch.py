"""watch_until: list, then watch from the list's resourceVersion, re-list on 410 Gone, monotonic deadline.

The resource and the watch streams are fakes; the lead's integration tests run it against a real API server.
"""

import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import watch as kf_watch
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError


class FakeClock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


class Tick:
    """A pseudo-event in a fake stream: advances the fake clock instead of yielding an event."""

    def __init__(self, seconds):
        self.seconds = seconds


class FakeWatcher:
    def __init__(self):
        self.stopped = False

    def stop(self):
        self.stopped = True


class FakeResource:
    kind = "CatalogSource"

    def __init__(self, clock, listings, streams):
        self.clock = clock
        self.listings = list(listings)
        self.streams = list(streams)
        self.list_calls = []
        self.watch_calls = []
        self.closed_streams = 0

    def get(self, **kwargs):
        self.list_calls.append(kwargs)
        item = self.listings.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def watch(self, **kwargs):
        self.watch_calls.append(kwargs)
        stream = self.streams.pop(0)
        if isinstance(stream, Exception):
            raise stream

        def generate():
            try:
                for entry in stream:
                    if isinstance(entry, Tick):
                        self.clock.now += entry.seconds
                    elif isinstance(entry, Exception):
                        raise entry
                    else:
                        yield entry
            finally:
                self.closed_streams += 1

        return generate()


def obj(state, rv="1"):
    return {"kind": "CatalogSource", "metadata": {"name": "cs", "namespace": "olm", "resourceVersion": rv}, "status": {"state": state}}


def listing(items, rv="100"):
    return {"kind": "CatalogSourceList", "metadata": {"resourceVersion": rv}, "items": items}


def event(kind, o):
    return {"type": kind, "raw_object": o, "object": o}


def ready(o):
    return o is not None and o["status"]["state"] == "READY"


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def watchers():
    return []


def run(resource, clock, watchers, predicate=ready, timeout=60, name="cs", namespace="olm"):
    def factory():
        watcher = FakeWatcher()
        watchers.append(watcher)
        return watcher

    return kf_watch.watch_until(
        client=None,
        api_version="operators.coreos.com/v1alpha1",
        kind="CatalogSource",
        name=name,
        namespace=namespace,
        predicate=predicate,
        timeout=timeout,
        resource=resource,
        clock=clock,
        watcher_factory=factory,
    )


def test_already_satisfied_needs_no_watch(clock, watchers):
    resource = FakeResource(clock, [listing([obj("READY")])], [])
    assert run(resource, clock, watchers) == obj("READY")
    assert resource.list_calls == [{"namespace": "olm", "field_selector": "metadata.name=cs"}]
    assert resource.watch_calls == []


def test_watches_from_list_resource_version_until_predicate_holds(clock, watchers):
    stream = [
        event("BOOKMARK", {"metadata": {"resourceVersion": "101"}}),
        event("MODIFIED", obj("CONNECTING", "2")),
        Tick(5),
        event("MODIFIED", obj("READY", "3")),
    ]
    resource = FakeResource(clock, [listing([obj("IDLE")])], [stream])
    assert run(resource, clock, watchers, timeout=30) == obj("READY", "3")
    call = resource.watch_calls[0]
    assert call["resource_version"] == "100"
    assert call["name"] == "cs" and call["namespace"] == "olm"
    assert call["timeout"] == 30
    assert len(resource.list_calls) == 1
    assert watchers and all(w.stopped for w in watchers)
    assert resource.closed_streams == 1  # the stream was abandoned mid-way and closed


def test_object_appearing_later(clock, watchers):
    stream = [event("ADDED", obj("READY"))]
    resource = FakeResource(clock, [listing([])], [stream])
    assert run(resource, clock, watchers) == obj("READY")


def test_wait_for_absence_sees_deleted_as_none(clock, watchers):
    stream = [event("MODIFIED", obj("READY")), event("DELETED", obj("READY"))]
    resource = FakeResource(clock, [listing([obj("READY")])], [stream])
    assert run(resource, clock, watchers, predicate=kf_watch.absent) is None


def test_gone_error_event_relists(clock, watchers):
    gone = {"type": "ERROR", "raw_object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    resource = FakeResource(clock, [listing([obj("IDLE")], "100"), listing([obj("READY")], "200")], [[gone]])
    assert run(resource, clock, watchers) == obj("READY")
    assert len(resource.list_calls) == 2
    assert len(resource.watch_calls) == 1


def test_gone_api_exception_relists_and_watches_from_new_version(clock, watchers):
    resource = FakeResource(
        clock,
        [listing([obj("IDLE")], "100"), listing([obj("IDLE")], "250")],
        [ApiException(status=410, reason="Gone"), [event("MODIFIED", obj("READY"))]],
    )
    assert run(resource, clock, watchers) == obj("READY")
    assert [c["resource_version"] for c in resource.watch_calls] == ["100", "250"]


def test_stream_closed_by_server_relists(clock, watchers):
    resource = FakeResource(
        clock,
        [listing([obj("IDLE")]), listing([obj("IDLE")]), listing([obj("READY")])],
        [[Tick(10)], [Tick(10), event("MODIFIED", obj("IDLE"))]],
    )
    assert run(resource, clock, watchers, timeout=60) == obj("READY")
    # the second watch only gets the time that is left
    assert [c["timeout"] for c in resource.watch_calls] == [60, 50]


def test_timeout_carries_last_seen_object(clock, watchers):
    stream = [event("MODIFIED", obj("CONNECTING", "7")), Tick(61), event("MODIFIED", obj("TRANSIENT_FAILURE", "8"))]
    resource = FakeResource(clock, [listing([obj("IDLE")])], [stream])
    with pytest.raises(ResourceTimeoutError) as info:
        run(resource, clock, watchers, timeout=60)
    err = info.value
    assert err.last_object == obj("TRANSIENT_FAILURE", "8")
    assert err.result["result"] == obj("TRANSIENT_FAILURE", "8")
    assert err.duration == pytest.approx(61)
    assert "Timed out after 60s waiting for CatalogSource olm/cs" in str(err)
    assert all(w.stopped for w in watchers)


def test_timeout_when_object_never_exists(clock, watchers):
    resource = FakeResource(clock, [listing([]), listing([])], [[Tick(30)], [Tick(30)]])
    with pytest.raises(ResourceTimeoutError) as info:
        run(resource, clock, watchers, timeout=60)
    assert info.value.last_object is None


def test_zero_timeout_checks_once(clock, watchers):
    resource = FakeResource(clock, [listing([obj("IDLE")])], [])
    with pytest.raises(ResourceTimeoutError):
        run(resource, clock, watchers, timeout=0)
    assert resource.watch_calls == []


def test_other_api_errors_are_kubeforge_errors(clock, watchers):
    resource = FakeResource(clock, [listing([obj("IDLE")])], [ApiException(status=403, reason="Forbidden")])
    with pytest.raises(K8sError) as info:
        run(resource, clock, watchers)
    assert info.value.status == 403
    assert not isinstance(info.value, ResourceTimeoutError)


def test_list_errors_are_kubeforge_errors(clock, watchers):
    resource = FakeResource(clock, [ApiException(status=500, reason="boom")], [])
    with pytest.raises(K8sError, match="Failed to list CatalogSource cs"):
        run(resource, clock, watchers)


def test_error_event_other_than_gone_fails(clock, watchers):
    bad = {"type": "ERROR", "raw_object": {"kind": "Status", "code": 500, "message": "internal"}}
    resource = FakeResource(clock, [listing([obj("IDLE")])], [[bad]])
    with pytest.raises(K8sError, match="internal") as info:
        run(resource, clock, watchers)
    assert info.value.status == 500


def test_cluster_scoped_objects_have_no_namespace(clock, watchers):
    resource = FakeResource(clock, [listing([obj("READY")])], [])
    run(resource, clock, watchers, namespace=None)
    assert resource.list_calls[0]["namespace"] is None


def test_resource_found_through_discovery_when_not_given(monkeypatch, clock, watchers):
    resource = FakeResource(clock, [listing([obj("READY")])], [])
    seen = []

    def fake_find(client, kind, api_version):
        seen.append((client, kind, api_version))
        return resource

    monkeypatch.setattr(kf_watch, "find_resource", fake_find)
    result = kf_watch.watch_until("client", "operators.coreos.com/v1alpha1", "CatalogSource", "cs", "olm", ready, 5, clock=clock)
    assert result == obj("READY")
    assert seen == [("client", "CatalogSource", "operators.coreos.com/v1alpha1")]


@pytest.mark.parametrize(
    "raw,expected",
    [
        ({"type": "ADDED", "raw_object": {"a": 1}}, {"a": 1}),
        ({"type": "MODIFIED", "raw_object": {"a": 2}}, {"a": 2}),
        ({"type": "DELETED", "raw_object": {"a": 3}}, None),
        ({"type": "BOOKMARK", "raw_object": {"metadata": {}}}, kf_watch._SKIP),
        ({"type": "ERROR", "raw_object": {"code": 410}}, kf_watch._GONE),
    ],
)
def test_apply_event(raw, expected):
    assert kf_watch._apply_event(raw) == expected


def test_undecodable_stream_relists(clock, watchers):
    """A stream the client cannot decode (TypeError inside the kubernetes client) is followed by a fresh list."""
    resource = FakeResource(clock, [listing([obj("IDLE")], "100"), listing([], "300")], [[TypeError("'NoneType' object is not subscriptable")]])
    assert run(resource, clock, watchers, predicate=lambda o: o is None) is None
    assert len(resource.list_calls) == 2


def test_undecodable_streams_in_a_row_fail(clock, watchers):
    streams = [[TypeError("bad stream")] for attempt in range(kf_watch.MALFORMED_STREAMS + 1)]
    resource = FakeResource(clock, [listing([obj("IDLE")]) for stream in streams], streams)
    with pytest.raises(K8sError, match="bad stream"):
        run(resource, clock, watchers, timeout=600)
    assert len(resource.watch_calls) == kf_watch.MALFORMED_STREAMS + 1
