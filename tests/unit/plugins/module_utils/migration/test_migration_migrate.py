# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm/migrate.py: the eligibility rules E1-E14 of moving an OLM v0 operator to OLM v1 v1.5.1 (one row per rule and
variant), the plan of an eligible operator field by field, and the edge cases (no OperatorGroup, a Subscription
not at its installed CSV, two Subscriptions of the package, an object another controller owns). The operator is the
testbed's kube-demo 0.0.1 bundle as OLM v0 installs it in AllNamespaces mode; the live objects carry the marks
OLM v0 v0.46.0 puts on them (research notes of issue #34, section 2.1)."""

import base64
import copy
import hashlib

import pytest
import yaml
from lib.testdata import DATA_DIR

from ansible_collections.kubeforge.operators.plugins.module_utils.migration import migrate as mg
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import installer_rbac as ir

BUNDLES = DATA_DIR.parent / "testbed" / "fixtures" / "kube-demo" / "bundles"
NS = "operators"
PKG = "kube-demo"
CSV = "kube-demo.v0.0.1"
EXT = "kube-demo"
SA = "kube-demo-installer"
CATALOG = "testbed-v1"
DEPLOYMENT = "kube-demo-controller-manager"
CRD = "kubedemos.demo.kubeforge.io"
VIEWER = "kube-demo-kubedemo-viewer"
CONFIGMAP = "kube-demo-operand-manifests"
COMPONENT = f"operators.coreos.com/{PKG}.{NS}"
OWNER_LABELS = {"olm.owner": CSV, "olm.owner.namespace": NS, "olm.owner.kind": "ClusterServiceVersion"}


def load_bundle(version="0.0.1"):
    docs = []
    for path in sorted((BUNDLES / version / "manifests").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs, f"no manifests for kube-demo {version}"
    return docs


MANIFESTS = load_bundle()


def bundle_csv(manifests):
    return next(o for o in manifests if o["kind"] == "ClusterServiceVersion")


# ------------------------------------------------------------------------------------------------ builders


def meta(name, namespace=None, labels=None, annotations=None, owners=None):
    out = {"name": name}
    if namespace:
        out["namespace"] = namespace
    for key, value in (("labels", labels), ("annotations", annotations), ("ownerReferences", owners)):
        if value:
            out[key] = dict(value) if isinstance(value, dict) else list(value)
    return out


def csv_ref(controller=False):
    return {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "name": CSV, "uid": "csv-uid", "controller": controller}


def subscription(name=PKG, package=PKG, installed=CSV, current=CSV, state="AtLatestKnown", approval="Automatic", annotations=None, plan_ref=None):
    st = {"installedCSV": installed, "currentCSV": current, "state": state}
    if plan_ref:
        st["installPlanRef"] = {"name": plan_ref, "namespace": NS}
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": meta(name, NS, labels={COMPONENT: ""}, annotations=annotations),
        "spec": {"name": package, "channel": "alpha", "source": "testbed", "sourceNamespace": "olm", "installPlanApproval": approval},
        "status": {k: v for k, v in st.items() if v is not None},
    }


def live_csv(phase="Succeeded", name=CSV, reason=None):
    obj = copy.deepcopy(bundle_csv(MANIFESTS))
    obj["metadata"].update(namespace=NS, name=name)
    obj["metadata"]["annotations"].update({"olm.operatorGroup": "global", "olm.operatorNamespace": NS, "olm.targetNamespaces": ""})
    obj["status"] = {"phase": phase}
    if reason:
        obj["status"].update(reason=reason, message="install strategy failed")
    return obj


def operator_group(name="global", targets=None):
    og = {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": meta(name, NS), "spec": {}}
    if targets is not None:
        og["spec"]["targetNamespaces"] = list(targets)
    og["status"] = {"namespaces": list(targets) if targets else [""]}
    return og


def install_plan(name, phase="Complete", csvs=(CSV,), owners=(PKG,)):
    refs = [{"kind": "Subscription", "name": o, "apiVersion": "operators.coreos.com/v1alpha1", "uid": f"{o}-uid"} for o in owners]
    return {
        "kind": "InstallPlan",
        "metadata": meta(name, NS, owners=refs),
        "spec": {"clusterServiceVersionNames": list(csvs), "approval": "Automatic", "approved": True},
        "status": {"phase": phase},
    }


def fbc_bundle(version="0.0.1", properties=()):
    props = [{"type": "olm.package", "value": {"packageName": PKG, "version": version}}] + list(properties)
    return {"schema": "olm.bundle", "name": f"{PKG}.v{version}", "package": PKG, "image": f"registry.invalid/kube-demo-bundle:v{version}", "properties": props}


def live_deployment():
    """The Deployment as OLM v0 runs it: the CSV's spec, the live CSV's annotations on the pod template, the
    OPERATOR_CONDITION_NAME variable, API server defaults and OLM's labels and ownerReference."""
    entry = bundle_csv(MANIFESTS)["spec"]["install"]["spec"]["deployments"][0]
    spec = copy.deepcopy(entry["spec"])
    spec["revisionHistoryLimit"] = 10
    spec["strategy"] = {"type": "RollingUpdate"}
    template = spec["template"]
    template["metadata"]["annotations"] = dict(live_csv()["metadata"]["annotations"])
    container = template["spec"]["containers"][0]
    container.update(imagePullPolicy="IfNotPresent", terminationMessagePath="/dev/termination-log")
    container["env"] = [{"name": "OPERATOR_CONDITION_NAME", "value": CSV}]
    labels = dict(entry["label"], **OWNER_LABELS, **{"olm.managed": "true", "olm.deployment-spec-hash": "5UgDqU", COMPONENT: ""})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(DEPLOYMENT, NS, labels=labels, owners=[csv_ref()]), "spec": spec}


def live_objects():
    """What OLM v0 created from the bundle; v1's generated RBAC (other names) does not exist."""
    crd = copy.deepcopy(next(o for o in MANIFESTS if o["kind"] == "CustomResourceDefinition"))
    crd["metadata"] = meta(CRD, labels={"olm.managed": "true", COMPONENT: ""}, annotations={"operatorframework.io/installed-alongside-1a2b3c": f"{NS}/{CSV}"})
    crd["status"] = {"storedVersions": ["v1alpha1"]}
    viewer = copy.deepcopy(next(o for o in MANIFESTS if o["kind"] == "ClusterRole"))
    viewer["metadata"] = meta(VIEWER, labels=dict(OWNER_LABELS, **{"olm.managed": "true", COMPONENT: ""}))
    configmap = copy.deepcopy(next(o for o in MANIFESTS if o["kind"] == "ConfigMap"))
    configmap["metadata"] = meta(CONFIGMAP, NS, labels={"olm.managed": "true", COMPONENT: ""}, owners=[csv_ref()])
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(DEPLOYMENT, NS, labels={COMPONENT: ""}, owners=[csv_ref()])}
    objs = {
        ("ServiceAccount", NS, DEPLOYMENT): sa,
        ("CustomResourceDefinition", None, CRD): crd,
        ("ClusterRole", None, VIEWER): viewer,
        ("ConfigMap", NS, CONFIGMAP): configmap,
        ("Deployment", NS, DEPLOYMENT): live_deployment(),
    }
    for item in mg.release_objects(MANIFESTS, NS):
        objs.setdefault((item.kind, item.namespace, item.name), None)
    return objs


