"""olm.operator_plan: the writes olm_operator would make (and the InstallPlan it would approve) for the options and
one observed snapshot - the same plan check mode reports and the real run executes."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator_plan as plan

NS, PACKAGE, CATALOG, CATALOG_NS = "demo", "kube-demo", "cat", "olm"
OWN_NAMESPACE = [{"type": "OwnNamespace", "supported": True}, {"type": "AllNamespaces", "supported": False}]
ALL_NAMESPACES = [{"type": "OwnNamespace", "supported": False}, {"type": "AllNamespaces", "supported": True}]
LABEL = {plan.CREATED_BY_LABEL: plan.CREATED_BY}


def manifest(modes=None, entries=(("kube-demo.v0.0.1", "0.0.1"), ("kube-demo.v0.0.2", "0.0.2"))):
    channel = {
        "name": "stable",
        "currentCSV": entries[-1][0],
        "currentCSVDesc": {"installModes": modes or OWN_NAMESPACE},
        "entries": [{"name": name, "version": version} for name, version in reversed(entries)],
    }
    return {"metadata": {"name": PACKAGE}, "status": {"packageName": PACKAGE, "defaultChannel": "stable", "channels": [channel]}}


def namespace(labels=None):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": dict(labels or {})}}


def group(name="og", targets=(NS,), **extra):
    return {"metadata": {"name": name, "namespace": NS}, "spec": dict({"targetNamespaces": list(targets)}, **extra), "status": {"namespaces": list(targets)}}


def catalog_source(state="READY"):
    return {"metadata": {"name": CATALOG, "namespace": CATALOG_NS}, "spec": {"sourceType": "grpc"}, "status": {"connectionState": {"lastObservedState": state}}}


def csv(name, version, phase="Succeeded"):
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"version": version}, "status": {"phase": phase}}


def subscription(installed="kube-demo.v0.0.1", current=None, approval="Manual", channel="stable", plan_ref=None):
    st = {"installedCSV": installed, "currentCSV": current or installed, "state": "AtLatestKnown"}
    if plan_ref:
        st["installPlanRef"] = {"name": plan_ref}
        st["state"] = "UpgradePending"
    return {
        "metadata": {"name": PACKAGE, "namespace": NS},
        "spec": {"name": PACKAGE, "channel": channel, "source": CATALOG, "sourceNamespace": CATALOG_NS, "installPlanApproval": approval},
        "status": st,
    }


def install_plan(name, csvs, phase="RequiresApproval"):
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"approved": False, "clusterServiceVersionNames": list(csvs)}, "status": {"phase": phase}}


def params(**options):
    base = {"namespace": NS, "package": PACKAGE, "catalog": CATALOG, "catalog_namespace": CATALOG_NS, "channel": "stable", "approve_dependencies": True}
    base.update(options)
    base.setdefault("approval", "Manual" if base.get("version") or base.get("starting_csv") else "Automatic")
    return base


def fresh(**fields):
    """A new install's snapshot: no Subscription, the namespace with no OperatorGroup, a serving catalog listing it."""
    values = {"namespace": namespace(), "operator_groups": [], "catalog_source": catalog_source(), "manifest": manifest(), "catalog_packages": None}
    values.update(fields)
    return plan.Observation(**values)


def writes_of(planning):
    """``(verb, kind, name, the part of the body a test cares about)`` per write."""
    out = []
    for write in planning.writes:
        body = write.body
        if write.kind == "Subscription" and write.verb == "create":
            body = body["spec"]
        elif write.kind == "OperatorGroup":
            body = body["spec"]
        elif write.kind == "Namespace" and write.verb == "create":
            body = body["metadata"]
        out.append((write.verb, write.kind, write.name, body))
    return out


SUB_SPEC = {"name": PACKAGE, "channel": "stable", "source": CATALOG, "sourceNamespace": CATALOG_NS}


