# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm.info: the olm_operator_info record from plain objects (objects from lib.olm_info)."""

import copy

import pytest
from lib.olm_info import FIRST_PLAN, NS, UPGRADE_PLAN, channel, csv, install_plan, package_manifest, subscription

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import info

# --------------------------------------------------------------------------------------------- subscriptions


@pytest.mark.parametrize(
    "package, name, expected",
    [
        ("kube-demo", None, ["kube-demo"]),
        ("kube-other", None, ["other-sub"]),
        (None, "other-sub", ["other-sub"]),
        ("kube-demo", "kube-demo", ["kube-demo"]),
        ("missing", None, []),
        (None, "missing", []),
        (None, None, ["kube-demo", "other-sub"]),
    ],
)
def test_find_subscriptions_by_package_and_name(package, name, expected):
    subs = [subscription(name="other-sub", package="kube-other", uid="u2"), subscription()]
    found = info.find_subscriptions(subs, package=package, name=name)
    assert [s["metadata"]["name"] for s in found] == expected


def test_find_subscriptions_refuses_a_name_for_another_package():
    with pytest.raises(ValueError, match="Subscription other-sub is for package kube-other, not kube-demo"):
        info.find_subscriptions([subscription(name="other-sub", package="kube-other")], package="kube-demo", name="other-sub")


@pytest.mark.parametrize(
    "conditions, expected",
    [
        ([], []),
        ([{"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy"}], []),
        (
            [
                {"type": "CatalogSourcesUnhealthy", "status": "False", "reason": "AllCatalogSourcesHealthy"},
                {"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable", "message": "no operators found in channel beta"},
                {"type": "InstallPlanPending", "status": "Unknown", "reason": "x"},
            ],
            [{"type": "ResolutionFailed", "reason": "ConstraintsNotSatisfiable", "message": "no operators found in channel beta"}],
        ),
        (
            [{"type": "InstallPlanPending", "status": "True", "reason": "RequiresApproval"}],
            [{"type": "InstallPlanPending", "reason": "RequiresApproval", "message": None}],
        ),
        (["garbage", None], []),
    ],
)
def test_abnormal_conditions_are_the_true_ones(conditions, expected):
    assert info.abnormal_conditions(conditions) == expected


def test_subscription_summary_of_the_upgrade_pending_subscription():
    summary = info.subscription_summary(subscription())
    raw = subscription()["status"]["conditions"]
    assert summary == {
        "name": "kube-demo",
        "channel": "stable",
        "source": "demo",
        "source_namespace": NS,
        "approval": "Manual",
        "starting_csv": "kube-demo.v0.0.1",
        "state": "UpgradePending",
        "current_csv": "kube-demo.v0.0.2",
        "installed_csv": "kube-demo.v0.0.1",
        "install_plan": "install-pfk2t",
        "conditions": [{"type": "InstallPlanPending", "reason": "RequiresApproval", "message": None}],
        "raw_conditions": raw,
    }


def test_subscription_summary_before_olm_reconciled_it():
    sub = {"metadata": {"name": "s"}, "spec": {"name": "p", "source": "c", "sourceNamespace": "olm"}}
    summary = info.subscription_summary(sub)
    assert summary["approval"] == "Automatic"  # the API default
    assert (summary["state"], summary["current_csv"], summary["installed_csv"], summary["install_plan"]) == (None, None, None, None)
    assert summary["conditions"] == summary["raw_conditions"] == []
    assert info.subscription_summary(None) is None


# ------------------------------------------------------------------------------------------------------- CSVs


@pytest.mark.parametrize(
    "obj, expected",
    [
        (
            csv(),
            {
                "name": "kube-demo.v0.0.1",
                "version": "0.0.1",
                "phase": "Succeeded",
                "reason": "InstallSucceeded",
                "message": "install strategy completed with no errors",
                "display_name": "Kube Demo",
            },
        ),
        (
            csv(phase="Failed", reason="InstallCheckFailed", message="install timeout"),
            {
                "name": "kube-demo.v0.0.1",
                "version": "0.0.1",
                "phase": "Failed",
                "reason": "InstallCheckFailed",
                "message": "install timeout",
                "display_name": "Kube Demo",
            },
        ),
        (csv(copied_from="operators"), None),
        (None, None),
    ],
)
def test_csv_summary_ignores_copied_csvs(obj, expected):
    assert info.csv_summary(obj) == expected


# ----------------------------------------------------------------------------------------------- InstallPlans


