"""Kubernetes timestamps for the pure cores (OLM CSV conditions, canary phase annotations)."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time


@pytest.mark.parametrize(
    "value, expected",
    [("1970-01-01T00:01:00Z", 60), ("1970-01-01T00:01:00.123456Z", 60), ("2026-11-23T15:33:10Z", 1795447990), ("yesterday", None), ("", None), (None, None)],
)
def test_parse_time(value, expected):
    assert parse_time(value) == expected
