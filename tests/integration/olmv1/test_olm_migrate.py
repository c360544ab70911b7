# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_migrate against the real OLM v0 (v0.46.0) and OLM v1 (catalogd and operator-controller v1.5.1) of the testbed:
an operator installed by OLM v0 in AllNamespaces mode, its pod on the real node, with a custom resource and the
ConfigMap it owns (lib.migration), moved to a ClusterExtension in place.

- check mode: eligible, the plan adopts the five objects OLM v0 made that the v1 release holds and creates the
  ClusterExtension pinned to the installed version; nothing is written;
- the move: the custom resource and its ConfigMap keep uid, resourceVersion and content, the CRD is never deleted (a
  watch runs through the move), the operator pod is the same one (uid, restart count, ReplicaSets) and Ready
  throughout, the ClusterExtension is Installed at 0.1.0 and owns the five objects alone, OLM v0 holds nothing for the
  package, the backup holds every object touched; a rerun changes nothing; olm_cluster_extension then upgrades the
  extension to 0.2.0 (a rollout: 0.2.0's Deployment has a variable more) without force_conflicts;
- an operator OLM v1 v1.5.1 cannot take (kube-demo installed in OwnNamespace mode) refused before any write;
- a ClusterCatalog without the installed version refused before any write, and a v1 failure forced after the writes
  (the served 0.1.0's CRD changes a property's type: operator-controller's CRD upgrade-safety preflight refuses the
  live CRD) rolled back: OLM v0 Succeeded/AtLatestKnown again, the same pod, the same data, no v1 object left;
- a move killed once its ClusterExtension exists resumed by a rerun at the recorded step, ending as an unbroken move;
- the way back asked for (state=rolled_back) after such a kill: OLM v0 as before, idempotent, and a new move after it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib import migration as mig
from lib.olm_catalog import make_catalog
from lib.polling import poll_until
from lib.runners import start_module_subprocess

from ansible_collections.kubeforge.operators.plugins.module_utils.migration.migrate import STEP_NAMES, record_name

# One xdist worker for the group: the scenario's CRD (kubemig34s.mig34.kubeforge.io), its shipped ClusterRole and
# OLM v0's AllNamespaces install of kube-mig34 are cluster-wide, so the scenarios of this file run one at a time;
# each has its own namespace, ClusterCatalogs and ClusterExtension name.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olmv1")]

CATALOG_LABEL = "olm.operatorframework.io/metadata.name"
V0_MARK_LABELS = ("olm.owner", "olm.owner.namespace", "olm.owner.kind", "olm.managed", "olm.deployment-spec-hash")


@pytest.fixture(scope="module")
def published(olmv1, real_node, tmp_path_factory):
    return mig.publish(tmp_path_factory.mktemp("mig34-images"), olmv1, real_node)


@pytest.fixture(scope="class")
def installed(api, kubeconfig, olmv1, published, tmp_path_factory):
    """kube-mig34 0.1.0 installed by OLM v0 with its data, and a ClusterCatalog serving 0.1.0 and 0.2.0: TestMove's
    check mode test reads it, its move test then moves it (check mode writes nothing, which its test asserts); removed
    before the next scenario installs kube-mig34 (one AllNamespaces install of the package at a time)."""
    scenario = mig.Scenario(api, kubeconfig, tmp_path_factory.mktemp("mig34-move"), published, olmv1)
    try:
        scenario.serve("v1")
        scenario.install_v0()
        yield scenario
    finally:
        scenario.cleanup()


@pytest.fixture
def scenario(api, kubeconfig, olmv1, published, tmp_path):
    """A scenario of the test's own, cleaned up after it."""
    made = mig.Scenario(api, kubeconfig, tmp_path / "scenario", published, olmv1)
    try:
        yield made
    finally:
        made.cleanup()


def migrate_args(scenario, catalog, **args):
    """olm_migrate's arguments for the scenario's operator (it reads the catalog and bundle images from the testbed
    registry)."""
    return dict(
        package=mig.PACKAGE,
        namespace=scenario.namespace,
        extension_name=scenario.extension,
        catalog=catalog,
        registry_auth=scenario.published["registry_auth"],
        **args,
    )


def conditions(extension):
    return {c["type"]: (c["status"], c.get("reason")) for c in (extension.get("status") or {}).get("conditions") or []}


def written_steps(result):
    return [s for s in result.get("steps_done") or [] if s not in ("check",)]


def v0_leftovers(scenario):
    """What OLM v0 still holds for the package: its objects, the copies of the CSV, objects with its labels."""
    ns = scenario.namespace
    left = {
        "subscriptions": [o["metadata"]["name"] for o in scenario.list("Subscription", ns)],
        # copied CSVs of other AllNamespaces operators live in every namespace: only this one's own
        "csvs": [o["metadata"]["name"] for o in scenario.list("ClusterServiceVersion", ns, label_selector="!olm.copiedFrom")],
        "installplans": [o["metadata"]["name"] for o in scenario.list("InstallPlan", ns)],
        "operator_conditions": [o["metadata"]["name"] for o in scenario.list("OperatorCondition", ns)],
        "copied_csvs": [
            (o["metadata"]["namespace"], o["metadata"]["name"]) for o in scenario.list("ClusterServiceVersion", label_selector=f"olm.copiedFrom={ns}")
        ],
        "operator": scenario.get("Operator", f"{mig.PACKAGE}.{ns}") is not None,
        "component_labelled": scenario.labelled(f"operators.coreos.com/{mig.PACKAGE}.{ns}", kinds=mig.V0_KINDS),
        "owner_labelled": scenario.labelled(f"olm.owner={mig.CSV}"),
    }
    return {key: value for key, value in left.items() if value}


def backup_objects(result, backup_dir):
    """``{(kind, name): object}`` of every document in the backup files the result names (each inside ``backup_dir``)."""
    assert result["backup"]["dir"] == str(backup_dir), result["backup"]
    assert result["backup"]["files"], result["backup"]
    found = {}
    for name in result["backup"]["files"]:
        path = Path(name) if os.path.isabs(name) else Path(backup_dir) / name
        assert path.is_file() and Path(backup_dir).resolve() in path.resolve().parents, (name, sorted(p.name for p in Path(backup_dir).rglob("*")))
        for doc in yaml.safe_load_all(path.read_text()):
            for obj in doc.get("items", [doc]) if isinstance(doc, dict) else []:
                if isinstance(obj, dict) and "kind" in obj:
                    found[(obj["kind"], obj["metadata"]["name"])] = obj
    return found


def assert_moved_in_place(s, seen, data, pod, replica_sets, crd_uid):
    """The move kept everything (``seen``: the Continuity of the runs) and OLM v1 alone holds the operator; returns
    the ClusterExtension."""
    ns = s.namespace
    # nothing lost, nothing restarted: the data, the CRD (watched throughout), the one pod on its one ReplicaSet
    assert seen.errors == [], seen.errors
    assert [e for e in seen.crd_events if e[0] in ("DELETED", "RELISTED-ABSENT") or e[2]] == [], seen.crd_events
    assert {e[1] for e in seen.crd_events} == {crd_uid}, seen.crd_events
    assert seen.pods == {pod[0]: 0}, seen.pods
    assert seen.not_ready == [] and seen.replica_sets == set(replica_sets), (seen.not_ready, seen.replica_sets)
    assert s.data() == data
    assert s.operator_pod() == pod and s.replica_sets() == replica_sets

    # the ClusterExtension Installed at the installed version; it alone owns the five objects, which keep no v0 mark
    extension = s.extension_object()
    assert conditions(extension)["Installed"] == ("True", "Succeeded"), extension.get("status")
    assert extension["status"]["install"]["bundle"]["version"] == mig.INSTALLED, extension["status"]
    assert extension["spec"]["source"]["catalog"]["version"] == mig.INSTALLED, extension["spec"]
    component = f"operators.coreos.com/{mig.PACKAGE}.{ns}"
    for (kind, namespace, name), (_rv, labels, annotations, owners) in s.release_metadata().items():
        what = f"{kind} {namespace}/{name}"
        assert owners == [("ClusterExtension", s.extension, True)], (what, owners)
        assert (labels.get(mig.HELM_LABEL), labels.get(mig.V1_OWNER_KIND), labels.get(mig.V1_OWNER_NAME)) == ("Helm", "ClusterExtension", s.extension), (
            what,
            labels,
        )
        assert [k for k in labels if k in V0_MARK_LABELS or k == component] == [], (what, labels)
        assert annotations.get("meta.helm.sh/release-name") == s.extension and annotations.get("meta.helm.sh/release-namespace") == ns, (what, annotations)
        assert [k for k in annotations if k.startswith("operatorframework.io/installed-alongside-")] == [], (what, annotations)

    # OLM v0 holds nothing for the package; what the module deletes itself is gone when it returns
    assert s.subscription() is None and s.csv() is None, v0_leftovers(s)
    assert s.get("Operator", f"{mig.PACKAGE}.{ns}") is None
    poll_until(lambda: v0_leftovers(s), 60, 1, "OLM v0 to hold nothing for kube-mig34", until=lambda left: left == {})
    assert s.list("OperatorGroup", ns), "the OperatorGroup stays (delete_operator_group=false)"
    return extension


class TestMove:
    """The check mode and the move of one installed operator."""

    def test_check_mode_plans_the_move_and_writes_nothing(self, installed):
        s = installed
        before = s.release_metadata()
        sub_before = s.subscription()
        result = s.run("olm_migrate", migrate_args(s, s.catalogs["v1"]), check_mode=True, diff=True)
        mig.check(result, "olm_migrate (check mode)")
        assert result["eligible"] is True and result["refusals"] == [], result.get("refusals")
        assert result["changed"] is True and written_steps(result) == [], result
        plan = result["plan"]
        assert (plan["package"], plan["namespace"], plan["csv"], plan["version"], plan["catalog"]) == (
            mig.PACKAGE,
            s.namespace,
            mig.CSV,
            mig.INSTALLED,
            s.catalogs["v1"],
        ), plan
        # the five objects OLM v0 made that the v1 release holds, each stamped with Helm's keys for this extension
        adopt = sorted((a["kind"], a["namespace"], a["name"]) for a in plan["adopt"])
        assert adopt == mig.release_objects(s.namespace), plan["adopt"]
        for item in plan["adopt"]:
            assert item["labels"] == {mig.HELM_LABEL: "Helm"}, item
            assert item["annotations"] == {"meta.helm.sh/release-name": s.extension, "meta.helm.sh/release-namespace": s.namespace}, item
        # the ClusterExtension pinned to the installed version, from this catalog, as the installer ServiceAccount
        extension = plan["extension"]
        source = extension["spec"]["source"]["catalog"]
        assert extension["metadata"]["name"] == s.extension and extension["spec"]["namespace"] == s.namespace, extension
        assert (source["packageName"], source["version"]) == (mig.PACKAGE, mig.INSTALLED), source
        assert source["selector"] == {"matchLabels": {CATALOG_LABEL: s.catalogs["v1"]}}, source
        assert extension["spec"]["serviceAccount"]["name"] == f"{s.extension}-installer", extension
        assert plan["installer"]["service_account"] == f"{s.extension}-installer" and plan["installer"]["objects"], plan["installer"]
        deleted = [(d["kind"], d["name"]) for d in plan["delete"] if d["by"] == "kubeforge"]
        assert deleted == [("Subscription", mig.PACKAGE), ("ClusterServiceVersion", mig.CSV), ("Operator", f"{mig.PACKAGE}.{s.namespace}")], plan["delete"]
        # --diff: the operator moves from the Subscription and its CSV to the ClusterExtension, with the same objects
        v0, v1 = result["diff"]["before"]["operator"], result["diff"]["after"]["operator"]
        assert (v0["managed_by"], v0["csv"], v1["managed_by"], v1["cluster_extension"]) == ("OLM v0", mig.CSV, "OLM v1", extension)
        assert v0["objects"] == v1["objects"] and len(v1["objects"]) == len(adopt), result["diff"]

        # nothing written: the objects, the Subscription's approval, no record, no ClusterExtension, no installer
        assert s.release_metadata() == before
        assert s.subscription()["spec"] == sub_before["spec"]
        assert s.get("ConfigMap", record_name(mig.PACKAGE), s.namespace) is None
        assert s.v1_leftovers() == []
        assert s.v0_state() == ("Succeeded", "AtLatestKnown")

    def test_each_rule_the_testbed_can_break_is_refused_then_eligible_again(self, installed):
        """One case per eligibility rule the testbed can break on this installed operator without reinstalling it
        (E1 and E9 have tests of their own below; E2-E4, E7, E11 and E14 need another bundle or a broken install, and
        are table-tested in the unit tests): each is made, judged in check mode, undone. OLM v0 reconciles none of
        these fields, so each stays as made until undone; the move test after this one proves the operator left as
        it was."""
        s = installed
        ns, custom, core = s.namespace, s.custom, s.core
        other_ns = f"{ns}-dependent"
        crd_subject, config_map_subject = f"CustomResourceDefinition {mig.CRD}", f"ConfigMap {ns}/{mig.OPERAND_CONFIG_MAP}"
        config_map_refs = s.get("ConfigMap", mig.OPERAND_CONFIG_MAP, ns)["metadata"]["ownerReferences"]
        holder = core.create_namespaced_config_map(ns, {"metadata": {"name": "another-controller"}})
        foreign = {"apiVersion": "v1", "kind": "ConfigMap", "name": "another-controller", "uid": holder.metadata.uid, "controller": True}
        alongside = "operatorframework.io/installed-alongside-0123456789abcdef"
        # a drift that rolls no pod: the bundle sets it, OLM v0 compares only its template's hash
        bundle_deadline = s.apps.read_namespaced_deployment(mig.DEPLOYMENT, ns).spec.progress_deadline_seconds
        dependent_csv = {
            "apiVersion": f"{mig.OPERATORS}/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "needs-mig34.v1.0.0"},
            "spec": {
                "displayName": "needs kube-mig34's API",
                "install": {"strategy": "deployment", "spec": {"deployments": []}},
                "customresourcedefinitions": {"required": [{"name": mig.CRD, "version": "v1alpha1", "kind": mig.KIND}]},
            },
        }

        def patch_crd(metadata):
            s.ext.patch_custom_resource_definition(mig.CRD, {"metadata": metadata})

        def set_owners(refs):  # a merge patch replaces the list (a strategic one would merge it by uid)
            s.resource("ConfigMap").patch(
                body={"metadata": {"ownerReferences": refs}}, name=mig.OPERAND_CONFIG_MAP, namespace=ns, content_type="application/merge-patch+json"
            )

        def patch_v0(plural, name, body, version=mig.V1ALPHA1):
            custom.patch_namespaced_custom_object(mig.OPERATORS, version, ns, plural, name, body)

        override = {"type": "Upgradeable", "status": "True", "reason": "Overridden", "message": "by an admin", "lastTransitionTime": "2026-11-29T00:00:00Z"}
        helm_keys = {"labels": {mig.HELM_LABEL: "Helm"}, "annotations": {"meta.helm.sh/release-name": "another", "meta.helm.sh/release-namespace": ns}}
        no_helm_keys = {"labels": {mig.HELM_LABEL: None}, "annotations": {"meta.helm.sh/release-name": None, "meta.helm.sh/release-namespace": None}}
        cases = [
            # (rule, subject, a word of the reason, make, undo); OLM v0 copies spec.conditions into status for good,
            # so E5 is made with spec.overrides, which it leaves alone
            (
                "E5",
                f"OperatorCondition {ns}/{mig.CSV}",
                "spec.overrides",
                lambda: patch_v0("operatorconditions", mig.CSV, {"spec": {"overrides": [override]}}, "v2"),
                lambda: patch_v0("operatorconditions", mig.CSV, {"spec": {"overrides": None}}, "v2"),
            ),
            (
                "E6",
                f"Subscription {ns}/{mig.PACKAGE}",
                "dependency",
                lambda: patch_v0("subscriptions", mig.PACKAGE, {"metadata": {"annotations": {"olm.generated-by": "another-operator"}}}),
                lambda: patch_v0("subscriptions", mig.PACKAGE, {"metadata": {"annotations": {"olm.generated-by": None}}}),
            ),
            ("E10", crd_subject, "Helm release", lambda: patch_crd(helm_keys), lambda: patch_crd(no_helm_keys)),
            (
                "E10",
                crd_subject,
                "installed alongside",
                lambda: patch_crd({"annotations": {alongside: "elsewhere/another-operator.v1.0.0"}}),
                lambda: patch_crd({"annotations": {alongside: None}}),
            ),
            (
                "E10",
                config_map_subject,
                "controlled by ConfigMap another-controller",
                lambda: set_owners(config_map_refs + [foreign]),
                lambda: set_owners(config_map_refs),
            ),
            (
                "E12",
                f"Deployment {ns}/{mig.DEPLOYMENT}",
                "spec.progressDeadlineSeconds",
                lambda: s.apps.patch_namespaced_deployment(mig.DEPLOYMENT, ns, {"spec": {"progressDeadlineSeconds": 300}}),
                lambda: s.apps.patch_namespaced_deployment(mig.DEPLOYMENT, ns, {"spec": {"progressDeadlineSeconds": bundle_deadline}}),
            ),
            (
                "E13",
                f"ClusterServiceVersion {other_ns}/needs-mig34.v1.0.0",
                "requires an API",
                lambda: (
                    core.create_namespace({"metadata": {"name": other_ns}}),
                    custom.create_namespaced_custom_object(mig.OPERATORS, mig.V1ALPHA1, other_ns, "clusterserviceversions", dependent_csv),
                ),
                lambda: core.delete_namespace(other_ns),
            ),
        ]
        args = migrate_args(s, s.catalogs["v1"])
        try:
            for rule, subject, word, make, undo in cases:
                make()
                try:
                    result = mig.check(s.run("olm_migrate", args, check_mode=True), f"olm_migrate (check mode, {rule} {word})")
                finally:
                    undo()
                assert result["eligible"] is False and result["changed"] is False and written_steps(result) == [], (rule, result)
                found = [r for r in result["refusals"] if (r["rule"], r["subject"]) == (rule, subject) and word in r["reason"]]
                assert len(found) == 1, (rule, subject, word, result["refusals"])
                # and nothing else was refused
                assert [r["rule"] for r in result["refusals"]] == [rule], result["refusals"]
        finally:
            core.delete_namespaced_config_map("another-controller", ns)
        poll_until(lambda: not core.list_namespace(field_selector=f"metadata.name={other_ns}").items, 120, 1, f"namespace {other_ns} deleted")
        again = mig.check(s.run("olm_migrate", args, check_mode=True), "olm_migrate (check mode, every case undone)")
        assert again["eligible"] is True and again["refusals"] == [], again["refusals"]
        assert s.get("ConfigMap", record_name(mig.PACKAGE), ns) is None and s.v1_leftovers() == []
        assert s.v0_state() == ("Succeeded", "AtLatestKnown")

    def test_move_keeps_data_pod_and_crd_then_upgrades_through_v1(self, installed, published, tmp_path):
        s = installed
        ns = s.namespace
        data, pod, replica_sets = s.data(), s.operator_pod(), s.replica_sets()
        crd_uid = s.get("CustomResourceDefinition", mig.CRD)["metadata"]["uid"]
        backup = tmp_path / "backup"
        args = migrate_args(s, s.catalogs["v1"], backup_dir=str(backup), wait_timeout=180)
        started = time.monotonic()
        with mig.Continuity(s.kubeconfig, ns) as seen:
            result = s.run("olm_migrate", args)
        took = time.monotonic() - started
        mig.check(result, "olm_migrate")
        assert result["changed"] is True and result["eligible"] is True and result["rolled_back"] is False, result
        assert result["extension"] == {"name": s.extension, "installed_version": mig.INSTALLED}, result["extension"]
        steps = written_steps(result)
        assert steps == list(STEP_NAMES[STEP_NAMES.index("record") :]), steps  # every step after the check, in order

        extension = assert_moved_in_place(s, seen, data, pod, replica_sets, crd_uid)

        # the backup holds every object touched; the record names the move done and nothing owns it
        backed_up = backup_objects(result, backup)
        wanted = {("Subscription", mig.PACKAGE), ("ClusterServiceVersion", mig.CSV)} | {(k, n) for k, _ns, n in mig.release_objects(ns)}
        assert wanted <= set(backed_up), sorted(wanted - set(backed_up))
        record = s.get("ConfigMap", record_name(mig.PACKAGE), ns)
        assert record is not None and not record["metadata"].get("ownerReferences"), record
        assert "done" in json.dumps(record.get("data")), record.get("data")
        # no secret in the output or the backup (the registry password is the one secret this scenario has)
        password = published["registry_auth"]["password"]
        assert password not in json.dumps(result) and all(password not in p.read_text() for p in backup.rglob("*") if p.is_file())

        # a rerun changes nothing
        marks, extension_rv, record_rv = s.release_metadata(), extension["metadata"]["resourceVersion"], record["metadata"]["resourceVersion"]
        again = mig.check(s.run("olm_migrate", args), "olm_migrate (rerun)")
        assert again["changed"] is False and [x for x in written_steps(again) if x != "done"] == [], again
        assert again["extension"] == {"name": s.extension, "installed_version": mig.INSTALLED}, again
        assert s.release_metadata() == marks
        assert s.extension_object()["metadata"]["resourceVersion"] == extension_rv
        assert s.get("ConfigMap", record_name(mig.PACKAGE), ns)["metadata"]["resourceVersion"] == record_rv
        assert s.get("Operator", f"{mig.PACKAGE}.{ns}") is None, "OLM v0 created its Operator object again"

        # OLM v1 now upgrades it, through olm_cluster_extension as the collection's field manager (no force_conflicts)
        upgraded = s.run(
            "olm_cluster_extension",
            dict(
                name=s.extension,
                namespace=ns,
                package=mig.PACKAGE,
                version=mig.UPGRADE,
                channels=[mig.CHANNEL],
                catalog_selector={"matchLabels": {CATALOG_LABEL: s.catalogs["v1"]}},
                create_service_account=True,
                registry_auth=published["registry_auth"],
                wait=True,
                wait_timeout=180,
            ),
        )
        mig.check(upgraded, "olm_cluster_extension (upgrade)")
        assert upgraded["changed"] is True and upgraded["installed_version"] == mig.UPGRADE, upgraded

        def rolled_out():
            deployment = s.apps.read_namespaced_deployment(mig.DEPLOYMENT, ns)
            (container,) = deployment.spec.template.spec.containers
            env = [(e.name, e.value) for e in container.env or []]
            done = (
                (mig.UPGRADE_ENV["name"], mig.UPGRADE_ENV["value"]) in env
                and deployment.status.observed_generation == deployment.metadata.generation
                and deployment.status.updated_replicas == deployment.status.ready_replicas == deployment.status.replicas == 1
            )
            return done and s.pod_running() and s.operator_pod()[0] != pod[0]

        poll_until(rolled_out, 120, 1, "0.2.0's rollout (a new pod with its variable, Ready)")
        new_pod = s.operator_pod()
        assert new_pod[3] not in replica_sets and new_pod[1] == pod[1], (new_pod, replica_sets)
        assert s.data() == data
        assert s.get("CustomResourceDefinition", mig.CRD)["metadata"]["uid"] == crd_uid
        print(f"olm_migrate moved kube-mig34 in {took:.1f}s; upgrade through olm_cluster_extension in {upgraded.get('duration')}s")


def test_operator_v1_cannot_take_is_refused_before_any_write(run_module, api, kubeconfig, testbed, olmv1, namespace, custom, tmp_path):
    """kube-demo installed by olm_operator in OwnNamespace mode (its least privilege): operator-controller v1.5.1
    installs AllNamespaces only (rule E1)."""
    make_catalog(custom, namespace, testbed.catalog_address)
    installed = run_module(
        "olm_operator", dict(kubeconfig=kubeconfig, namespace=namespace, package="kube-demo", catalog="testbed-catalog", channel="stable", wait_timeout=180)
    )
    mig.check(installed, "olm_operator kube-demo")
    (group,) = custom.list_namespaced_custom_object("operators.coreos.com", "v1", namespace, "operatorgroups")["items"]
    assert group["spec"]["targetNamespaces"] == [namespace], group
    extension = "kf-mig-refused-" + os.urandom(3).hex()
    # no catalog named: the serving ClusterCatalogs are searched (none has kube-demo, which E9 says too)
    registry_auth = dict(username=olmv1["registry_username"], password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"])
    args = dict(kubeconfig=kubeconfig, package="kube-demo", namespace=namespace, extension_name=extension, registry_auth=registry_auth)
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)

    def state():
        deployment = apps.read_namespaced_deployment("kube-demo-controller-manager", namespace)
        sa = core.read_namespaced_service_account("kube-demo-controller-manager", namespace)
        sub = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "subscriptions", "kube-demo")
        csv = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", installed["installed_csv"])
        return {
            "deployment": (deployment.metadata.resource_version, deployment.metadata.labels, deployment.metadata.annotations),
            "service_account": (sa.metadata.resource_version, sa.metadata.labels),
            "subscription": sub["spec"],
            "csv": (csv["metadata"].get("labels"), csv["metadata"].get("annotations"), csv["status"]["phase"]),
            "config_maps": sorted(c.metadata.name for c in core.list_namespaced_config_map(namespace).items),
            "service_accounts": sorted(a.metadata.name for a in core.list_namespaced_service_account(namespace).items),
        }

    before = mig.settled(state, "kube-demo's objects")
    dry = run_module("olm_migrate", args, check_mode=True)
    mig.check(dry, "olm_migrate (check mode)")
    assert dry["eligible"] is False, dry
    (e1,) = [r for r in dry["refusals"] if r["rule"] == "E1"]
    assert e1["subject"] == f"OperatorGroup {namespace}/{group['metadata']['name']}" and "OwnNamespace" in e1["reason"], e1

    backup = tmp_path / "backup"
    refused = run_module("olm_migrate", dict(args, backup_dir=str(backup)))
    assert refused.get("failed") and "OwnNamespace" in refused["msg"], refused
    assert written_steps(refused) == [], refused.get("steps_done")
    # nothing written: the objects, the Subscription, no record, no ClusterExtension, no installer, no backup
    assert state() == before
    assert core.list_namespaced_config_map(namespace, field_selector=f"metadata.name={record_name('kube-demo')}").items == []
    assert custom.list_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", field_selector=f"metadata.name={extension}")["items"] == []
    assert not backup.exists() or not any(backup.iterdir()), sorted(p.name for p in backup.iterdir())
    crd = client.ApiextensionsV1Api(api).read_custom_resource_definition("kubedemos.demo.kubeforge.io")
    assert mig.HELM_LABEL not in (crd.metadata.labels or {}) and "meta.helm.sh/release-name" not in (crd.metadata.annotations or {}), crd.metadata