@pytest.mark.parametrize(
    "options, observation, check_mode, expected",
    [
        pytest.param(
            {"namespace_labels": {"team": "a"}},
            fresh(namespace=None, operator_groups=None),
            True,
            [
                ("create", "Namespace", NS, {"name": NS, "labels": {"team": "a"}}),
                ("create", "OperatorGroup", NS, {"targetNamespaces": [NS]}),
                ("create", "Subscription", PACKAGE, dict(SUB_SPEC, installPlanApproval="Automatic")),
            ],
            id="new namespace: namespace, OperatorGroup, Subscription",
        ),
        pytest.param(
            {"version": "0.0.1"},
            fresh(manifest=manifest(ALL_NAMESPACES)),
            False,
            [
                ("create", "OperatorGroup", NS, {}),
                ("create", "Subscription", PACKAGE, dict(SUB_SPEC, installPlanApproval="Manual", startingCSV="kube-demo.v0.0.1")),
            ],
            id="pinned version in an existing namespace: AllNamespaces group, startingCSV of that version",
        ),
        pytest.param(
            {"namespace_labels": {"team": "a"}},
            fresh(namespace=namespace({"team": "b", "keep": "x"}), operator_groups=[group()]),
            False,
            [
                ("patch", "Namespace", NS, {"metadata": {"labels": {"team": "a"}}}),
                ("create", "Subscription", PACKAGE, dict(SUB_SPEC, installPlanApproval="Automatic")),
            ],
            id="namespace with its group: labels patched, only the Subscription created",
        ),
        pytest.param(
            {},
            fresh(manifest=None, catalog_packages=[]),
            False,
            [("create", "OperatorGroup", NS, {"targetNamespaces": [NS]}), ("create", "Subscription", PACKAGE, dict(SUB_SPEC, installPlanApproval="Automatic"))],
            id="catalog not serving yet: predicted, own namespace as the safe default",
        ),
        pytest.param(
            {},
            fresh(namespace=None, operator_groups=None, catalog_source=None, manifest=None),
            True,
            [
                ("create", "Namespace", NS, {"name": NS}),
                ("create", "OperatorGroup", NS, {"targetNamespaces": [NS]}),
                ("create", "Subscription", PACKAGE, dict(SUB_SPEC, installPlanApproval="Automatic")),
            ],
            id="check mode before the catalog exists: the namespace and group are reported too",
        ),
        pytest.param(
            {"channel": "beta"},
            plan.Observation(subscription=subscription(approval="Automatic"), installed=csv("kube-demo.v0.0.1", "0.0.1"), namespace=namespace()),
            False,
            [("patch", "Subscription", PACKAGE, {"spec": {"channel": "beta"}})],
            id="existing Subscription: only the fields that differ are patched",
        ),
        pytest.param(
            {"config": {}},
            plan.Observation(
                subscription=dict(subscription(approval="Automatic"), spec=dict(subscription()["spec"], installPlanApproval="Automatic", config={"env": []})),
                installed=csv("kube-demo.v0.0.1", "0.0.1"),
                namespace=namespace(),
            ),
            False,
            [("patch", "Subscription", PACKAGE, {"spec": {"config": None}})],
            id="config {} removes the config set before",
        ),
    ],
)
def test_the_writes_planned_in_order(options, observation, check_mode, expected):
    planning = plan.plan_install(params(**options), observation, check_mode=check_mode)
    assert writes_of(planning) == expected
    assert not planning.settled
    created = {w.kind: w.name for w in planning.writes if w.verb == "create"}
    assert planning.created == {
        key: created[kind]
        for key, kind in (("namespace", "Namespace"), ("operator_group", "OperatorGroup"), ("subscription", "Subscription"))
        if kind in created
    }


def test_an_installed_operator_as_asked_plans_no_write_and_no_wait():
    observation = plan.Observation(subscription=subscription(approval="Automatic"), installed=csv("kube-demo.v0.0.1", "0.0.1"), namespace=namespace())
    planning = plan.plan_install(params(), observation)
    assert planning.settled and planning.writes == [] and planning.approval is None


def test_labels_of_a_settled_install_are_still_set():
    observation = plan.Observation(subscription=subscription(approval="Automatic"), installed=csv("kube-demo.v0.0.1", "0.0.1"), namespace=namespace())
    planning = plan.plan_install(params(namespace_labels={"team": "a"}), observation)
    assert planning.settled
    assert writes_of(planning) == [("patch", "Namespace", NS, {"metadata": {"labels": {"team": "a"}}})]
    assert (planning.labelled, planning.labels_before) == ({"team": "a"}, {"team": None})


def test_a_manual_upgrade_names_the_install_plan_it_would_approve_and_its_csv():
    observation = plan.Observation(
        subscription=subscription(current="kube-demo.v0.0.2", plan_ref="install-2"),
        installed=csv("kube-demo.v0.0.1", "0.0.1"),
        namespace=namespace(),
        manifest=manifest(),
        installplans={"install-2": install_plan("install-2", ["kube-demo.v0.0.2"])},
        csvs={"kube-demo.v0.0.1": csv("kube-demo.v0.0.1", "0.0.1")},
    )
    planning = plan.plan_install(params(version="0.0.2"), observation, check_mode=True)
    assert planning.writes == []
    assert planning.approval == {
        "install_plan": "install-2",
        "csvs": ["kube-demo.v0.0.2"],
        "message": "would approve InstallPlan install-2 (CSV kube-demo.v0.0.2)",
    }