def test_pending_install_plans_are_the_subscriptions_unfinished_ones():
    sub = subscription()
    foreign = install_plan("install-other", ["kube-other.v1.0.0"], "RequiresApproval", False, 3, owner="other-sub", owner_uid="u2")
    same_name_other_uid = install_plan("install-stale", ["kube-demo.v0.0.9"], "RequiresApproval", False, 1, owner_uid="an-old-uid")
    failed = install_plan("install-failed", ["kube-demo.v0.0.3"], "Failed", True, 4)
    unreconciled = install_plan("install-new", ["kube-demo.v0.0.3"], "", False, 5)
    installing = install_plan("install-busy", ["kube-demo.v0.0.2", "kube-other.v1.0.1"], "Installing", True, 2)
    plans = [unreconciled, failed, foreign, same_name_other_uid, UPGRADE_PLAN, FIRST_PLAN, installing]
    assert info.pending_install_plans(plans, sub) == [
        {"name": "install-busy", "phase": "Installing", "approved": True, "approval": "Manual", "csvs": ["kube-demo.v0.0.2", "kube-other.v1.0.1"]},
        {"name": "install-pfk2t", "phase": "RequiresApproval", "approved": False, "approval": "Manual", "csvs": ["kube-demo.v0.0.2"]},
        {"name": "install-new", "phase": "", "approved": False, "approval": "Manual", "csvs": ["kube-demo.v0.0.3"]},
    ]
    assert info.pending_install_plans(plans, None) == []


def test_install_plan_owner_matched_by_name_when_a_uid_is_missing():
    no_uid_ref = install_plan("install-x", ["kube-demo.v0.0.2"], "RequiresApproval", False, 2, owner_uid=None)
    assert info.plan_belongs_to(no_uid_ref, subscription())
    sub_without_uid = subscription(uid=None)
    assert info.plan_belongs_to(UPGRADE_PLAN, sub_without_uid)
    assert not info.plan_belongs_to(UPGRADE_PLAN, subscription(name="other", uid="u9"))
    assert not info.plan_belongs_to(UPGRADE_PLAN, subscription(name="other", uid=None))


# ------------------------------------------------------------------------------------------- PackageManifests


def test_catalog_summary_sorts_versions_in_upgrade_order():
    pm = package_manifest(
        channels=[
            channel(
                "stable",
                [("kube-demo.v0.0.10", "0.0.10"), ("kube-demo.v0.0.2", "0.0.2"), ("kube-demo.v0.0.1", "0.0.1"), ("kube-demo.v0.0.2-rc.1", "0.0.2-rc.1")],
            ),
            channel("alpha", [("kube-demo.vX", "not-semver"), ("kube-demo.v0.1.0", "0.1.0"), ("kube-demo.v0.1.0+build", "0.1.0+build.2")]),
        ]
    )
    summary = info.catalog_summary(pm)
    assert summary["package"] == "kube-demo"
    assert summary["default_channel"] == "stable"
    assert (summary["catalog_source"], summary["catalog_source_namespace"]) == ("demo", NS)
    assert summary["catalog_source_display_name"] == "kube-demo test catalog"
    assert summary["provider"] == "kubeforge.operators"
    assert [c["name"] for c in summary["channels"]] == ["alpha", "stable"]  # by name, not in catalog order
    alpha, stable = summary["channels"]
    assert stable["name"] == "stable" and stable["current_csv"] == "kube-demo.v0.0.10" and stable["current_version"] == "0.0.10"
    assert stable["versions"] == ["0.0.1", "0.0.2-rc.1", "0.0.2", "0.0.10"]
    assert [e["name"] for e in stable["entries"]] == ["kube-demo.v0.0.1", "kube-demo.v0.0.2-rc.1", "kube-demo.v0.0.2", "kube-demo.v0.0.10"]
    # build metadata does not order (blang's Compare); an unparsable version goes last
    assert alpha["versions"] == ["0.1.0", "0.1.0+build.2", "not-semver"]
    assert info.catalog_summary(None) is None


def test_catalog_summary_channel_order_does_not_depend_on_the_catalog():
    channels = [channel(name, [(f"kube-demo.{name}", "0.0.1")]) for name in ("stable", "fast", "candidate", "alpha")]
    forward = info.catalog_summary(package_manifest(channels=channels))
    backward = info.catalog_summary(package_manifest(channels=list(reversed(channels))))
    assert [c["name"] for c in forward["channels"]] == ["alpha", "candidate", "fast", "stable"]
    assert forward["channels"] == backward["channels"]