def scenario(**changes):
    """The fields of an eligible Observed; ``changes`` replace some."""
    fields = {
        "subscription": subscription(),
        "csv": live_csv(),
        "operator_groups": [operator_group()],
        "installplans": [install_plan("install-abcde")],
        "operator_condition": {"kind": "OperatorCondition", "metadata": meta(CSV, NS, owners=[csv_ref(True)]), "spec": {}, "status": {}},
        "copied_csvs": [],
        "bundle": fbc_bundle(),
        "catalog": CATALOG,
        "manifests": copy.deepcopy(MANIFESTS),
        "live": live_objects(),
        "dependents": [],
        "extension": None,
        "record": None,
    }
    fields.update(changes)
    fields.setdefault("subscriptions", [fields["subscription"]])
    fields.setdefault("csvs", [fields["csv"]] if fields["csv"] else [])
    return fields


def observed(**changes):
    return mg.Observed(**scenario(**changes))


def with_csv_change(change):
    """Manifests whose CSV ``change(csv)`` altered."""
    manifests = copy.deepcopy(MANIFESTS)
    change(bundle_csv(manifests))
    return manifests


def with_live(key, change):
    objs = live_objects()
    change(objs[key])
    return objs


def deployment_change(change):
    return with_live(("Deployment", NS, DEPLOYMENT), lambda d: change(d["spec"]))


def crd_change(change):
    return with_live(("CustomResourceDefinition", None, CRD), change)


# ------------------------------------------------------------------------------------------------ eligibility


def test_the_testbed_operator_is_eligible():
    assert mg.eligibility(observed(), EXT) == []


def no_all_namespaces(csv):
    for mode in csv["spec"]["installModes"]:
        if mode["type"] == "AllNamespaces":
            mode["supported"] = False


