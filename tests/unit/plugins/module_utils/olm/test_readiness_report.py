"""olm.readiness_report: olm_upgrade_plan results of several clusters -> the report document and its Markdown
(pure, table-driven): blockers first, the fleet's verdict, failed clusters, refusals."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.readiness_report import action_text, document, markdown


def op(name, blocks=False, kind="none", namespace="ops", **extra):
    """One operator of an olm_upgrade_plan result (the interface's fields)."""
    action = {"kind": kind, "to_version": extra.pop("to_version", None), "to_channel": extra.pop("to_channel", None), "reason": extra.pop("reason", None)}
    return dict(
        {
            "generation": "v0" if namespace else "v1",
            "namespace": namespace,
            "name": name,
            "package": name.split(".")[0],
            "channel": "stable",
            "installed_version": "1.0.0",
            "source": "cat",
            "max_openshift_version": "4.20" if blocks else None,
            "blocks_upgrade": blocks,
            "block_reason": "- maximum supported OCP version for ops/%s is 4.20" % name if blocks else None,
            "target_catalog": None,
            "target_version": None,
            "path": [],
            "deprecations": [],
            "action": action,
        },
        **extra,
    )


def plan(verdict, *operators, target="4.21"):
    blockers = [f"{o['namespace']}/{o['name']}" for o in operators if o["blocks_upgrade"]]
    return {"changed": False, "verdict": verdict, "target": target, "blockers": blockers, "operators": list(operators)}


FAILED = {"failed": True, "msg": "Unauthorized: the kubeconfig's token is expired"}


@pytest.mark.parametrize(
    "plans, verdict, counts, cluster_order, rows",
    [
        # one cluster, nothing to do
        ([("east", plan("ready", op("a.v1")))], "ready", {"ready": 1}, ["east"], [("east", "a.v1")]),
        # blockers first across clusters, then operators needing an action, then the rest; clusters worst first
        (
            [
                ("east", plan("ready", op("a.v1"), op("b.v1", kind="upgrade", to_version="1.1.0"))),
                ("west", plan("needs_action", op("c.v1", blocks=True, kind="upgrade", to_version="2.0.0", path=["1.5.0", "2.0.0"]), op("a.v1"))),
            ],
            "needs_action",
            {"needs_action": 1, "ready": 1},
            ["west", "east"],
            [("west", "c.v1"), ("east", "b.v1"), ("east", "a.v1"), ("west", "a.v1")],
        ),
        # the worst verdict wins; within a rank, play order then namespace and name
        (
            [
                ("east", plan("blocked", op("z.v1", blocks=True, kind="remove_or_replace"), op("y.v1", blocks=True, kind="upgrade", namespace="a"))),
                ("west", plan("needs_action", op("x.v1", blocks=True, kind="upgrade"))),
            ],
            "blocked",
            {"blocked": 1, "needs_action": 1},
            ["east", "west"],
            [("east", "y.v1"), ("east", "z.v1"), ("west", "x.v1")],
        ),
        # a cluster without a plan makes the fleet's verdict unknown and is listed first
        ([("east", plan("ready", op("a.v1"))), ("west", FAILED)], "unknown", {"error": 1, "ready": 1}, ["west", "east"], [("east", "a.v1")]),
        ([("east", {"skipped": True, "skip_reason": "Conditional result was False"})], "unknown", {"error": 1}, ["east"], []),
        # OLM v1 operators have no namespace
        ([("east", plan("ready", op("ext", namespace=None)))], "ready", {"ready": 1}, ["east"], [("east", "ext")]),
    ],
)
def test_document(plans, verdict, counts, cluster_order, rows):
    doc = document([{"cluster": c, "plan": p} for c, p in plans])
    assert doc["verdict"] == verdict and doc["counts"] == counts and doc["target"] == ("4.21" if rows else None)
    assert [c["cluster"] for c in doc["clusters"]] == cluster_order
    assert [(r["cluster"], r["name"]) for r in doc["operators"]] == rows
    assert doc["blocking_operators"] == sum(1 for r in doc["operators"] if r["blocks_upgrade"])


def test_a_failed_cluster_keeps_its_cause():
    doc = document([{"cluster": "west", "plan": FAILED}])
    assert doc["clusters"] == [{"cluster": "west", "verdict": "error", "blockers": [], "operators": 0, "error": FAILED["msg"]}]
    assert "| west | error | - | 0 | Unauthorized: the kubeconfig's token is expired |" in markdown(doc)


@pytest.mark.parametrize(
    "plans, target, message",
    [
        ([], None, "plans must be a non-empty list"),
        ([{"plan": plan("ready")}], None, "plans[0] has no cluster"),
        ([{"cluster": "a", "plan": plan("ready")}, {"cluster": "a", "plan": plan("ready")}], None, "cluster a is listed twice"),
        ([{"cluster": "a", "plan": "ready"}], None, "plans[0] (a): plan must be an olm_upgrade_plan result"),
        ([{"cluster": "a", "plan": plan("fine")}], None, "plans[0] (a): unknown verdict fine (expected blocked, needs_action, ready)"),
        ([{"cluster": "a", "plan": plan("ready")}, {"cluster": "b", "plan": plan("ready", target="4.22")}], None, "different targets (4.21, 4.22)"),
    ],
)
def test_refused(plans, target, message):
    with pytest.raises(InvalidInputError) as exc:
        document(plans, target)
    assert message in str(exc.value)


def test_an_explicit_target_names_the_report():
    doc = document([{"cluster": "a", "plan": plan("ready", target="4.21")}, {"cluster": "b", "plan": plan("ready", target="4.22")}], target="4.22")
    assert doc["target"] == "4.22"


@pytest.mark.parametrize(
    "action, text",
    [
        ({"kind": "none"}, "none"),
        ({"kind": "upgrade", "to_version": "1.2.0"}, "upgrade to 1.2.0"),
        ({"kind": "switch_channel", "to_channel": "stable-2", "to_version": "2.0.0"}, "switch to channel stable-2 (2.0.0)"),
        ({"kind": "switch_channel", "to_channel": "stable-2"}, "switch to channel stable-2"),
        ({"kind": "remove_or_replace"}, "remove or replace"),
        ({"kind": None}, "unknown"),
    ],
)
def test_action_text(action, text):
    assert action_text(action) == text


def test_markdown_rows_blockers_first():
    blocker = op(
        "c.v1",
        blocks=True,
        kind="upgrade",
        to_version="2.0.0",
        path=["1.5.0", "2.0.0"],
        reason="2.0.0 allows 4.21",
        deprecations=[{"scope": "channel", "name": "stable", "message": "use stable-2|fast"}],
    )
    doc = document([{"cluster": "east", "plan": plan("ready", op("a.v1"))}, {"cluster": "west", "plan": plan("needs_action", blocker)}])
    lines = markdown(doc).splitlines()
    assert lines[0] == "# Upgrade readiness for OpenShift 4.21: needs_action (1 needs_action, 1 ready; 1 blocking operator(s))"
    assert lines[4] == "| west | needs_action | ops/c.v1 | 1 | - |"
    header = lines.index("| cluster | operator | package | installed | channel | max OpenShift | blocks | action | path | why |")
    assert lines[header + 2] == (
        "| west | ops/c.v1 | c | 1.0.0 | stable | 4.20 | yes | upgrade to 2.0.0 | 1.5.0 -> 2.0.0 | maximum supported OCP version for ops/c.v1 is 4.20;"
        " 2.0.0 allows 4.21; deprecated channel stable: use stable-2\\|fast |"
    )
    assert lines[header + 3] == "| east | ops/a.v1 | a | 1.0.0 | stable | - | no | none | - | - |"
    assert len(lines) == header + 4


def test_the_same_plans_give_the_same_bytes():
    plans = [{"cluster": "east", "plan": plan("ready", op("a.v1"), op("b.v1"))}]
    assert markdown(document(plans)) == markdown(document(list(reversed(plans))))