def test_an_install_plan_past_the_version_asked_for_is_not_predicted_as_approved():
    """next_step refuses it (VersionNotOnUpgradePath): the plan does not promise an approval the wait would refuse."""
    observation = plan.Observation(
        subscription=subscription(current="kube-demo.v0.0.3", plan_ref="install-3"),
        installed=csv("kube-demo.v0.0.1", "0.0.1"),
        namespace=namespace(),
        manifest=manifest(entries=(("kube-demo.v0.0.1", "0.0.1"), ("kube-demo.v0.0.2", "0.0.2"), ("kube-demo.v0.0.3", "0.0.3"))),
        installplans={"install-3": install_plan("install-3", ["kube-demo.v0.0.3"])},
        csvs={},
    )
    assert plan.plan_install(params(version="0.0.2"), observation, check_mode=True).approval is None


def test_a_package_the_serving_catalog_does_not_have_is_refused_before_any_write():
    observation = fresh(manifest=None, catalog_packages=["etcd", "prometheus"])
    with pytest.raises(plan.OperatorError, match=r"package kube-demo is not in CatalogSource olm/cat \(its packages: etcd, prometheus\)") as caught:
        plan.plan_install(params(), observation, check_mode=True)
    assert caught.value.result["reason"] == "ConstraintsNotSatisfiable"


def test_a_long_package_list_is_cut():
    observation = fresh(manifest=None, catalog_packages=[f"p{i:02d}" for i in range(25)])
    with pytest.raises(plan.OperatorError, match=r"p09, and 15 more\)"):
        plan.plan_install(params(), observation)


@pytest.mark.parametrize(
    "options, observation, check_mode, error, text",
    [
        ({"version": "9.9.9"}, fresh(), True, plan.OperatorError, r"version 9\.9\.9 is not in channel stable of package kube-demo"),
        ({"starting_csv": "kube-demo.v7"}, fresh(), True, plan.OperatorError, "starting_csv kube-demo.v7 is not in channel stable"),
        ({}, fresh(catalog_source=None), False, plan.OperatorError, "CatalogSource olm/cat does not exist"),
        ({}, fresh(catalog_source=catalog_source("TRANSIENT_FAILURE")), True, None, None),
        ({}, fresh(operator_groups=[group("a"), group("b")]), True, plan.OperatorError, r"has 2 OperatorGroups \(a, b\)"),
        ({"target_namespaces": []}, fresh(operator_groups=[group()]), True, installmode.InstallModeError, "not the requested all namespaces"),
        (
            {"operator_group_spec": {"upgradeStrategy": {"name": "TechPreviewUnsafeFailForward"}}},
            fresh(operator_groups=[group()]),
            True,
            plan.OperatorError,
            "shared by every operator",
        ),
        (
            {},
            plan.Observation(subscription=dict(subscription(), spec=dict(subscription()["spec"], name="other"))),
            True,
            plan.OperatorError,
            "subscribes to package other, not kube-demo",
        ),
    ],
)
def test_refusals_come_before_any_write(options, observation, check_mode, error, text):
    if error is None:  # a catalog that is only reconnecting is not refused
        assert plan.plan_install(params(**options), observation, check_mode=check_mode).writes
        return
    with pytest.raises(error, match=text):
        plan.plan_install(params(**options), observation, check_mode=check_mode)


def test_a_pinned_move_without_waiting_is_refused_but_check_mode_reports_it():
    observation = plan.Observation(subscription=subscription(), installed=csv("kube-demo.v0.0.1", "0.0.1"), namespace=namespace(), manifest=manifest())
    with pytest.raises(plan.OperatorError, match="set wait=true"):
        plan.plan_install(params(version="0.0.2"), observation, check_mode=False, wait=False)
    assert plan.plan_install(params(version="0.0.2"), observation, check_mode=True, wait=False).writes == []


def test_check_mode_without_the_catalog_is_marked_predicted_with_a_warning():
    planning = plan.plan_install(params(), fresh(catalog_source=None, manifest=None), check_mode=True)
    assert planning.predicted
    assert planning.warnings == ["CatalogSource olm/cat does not exist (yet): the install is predicted, not checked against OLM"]


@pytest.mark.parametrize(
    "options, existing, expected",
    [
        ({}, None, True),
        ({"version": "0.0.2"}, subscription(), True),
        ({}, subscription(), False),
        ({"starting_csv": "kube-demo.v0.0.1", "install_modes": OWN_NAMESPACE}, None, False),
    ],
)
def test_when_the_catalog_is_read(options, existing, expected):
    assert plan.needs_catalog(params(**options), existing) is expected


def test_check_mode_with_a_catalog_serving_nothing_yet_warns_that_it_predicts():
    planning = plan.plan_install(params(), fresh(manifest=None, catalog_packages=[]), check_mode=True)
    assert [w.kind for w in planning.writes] == ["OperatorGroup", "Subscription"]
    assert planning.warnings == ["CatalogSource olm/cat serves no package (yet): the install is predicted, not checked against the catalog"]