def test_catalog_without_the_version_refused_and_a_v1_failure_rolled_back(scenario, tmp_path):
    s = scenario
    later, incompatible = s.serve("v1-later"), s.serve("v1-incompatible")
    s.install_v0()
    data, pod, replica_sets = s.data(), s.operator_pod(), s.replica_sets()
    marks = s.release_metadata()
    approval = s.subscription()["spec"]["installPlanApproval"]
    assert approval == "Automatic"

    # a ClusterCatalog that does not serve 0.1.0: refused (E9) before any write
    refused = s.run("olm_migrate", migrate_args(s, later, backup_dir=str(tmp_path / "refused")))
    assert refused.get("failed") and mig.INSTALLED in refused["msg"] and "ClusterCatalog" in refused["msg"], refused
    assert written_steps(refused) == [], refused.get("steps_done")
    assert s.release_metadata() == marks and s.subscription()["spec"]["installPlanApproval"] == approval
    assert s.get("ConfigMap", record_name(mig.PACKAGE), s.namespace) is None and s.v1_leftovers() == []

    # served 0.1.0 whose CRD operator-controller's upgrade-safety preflight refuses against the live one: the move
    # writes, the ClusterExtension never becomes Installed, and the module rolls back
    with mig.Continuity(s.kubeconfig, s.namespace) as seen:
        failed = s.run("olm_migrate", migrate_args(s, incompatible, backup_dir=str(tmp_path / "backup"), wait_timeout=60))
    assert failed.get("failed") and failed.get("rolled_back") is True, failed
    assert "roll" in failed["msg"].lower(), failed["msg"]
    assert "create_extension" in (failed.get("steps_done") or []), failed.get("steps_done")
    print(f"the forced failure: {failed['msg']}")

    # OLM v0 works as before: Succeeded/AtLatestKnown, Automatic approval again, the same pod, the same data
    poll_until(s.v0_state, 60, 1, "OLM v0 Succeeded/AtLatestKnown after the rollback", until=lambda v: v == ("Succeeded", "AtLatestKnown"))
    assert s.subscription()["spec"]["installPlanApproval"] == approval
    assert seen.errors == [] and seen.pods == {pod[0]: 0} and seen.not_ready == [], (seen.errors, seen.pods, seen.not_ready)
    assert [e for e in seen.crd_events if e[0] in ("DELETED", "RELISTED-ABSENT") or e[2]] == [], seen.crd_events
    assert s.operator_pod() == pod and s.replica_sets() == replica_sets
    assert s.data() == data
    # the five objects carry what OLM v0 gave them, no more; no v1 object is left
    after = s.release_metadata()
    assert {k: v[1:] for k, v in after.items()} == {k: v[1:] for k, v in marks.items()}
    assert s.v1_leftovers() == []