# (id, Observed changes, rule, subject, words the reason must hold)
REFUSALS = [
    # E1 install mode
    ("E1 own namespace", {"operator_groups": [operator_group(targets=[NS])]}, "E1", f"OperatorGroup {NS}/global", "targets operators (OwnNamespace mode)"),
    ("E1 no AllNamespaces", {"manifests": with_csv_change(no_all_namespaces)}, "E1", f"bundle {CSV}", "do not support targeting all namespaces"),
    ("E1 two groups", {"operator_groups": [operator_group("a"), operator_group("b")]}, "E1", f"Namespace {NS}", "2 OperatorGroups (a, b)"),
    # E2 dependencies
    (
        "E2 package required",
        {"bundle": fbc_bundle(properties=[{"type": "olm.package.required", "value": {"packageName": "etcd", "versionRange": ">=0.9"}}])},
        "E2",
        f"bundle {CSV}",
        'dependency declared via property "olm.package.required"',
    ),
    (
        "E2 required CRD",
        {"manifests": with_csv_change(lambda c: c["spec"]["customresourcedefinitions"].update(required=[{"name": "etcdclusters.etcd.database.coreos.com"}]))},
        "E2",
        f"bundle {CSV}",
        "requires the CRDs etcdclusters.etcd.database.coreos.com",
    ),
    # E3 APIServices, E4 webhooks
    (
        "E3 apiservice",
        {"manifests": with_csv_change(lambda c: c["spec"].update(apiservicedefinitions={"owned": [{"name": "v1.metrics.example.io"}]}))},
        "E3",
        f"bundle {CSV}",
        "apiServiceDefintions are not supported",
    ),
    (
        "E4 webhook",
        {"manifests": with_csv_change(lambda c: c["spec"].update(webhookdefinitions=[{"type": "ValidatingAdmissionWebhook", "generateName": "v.x.io"}]))},
        "E4",
        f"bundle {CSV}",
        "webhookDefinitions are not supported",
    ),
    # E5 OperatorCondition in use
    (
        "E5 conditions",
        {"operator_condition": {"metadata": meta(CSV, NS), "spec": {"conditions": [{"type": "Upgradeable", "status": "False"}]}}},
        "E5",
        f"OperatorCondition {NS}/{CSV}",
        "holds spec.conditions",
    ),
    # E6 Subscription
    ("E6 upgrade pending", {"subscription": subscription(state="UpgradePending")}, "E6", f"Subscription {NS}/{PKG}", "state UpgradePending, not AtLatestKnown"),
    (
        "E6 not at installed CSV",
        {"subscription": subscription(current="kube-demo.v0.0.2", state="UpgradePending")},
        "E6",
        f"Subscription {NS}/{PKG}",
        "moving from kube-demo.v0.0.1 to kube-demo.v0.0.2",
    ),
    (
        "E6 generated dependency",
        {"subscription": subscription(annotations={"olm.generated-by": "install-xyz"})},
        "E6",
        f"Subscription {NS}/{PKG}",
        "to satisfy another operator's dependency",
    ),
    (
        "E6 pending install plan",
        {"installplans": [install_plan("install-next", phase="RequiresApproval", csvs=("kube-demo.v0.0.2",))]},
        "E6",
        f"InstallPlan {NS}/install-next",
        "is RequiresApproval",
    ),
    (
        "E6 two subscriptions",
        {"subscriptions": [subscription(), subscription(name="kube-demo-2")]},
        "E6",
        f"Subscription {NS}/{PKG}",
        "2 Subscriptions of package kube-demo (kube-demo, kube-demo-2)",
    ),
    (
        "E6 nothing installed",
        {"subscription": subscription(installed=None, current=None, state="UpgradePending"), "csv": None},
        "E6",
        f"Subscription {NS}/{PKG}",
        "no installed CSV",
    ),
    # E7 CSV
    (
        "E7 failed",
        {"csv": live_csv(phase="Failed", reason="InstallComponentFailed")},
        "E7",
        f"ClusterServiceVersion {NS}/{CSV}",
        "phase Failed (InstallComponentFailed",
    ),
    ("E7 missing", {"csv": None}, "E7", f"ClusterServiceVersion {NS}/{CSV}", "does not exist in namespace operators"),
    # E9 catalog
    (
        "E9 not served",
        {"bundle": None, "catalog": None},
        "E9",
        f"package {PKG}",
        "no serving ClusterCatalog has package kube-demo at the installed version 0.0.1",
    ),
    ("E9 other version", {"bundle": fbc_bundle("0.0.2")}, "E9", f"package {PKG}", "at version 0.0.2, not the installed version 0.0.1"),
    ("E9 unread manifests", {"manifests": None}, "E9", f"package {PKG}", "could not be read"),
    # E10 ownership
    (
        "E10 controller",
        {
            "live": with_live(
                ("ConfigMap", NS, CONFIGMAP), lambda o: o["metadata"]["ownerReferences"].append({"kind": "Foo", "name": "bar", "controller": True})
            )
        },
        "E10",
        f"ConfigMap {NS}/{CONFIGMAP}",
        "controlled by Foo bar",
    ),
    (
        "E10 other helm release",
        {
            "live": with_live(
                ("ClusterRole", None, VIEWER), lambda o: o["metadata"].update(annotations={mg.HELM_RELEASE_NAME: "other", mg.HELM_RELEASE_NAMESPACE: NS})
            )
        },
        "E10",
        f"ClusterRole {VIEWER}",
        "belongs to Helm release operators/other",
    ),
    (
        "E10 other extension",
        {
            "live": with_live(
                ("ServiceAccount", NS, DEPLOYMENT),
                lambda o: o["metadata"]["labels"].update({mg.ce.OWNER_KIND_LABEL: "ClusterExtension", mg.ce.OWNER_NAME_LABEL: "x"}),
            )
        },
        "E10",
        f"ServiceAccount {NS}/{DEPLOYMENT}",
        "installed by ClusterExtension x",
    ),
    (
        "E10 shared CRD",
        {"live": crd_change(lambda o: o["metadata"]["annotations"].update({"operatorframework.io/installed-alongside-ffff": "other-ns/other.v1"}))},
        "E10",
        f"CustomResourceDefinition {CRD}",
        "installed alongside other-ns/other.v1",
    ),
    (
        "E10 name taken",
        {"extension": {"metadata": {"name": EXT}, "spec": {"namespace": "elsewhere", "source": {"catalog": {"packageName": "other"}}}}},
        "E10",
        f"ClusterExtension {EXT}",
        "already exists and is not this migration's (package other, namespace elsewhere)",
    ),
    # E11 CRD upgrade safety
    (
        "E11 stored version",
        {"live": crd_change(lambda o: o["status"].update(storedVersions=["v1alpha1", "v1beta1"]))},
        "E11",
        f"CustomResourceDefinition {CRD}",
        "stored version v1beta1 removed",
    ),
    ("E11 scope", {"live": crd_change(lambda o: o["spec"].update(scope="Cluster"))}, "E11", f"CustomResourceDefinition {CRD}", "scope Cluster -> Namespaced"),
    # E12 Deployment drift
    (
        "E12 scaled",
        {"live": deployment_change(lambda s: s.update(replicas=3))},
        "E12",
        f"Deployment {NS}/{DEPLOYMENT}",
        "differs from the bundle's Deployment in spec.replicas",
    ),
    (
        "E12 subscription config",
        {"live": deployment_change(lambda s: s["template"]["spec"]["containers"][0]["resources"]["requests"].update(memory="256Mi"))},
        "E12",
        f"Deployment {NS}/{DEPLOYMENT}",
        "spec.template.spec.containers[name=manager].resources.requests.memory",
    ),
    (
        "E12 template annotation",
        {"live": deployment_change(lambda s: s["template"]["metadata"]["annotations"].update(capabilities="Full Lifecycle"))},
        "E12",
        f"Deployment {NS}/{DEPLOYMENT}",
        "spec.template.metadata.annotations.capabilities",
    ),
    # E13 dependents
    (
        "E13 dependent",
        {"dependents": [{"metadata": {"name": "kube-addon.v1.0.0", "namespace": "addons"}}]},
        "E13",
        "ClusterServiceVersion addons/kube-addon.v1.0.0",
        "requires an API or the package of kube-demo",
    ),
    # E14 unsupported kinds
    (
        "E14 unsupported kind",
        {"manifests": copy.deepcopy(MANIFESTS) + [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate-db"}}]},
        "E14",
        f"bundle {CSV}",
        "bundle contains unsupported resource: Name: migrate-db, Kind: Job",
    ),
]


@pytest.mark.parametrize("changes, rule, subject, words", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_each_rule_refuses_with_the_object_and_the_fix(changes, rule, subject, words):
    found = mg.eligibility(observed(**changes), EXT)
    matching = [r for r in found if r.rule == rule and r.subject == subject]
    assert matching, found
    assert any(words in r.reason for r in matching), matching
    # a reason is one bounded sentence naming the subject's object
    for refusal in found:
        assert len(refusal.reason) < 600 and "\n" not in refusal.reason


def test_every_judged_rule_has_a_row():
    assert {r[2] for r in REFUSALS} == {f"E{n}" for n in range(1, 15)} - {"E8"}  # E8 (copied CSVs) is a note


def test_refusals_are_in_rule_order():
    changes = {"dependents": [{"metadata": {"name": "a", "namespace": "b"}}], "operator_groups": [operator_group(targets=[NS])], "csv": live_csv("Failed")}
    assert [r.rule for r in mg.eligibility(observed(**changes), EXT)] == ["E1", "E7", "E13"]


def test_no_operator_group():
    found = mg.eligibility(observed(operator_groups=[]), EXT)
    assert [(r.rule, r.subject) for r in found] == [("E1", f"Namespace {NS}")]
    assert "has no OperatorGroup" in found[0].reason and f"ClusterServiceVersion {NS}/{CSV}" in found[0].reason


def test_subscription_not_at_its_installed_csv_is_refused_once_for_the_move():
    found = mg.eligibility(observed(subscription=subscription(current="kube-demo.v0.0.2", state="UpgradePending")), EXT)
    # the state follows from the move: one refusal, not a second one for UpgradePending
    assert [r.rule for r in found] == ["E6"]


def test_two_subscriptions_refuse_both_names():
    found = mg.eligibility(observed(subscriptions=[subscription(), subscription(name="kube-demo-2")]), EXT)
    assert [r.rule for r in found] == ["E6"] and "kube-demo, kube-demo-2" in found[0].reason


def test_other_packages_subscriptions_do_not_count():
    assert mg.eligibility(observed(subscriptions=[subscription(), subscription(name="etcd", package="etcd")]), EXT) == []


def test_controller_owned_by_this_extension_is_a_resumed_adoption():
    ref = {"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension", "name": EXT, "controller": True}
    live = with_live(("Deployment", NS, DEPLOYMENT), lambda o: o["metadata"]["ownerReferences"].append(ref))
    assert mg.eligibility(observed(live=live), EXT) == []
    # the same reference names another extension: refused
    other = mg.eligibility(observed(live=live), "another")
    assert [(r.rule, r.subject) for r in other] == [("E10", f"Deployment {NS}/{DEPLOYMENT}")]


def test_an_extension_of_this_migration_with_its_record_is_no_refusal():
    ext = {"metadata": {"name": EXT, "annotations": {mg.MIGRATED_FROM_ANNOTATION: f"{NS}/{PKG}"}}, "spec": {"namespace": NS}}
    assert mg.eligibility(observed(extension=ext, record={"metadata": {"name": "olm-migrate-kube-demo"}}), EXT) == []
    # without the record, nothing says this run made it
    assert [r.rule for r in mg.eligibility(observed(extension=ext), EXT)] == ["E10"]


def test_drift_ignores_what_only_the_live_object_has():
    # API server defaults, OLM v0's env variable and template annotations, revisionHistoryLimit: not drift
    assert mg.deployment_drift(bundle_csv(MANIFESTS), bundle_csv(MANIFESTS)["spec"]["install"]["spec"]["deployments"][0], live_deployment()) == []


def test_drift_matches_list_items_by_their_merge_key():
    live = live_deployment()
    containers = live["spec"]["template"]["spec"]["containers"]
    containers.insert(0, {"name": "sidecar", "image": "x"})  # order changes, manager is still found by name
    entry = bundle_csv(MANIFESTS)["spec"]["install"]["spec"]["deployments"][0]
    assert mg.deployment_drift(bundle_csv(MANIFESTS), entry, live) == []
    containers[1]["args"] = ["--leader-elect", "--zap-devel"]  # a list without merge key: compared whole
    assert mg.deployment_drift(bundle_csv(MANIFESTS), entry, live) == ["spec.template.spec.containers[name=manager].args"]


def test_copied_csvs_are_a_note_not_a_refusal():
    copies = [("default", CSV), ("kube-system", CSV)]
    result = mg.plan(observed(copied_csvs=copies), EXT, SA)
    assert result["eligible"] is True
    assert f"2 copied CSV(s) of {CSV} (default/{CSV}, kube-system/{CSV}): OLM v0 deletes them after the CSV" in result["notes"]
    assert {"what": f"ClusterServiceVersion default/{CSV}", "by": "OLM v0 (copied CSV)"} in result["removed_by_olm"]


def test_observed_refuses_unknown_fields():
    with pytest.raises(mg.MigrationError, match="no field"):
        mg.Observed(subscription(), subscripton=[])


# ------------------------------------------------------------------------------------------------ the plan


def by_key(items):
    return {(i["kind"], i["namespace"], i["name"]): i for i in items}


def grants(objects, group, resource, name, verb):
    """Whether the installer's ClusterRole or Role (the Role for namespaced objects) allows ``verb`` on the object."""
    for obj in objects:
        for rule in obj.get("rules") or () if obj["kind"] in ("ClusterRole", "Role") else ():
            if group in rule.get("apiGroups", ()) and resource in rule.get("resources", ()) and verb in rule["verbs"]:
                if not rule.get("resourceNames") or name in rule["resourceNames"]:
                    return True
    return False


def test_plan_of_an_eligible_operator():
    result = mg.plan(observed(), EXT, SA)
    assert result["eligible"] is True and result["refusals"] == [] and result["package"] == PKG and result["namespace"] == NS
    assert (result["subscription"], result["csv"], result["version"], result["channel"], result["catalog"]) == (PKG, CSV, "0.0.1", "alpha", CATALOG)
    assert result["install_plan_approval"] == "Automatic"
    assert result["record"] == {"namespace": NS, "name": "olm-migrate-kube-demo", "exists": False}

    # the ClusterExtension: pinned, channel, catalog, ServiceAccount, where it came from
    assert result["extension"] == {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": EXT, "annotations": {mg.MIGRATED_FROM_ANNOTATION: f"{NS}/{PKG}"}},
        "spec": {
            "namespace": NS,
            "serviceAccount": {"name": SA},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": PKG,
                    "version": "0.0.1",
                    "channels": ["alpha"],
                    "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": CATALOG}},
                },
            },
        },
    }
    # the installer: the collection's derived RBAC, which holds get and patch on every adopted object
    installer = result["installer"]
    assert installer["service_account"] == SA
    assert installer["objects"] == ir.installer_rbac(EXT, NS, SA, [MANIFESTS])
    for item in result["adopt"]:
        group = "" if "/" not in item["apiVersion"] else item["apiVersion"].rsplit("/", 1)[0]
        resource = ir.KNOWN_RESOURCES[(group, item["kind"])][0]
        assert all(grants(installer["objects"], group, resource, item["name"], verb) for verb in ("get", "patch")), item

    # adopted: the five objects OLM v0 made from the bundle
    adopt = by_key(result["adopt"])
    assert sorted(adopt) == sorted(
        [
            ("ServiceAccount", NS, DEPLOYMENT),
            ("CustomResourceDefinition", None, CRD),
            ("ClusterRole", None, VIEWER),
            ("ConfigMap", NS, CONFIGMAP),
            ("Deployment", NS, DEPLOYMENT),
        ]
    )
    helm = {"meta.helm.sh/release-name": EXT, "meta.helm.sh/release-namespace": NS}
    for item in adopt.values():
        assert item["labels"] == {"app.kubernetes.io/managed-by": "Helm"} and item["annotations"] == helm and item["replaced_labels"] == {}
        assert item["v1_adds"]["labels"] == {"olm.operatorframework.io/owner-kind": "ClusterExtension", "olm.operatorframework.io/owner-name": EXT}
        assert item["v1_adds"]["ownerReference"]["controller"] is True
    viewer, crd, deployment = adopt[("ClusterRole", None, VIEWER)], adopt[("CustomResourceDefinition", None, CRD)], adopt[("Deployment", NS, DEPLOYMENT)]
    # the CSV's finalizer deletes cluster-scoped objects labelled olm.owner: stripped before the CSV goes
    assert viewer["remove_labels_before_csv_delete"] == ["olm.owner", "olm.owner.kind", "olm.owner.namespace"]
    assert viewer["remove_labels"] == ["olm.managed", COMPONENT] and viewer["csv_reference_removed"] is False
    assert deployment["remove_labels_before_csv_delete"] == []
    assert deployment["remove_labels"] == sorted(["olm.owner", "olm.owner.namespace", "olm.owner.kind", "olm.managed", "olm.deployment-spec-hash", COMPONENT])
    assert deployment["csv_reference_removed"] is True
    assert crd["remove_annotations"] == ["operatorframework.io/installed-alongside-1a2b3c"] and crd["remove_labels"] == ["olm.managed", COMPONENT]
    assert adopt[("ServiceAccount", NS, DEPLOYMENT)]["remove_labels"] == [COMPONENT]

    # created: v1's own RBAC (other names than OLM v0's)
    assert (
        sorted((c["kind"], c["origin"]) for c in result["create"]) == [("ClusterRole", "generated RBAC")] * 2 + [("ClusterRoleBinding", "generated RBAC")] * 2
    )
    assert all(c["name"].startswith(f"{CSV}-{DEPLOYMENT[:1]}") for c in result["create"])

    # deleted from OLM v0
    assert [(d["kind"], d["namespace"], d["name"], d["by"], d.get("propagation")) for d in result["delete"]] == [
        ("Subscription", NS, PKG, "kubeforge", "Background"),
        ("InstallPlan", NS, "install-abcde", "garbage collector (owner: the Subscription)", None),
        ("ClusterServiceVersion", NS, CSV, "kubeforge", "Background"),
        ("Operator", None, f"{PKG}.{NS}", "kubeforge", None),
    ]
    assert {"what": f"OperatorCondition {NS}/{CSV}", "by": "garbage collector (controller: the CSV)"} in result["removed_by_olm"]
    assert {"what": f"OperatorGroup {NS}/global", "why": "not asked to delete it"} in result["kept"]
    assert result["notes"] == [
        f"Deployment {NS}/{DEPLOYMENT}: operator-controller sets revisionHistoryLimit 1 (no rollout)",
        f"Deployment {NS}/{DEPLOYMENT}: keeps OLM v0's OPERATOR_CONDITION_NAME variable (adoption removes nothing), while its OperatorCondition "
        "goes with the CSV",
    ]


