"""watch_until: observe() with one source. List, then watch from the list's resourceVersion, re-list on 410 Gone or
a closed stream, ride out an API server restart, monotonic deadline.

The resource and its HTTP responses are fakes; the kubernetes client's own Watch decodes the streams. The lead's
integration tests run the same code against the testbed's kube-apiserver, restarted in the middle of waits
(tests/integration/k8s/test_waits_survive_apiserver_restart.py).
"""

import functools
import time

import pytest
from kubernetes.client.rest import ApiException
from lib.fakes import WATCH_CLOSE, FakeDynamicClient
from urllib3.exceptions import MaxRetryError, NewConnectionError

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import observe as kf_observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import watch as kf_watch
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError


def obj(state, rv="1"):
    return {"kind": "CatalogSource", "metadata": {"name": "cs", "namespace": "olm", "resourceVersion": rv}, "status": {"state": state}}


def listing(items, rv="100"):
    return {"kind": "CatalogSourceList", "metadata": {"resourceVersion": rv}, "items": items}


def event(kind, o):
    return {"type": kind, "object": o}


def gone():
    return {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}}


def ready(o):
    return o is not None and o["status"]["state"] == "READY"


def refused():
    return MaxRetryError(None, "/apis", reason=NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused"))


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(kf_observe, "RETRY_PAUSE_FIRST", 0.001)
    monkeypatch.setattr(kf_observe, "RETRY_PAUSE_MAX", 0.004)


API_VERSION = "operators.coreos.com/v1alpha1"


def scripted(listings, streams=()):
    """``(client, script)``: a fake client whose CatalogSource LISTs and WATCHes answer as scripted."""
    client = FakeDynamicClient(served={(API_VERSION, "CatalogSource")})
    return client, client.script("CatalogSource", listings, streams)


def run(client, predicate=ready, timeout=10, name="cs", namespace="olm", tick=None):
    try:
        return kf_watch.watch_until(client, API_VERSION, "CatalogSource", name, namespace, predicate, timeout, tick=tick)
    finally:
        client.stop_watches()


def test_already_satisfied_returns_the_listed_object():
    client, script = scripted([listing([obj("READY")])])
    assert run(client) == obj("READY")
    assert script.list_calls[0] == {"namespace": "olm", "field_selector": "metadata.name=cs"}


def test_watches_from_the_list_resource_version_until_the_predicate_holds():
    stream = [event("BOOKMARK", {"metadata": {"resourceVersion": "101"}}), event("MODIFIED", obj("CONNECTING", "2")), event("MODIFIED", obj("READY", "3"))]
    client, script = scripted([listing([obj("IDLE")])], [stream])
    assert run(client) == obj("READY", "3")
    call = script.watch_calls[0]
    assert call["resource_version"] == "100" and call["field_selector"] == "metadata.name=cs" and call["namespace"] == "olm"
    assert len(script.list_calls) == 1


def test_object_appearing_later():
    client, script = scripted([listing([])], [[event("ADDED", obj("READY"))]])
    assert run(client) == obj("READY")


def test_wait_for_absence_sees_deleted_as_none():
    client, script = scripted([listing([obj("READY")])], [[event("MODIFIED", obj("READY")), event("DELETED", obj("READY"))]])
    assert run(client, predicate=kf_watch.absent) is None


def test_gone_error_event_relists_and_watches_from_the_new_version():
    client, script = scripted([listing([obj("IDLE")], "100"), listing([obj("IDLE")], "200")], [[gone()], [event("MODIFIED", obj("READY"))]])
    assert run(client) == obj("READY")
    assert [c["resource_version"] for c in script.watch_calls] == ["100", "200"]


def test_gone_api_exception_relists():
    client, script = scripted([listing([obj("IDLE")], "100"), listing([obj("READY")], "250")], [ApiException(status=410, reason="Gone")])
    assert run(client) == obj("READY")
    assert len(script.list_calls) == 2


def test_stream_closed_by_the_server_relists():
    streams = [[WATCH_CLOSE], [event("MODIFIED", obj("IDLE")), WATCH_CLOSE]]
    client, script = scripted([listing([obj("IDLE")]), listing([obj("IDLE")]), listing([obj("READY")])], streams)
    assert run(client) == obj("READY")
    assert len(script.list_calls) == 3


def test_timeout_carries_the_last_seen_object(monkeypatch):
    """The deadline passes once the predicate has judged the last object streamed (a clock of the test's own:
    with a real one, a loaded machine may not deliver the stream within the timeout)."""
    judged = []

    def ready_recording(o):
        judged.append(o)
        return ready(o)

    def clock():  # real time, 60 s ahead once that object was judged
        return time.monotonic() + (60 if judged and judged[-1] == obj("TRANSIENT_FAILURE", "8") else 0)

    monkeypatch.setattr(kf_watch, "observe", functools.partial(kf_observe.observe, clock=clock))
    client, script = scripted([listing([obj("IDLE")])], [[event("MODIFIED", obj("CONNECTING", "7")), event("MODIFIED", obj("TRANSIENT_FAILURE", "8"))]])
    with pytest.raises(ResourceTimeoutError) as info:
        run(client, predicate=ready_recording, timeout=30)
    err = info.value
    assert err.last_object == obj("TRANSIENT_FAILURE", "8")
    assert err.result["result"] == obj("TRANSIENT_FAILURE", "8")
    assert err.duration >= 60
    assert "Timed out after 30s waiting for CatalogSource olm/cs" in str(err)


def test_timeout_when_the_object_never_exists():
    started = time.monotonic()
    with pytest.raises(ResourceTimeoutError) as info:
        run(scripted([listing([])])[0], timeout=0.2)
    assert info.value.last_object is None
    assert info.value.duration >= 0.2 and time.monotonic() - started >= 0.2  # the real clock's deadline, never early


@pytest.mark.parametrize(("state", "ends"), [("READY", "returns"), ("IDLE", "times out")])
def test_zero_timeout_checks_once(state, ends):
    client, script = scripted([listing([obj(state)])])
    if ends == "returns":
        assert run(client, timeout=0) == obj(state)
    else:
        with pytest.raises(ResourceTimeoutError) as info:
            run(client, timeout=0)
        assert info.value.last_object == obj(state)
    assert len(script.list_calls) == 1


def test_a_watch_refused_for_real_fails_with_its_status():
    client, script = scripted([listing([obj("IDLE")])], [ApiException(status=403, reason="Forbidden")])
    with pytest.raises(K8sError, match="^Failed to watch CatalogSource olm/cs: ") as info:
        run(client)
    assert info.value.status == 403
    assert not isinstance(info.value, ResourceTimeoutError)


def test_an_error_event_other_than_gone_fails():
    bad = {"type": "ERROR", "object": {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no watch for you"}}
    client, script = scripted([listing([obj("IDLE")])], [[bad]])
    with pytest.raises(K8sError, match="no watch for you") as info:
        run(client)
    assert info.value.status == 403


@pytest.mark.parametrize("failure", [refused(), ApiException(status=503, reason="Service Unavailable"), ApiException(status=429, reason="Too Many")])
def test_an_api_server_restart_is_ridden_out(fast_retries, failure):
    """LISTs refused or answered 5xx/429 (kube-apiserver restarting) are repeated; the wait goes on."""
    client, script = scripted([failure, failure, failure, listing([obj("IDLE")], "300"), listing([obj("READY")])], [refused(), [WATCH_CLOSE]])
    assert run(client) == obj("READY")
    assert len(script.list_calls) >= 5  # the fifth sees READY (a sixth may follow the stream's end meanwhile)


def test_an_api_server_that_stays_away_fails_the_wait(fast_retries, monkeypatch):
    monkeypatch.setattr(kf_observe, "TRANSIENT_SECONDS", 0.2)
    with pytest.raises(K8sError, match="Connection refused"):
        run(scripted([refused()])[0], timeout=30)


def test_cluster_scoped_objects_have_no_namespace():
    client, script = scripted([listing([obj("READY")])])
    run(client, namespace=None)
    assert script.list_calls[0]["namespace"] is None


def test_the_resource_is_found_through_discovery_unless_given():
    client, _script = scripted([listing([obj("READY")])])
    assert run(client) == obj("READY")
    assert client.resources.lookups == [(API_VERSION, "CatalogSource")]
    resource = client.resources.get(API_VERSION, "CatalogSource")
    try:
        assert kf_watch.watch_until(client, API_VERSION, "CatalogSource", "cs", "olm", ready, 5, resource=resource) == obj("READY")
    finally:
        client.stop_watches()
    assert len(client.resources.lookups) == 2  # the one above: none for the wait


def test_a_tick_asks_the_predicate_again_without_a_change():
    """A verdict that depends on time: nothing changes in the object, the predicate is asked again every tick."""
    asked = []

    def late(o):
        asked.append(time.monotonic())
        return len(asked) >= 3

    assert run(scripted([listing([obj("IDLE")])])[0], predicate=late, tick=0.05) == obj("IDLE")
    assert len(asked) == 3 and asked[-1] - asked[0] >= 0.09


def test_undecodable_stream_relists():
    """A stream the client cannot decode is followed by a fresh list."""
    client, script = scripted([listing([obj("IDLE")], "100"), listing([], "300")], [[b"{not json\n", WATCH_CLOSE]])
    assert run(client, predicate=kf_watch.absent) is None
    assert len(script.list_calls) == 2


def test_undecodable_streams_in_a_row_fail():
    streams = [[b"{not json\n"] for attempt in range(kf_observe.MALFORMED_STREAMS + 1)]
    client, script = scripted([listing([obj("IDLE")])], streams)
    with pytest.raises(K8sError, match="undecodable event in the watch of CatalogSource"):
        run(client, timeout=30)
    assert len(script.watch_calls) == kf_observe.MALFORMED_STREAMS + 1
