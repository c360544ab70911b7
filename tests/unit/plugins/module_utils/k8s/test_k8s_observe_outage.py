"""observe(): an API server that is unreachable for a while (a restart) is waited for; one that stays away, or
answers with a real error, fails the wait. transient_error() tells requests of the first kind from the others.

The dynamic client (lib.fakes), its resources and their streams are fakes (connection errors on demand); the same
code runs against a restarted kube-apiserver in tests/integration/canary/test_canary_resilience.py.
"""

import time

import pytest
from kubernetes.client.rest import ApiException
from lib.fakes import FakeDynamicClient
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import observe as kf_observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError


def refused():
    """What the kubernetes client raises when nothing listens on the API server's port."""
    return MaxRetryError(
        None, "/api/v1/namespaces/ns/configmaps", reason=NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
    )


def api_error(status):
    return ApiException(status=status, reason="Error")


def wrapped(cause, status=None):
    """A K8sError raised ``from`` cause, as k8s.objects wraps failed requests."""
    try:
        raise K8sError(f"Failed to patch DaemonSet agent: {cause}", status=status) from cause
    except K8sError as exc:
        return exc


@pytest.mark.parametrize(
    ("case", "exc", "expected"),
    [
        ("connection refused", refused(), True),
        ("connection reset", ConnectionResetError(104, "Connection reset by peer"), True),
        ("stream cut", ProtocolError("Connection broken: IncompleteRead"), True),
        ("wrapped connection refused", wrapped(refused()), True),
        ("twice wrapped", wrapped(wrapped(refused())), True),
        ("503", api_error(503), True),
        ("500", api_error(500), True),
        ("429", api_error(429), True),
        ("wrapped 503", wrapped(api_error(503), status=503), True),
        ("403", api_error(403), False),
        ("404", api_error(404), False),
        ("409", api_error(409), False),
        ("422", api_error(422), False),
        ("wrapped 403", wrapped(api_error(403), status=403), False),
        ("adapter error without cause", K8sError("Failed to find exact match for apps/v1.Widget"), False),
        ("wrapped programming error", wrapped(ValueError("bad JSON")), False),
    ],
)
def test_transient_error(case, exc, expected):
    assert kf_observe.transient_error(exc) is expected, case


def test_retry_pauses_double_up_to_the_maximum():
    assert [kf_observe.retry_pause(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def failing_then_listed(failures):
    """``(client, script)``: ConfigMap LISTs fail with ``failures`` (in order), then answer one; watches stay quiet."""
    client = FakeDynamicClient(served={("v1", "ConfigMap")})
    listed = {"metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "cm", "namespace": "ns"}}]}
    return client, client.script("ConfigMap", list(failures) + [listed])


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(kf_observe, "RETRY_PAUSE_FIRST", 0.001)
    monkeypatch.setattr(kf_observe, "RETRY_PAUSE_MAX", 0.004)


def watch_one(client, timeout=10):
    def on_change(snapshot):
        return sorted(snapshot["maps"]) or None

    try:
        return kf_observe.observe(client, [kf_observe.Source("maps", "v1", "ConfigMap", "ns")], on_change, timeout)
    finally:
        client.stop_watches()


def test_an_api_server_away_for_many_retries_is_waited_for(fast_retries):
    """Twelve refused LISTs in a row (the old limit gave up after five): the source is listed once the server answers."""
    client, script = failing_then_listed([refused() for _attempt in range(12)] + [api_error(503)])
    assert watch_one(client) == ["cm"]
    assert len(script.list_times) == 14


def test_an_api_server_that_stays_away_fails_after_transient_seconds(fast_retries, monkeypatch):
    monkeypatch.setattr(kf_observe, "TRANSIENT_SECONDS", 0.2)
    client, script = failing_then_listed([refused() for _attempt in range(100_000)])
    started = time.monotonic()
    with pytest.raises(K8sError, match="Failed to watch maps: .*Connection refused") as failure:
        watch_one(client)
    assert failure.value.status is None
    assert 0.2 <= time.monotonic() - started < 5
    # the window runs from the first failure's handling to the last one's: each comes a moment after its LIST began
    # (on a loaded machine, milliseconds), so the LISTs themselves span the window less that moment
    assert script.list_times[-1] - script.list_times[0] >= 0.15, script.list_times[-1] - script.list_times[0]
    assert len(script.list_times) > 5


def test_a_real_error_fails_at_once(fast_retries):
    client, script = failing_then_listed([api_error(403)])
    with pytest.raises(K8sError) as failure:
        watch_one(client)
    assert failure.value.status == 403
    assert len(script.list_times) == 1