def test_plan_steps_in_order_with_their_writes():
    result = mg.plan(observed(), EXT, SA)
    steps = {s["name"]: s["writes"] for s in result["steps"]}
    assert [s["name"] for s in result["steps"]] == list(mg.STEP_NAMES)
    assert steps["check"] == [] and steps["wait_installed"] == [] and steps["delete_operator_group"] == []

    def refs(name):
        return [(w["verb"], w["kind"], w["namespace"], w["name"]) for w in steps[name]]

    assert refs("record") == [("create", "ConfigMap", NS, "olm-migrate-kube-demo")]
    assert steps["freeze_v0"] == [
        {
            "verb": "patch",
            "kind": "Subscription",
            "apiVersion": "operators.coreos.com/v1alpha1",
            "namespace": NS,
            "name": PKG,
            "field": "spec.installPlanApproval",
            "before": "Automatic",
            "after": "Manual",
        }
    ]
    assert len(steps["stamp_helm_ownership"]) == 5 and all(w["verb"] == "patch" for w in steps["stamp_helm_ownership"])
    assert [w["kind"] for w in steps["create_installer"]] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    assert refs("create_extension") == [("create", "ClusterExtension", None, EXT)]
    assert refs("delete_subscription") == [("delete", "Subscription", NS, PKG)] and steps["delete_subscription"][0]["propagation"] == "Background"
    assert refs("strip_csv_owner_labels") == [("patch", "ClusterRole", None, VIEWER)]
    assert refs("delete_csv") == [("delete", "ClusterServiceVersion", NS, CSV)] and steps["delete_csv"][0]["propagation"] == "Background"
    assert refs("strip_v0_marks")[-1] == ("delete", "Operator", None, f"{PKG}.{NS}")
    assert len(refs("strip_v0_marks")) == 6  # the five adopted objects, then the Operator
    assert refs("done") == [("patch", "ConfigMap", NS, "olm-migrate-kube-demo")]