def kill_once_the_extension_exists(s, args):
    """Start olm_migrate with ``args``, SIGKILL it as soon as its ClusterExtension exists; the phase it recorded."""
    proc = start_module_subprocess(s.work, "olm_migrate", dict(args, kubeconfig=s.kubeconfig), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        poll_until(lambda: proc.poll() is not None or s.extension_object() is not None, 120, 0.05, f"ClusterExtension {s.extension} created by the move")
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"olm_migrate ended (exit {proc.returncode}) before it was killed"
    phase = s.get("ConfigMap", record_name(mig.PACKAGE), s.namespace)["data"]["phase"]
    assert STEP_NAMES.index("stamp_helm_ownership") <= STEP_NAMES.index(phase) < STEP_NAMES.index("wait_installed"), phase
    return phase


def test_a_move_killed_after_the_extension_is_created_resumes_on_rerun(scenario, tmp_path):
    """The module killed (SIGKILL) as soon as its ClusterExtension exists, with OLM v0's objects stamped and the
    installer made: a rerun reads the record, does only the steps after the recorded one, and ends as an unbroken move."""
    s = scenario
    catalog = s.serve("v1")
    s.install_v0()
    data, pod, replica_sets = s.data(), s.operator_pod(), s.replica_sets()
    crd_uid = s.get("CustomResourceDefinition", mig.CRD)["metadata"]["uid"]
    args = migrate_args(s, catalog, backup_dir=str(tmp_path / "backup"), wait_timeout=180)
    with mig.Continuity(s.kubeconfig, s.namespace) as seen:
        phase = kill_once_the_extension_exists(s, args)
        resumed = s.run("olm_migrate", args)
    mig.check(resumed, "olm_migrate (rerun after the kill)")
    assert resumed["changed"] is True and f"resumed after step {phase}" in resumed["msg"], resumed
    assert written_steps(resumed) == list(STEP_NAMES[STEP_NAMES.index(phase) + 1 :]), (phase, resumed["steps_done"])
    assert resumed["extension"] == {"name": s.extension, "installed_version": mig.INSTALLED}, resumed["extension"]
    assert_moved_in_place(s, seen, data, pod, replica_sets, crd_uid)
    print(f"killed at the recorded phase {phase}; the rerun did {resumed['steps_done']}")


def test_the_way_back_asked_for_after_a_killed_move_then_a_new_move(scenario, tmp_path):
    """state=rolled_back after a move killed once its ClusterExtension exists: OLM v0 as before (the same pod and
    data, the approval restored, no v1 object); asked again it changes nothing; a new move then goes through."""
    s = scenario
    catalog = s.serve("v1")
    s.install_v0()
    data, pod, replica_sets = s.data(), s.operator_pod(), s.replica_sets()
    crd_uid = s.get("CustomResourceDefinition", mig.CRD)["metadata"]["uid"]
    marks = s.release_metadata()
    args = migrate_args(s, catalog, backup_dir=str(tmp_path / "backup"), wait_timeout=180)
    back = dict(package=mig.PACKAGE, namespace=s.namespace, extension_name=s.extension, state="rolled_back")
    with mig.Continuity(s.kubeconfig, s.namespace) as seen:
        kill_once_the_extension_exists(s, args)
        undone = mig.check(s.run("olm_migrate", back), "olm_migrate state=rolled_back")
    assert undone["changed"] is True and undone["rolled_back"] is True and undone["rollback"], undone
    assert undone["extension"] == {"name": s.extension, "installed_version": None}, undone["extension"]
    poll_until(s.v0_state, 60, 1, "OLM v0 Succeeded/AtLatestKnown after the way back", until=lambda v: v == ("Succeeded", "AtLatestKnown"))
    assert s.subscription()["spec"]["installPlanApproval"] == "Automatic"
    assert seen.errors == [] and seen.pods == {pod[0]: 0} and seen.not_ready == [], (seen.errors, seen.pods, seen.not_ready)
    assert [e for e in seen.crd_events if e[0] in ("DELETED", "RELISTED-ABSENT") or e[2]] == [], seen.crd_events
    assert s.operator_pod() == pod and s.replica_sets() == replica_sets and s.data() == data
    assert {k: v[1:] for k, v in s.release_metadata().items()} == {k: v[1:] for k, v in marks.items()}
    assert s.v1_leftovers() == []

    again = mig.check(s.run("olm_migrate", back), "olm_migrate state=rolled_back (again)")
    assert again["changed"] is False and again["rolled_back"] is True, again

    with mig.Continuity(s.kubeconfig, s.namespace) as seen:
        moved = mig.check(s.run("olm_migrate", args), "olm_migrate (after the way back)")
    assert moved["changed"] is True and written_steps(moved) == list(STEP_NAMES[STEP_NAMES.index("record") :]), moved
    assert_moved_in_place(s, seen, data, pod, replica_sets, crd_uid)
