"""reconcile.conditions: merging, validation and transitions of status conditions (pure)."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile import conditions as c

T0, T1 = "2026-11-24T01:00:00Z", "2026-11-24T02:00:00Z"


def cond(kind, status, reason="Why", message="", ltt=T0, gen=None):
    out = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": ltt}
    if gen is not None:
        out["observedGeneration"] = gen
    return out


@pytest.mark.parametrize(
    "current, wanted, expected",
    [
        # new condition: stamped now
        ([], [cond("Ready", "True")], [cond("Ready", "True", ltt=T1, gen=3)]),
        # same status, new reason/message: transition time kept
        ([cond("Ready", "True")], [cond("Ready", "True", "Other", "m")], [cond("Ready", "True", "Other", "m", T0, 3)]),
        # status flips: transition time moves
        ([cond("Ready", "True")], [cond("Ready", "False")], [cond("Ready", "False", ltt=T1, gen=3)]),
        # others kept, in order; new appended
        (
            [cond("A", "True"), cond("B", "False")],
            [cond("C", "True"), cond("A", "True")],
            [cond("A", "True", gen=3), cond("B", "False"), cond("C", "True", ltt=T1, gen=3)],
        ),
    ],
)
def test_merge(current, wanted, expected):
    wanted = [{k: w[k] for k in ("type", "status", "reason", "message")} for w in wanted]
    assert c.merge(current, wanted, T1, 3) == expected


def test_plan_sets_fields_generation_and_keeps_unrelated():
    before = {"phase": "old", "keep": 1, "conditions": [cond("Ready", "False")]}
    after = c.plan(before, [{"type": "Ready", "status": True, "reason": "Done"}], {"phase": "new"}, 7, T1)
    assert after["phase"] == "new" and after["keep"] == 1 and after["observedGeneration"] == 7
    assert after["conditions"] == [cond("Ready", "True", "Done", "", T1, 7)]
    assert before["phase"] == "old", "plan must not mutate its input"
    assert c.status_patch(before, after) == {"phase": "new", "conditions": after["conditions"], "observedGeneration": 7}


def test_a_mapping_field_replaces_the_old_one_and_nulls_are_refused():
    """A field set to a mapping replaces the old one (sub-keys left out go: the patch nulls them, as a merge patch of
    the whole mapping would keep them), so the next run is a no-op; a null would remove a field, which is refused."""
    before = {"components": {"db": "ready", "cache": "ready"}, "phase": "x"}
    after = c.plan(before, (), {"components": {"db": "ready"}}, None, T1)
    assert after["components"] == {"db": "ready"} and after["phase"] == "x"
    assert c.status_patch(before, after) == {"components": {"cache": None}}
    assert c.status_patch(after, c.plan(after, (), {"components": {"db": "ready"}}, None, T1)) == {}
    with pytest.raises(c.StatusError, match="status field phase is null"):
        c.plan(before, (), {"phase": None}, None, T1)


def test_noop_plan_gives_empty_patch():
    before = c.plan({}, [{"type": "Ready", "status": "True", "reason": "Done"}], {"x": 1}, 2, T0)
    again = c.plan(before, [{"type": "Ready", "status": "True", "reason": "Done"}], {"x": 1}, 2, T1)
    assert c.status_patch(before, again) == {}
    assert c.transitions(before, again) == []


@pytest.mark.parametrize(
    "condition, error",
    [
        ({"type": "Ready", "status": "yes", "reason": "R"}, "status must be one of"),
        ({"type": "Ready", "status": "True", "reason": "not camel"}, "must be CamelCase"),
        ({"type": "Ready", "status": "True", "reason": ""}, "must be CamelCase"),
        ({"type": "Ready", "status": "True", "reason": "9Lives"}, "must be CamelCase"),
        ({"type": "has space", "status": "True", "reason": "R"}, "not a valid condition type"),
        ({"type": "", "status": "True", "reason": "R"}, "not a valid condition type"),
        ({"type": "Ready", "status": "True", "reason": "R", "colour": "red"}, "unknown keys"),
        ("Ready", "must be a mapping"),
    ],
)
def test_validate_refuses(condition, error):
    with pytest.raises(c.StatusError, match=error):
        c.validate(condition)


@pytest.mark.parametrize("kind", ["Ready", "example.com/Ready", "a.b-c/X_y.z", "Upgradeable"])
def test_validate_accepts_types(kind):
    assert c.validate({"type": kind, "status": "Unknown", "reason": "R:s,t_u"})["type"] == kind


def test_long_message_is_cut_not_refused():
    got = c.validate({"type": "Failed", "status": "True", "reason": "R", "message": "x" * 40000})
    assert len(got["message"]) <= c.MESSAGE_MAX and got["message"].endswith("(cut)")


def test_plan_refuses_duplicates_and_reserved_fields():
    with pytest.raises(c.StatusError, match="more than once: Ready"):
        c.plan({}, [{"type": "Ready", "status": "True", "reason": "A"}] * 2)
    with pytest.raises(c.StatusError, match="observedGeneration"):
        c.plan({}, [], {"observedGeneration": 1})


@pytest.mark.parametrize(
    "before, after, types",
    [
        ([], [cond("Ready", "True")], ["Ready"]),
        ([cond("Ready", "True")], [cond("Ready", "True", message="new words")], []),
        ([cond("Ready", "True", "A")], [cond("Ready", "True", "B")], ["Ready"]),
        ([cond("Failed", "False")], [cond("Failed", "True"), cond("Ready", "False")], ["Failed", "Ready"]),
    ],
)
def test_transitions(before, after, types):
    assert [x["type"] for x in c.transitions({"conditions": before}, {"conditions": after})] == types


@pytest.mark.parametrize(
    "condition, kind",
    [
        (cond("Failed", "True"), "Warning"),
        (cond("Degraded", "True"), "Warning"),
        (cond("Failed", "False"), "Normal"),
        (cond("Ready", "True"), "Normal"),
        (cond("Ready", "False"), "Normal"),
    ],
)
def test_event_type(condition, kind):
    assert c.event_type(condition) == kind