def test_a_rerun_stamps_nothing_already_stamped():
    def stamp(obj):
        obj["metadata"].setdefault("labels", {})["app.kubernetes.io/managed-by"] = "Helm"
        obj["metadata"].setdefault("annotations", {}).update({mg.HELM_RELEASE_NAME: EXT, mg.HELM_RELEASE_NAMESPACE: NS})

    result = mg.plan(observed(live=with_live(("ConfigMap", NS, CONFIGMAP), stamp), subscription=subscription(approval="Manual")), EXT, SA)
    stamped = [(w["kind"], w["name"]) for w in result["steps"][3]["writes"]]
    assert result["steps"][3]["name"] == "stamp_helm_ownership" and ("ConfigMap", CONFIGMAP) not in stamped and len(stamped) == 4
    assert result["steps"][2] == {"name": "freeze_v0", "writes": []}  # already Manual


def test_managed_by_of_another_tool_is_replaced_and_said():
    live = with_live(("ConfigMap", NS, CONFIGMAP), lambda o: o["metadata"]["labels"].update({"app.kubernetes.io/managed-by": "kustomize"}))
    result = mg.plan(observed(live=live), EXT, SA)
    item = by_key(result["adopt"])[("ConfigMap", NS, CONFIGMAP)]
    assert item["replaced_labels"] == {"app.kubernetes.io/managed-by": "kustomize"}
    assert f"ConfigMap {NS}/{CONFIGMAP}: label app.kubernetes.io/managed-by 'kustomize' becomes 'Helm' (Helm requires it)" in result["notes"]


