"""reconcile.requeue: Go durations as ansible-operator's time.ParseDuration reads them (pure)."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile.requeue import RequeueError, parse


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("30s", 30.0),
        ("1m30s", 90.0),
        ("2h", 7200.0),
        ("1h2m3s", 3723.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        (".5m", 30.0),
        ("10us", 1e-5),
        ("10µs", 1e-5),
        ("1500000ns", 0.0015),
        (" 5s ", 5.0),
    ],
)
def test_parse(text, seconds):
    assert parse(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text, error",
    [
        ("30", "has no unit"),
        ("", "not a Go duration"),
        ("s", "not a Go duration"),
        ("30 s", "not a Go duration"),
        ("30sec", "not a Go duration"),
        ("1d", "not a Go duration"),
        ("-5s", "longer than zero"),
        ("0s", "longer than zero"),
        ("25h", "longer than a day"),
        ("\u0661\u0660s", "not a Go duration"),  # Arabic-Indic digits: Python's \\d takes them, Go does not
    ],
)
def test_parse_refuses(text, error):
    with pytest.raises(RequeueError, match=error):
        parse(text)
