"""observe(throttle=...): decisions that cost CPU are spaced by their cost while events stream in, the events that
arrive meanwhile are applied together, the newest state is always decided, and a quiet watch is answered at once.

The dynamic client and its watch stream are fakes that send events on a schedule; the canary rollout runs the same
loop against the testbed (tests/integration/canary/).
"""

import time

from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import observe as kf_observe


def streaming(count, interval):
    """A fake client listing no ConfigMap, then watching cm-0 .. cm-<count-1> added, one every ``interval`` seconds."""
    client = FakeDynamicClient(served={("v1", "ConfigMap")})
    events = [{"type": "ADDED", "object": {"kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "resourceVersion": str(10 + i)}}} for i in range(count)]
    client.script("ConfigMap", [{"metadata": {"resourceVersion": "7"}, "items": []}], [events], interval)
    return client


def burn_cpu(seconds):
    """Use ``seconds`` of this thread's CPU time (what the throttle measures)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def watch(client, cost, throttle, done_at):
    """Observe until ``done_at`` config maps are seen; every decision burns ``cost`` s of CPU. Returns the calls as
    ``(started, ended, seen)`` and the outcome."""
    calls = []

    def on_change(snapshot):
        started = time.monotonic()
        burn_cpu(cost)
        seen = len(snapshot["maps"])
        calls.append((started, time.monotonic(), seen))
        return seen if seen >= done_at else None

    try:
        outcome = kf_observe.observe(client, [kf_observe.Source("maps", "v1", "ConfigMap", "ns")], on_change, 20, throttle=throttle)
    finally:
        client.stop_watches()
    return calls, outcome


def test_throttled_calls_are_spaced_by_their_cost_and_the_last_state_is_decided():
    # 60 events, one every 5 ms (0.3 s); each decision costs 20 ms of CPU, throttle 3: at least 60 ms between calls.
    calls, outcome = watch(streaming(60, 0.005), cost=0.02, throttle=3, done_at=60)
    assert outcome == 60
    assert calls[-1][2] == 60
    assert len(calls) < 30, f"{len(calls)} decisions for 60 events: the events were not applied together"
    gaps = [later[0] - earlier[1] for earlier, later in zip(calls, calls[1:])]
    # The first call after the LIST may be followed by one as soon as events arrive: every later gap is throttled.
    assert min(gaps[1:]) >= 0.02 * 3 * 0.8, gaps
    assert [seen for _started, _ended, seen in calls] == sorted(seen for _started, _ended, seen in calls)


def test_without_throttle_every_batch_is_decided_at_once():
    calls, outcome = watch(streaming(20, 0.02), cost=0.001, throttle=None, done_at=20)
    assert outcome == 20
    # Events 20 ms apart and decisions of 1 ms: each event gets its own decision.
    assert len(calls) >= 10, len(calls)


def test_a_quiet_watch_is_answered_at_once():
    """A costly decision does not delay the next one when nothing arrived in between: the throttle only spaces
    decisions while events stream in, and the event after a quiet period is decided at once."""
    calls, outcome = watch(streaming(2, 0.5), cost=0.05, throttle=4, done_at=2)
    assert outcome == 2
    # Three decisions: the LIST (0 maps), then each event, 0.5 s apart: far more than 0.05 * 4 after the last call.
    assert [seen for _started, _ended, seen in calls] == [0, 1, 2]
    event_gap = calls[2][0] - calls[1][0]
    assert 0.4 <= event_gap <= 1.5, event_gap