@pytest.mark.parametrize(
    "others, deleted, why",
    [
        ({}, True, None),
        ({"subscriptions": [subscription(), subscription(name="etcd", package="etcd")]}, False, f"still used by Subscription {NS}/etcd"),
        ({"csvs": [live_csv(), live_csv(name="etcd.v1")]}, False, f"still used by ClusterServiceVersion {NS}/etcd.v1"),
    ],
)
def test_operator_group_deleted_only_when_asked_and_unused(others, deleted, why):
    result = mg.plan(observed(**others), EXT, SA, delete_operator_group=True)
    writes = result["steps"][mg.STEP_NAMES.index("delete_operator_group")]["writes"]
    assert [(w["verb"], w["kind"], w["name"]) for w in writes] == ([("delete", "OperatorGroup", "global")] if deleted else [])
    assert (("OperatorGroup", NS, "global") in by_key(result["delete"])) is deleted
    assert ("OperatorGroup global: its ClusterRoles olm.og.global.* (admin, edit, view) go with it" in result["notes"]) is deleted
    if why:
        assert {"what": f"OperatorGroup {NS}/global", "why": why} in result["kept"]


def test_shared_install_plans_are_kept():
    shared = install_plan("install-shared", owners=(PKG, "etcd"))
    result = mg.plan(observed(installplans=[install_plan("install-abcde"), shared]), EXT, SA)
    assert ("InstallPlan", NS, "install-abcde") in by_key(result["delete"]) and ("InstallPlan", NS, "install-shared") not in by_key(result["delete"])
    assert {"what": f"InstallPlan {NS}/install-shared", "why": "other Subscriptions own it too"} in result["kept"]


