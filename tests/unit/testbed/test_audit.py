"""The testbed's audit-log reader: one entry per API request of the bench user."""

import json

import pytest
from testbed import cluster
from testbed.cluster import parse_audit_events


def _event(audit_id, stage, verb, uri, code):
    return {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": stage,
        "verb": verb,
        "requestURI": uri,
        "user": {"username": "kubeforge-bench"},
        "responseStatus": {"metadata": {}, "code": code},
    }


def _lines(*events):
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def test_a_watch_counts_once_at_response_started_and_plain_requests_at_response_complete():
    data = _lines(
        _event("a", "ResponseComplete", "list", "/api/v1/pods", 200),
        _event("w", "ResponseStarted", "watch", "/api/v1/pods?watch=true", 200),
        _event("b", "ResponseComplete", "get", "/api/v1/namespaces/x", 404),
        _event("w", "ResponseComplete", "watch", "/api/v1/pods?watch=true", 200),
    )
    assert parse_audit_events(data) == [
        ("list", "/api/v1/pods", 200),
        ("watch", "/api/v1/pods?watch=true", 200),
        ("get", "/api/v1/namespaces/x", 404),
    ]


def test_the_end_of_a_watch_started_before_the_window_is_not_counted():
    data = _lines(
        _event("w", "ResponseComplete", "watch", "/api/v1/pods?watch=true", 200),
        _event("c", "ResponseComplete", "create", "/api/v1/namespaces", 201),
    )
    assert parse_audit_events(data) == [("create", "/api/v1/namespaces", 201)]


def test_reading_from_an_offset_skips_earlier_requests_and_a_partial_last_line(tmp_path):
    testbed = cluster.Testbed(tmp_path)
    testbed.log_dir.mkdir()
    first = _lines(_event("a", "ResponseComplete", "get", "/api/v1/a", 200))
    second = _lines(_event("b", "ResponseComplete", "delete", "/api/v1/b", 200))
    partial = json.dumps(_event("c", "ResponseComplete", "get", "/api/v1/c", 200))[:40].encode()
    testbed.audit_log.write_bytes(first + second + partial)

    assert testbed.audit_requests(len(first)) == [("delete", "/api/v1/b", 200)]
    assert [r[1] for r in testbed.audit_requests(0)] == ["/api/v1/a", "/api/v1/b"]
    assert testbed.audit_offset() == len(first + second + partial)


def test_an_offset_past_the_end_means_a_restarted_testbed(tmp_path):
    testbed = cluster.Testbed(tmp_path)
    testbed.log_dir.mkdir()
    testbed.audit_log.write_bytes(_lines(_event("a", "ResponseComplete", "get", "/api/v1/a", 200)))
    with pytest.raises(cluster.TestbedError, match="restarted"):
        testbed.audit_requests(10_000)