def test_catalog_summary_provider_is_the_manifests_status_provider():
    pm = package_manifest(channels=[channel("stable", [("kube-demo.v0.0.1", "0.0.1")])])
    pm["status"]["channels"][0]["currentCSVDesc"]["provider"] = {"name": "from the channel head"}
    pm["status"]["provider"] = {"name": "Example Inc", "url": "https://example.com"}
    assert info.catalog_summary(pm)["provider"] == "Example Inc"
    del pm["status"]["provider"]
    assert info.catalog_summary(pm)["provider"] is None


def test_catalog_summary_of_a_manifest_with_labels_only():
    pm = package_manifest()
    del pm["status"]["catalogSource"], pm["status"]["catalogSourceNamespace"]
    summary = info.catalog_summary(pm)
    assert (summary["catalog_source"], summary["catalog_source_namespace"]) == ("demo", NS)


@pytest.mark.parametrize(
    "source, source_namespace, candidates, expected, warning",
    [
        ("demo", NS, [("demo", NS)], ("demo", NS), None),
        ("demo", NS, [("other", NS), ("demo", NS), ("demo", "olm")], ("demo", NS), None),
        ("demo", "olm", [("demo", NS), ("demo", "olm")], ("demo", "olm"), None),
        ("missing", NS, [("demo", NS)], None, None),
        (None, None, [], None, None),
        (None, None, [("operatorhubio", "olm")], ("operatorhubio", "olm"), None),
        (None, None, [("operatorhubio", "olm"), ("demo", NS)], ("demo", NS), None),
        (None, None, [("a", "olm"), ("b", "olm")], None, "package kube-demo is in 2 catalogs (olm/a, olm/b); set catalog and catalog_namespace to choose one"),
        (
            None,
            "olm",
            [("a", "olm"), ("b", "olm"), ("demo", NS)],
            None,
            "package kube-demo is in 2 catalogs (olm/a, olm/b); set catalog and catalog_namespace to choose one",
        ),
    ],
)
def test_select_package_manifest(source, source_namespace, candidates, expected, warning):
    manifests = [package_manifest(source=s, source_namespace=n) for s, n in candidates] + [package_manifest(package="kube-other")]
    chosen, message = info.select_package_manifest(manifests, "kube-demo", source, source_namespace, NS)
    assert (None if chosen is None else (chosen["status"]["catalogSource"], chosen["status"]["catalogSourceNamespace"])) == expected
    assert message == warning


def test_catalog_labels():
    assert info.catalog_labels("demo", "olm") == "catalog=demo,catalog-namespace=olm"
    assert info.catalog_labels("demo", None) == "catalog=demo"
    assert info.catalog_labels(None, None) == ""


# --------------------------------------------------------------------------------------------------- upgrades


CATALOG = info.catalog_summary(
    package_manifest(
        channels=[
            channel("stable", [("kube-demo.v0.0.2", "0.0.2"), ("kube-demo.v0.0.1", "0.0.1"), ("kube-demo.v0.0.3", "0.0.3")]),
            channel("fast", [("kube-demo.v0.1.0", "0.1.0"), ("kube-demo.v0.0.1", "0.0.1"), ("kube-demo.vbad", "bad")]),
        ],
        default="fast",
    )
)


@pytest.mark.parametrize(
    "channel_name, version, expected",
    [
        ("stable", "0.0.1", ["0.0.2", "0.0.3"]),
        ("stable", "0.0.2", ["0.0.3"]),
        ("stable", "0.0.3", []),
        ("stable", "0.0.2-rc.1", ["0.0.2", "0.0.3"]),
        ("stable", "9.0.0", []),
        ("fast", "0.0.1", ["0.1.0"]),
        (None, "0.0.1", ["0.1.0"]),  # no channel in the Subscription: the default channel
        ("beta", "0.0.1", []),
        ("stable", None, []),
        ("stable", "v0.0.1", []),  # not semver: nothing can be compared
    ],
)
def test_available_upgrades(channel_name, version, expected):
    assert info.available_upgrades(CATALOG, channel_name, version) == expected


def test_available_upgrades_without_a_catalog():
    assert info.available_upgrades(None, "stable", "0.0.1") == []


# ----------------------------------------------------------------------------------------------- the records


def test_record_of_an_installed_operator_with_a_waiting_upgrade_plan():
    record, warnings = info.operator_summary("kube-demo", NS, subscription(), csv(), [FIRST_PLAN, UPGRADE_PLAN], package_manifest())
    assert warnings == []
    assert record["present"] is True and record["installed"] is True
    assert record["package"] == "kube-demo" and record["namespace"] == NS
    assert record["csv"]["version"] == "0.0.1" and record["installed_version"] == "0.0.1"
    assert record["subscription"]["state"] == "UpgradePending"
    assert record["pending_install_plans"] == [
        {"name": "install-pfk2t", "phase": "RequiresApproval", "approved": False, "approval": "Manual", "csvs": ["kube-demo.v0.0.2"]}
    ]
    assert record["catalog"]["channels"][0]["versions"] == ["0.0.1", "0.0.2"]
    assert record["available_upgrades"] == ["0.0.2"]
    assert record["upgrade_available"] is True