def test_an_ineligible_operator_still_gets_what_can_be_told():
    result = mg.plan(observed(bundle=None, catalog=None, manifests=None), EXT, SA)
    assert result["eligible"] is False and [r["rule"] for r in result["refusals"]] == ["E9"]
    assert result["adopt"] == [] and result["create"] == [] and result["installer"]["objects"] == []
    assert ("Subscription", NS, PKG) in by_key(result["delete"])


def test_no_operator_group_plan():
    result = mg.plan(observed(operator_groups=[]), EXT, SA, delete_operator_group=True)
    assert result["eligible"] is False and all(r["kind"] != "OperatorGroup" for r in result["delete"])


def test_invalid_extension_name_is_an_error():
    with pytest.raises(mg.MigrationError, match="name 'Kube_Demo' is not valid"):
        mg.plan(observed(), "Kube_Demo", SA)


def test_record_name_is_bounded():
    assert mg.record_name("kube-demo") == "olm-migrate-kube-demo"
    long = mg.record_name("x" * 260)
    assert len(long) == 253 and long.startswith("olm-migrate-xxx") and long != mg.record_name("x" * 261)


# ------------------------------------------------------------------------------------------------ backups


def test_secret_backup_keeps_no_secret():
    value = b"s3cr3t-password"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "db",
            "namespace": NS,
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"data":{"password":"czNjcjN0"}}', "team": "a"},
            "managedFields": [{"manager": "kubectl"}],
        },
        "data": {"password": base64.b64encode(value).decode()},
        "stringData": {"token": "plain-token"},
    }
    kept = mg.backup_copy(secret)
    text = repr(kept)
    assert "czNjcjN0" not in text and base64.b64encode(value).decode() not in text and "plain-token" not in text
    assert kept["data_sha256"] == {"password": hashlib.sha256(value).hexdigest(), "token": hashlib.sha256(b"plain-token").hexdigest()}
    assert kept["metadata"] == {"name": "db", "namespace": NS, "annotations": {"team": "a"}} and kept["type"] == "Opaque"
    configmap = live_objects()[("ConfigMap", NS, CONFIGMAP)]
    assert mg.backup_copy(configmap) == configmap and mg.backup_copy(configmap) is not configmap


