"""Pod Security labels: what to set, how to record and restore the previous ones, and the API server's warnings."""

import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc import pod_security as ps


@pytest.mark.parametrize(
    "levels, versions, sync, expected",
    [
        ({"enforce": "baseline"}, {}, None, {"pod-security.kubernetes.io/enforce": "baseline"}),
        (
            {"enforce": "restricted", "warn": "restricted"},
            {"enforce": "v1.35"},
            False,
            {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "v1.35",
                "pod-security.kubernetes.io/warn": "restricted",
                "security.openshift.io/scc.podSecurityLabelSync": "false",
            },
        ),
        ({}, {"audit": "latest"}, True, {"pod-security.kubernetes.io/audit-version": "latest", "security.openshift.io/scc.podSecurityLabelSync": "true"}),
    ],
)
def test_wanted_labels(levels, versions, sync, expected):
    assert ps.wanted_labels(levels, versions, sync) == expected


@pytest.mark.parametrize("levels, versions, text", [({"enforce": "strict"}, {}, "not a Pod Security level"), ({}, {"warn": "1.30"}, "neither 'latest'")])
def test_bad_levels_and_versions(levels, versions, text):
    with pytest.raises(ps.PodSecurityError, match=text):
        ps.wanted_labels(levels, versions)


def test_record_and_restore_round_trip():
    current = {"pod-security.kubernetes.io/enforce": "privileged", "team": "a"}
    keys = ["pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/warn"]
    recorded = ps.record_previous(current, {}, keys)
    assert json.loads(recorded) == {"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/warn": None}
    assert ps.record_previous(current, {ps.PREVIOUS_ANNOTATION: recorded}, keys) is None  # the first record wins
    patch = ps.restore_patch({ps.PREVIOUS_ANNOTATION: recorded})
    assert patch == {
        "metadata": {
            "labels": {"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/warn": None},
            "annotations": {ps.PREVIOUS_ANNOTATION: None},
        }
    }
    assert ps.restore_patch({}) is None


@pytest.mark.parametrize("value", ["not json", json.dumps({"team": "b"}), json.dumps(["x"])])
def test_restore_refuses_a_foreign_record(value):
    with pytest.raises(ps.PodSecurityError):
        ps.restore_patch({ps.PREVIOUS_ANNOTATION: value})


def test_label_changes():
    assert ps.label_changes({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == {"b": "3", "c": "4"}


def test_warnings_about_existing_pods():
    headers = [
        '299 - "existing pods in namespace \\"demo\\" violate the new PodSecurity enforce level \\"restricted:latest\\""',
        '299 - "priv: privileged (container \\"c\\" must not set securityContext.privileged=true)"',
        '299 - "web-1 (and 2 other pods): allowPrivilegeEscalation != false"',
    ]
    texts = ps.warning_texts(headers)
    assert texts[0].startswith('existing pods in namespace "demo"')
    summary, pods = ps.violations(texts)
    assert summary == [texts[0]]
    assert pods == {
        "priv": 'privileged (container "c" must not set securityContext.privileged=true)',
        "web-1 (and 2 other pods)": "allowPrivilegeEscalation != false",
    }
