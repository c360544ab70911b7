"""The fleet rollout's pure decisions: next_step over records and observations, upgrade paths, after_failure."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import rollout as core

ID = "kube-fleet@0.2.0"
OFFERED = ["0.1.0", "0.2.0", "0.3.0"]


def desired(kind=rec.KIND_OLM_V0, target="0.2.0", acknowledge=False, on_failure="halt"):
    return core.Desired(kind, ID if kind != rec.KIND_DAEMONSET else "agent@agent=v2", target, acknowledge, on_failure)


def observed(record=None, installed=True, current="0.1.0", offered=None, problem=None, catalog=True):
    return core.Observed(record, installed, current, list(OFFERED) if offered is None and catalog else offered, problem)


def record(result, rollout=ID, **more):
    return dict({"rollout": rollout, "result": result, "step": "gate", "cause": "CrashLoopBackOff", "from": "0.1.0", "target": "0.2.0"}, **more)


@pytest.mark.parametrize(
    "want, seen, kind, message_part, path",
    [
        # a first run
        (desired(), observed(), core.START, "0.1.0 -> 0.2.0", ["0.2.0"]),
        (desired(target="0.3.0"), observed(), core.START, "0.1.0 -> 0.3.0", ["0.2.0", "0.3.0"]),
        (desired(), observed(current="0.2.0"), core.START, "already at 0.2.0", []),
        # halted by this rollout's failure: refused, naming step and cause; acknowledged: recorded, then skipped
        (desired(), observed(record("failed")), core.REFUSE, "failed at step gate: CrashLoopBackOff", None),
        (desired(acknowledge=True), observed(record("failed")), core.ACKNOWLEDGE, "acknowledged", None),
        (desired(), observed(record("acknowledged")), core.SKIP, "was acknowledged", None),
        (desired(acknowledge=True), observed(record("acknowledged")), core.SKIP, "was acknowledged", None),
        # an earlier rollout's failure does not halt a new target
        (desired(), observed(record("failed", rollout="kube-fleet@0.3.0")), core.START, "0.1.0 -> 0.2.0", ["0.2.0"]),
        # done: no write; done but moved away since: again
        (desired(), observed(record("succeeded"), current="0.2.0"), core.SKIP, "is done here", []),
        (desired(), observed(record("succeeded"), current="0.1.0"), core.START, "0.1.0 -> 0.2.0", ["0.2.0"]),
        # interrupted: resumed without the health preflight
        (
            desired(),
            observed(record("in_progress", step="change"), problem="CSV kube-fleet.v0.2.0 is Installing"),
            core.RESUME,
            "interrupted at step change",
            ["0.2.0"],
        ),
        # preflight failures: nothing touched
        (desired(), observed(installed=False, current=None), core.BLOCKED, "not installed", None),
        (desired(target="0.9.0"), observed(), core.BLOCKED, "0.9.0 is not offered by this cluster's catalog (versions: 0.1.0, 0.2.0, 0.3.0)", None),
        (desired(target="0.1.0"), observed(current="0.2.0"), core.BLOCKED, "OLM v0 cannot downgrade", None),
        (desired(), observed(problem="olm_diagnose: CrashLoop"), core.BLOCKED, "not healthy before the change: olm_diagnose: CrashLoop", None),
        (desired(), observed(offered=[]), core.BLOCKED, "(versions: none)", None),
        # OLM v1: a move back is not refused as a downgrade by the preflight (operator-controller judges it)
        (desired(kind=rec.KIND_OLM_V1, target="0.1.0"), observed(current="0.2.0", catalog=False), core.START, "0.2.0 -> 0.1.0", ["0.1.0"]),
        # a DaemonSet: no catalog
        (
            desired(kind=rec.KIND_DAEMONSET, target={"agent": "v2"}),
            observed(current="agent=v1", catalog=False),
            core.START,
            "agent=v1 -> agent=v2",
            ["agent=v2"],
        ),
        (
            desired(kind=rec.KIND_DAEMONSET, target={"agent": "v2"}),
            observed(installed=False, current=None, catalog=False),
            core.BLOCKED,
            "the DaemonSet is not installed",
            None,
        ),
    ],
)
def test_next_step(want, seen, kind, message_part, path):
    action = core.next_step(want, seen)
    assert (action.kind, action.path) == (kind, path), action
    assert message_part in action.message, action.message


@pytest.mark.parametrize(
    "offered, current, target, path",
    [
        (OFFERED, "0.1.0", "0.2.0", ["0.2.0"]),
        (OFFERED, "0.1.0", "0.3.0", ["0.2.0", "0.3.0"]),
        (OFFERED, "0.2.0", "0.2.0", []),
        (OFFERED, "0.3.0", "0.2.0", None),
        (OFFERED, "0.1.0", "1.0.0", None),
        # the installed version is no longer in the channel: from the first version above it
        (["0.2.0", "0.3.0"], "0.1.0", "0.3.0", ["0.2.0", "0.3.0"]),
        # an unparseable installed version: the channel's order alone
        (["a", "b", "c"], "a", "c", ["b", "c"]),
    ],
)
def test_upgrade_path(offered, current, target, path):
    assert core.upgrade_path(offered, current, target) == path


@pytest.mark.parametrize(
    "kind, on_failure, came_from, decision, detail_part",
    [
        (rec.KIND_OLM_V1, "rollback", "0.2.0", core.ROLLBACK, "0.2.0"),
        (rec.KIND_DAEMONSET, "rollback", "agent=v1", core.ROLLBACK, "agent=v1"),
        (rec.KIND_OLM_V0, "rollback", "0.1.0", core.HALT, "OLM v0 cannot downgrade"),
        (rec.KIND_OLM_V1, "rollback", None, core.HALT, "not known"),
        (rec.KIND_OLM_V1, "halt", "0.2.0", core.HALT, ""),
    ],
)
def test_after_failure(kind, on_failure, came_from, decision, detail_part):
    got, detail = core.after_failure(desired(kind=kind, on_failure=on_failure), came_from)
    assert got == decision
    assert detail_part in detail


def test_record_round_trip_and_names():
    record = {"rollout": ID, "kind": "olm_v0", "result": "failed", "cause": "x" * 10, "wave": 1, "from": "0.1.0"}
    cm = rec.configmap("ns", rec.record_name("olm_v0", "kube-fleet"), record)
    assert cm["metadata"]["name"] == "kubeforge-fleet-olm-kube-fleet"
    assert cm["metadata"]["labels"][rec.LABEL_RESULT] == "failed"
    assert cm["metadata"]["labels"][rec.LABEL_RECORD] == "kube-fleet_0.2.0"
    assert rec.decode(cm) == record
    assert rec.decode(None) is None
    long_name = rec.record_name("daemonset", "a" * 300)
    assert len(long_name) == 253 and long_name != rec.record_name("daemonset", "a" * 299)
    assert len(rec.label_value("x" * 100)) <= 63


@pytest.mark.parametrize("data", [{}, {rec.DATA_KEY: "{"}, {rec.DATA_KEY: '{"rollout": "a", "result": "maybe"}'}, {rec.DATA_KEY: "[]"}])
def test_unreadable_record_is_an_error_naming_the_configmap(data):
    with pytest.raises(ValueError, match="ConfigMap ns/cm holds no readable fleet rollout record"):
        rec.decode({"metadata": {"name": "cm", "namespace": "ns"}, "data": data})


@pytest.mark.parametrize("value", ["", "a\nb", "x" * 201])
def test_rollout_id_is_one_bounded_line(value):
    with pytest.raises(ValueError, match="rollout_id must be one line"):
        rec.check_rollout_id(value)


def test_default_rollout_ids():
    assert rec.rollout_id("olm_v0", "kube-fleet", "0.2.0") == "kube-fleet@0.2.0"
    assert rec.rollout_id("daemonset", "agent", {"b": "img:2", "a": "img:1"}) == "agent@a=img:1,b=img:2"
