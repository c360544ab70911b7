"""daemonset_canary module glue through run_module: options refused before any request, and the result of a run
with a node selector and an OperatorCondition (lib.canary_cluster's fake client patched in where KubeforgeModule creates
its client). The rollouts themselves run on the testbed (tests/integration/canary)."""

import functools
import json

import pytest
from lib.canary_cluster import NS, V2, cluster, node

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as uc
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import module as kf_module
from ansible_collections.kubeforge.operators.plugins.modules import daemonset_canary

BASE = {"name": "agent", "namespace": NS, "images": {"agent": V2}, "wait": False}


@pytest.fixture
def fake():
    return cluster(nodes=[node("n1", {"canary": "true"}), node("n3", {"canary": "true"})], conditions=[])


@pytest.fixture
def run(run_module, monkeypatch, fake):
    monkeypatch.setattr(kf_module, "get_client", lambda module: fake)
    return functools.partial(run_module, daemonset_canary)


@pytest.mark.parametrize(
    "extra, fragment",
    [
        ({"canary_nodes": ["n1"], "canary_node_selector": "canary=true"}, "mutually exclusive: canary_nodes|canary_node_selector"),
        ({"operator_condition_namespace": "operators"}, "required by 'operator_condition_namespace': operator_condition"),
        ({"canary_node_selector": "canary in (true"}, "canary_node_selector: label selector 'canary in (true': unbalanced '('"),
        ({"undo": True}, "undo rolls back to the previous revision: it takes no images"),
        ({"images": None, "undo": False}, "give the new pod template (template) or new images (images), or undo=true"),
    ],
)
def test_bad_options_fail_before_any_request(run, fake, extra, fragment):
    res = run(dict(BASE, **extra))
    assert res.get("failed") and fragment in res["msg"], res
    assert fake.requests == []


def test_selector_and_operator_condition_in_the_result(run, fake):
    res = run(dict(BASE, canary_node_selector="canary=true", operator_condition="op.v1", operator_condition_namespace="operators"))
    assert not res.get("failed"), res
    assert res["changed"] is True and res["phase"] == ro.CANARY
    assert res["canary_nodes"] == ["n1", "n3"]
    assert json.loads(fake.stored("DaemonSet", "agent")["metadata"]["annotations"][ro.NODES]) == ["n1", "n3"]
    upgradeable = res["operator_condition"]["upgradeable"]
    assert (upgradeable["status"], upgradeable["reason"]) == ("False", uc.IN_PROGRESS)
    assert upgradeable == uc.public(uc.find(fake.objects[uc.KIND][0]["spec"]["conditions"]))


def test_without_the_new_options_the_result_has_no_operator_condition(run, fake):
    res = run(BASE)
    assert not res.get("failed"), res
    assert res["canary_nodes"] == [] and "operator_condition" not in res
    assert [r[0] for r in fake.writes()] == ["DaemonSet", "Event"]
