"""scc/pin.py: parsing pin_workloads, where each kind keeps its pod template, and what pinning or unpinning does
(set, keep, refuse a pin to another SCC, remove only our own), with resourceVersion-guarded merge patches."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pin
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import recommend as rec

ANNOTATION = "openshift.io/required-scc"


def workload(kind, pinned=None, sa=None):
    template = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    if pinned:
        template["metadata"]["annotations"] = {ANNOTATION: pinned, "other": "kept"}
    if sa:
        template["spec"]["serviceAccountName"] = sa
    spec = {"jobTemplate": {"spec": {"template": template}}} if kind == "CronJob" else {"template": template}
    return {"kind": kind, "metadata": {"name": "w", "namespace": "ns", "resourceVersion": "42"}, "spec": spec}


def test_annotation_is_the_one_recommend_reads():
    obj = workload("Deployment", pinned="mine")
    assert pin.REQUIRED_SCC_ANNOTATION == ANNOTATION
    assert rec.required_scc(rec.pod_specs_of(obj)[0]) == pin.pinned_scc(obj, "Deployment") == "mine"


def test_parse_pins_defaults_the_namespace_and_drops_duplicates():
    items = [{"kind": "Deployment", "name": "a"}, {"kind": "Deployment", "name": "a", "namespace": "dflt"}, {"kind": "CronJob", "name": "b", "namespace": "o"}]
    assert pin.parse_pins(items, "dflt") == [pin.Pin("Deployment", "a", "dflt"), pin.Pin("CronJob", "b", "o")]
    assert pin.parse_pins(None) == [] and pin.parse_pins([]) == []


@pytest.mark.parametrize(
    "items, message",
    [
        ([{"kind": "Pod", "name": "a", "namespace": "n"}], "kind must be one of Deployment, DaemonSet"),
        ([{"kind": "Deployment", "name": "a"}], "namespace of a Deployment must be a non-empty name"),
        ([{"kind": "Deployment", "name": "", "namespace": "n"}], "name of a Deployment"),
        ([{"kind": "Deployment", "name": "a", "namespace": "n", "image": "x"}], "entries are {kind, name, namespace} mappings"),
        ("Deployment/a", "must be a list"),
        ([{"kind": "Deployment", "name": str(i), "namespace": "n"} for i in range(65)], "at most 64"),
    ],
)
def test_parse_pins_errors(items, message):
    with pytest.raises(pin.PinError, match=message.replace("{", r"\{").replace("}", r"\}")):
        pin.parse_pins(items)


def _annotation_in(patch, kind):
    node = patch
    for key in pin.PIN_KINDS[kind][1]:
        node = node[key]
    return node["metadata"]["annotations"]


# (id, state, pinned before, expected action)
CHANGES = [
    ("pin", "present", None, "pin"),
    ("already-pinned", "present", "mine", None),
    ("unpin-ours", "absent", "mine", "unpin"),
    ("unpin-nothing", "absent", None, None),
    ("leave-other-pin", "absent", "theirs", None),
]


@pytest.mark.parametrize("kind", sorted(pin.PIN_KINDS))
@pytest.mark.parametrize("state, before, action", [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_change(kind, state, before, action):
    obj = workload(kind, pinned=before)
    item = pin.change(pin.Pin(kind, "w", "ns"), obj, "mine", state)
    assert (item.action, item.previous) == (action, before)
    if action is None:
        assert item.patch is None
        return
    assert item.patch["metadata"] == {"resourceVersion": "42"}
    assert _annotation_in(item.patch, kind) == {ANNOTATION: "mine" if action == "pin" else None}
    assert set(item.patch) == {"metadata", "spec"}


def test_pin_to_another_scc_is_refused():
    with pytest.raises(pin.PinError, match="Deployment ns/w is pinned to SCC theirs, not mine: unpin it first"):
        pin.change(pin.Pin("Deployment", "w", "ns"), workload("Deployment", pinned="theirs"), "mine", "present")


def test_a_workload_without_template_is_an_error():
    with pytest.raises(pin.PinError, match="has no pod template"):
        pin.pinned_scc({"kind": "Deployment", "metadata": {"name": "w"}, "spec": {}}, "Deployment")


@pytest.mark.parametrize("sa, expected", [(None, "ns/default"), ("agent", "ns/agent")])
def test_service_account_of(sa, expected):
    assert pin.service_account_of(workload("CronJob", sa=sa), "CronJob") == expected