@pytest.mark.parametrize(
    "value, csvs, refused",
    [
        (f"{NS}/kube-demo.v0.0.0", None, False),  # an earlier version of this operator: stale
        (f"{NS}/etcd.v1", [live_csv(), live_csv(name="etcd.v1")], True),  # a live CSV of the namespace
        ("other-ns/other.v1", None, True),  # not observed: counted
    ],
)
def test_installed_alongside_names_other_installations_only(value, csvs, refused):
    live = crd_change(lambda o: o["metadata"]["annotations"].update({"operatorframework.io/installed-alongside-0f0f": value}))
    changes = {"live": live} if csvs is None else {"live": live, "csvs": csvs}
    found = mg.eligibility(observed(**changes), EXT)
    assert [(r.rule, r.subject) for r in found] == ([("E10", f"CustomResourceDefinition {CRD}")] if refused else [])


def test_adoption_overwriting_a_bundle_value_is_said():
    live = with_live(("ConfigMap", NS, CONFIGMAP), lambda o: o["data"].update({"daemonset.yaml": "edited"}))
    result = mg.plan(observed(live=live), EXT, SA)
    assert result["eligible"] is True
    assert f"ConfigMap {NS}/{CONFIGMAP}: adoption overwrites data.daemonset.yaml with the bundle's values" in result["notes"]
    # the untouched objects give no such note
    assert [n for n in result["notes"] if "adoption overwrites" in n] == [
        f"ConfigMap {NS}/{CONFIGMAP}: adoption overwrites data.daemonset.yaml with the bundle's values"
    ]


@pytest.mark.parametrize("back", [False, True], ids=["the move", "the way back"])
def test_the_diff_names_who_manages_the_operator_before_and_after(back):
    planned = mg.plan(observed(), EXT, SA)
    diff = mg.move_diff(planned, back=back)
    v0, v1 = (diff["after"], diff["before"]) if back else (diff["before"], diff["after"])
    assert v0["operator"]["managed_by"] == "OLM v0" and v1["operator"]["managed_by"] == "OLM v1"
    assert (v0["operator"]["subscription"], v0["operator"]["csv"], v0["operator"]["install_plan_approval"]) == (f"Subscription {NS}/{PKG}", CSV, "Automatic")
    assert v1["operator"]["cluster_extension"] == planned["extension"]
    installer = v1["operator"]["installer"]
    assert installer == sorted(installer) and len(installer) == len(planned["installer"]["objects"]) and f"ServiceAccount {NS}/{SA}" in installer
    # the same five objects change hands, at the same version
    adopted = [f"ServiceAccount {NS}/{DEPLOYMENT}", f"CustomResourceDefinition {CRD}", f"ClusterRole {VIEWER}", f"ConfigMap {NS}/{CONFIGMAP}"]
    assert v0["operator"]["objects"] == v1["operator"]["objects"] == sorted([*adopted, f"Deployment {NS}/{DEPLOYMENT}"])
    assert v0["operator"]["version"] == v1["operator"]["version"] == "0.0.1"
