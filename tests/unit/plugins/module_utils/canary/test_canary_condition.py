"""The OperatorCondition ``Upgradeable`` of a canary rollout: which condition each phase wants, whose condition it
may change, and the guarded JSON patch that keeps every other entry of ``spec.conditions``."""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as uc
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro

NOW = 1_800_000_000
EARLIER = "2026-01-01T00:00:00Z"
PREFIX = "DaemonSet agents/agent: canary rollout"
OTHER = {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "fine", "lastTransitionTime": EARLIER}


def operator_condition(*conditions, spec=True, rv="31"):
    obj = {"apiVersion": uc.API_VERSION, "kind": uc.KIND, "metadata": {"name": "op.v1", "namespace": "operators", "resourceVersion": rv}}
    if spec:
        obj["spec"] = {"deployments": ["op"]}
        if conditions != (None,):
            obj["spec"]["conditions"] = list(conditions)
    return obj


def upgradeable(status, reason, message, since=EARLIER):
    return {"type": "Upgradeable", "status": status, "reason": reason, "message": message, "lastTransitionTime": since}


def apply(obj, patch):
    """The JSON patch applied to ``obj`` (test, add and replace of the paths plan() uses)."""
    obj = copy.deepcopy(obj)
    assert patch[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": obj["metadata"]["resourceVersion"]}
    for op in patch[1:]:
        assert op["op"] in ("add", "replace")
        if op["path"] == "/spec":
            assert "spec" not in obj and op["op"] == "add"
            obj["spec"] = op["value"]
        else:
            assert op["path"] == "/spec/conditions"
            assert (op["op"] == "replace") == ("conditions" in obj["spec"])
            obj["spec"]["conditions"] = op["value"]
    return obj


@pytest.mark.parametrize(
    "phase, failure, expected",
    [
        (ro.CANARY, None, ("False", uc.IN_PROGRESS, PREFIX + " in phase canary")),
        (ro.FAST, "ignored", ("False", uc.IN_PROGRESS, PREFIX + " in phase fast")),
        (ro.PAUSED, None, ("False", uc.IN_PROGRESS, PREFIX + " in phase paused")),
        (ro.ROLLING_BACK, None, ("False", uc.IN_PROGRESS, PREFIX + " in phase rollingback")),
        (ro.HALTED_PHASE, "pod x is CrashLoopBackOff", ("False", uc.IN_PROGRESS, PREFIX + " in phase halted: pod x is CrashLoopBackOff")),
        (ro.ROLLED_BACK, None, ("True", uc.ROLLED_BACK, PREFIX + " failed and was rolled back to the previous revision")),
        (None, None, ("True", uc.COMPLETED, PREFIX + " completed")),
        ("done", None, ("True", uc.COMPLETED, PREFIX + " completed")),
    ],
)
def test_wanted_condition_per_phase(phase, failure, expected):
    assert uc.wanted("agents", "agent", phase, failure) == expected


def test_a_long_failure_is_cut():
    _status, _reason, message = uc.wanted("agents", "agent", ro.HALTED_PHASE, "x" * 5000)
    assert len(message) == uc.MAX_MESSAGE_CHARS


MINE_FALSE = upgradeable("False", uc.IN_PROGRESS, PREFIX + " in phase canary")
MINE_TRUE = upgradeable("True", uc.COMPLETED, PREFIX + " completed")
THEIRS_FALSE = upgradeable("False", "Initializing", "the operator is starting")
THEIRS_TRUE = upgradeable("True", "Upgradeable", "all components are ready")
OTHER_DS_FALSE = upgradeable("False", uc.IN_PROGRESS, "DaemonSet agents/other: canary rollout in phase fast")

# (id, conditions before, phase, expected Upgradeable after (None: no patch) and whether lastTransitionTime is kept)
CASES = [
    ("start without a condition: add ours", [OTHER], ro.CANARY, ("False", uc.IN_PROGRESS, False)),
    ("start over someone's True: ours replaces it", [THEIRS_TRUE, OTHER], ro.CANARY, ("False", uc.IN_PROGRESS, False)),
    ("next phase: message updated, transition time kept", [MINE_FALSE, OTHER], ro.FAST, ("False", uc.IN_PROGRESS, True)),
    ("same phase again: nothing to do", [OTHER, MINE_FALSE], ro.CANARY, None),
    ("someone else's False stays", [THEIRS_FALSE], ro.CANARY, None),
    ("another DaemonSet's False stays", [OTHER_DS_FALSE], ro.FAST, None),
    ("done: our False becomes True", [OTHER, MINE_FALSE], None, ("True", uc.COMPLETED, False)),
    ("rolled back: our False becomes True", [MINE_FALSE], ro.ROLLED_BACK, ("True", uc.ROLLED_BACK, False)),
    ("done again: nothing to do", [MINE_TRUE], None, None),
    ("done without our condition: none is added", [OTHER], None, None),
    ("done leaves someone else's False", [THEIRS_FALSE], None, None),
    ("done leaves another DaemonSet's False", [OTHER_DS_FALSE], None, None),
    ("halted after a run: stays False with the reason", [MINE_FALSE], ro.HALTED_PHASE, ("False", uc.IN_PROGRESS, True)),
    ("a new rollout after ours completed", [MINE_TRUE], ro.CANARY, ("False", uc.IN_PROGRESS, False)),
]


@pytest.mark.parametrize("before, phase, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_plan(before, phase, expected):
    obj = operator_condition(*copy.deepcopy(before))
    patch, entry = uc.plan(obj, "agents", "agent", phase, NOW, failure="crash")
    current = uc.find(before)
    if expected is None:
        assert patch is None
        assert entry == current
        return
    status, reason, kept = expected
    after = apply(obj, patch)
    conditions = after["spec"]["conditions"]
    assert [c for c in conditions if c["type"] != "Upgradeable"] == [c for c in before if c["type"] != "Upgradeable"]
    assert [c["type"] for c in conditions].count("Upgradeable") == 1
    if current is not None:
        assert [c["type"] for c in conditions] == [c["type"] for c in before]  # replaced in place
    got = uc.find(conditions)
    assert got == entry
    assert (got["status"], got["reason"]) == (status, reason)
    assert got["message"] == uc.wanted("agents", "agent", phase, "crash")[2]
    assert got["lastTransitionTime"] == (current["lastTransitionTime"] if kept else ro.format_time(NOW))
    assert uc.ours(got, "agents", "agent") and not uc.ours(got, "agents", "other")
    again, _entry = uc.plan(after, "agents", "agent", phase, NOW + 5, failure="crash")
    assert again is None


@pytest.mark.parametrize("spec", ["missing", "without conditions", "null conditions"])
def test_spec_shapes(spec):
    obj = operator_condition(None, spec=spec != "missing")
    if spec == "null conditions":
        obj["spec"]["conditions"] = None
    patch, entry = uc.plan(obj, "agents", "agent", ro.CANARY, NOW)
    after = apply(obj, patch)
    assert after["spec"]["conditions"] == [entry]
    assert entry["status"] == "False"


def test_overrides_and_other_fields_are_not_touched():
    obj = operator_condition(OTHER)
    obj["spec"]["overrides"] = [upgradeable("True", "AdminSaysSo", "go")]
    patch, _entry = uc.plan(obj, "agents", "agent", ro.CANARY, NOW)
    assert all(op["path"] in ("/metadata/resourceVersion", "/spec/conditions") for op in patch)
    assert apply(obj, patch)["spec"]["overrides"] == obj["spec"]["overrides"]


def test_public_view():
    assert uc.public(None) is None
    assert uc.public(dict(MINE_FALSE, observedGeneration=3)) == {k: MINE_FALSE[k] for k in ("status", "reason", "message", "lastTransitionTime")}