def test_record_of_an_operator_at_the_channel_head():
    sub = subscription(installed="kube-demo.v0.0.2", current="kube-demo.v0.0.2", state="AtLatestKnown", conditions=[])
    record, warnings = info.operator_summary("kube-demo", NS, sub, csv("kube-demo.v0.0.2", "0.0.2"), [FIRST_PLAN], package_manifest())
    assert warnings == []
    assert record["installed"] is True
    assert record["pending_install_plans"] == []
    assert record["available_upgrades"] == []
    assert record["upgrade_available"] is False
    assert record["subscription"]["conditions"] == []


def test_record_of_a_first_install_waiting_for_approval():
    first = install_plan("install-hknj6", ["kube-demo.v0.0.1"], "RequiresApproval", False, 1)
    sub = subscription(installed=None, current="kube-demo.v0.0.1", plan="install-hknj6")
    record, _warnings = info.operator_summary("kube-demo", NS, sub, None, [first], package_manifest())
    assert record["present"] is True and record["installed"] is False
    assert record["csv"] is None and record["installed_version"] is None
    assert [p["csvs"] for p in record["pending_install_plans"]] == [["kube-demo.v0.0.1"]]
    assert record["available_upgrades"] == []  # nothing installed yet
    assert record["upgrade_available"] is False


def test_record_of_an_installing_csv():
    record, _warnings = info.operator_summary(
        "kube-demo", NS, subscription(current="kube-demo.v0.0.1", state="AtLatestKnown"), csv(phase="Installing", reason="InstallWaiting"), [], None
    )
    assert record["csv"]["phase"] == "Installing"
    assert record["installed"] is False


def test_record_without_the_packagemanifest_api_still_knows_an_upgrade_is_under_way():
    record, _warnings = info.operator_summary("kube-demo", NS, subscription(), csv(), [UPGRADE_PLAN], None)
    assert record["catalog"] is None
    assert record["available_upgrades"] == []
    assert record["upgrade_available"] is True  # currentCSV kube-demo.v0.0.2 != installedCSV kube-demo.v0.0.1


def test_record_takes_the_installed_version_from_the_catalog_when_the_csv_is_gone():
    record, _warnings = info.operator_summary("kube-demo", NS, subscription(), None, [], package_manifest())
    assert record["csv"] is None and record["installed"] is False
    assert record["installed_version"] == "0.0.1"
    assert record["available_upgrades"] == ["0.0.2"]


def test_record_ignores_a_csv_the_subscription_did_not_install():
    record, _warnings = info.operator_summary("kube-demo", NS, subscription(), csv("kube-demo.v0.0.9", "0.0.9"), [], None)
    assert record["csv"] is None and record["installed"] is False


def test_record_of_a_copied_csv_is_not_installed():
    record, _warnings = info.operator_summary("kube-demo", NS, subscription(), csv(copied_from="operators"), [], None)
    assert record["csv"] is None and record["installed"] is False


def test_record_warns_when_the_subscribed_channel_is_not_in_the_catalog():
    record, warnings = info.operator_summary("kube-demo", NS, subscription(channel="beta"), csv(), [], package_manifest())
    assert warnings == [f"kube-demo: channel beta is not in catalog {NS}/demo"]
    assert record["available_upgrades"] == []


def test_record_of_an_absent_package_keeps_the_catalog():
    record, warnings = info.operator_summary("kube-demo", NS, None, None, [UPGRADE_PLAN], package_manifest())
    assert warnings == []
    assert record["present"] is False
    assert record["subscription"] is None and record["csv"] is None
    assert record["installed"] is False and record["installed_version"] is None
    assert record["pending_install_plans"] == []
    assert record["catalog"]["default_channel"] == "stable"
    assert record["available_upgrades"] == [] and record["upgrade_available"] is False


def test_record_does_not_modify_its_inputs():
    sub, obj, plans, pm = subscription(), csv(), [FIRST_PLAN, UPGRADE_PLAN], package_manifest()
    before = copy.deepcopy((sub, obj, plans, pm))
    info.operator_summary("kube-demo", NS, sub, obj, plans, pm)
    assert (sub, obj, plans, pm) == before
