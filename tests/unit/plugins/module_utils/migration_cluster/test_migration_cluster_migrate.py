# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_cluster/migrate.py: the glue of olm_migrate on the fake client, for what the testbed cannot produce on
demand - a kill after (and during) each step and the rerun that resumes from the record, the rollback from every
phase where OLM v0 still manages the operator, and the requests each path makes (one LIST per kind, nothing written
in check mode or for an ineligible operator, the Orphan deletion of the ClusterExtension).

The operator is the testbed's kube-demo 0.0.1 bundle as OLM v0 installs it in AllNamespaces mode (the marks of
OLM v0 v0.46.0, research notes of issue #34 section 2.1). operator-controller is simulated where the glue waits for
it: it adopts what carries Helm's keys for the release (controller reference, owner labels), creates its own RBAC
and a release Secret, and reports Installed - or fails, or never answers. The real move is
tests/integration/olmv1/test_olm_migrate.py.
"""

import copy
import json

import pytest
import yaml
from lib.fakes import FakeDynamicClient, FakeModule
from lib.testdata import DATA_DIR

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.migration import migrate as mg
from ansible_collections.kubeforge.operators.plugins.module_utils.migration_cluster import migrate as glue
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.modules.olm_migrate import argspec

BUNDLES = DATA_DIR.parent / "testbed" / "fixtures" / "kube-demo" / "bundles"
NS = "operators"
PKG = "kube-demo"
CSV = "kube-demo.v0.0.1"
CATALOG = "testbed-v1"
DEPLOYMENT = "kube-demo-controller-manager"
CRD = "kubedemos.demo.kubeforge.io"
VIEWER = "kube-demo-kubedemo-viewer"
CONFIGMAP = "kube-demo-operand-manifests"
COMPONENT = f"operators.coreos.com/{PKG}.{NS}"
OWNER_LABELS = {"olm.owner": CSV, "olm.owner.namespace": NS, "olm.owner.kind": "ClusterServiceVersion"}
SYSTEM_NS = "olmv1-system"
V0 = "operators.coreos.com/v1alpha1"
RBAC = "rbac.authorization.k8s.io/v1"
SERVED = {
    (V0, "Subscription"),
    (V0, "ClusterServiceVersion"),
    (V0, "InstallPlan"),
    ("operators.coreos.com/v1", "OperatorGroup"),
    ("operators.coreos.com/v1", "Operator"),
    ("operators.coreos.com/v2", "OperatorCondition"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "ServiceAccount"),
    ("apps/v1", "Deployment"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    (RBAC, "ClusterRole"),
    (RBAC, "ClusterRoleBinding"),
    (RBAC, "Role"),
    (RBAC, "RoleBinding"),
    (ce.API_VERSION, ce.KIND),
    (ce.API_VERSION, "ClusterCatalog"),
}
# The steps after the record, in order; a kill can hit after each one.
STEPS = list(mg.STEP_NAMES[mg.STEP_NAMES.index("record") + 1 :])


def load_bundle():
    docs = []
    for path in sorted((BUNDLES / "0.0.1" / "manifests").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs, "no manifests for kube-demo 0.0.1"
    return docs


MANIFESTS = load_bundle()
BUNDLE_CSV = next(o for o in MANIFESTS if o["kind"] == "ClusterServiceVersion")
FBC_BUNDLE = {
    "schema": "olm.bundle",
    "name": CSV,
    "package": PKG,
    "image": "registry.invalid/kube-demo-bundle:v0.0.1",
    "properties": [{"type": "olm.package", "value": {"packageName": PKG, "version": "0.0.1"}}],
}


# ------------------------------------------------------------------------------------------------ the cluster


def meta(name, namespace=None, **fields):
    out = {"name": name, "uid": f"uid-{name}", "resourceVersion": "1"}
    if namespace:
        out["namespace"] = namespace
    out.update({k: copy.deepcopy(v) for k, v in fields.items() if v})
    return out


def csv_ref(controller=False):
    return {"apiVersion": V0, "kind": "ClusterServiceVersion", "name": CSV, "uid": "uid-csv", "controller": controller}


def live_csv():
    obj = copy.deepcopy(BUNDLE_CSV)
    obj["metadata"].update(namespace=NS, name=CSV, uid="uid-csv", resourceVersion="1")
    obj["metadata"]["annotations"].update({"olm.operatorGroup": "global", "olm.operatorNamespace": NS, "olm.targetNamespaces": ""})
    obj["status"] = {"phase": "Succeeded"}
    return obj


def live_deployment():
    entry = BUNDLE_CSV["spec"]["install"]["spec"]["deployments"][0]
    spec = copy.deepcopy(entry["spec"])
    spec["template"]["metadata"]["annotations"] = dict(live_csv()["metadata"]["annotations"])
    spec["template"]["spec"]["containers"][0]["env"] = [{"name": "OPERATOR_CONDITION_NAME", "value": CSV}]
    labels = dict(entry["label"], **OWNER_LABELS, **{"olm.managed": "true", "olm.deployment-spec-hash": "5UgDqU", COMPONENT: ""})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(DEPLOYMENT, NS, labels=labels, ownerReferences=[csv_ref()]), "spec": spec}


def bundle_object(kind, name, namespace=None, **fields):
    obj = copy.deepcopy(next(o for o in MANIFESTS if o["kind"] == kind))
    obj["metadata"] = meta(name, namespace, **fields)
    return obj


def cluster_objects(approval="Automatic", targets=None):
    """What OLM v0 made for kube-demo in namespace operators (kind -> [objects])."""
    crd = bundle_object(
        "CustomResourceDefinition",
        CRD,
        labels={"olm.managed": "true", COMPONENT: ""},
        annotations={"operatorframework.io/installed-alongside-1a2b3c": f"{NS}/{CSV}"},
    )
    crd["status"] = {"storedVersions": ["v1alpha1"]}
    group = {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": meta("global", NS), "spec": {}}
    group["status"] = {"namespaces": [""]}
    if targets:
        group["spec"]["targetNamespaces"] = list(targets)
        group["status"]["namespaces"] = list(targets)
    return {
        "Subscription": [
            {
                "apiVersion": V0,
                "kind": "Subscription",
                "metadata": meta(PKG, NS, labels={COMPONENT: ""}),
                "spec": {"name": PKG, "channel": "alpha", "source": "testbed", "sourceNamespace": "olm", "installPlanApproval": approval},
                "status": {"installedCSV": CSV, "currentCSV": CSV, "state": "AtLatestKnown"},
            }
        ],
        "ClusterServiceVersion": [live_csv()],
        "OperatorGroup": [group],
        "InstallPlan": [
            {
                "apiVersion": V0,
                "kind": "InstallPlan",
                "metadata": meta("install-abcde", NS, ownerReferences=[{"kind": "Subscription", "name": PKG, "apiVersion": V0, "uid": "uid-sub"}]),
                "spec": {"clusterServiceVersionNames": [CSV], "approval": "Automatic", "approved": True},
                "status": {"phase": "Complete"},
            }
        ],
        "OperatorCondition": [
            {"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition", "metadata": meta(CSV, NS, ownerReferences=[csv_ref(True)])}
        ],
        "Operator": [{"apiVersion": "operators.coreos.com/v1", "kind": "Operator", "metadata": meta(f"{PKG}.{NS}")}],
        "CustomResourceDefinition": [crd],
        "ClusterRole": [bundle_object("ClusterRole", VIEWER, labels=dict(OWNER_LABELS, **{"olm.managed": "true", COMPONENT: ""}))],
        "ConfigMap": [bundle_object("ConfigMap", CONFIGMAP, NS, labels={"olm.managed": "true", COMPONENT: ""}, ownerReferences=[csv_ref()])],
        "ServiceAccount": [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(DEPLOYMENT, NS, labels={COMPONENT: ""}, ownerReferences=[csv_ref()])}
        ],
        "Deployment": [live_deployment()],
        "Secret": [{"apiVersion": "v1", "kind": "Secret", "metadata": meta("unrelated", NS), "data": {"token": "c2VjcmV0"}}],
    }


ADOPTED = [("CustomResourceDefinition", CRD), ("ClusterRole", VIEWER), ("ConfigMap", CONFIGMAP), ("ServiceAccount", DEPLOYMENT), ("Deployment", DEPLOYMENT)]


class FakeCluster(FakeDynamicClient):
    """The fake client with what the glue sends besides: server-side apply (a deep merge, the field manager kept
    per object) and DELETE with DeleteOptions (the propagation recorded)."""

    def __init__(self, objects):
        super().__init__(objects, served=SERVED)
        self.managers = {}
        self.deletions = []
        self.collected = []  # (kind, name) the simulated garbage collector deleted
        self.late_adoption = None

    def apply(self, resource, body, namespace=None, server_side=True, field_manager=None, force_conflicts=False, serialize=True):
        assert server_side and serialize
        name = body["metadata"]["name"]
        namespace = namespace or body["metadata"].get("namespace")
        self.requests.append((resource.kind, "APPLY", name, field_manager))
        items = self.objects.setdefault(resource.kind, [])
        current = next((o for o in items if o["metadata"]["name"] == name and self._in(o, namespace)), None)
        if current is None:
            current = copy.deepcopy(body)
            current["metadata"].update(uid=f"uid-{resource.kind}-{name}", resourceVersion="1", generation=1)
            items.append(current)
        else:
            merge(current, copy.deepcopy(body))
        self.managers[(resource.kind, name)] = field_manager
        return copy.deepcopy(current)

    def get(self, resource, name=None, namespace=None, label_selector=None, field_selector=None):
        found = super().get(resource, name=name, namespace=namespace, label_selector=label_selector, field_selector=field_selector)
        if name is None:  # list items come without kind and apiVersion, as the API server sends them
            found["items"] = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in found["items"]]
        return found

    def delete(self, resource, name=None, namespace=None, body=None):
        """Finalizers hold an object (deletionTimestamp set); Orphan takes the owner's references off its
        dependents first, then ``late_adoption`` (an adoption operator-controller had in flight) may put them back;
        a removed ClusterExtension takes with it every object it was the only owner of (the garbage collector)."""
        propagation = (body or {}).get("propagationPolicy")
        self.deletions.append((resource.kind, name, propagation))
        if propagation == "Orphan":
            self._orphan(resource.kind, name)
            if self.late_adoption:
                self.late_adoption(name)
        obj = self.find(resource.kind, name)
        if obj is not None and obj["metadata"].get("finalizers"):
            self.requests.append((resource.kind, "DELETE", name, None))
            obj["metadata"]["deletionTimestamp"] = "2026-11-29T13:00:00Z"
            return copy.deepcopy(obj)
        answer = super().delete(resource, name=name, namespace=namespace)
        self._collect(resource.kind, name)
        return answer

    def patch(self, resource, body, name=None, namespace=None, content_type=None):
        answer = super().patch(resource, body, name=name, namespace=namespace, content_type=content_type)
        obj = self.find(resource.kind, name)
        if obj is not None and obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
            self.objects[resource.kind].remove(obj)
            self._collect(resource.kind, name)
        return answer

    def _orphan(self, kind, name):
        for items in self.objects.values():
            for obj in items:
                refs = obj["metadata"].get("ownerReferences") or []
                obj["metadata"]["ownerReferences"] = [r for r in refs if (r.get("kind"), r.get("name")) != (kind, name)]

    def _collect(self, kind, name):
        for key, items in self.objects.items():
            for obj in list(items):
                refs = obj["metadata"].get("ownerReferences") or []
                if refs and any((r.get("kind"), r.get("name")) == (kind, name) for r in refs):
                    if all(self.find(r.get("kind"), r.get("name")) is None for r in refs):
                        items.remove(obj)
                        self.collected.append((key, obj["metadata"]["name"]))

    def writes(self, kind=None):
        return [r for r in self.requests if r[1] in ("PATCH", "DELETE", "CREATE", "APPLY") and (kind is None or r[0] == kind)]

    def find(self, kind, name):
        return next((o for o in self.objects.get(kind, []) if o["metadata"]["name"] == name), None)


def merge(into, update):
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


class OperatorController:
    """operator-controller v1.5.1 as far as the glue waits for it: on the wait for the ClusterExtension, ``installed``
    adopts the objects carrying Helm's keys for its release, creates a ClusterRole of its own and the release
    Secret, and reports Installed at ``version``; ``blocked`` reports Progressing=False; ``silent`` never answers."""

    def __init__(self, cluster, outcome="installed", version="0.0.1"):
        self.cluster, self.outcome, self.version = cluster, outcome, version

    def reconcile(self, name):
        ext = self.cluster.find(ce.KIND, name)
        if ext is None or self.outcome == "silent" or ext.get("status"):
            return
        ext["metadata"].setdefault("generation", 1)
        gen = ext["metadata"]["generation"]
        if self.outcome == "blocked":
            ext["status"] = {
                "conditions": [{"type": "Progressing", "status": "False", "reason": "Blocked", "message": "bundle refused", "observedGeneration": gen}]
            }
            return
        for items in self.cluster.objects.values():
            for obj in items:
                m = obj["metadata"]
                if (m.get("annotations") or {}).get(mg.HELM_RELEASE_NAME) == name and (m.get("labels") or {}).get(mg.HELM_MANAGED_BY_LABEL) == "Helm":
                    m.setdefault("labels", {}).update({ce.OWNER_KIND_LABEL: ce.KIND, ce.OWNER_NAME_LABEL: name})
                    ref = {"apiVersion": ce.API_VERSION, "kind": ce.KIND, "name": name, "uid": "uid-ext", "controller": True, "blockOwnerDeletion": True}
                    m.setdefault("ownerReferences", []).append(ref)
        plan_create = [o for o in self.cluster.objects.get("ConfigMap", []) if o["metadata"]["name"] == mg.record_name(PKG)]
        created = json.loads(plan_create[0]["data"]["plan"])["create"] if plan_create else []
        for item in created:
            labels = {ce.OWNER_KIND_LABEL: ce.KIND, ce.OWNER_NAME_LABEL: name}
            self.cluster.objects.setdefault(item["kind"], []).append(
                {"apiVersion": item["apiVersion"], "kind": item["kind"], "metadata": meta(item["name"], item["namespace"], labels=labels)}
            )
        # a generated ClusterRole whose name the plan does not know: the rollback finds it by its owner labels
        labels = {ce.OWNER_KIND_LABEL: ce.KIND, ce.OWNER_NAME_LABEL: name}
        self.cluster.objects["ClusterRole"].append({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": meta(f"{CSV}-unplanned", labels=labels)})
        secret_labels = {"owner": "operator-controller", "name": name, "status": "deployed"}
        self.cluster.objects["Secret"].append(
            {"apiVersion": "v1", "kind": "Secret", "metadata": meta(f"sh.helm.release.v1.{name}.v1", SYSTEM_NS, labels=secret_labels)}
        )
        ext["status"] = {
            "conditions": [
                {"type": "Installed", "status": "True", "reason": "Succeeded", "observedGeneration": gen},
                {"type": "Progressing", "status": "True", "reason": "Succeeded", "observedGeneration": gen},
            ],
            "install": {"bundle": {"name": f"{PKG}.v{self.version}", "version": self.version}},
        }


class Killed(BaseException):
    """The module process killed (nothing catches it, as nothing catches SIGKILL)."""


@pytest.fixture
def env(monkeypatch, tmp_path):
    """``make(**objects changes) -> (cluster, controller)``; ``run(state, check_mode, **params) -> result``."""
    state = {}

    def make(approval="Automatic", targets=None, outcome="installed", version="0.0.1"):
        state["cluster"] = FakeCluster(cluster_objects(approval, targets))
        state["controller"] = OperatorController(state["cluster"], outcome, version)
        return state["cluster"], state["controller"]

    def fake_watch(client, api_version, kind, name, namespace, predicate, timeout, resource=None, tick=None):
        if kind == ce.KIND:
            state["controller"].reconcile(name)
        obj = client.find(kind, name)
        if predicate(copy.deepcopy(obj)):
            return copy.deepcopy(obj)
        raise ResourceTimeoutError(f"Timed out after {timeout}s", last_object=copy.deepcopy(obj), duration=timeout)

    monkeypatch.setattr(glue, "watch_until", fake_watch)
    monkeypatch.setattr(glue, "find_bundle", lambda cluster, params, package, version, warnings: (CATALOG, copy.deepcopy(FBC_BUNDLE), copy.deepcopy(MANIFESTS)))

    def run(check_mode=False, diff=False, **params):
        params.setdefault("package", PKG)
        params.setdefault("namespace", NS)
        params.setdefault("backup_dir", str(tmp_path / "backup"))
        resources = {(ce.KIND, ce.API_VERSION): state["cluster"].resources.get(ce.API_VERSION, ce.KIND)}
        module = FakeModule(params, argument_spec=argspec(), check_mode=check_mode, diff=diff, client=state["cluster"], resources=resources)
        return glue.execute(module)

    return make, run, tmp_path / "backup"


def record(cluster):
    found = cluster.find("ConfigMap", mg.record_name(PKG))
    return found and found["data"]


def adopted_metadata(cluster):
    return {
        (kind, name): copy.deepcopy({k: cluster.find(kind, name)["metadata"].get(k) or None for k in ("labels", "annotations", "ownerReferences")})
        for kind, name in ADOPTED
    }


def end_state(cluster):
    """What a finished move leaves, without resourceVersions (a resumed run writes in another order)."""
    out = {
        kind: sorted(o["metadata"]["name"] for o in cluster.objects.get(kind, []))
        for kind in ("Subscription", "ClusterServiceVersion", "Operator", "OperatorGroup")
    }
    out["adopted"] = adopted_metadata(cluster)
    out["extension"] = copy.deepcopy(cluster.find(ce.KIND, PKG)["spec"])
    out["installer"] = sorted((o["kind"], o["metadata"]["name"]) for kind in ("ServiceAccount", "ClusterRole", "Role") for o in cluster.objects.get(kind, []))
    out["phase"] = record(cluster)["phase"]
    return out


# ------------------------------------------------------------------------------------------------ the move


def test_check_mode_plans_and_writes_nothing(env):
    make, run, backup = env
    cluster, _controller = make()
    result = run(check_mode=True)
    assert result["eligible"] is True and result["refusals"] == [] and result["changed"] is True
    assert {(a["kind"], a["name"]) for a in result["plan"]["adopt"]} == set(ADOPTED)
    assert result["plan"]["extension"]["spec"]["source"]["catalog"]["version"] == "0.0.1"
    assert cluster.writes() == [] and not backup.exists()
    assert "diff" not in result
    diff = run(check_mode=True, diff=True)["diff"]
    assert diff == mg.move_diff(result["plan"]) and diff["after"]["operator"]["managed_by"] == "OLM v1"


def test_one_list_per_kind(env):
    """Reading the operator lists each kind once (the CSVs that are not copies, all namespaces, and the copies of
    ours by label), then GETs the OperatorCondition, the ClusterExtension and each object of the release."""
    make, _run, _backup = env
    cluster, _controller = make()
    params = {"package": PKG, "namespace": NS, "extension_name": None, "catalog": None}
    observed = glue.read_observed(glue.Cluster(cluster), params, None)
    lists = sorted((r[0], r[2]) for r in cluster.requests if r[1] == "LIST")
    assert lists == [
        ("ClusterServiceVersion", "!olm.copiedFrom"),
        ("ClusterServiceVersion", f"olm.copiedFrom={NS}"),
        ("InstallPlan", None),
        ("OperatorGroup", None),
        ("Subscription", None),
    ]
    gets = sorted((r[0], r[2]) for r in cluster.requests if r[1] == "GET")
    assert ("OperatorCondition", CSV) in gets and (ce.KIND, PKG) in gets
    assert set(gets) >= set(ADOPTED)
    assert observed.csv["metadata"]["name"] == CSV and observed.operator_condition is not None and observed.catalog == CATALOG


def test_the_move_and_a_rerun_that_changes_nothing(env):
    make, run, backup = env
    cluster, _controller = make()
    result = run()
    assert result["changed"] is True and result["rolled_back"] is False
    assert result["steps_done"] == ["record"] + STEPS
    assert result["extension"] == {"name": PKG, "installed_version": "0.0.1"}
    # OLM v0 holds nothing; OLM v1 controls every adopted object, which keeps no OLM v0 mark
    state = end_state(cluster)
    assert state["Subscription"] == [] and state["ClusterServiceVersion"] == [] and state["Operator"] == []
    assert state["OperatorGroup"] == ["global"]  # not asked to delete it
    for key, found in state["adopted"].items():
        labels = found["labels"] or {}
        assert labels[mg.HELM_MANAGED_BY_LABEL] == "Helm" and labels[ce.OWNER_NAME_LABEL] == PKG, key
        assert not set(labels) & {"olm.owner", "olm.owner.namespace", "olm.owner.kind", "olm.managed", "olm.deployment-spec-hash", COMPONENT}, key
        assert not [a for a in found["annotations"] or {} if a.startswith(mg.ALONGSIDE_PREFIX)], key
        assert any(r["kind"] == ce.KIND and r["controller"] for r in found["ownerReferences"]), key
    # created through the collection's apply path, so olm_cluster_extension upgrades it without force_conflicts
    assert cluster.managers[(ce.KIND, PKG)] == "kubeforge"
    installer = [o for o in cluster.objects["ServiceAccount"] if o["metadata"]["name"] == f"{PKG}-installer"]
    assert installer and installer[0]["metadata"]["labels"]["operators.kubeforge.io/created-by"] == "kubeforge.operators.olm_cluster_extension"
    # the Subscription and the CSV go in the background (their v0-only objects collected), never orphaned
    assert ("Subscription", PKG, "Background") in cluster.deletions and ("ClusterServiceVersion", CSV, "Background") in cluster.deletions
    assert state["phase"] == "done"
    # the backup: one file per touched object and the plan; the Deployment as it was before the move
    files = {p.name for p in backup.iterdir()}
    assert {"subscription-operators-kube-demo.json", f"clusterserviceversion-operators-{CSV}.json", "plan.json"} <= files
    assert {"operatorgroup-operators-global.json", "installplan-operators-install-abcde.json"} <= files  # listed: kind added
    assert f"customresourcedefinition-cluster-{CRD}.json" in files and f"deployment-operators-{DEPLOYMENT}.json" in files
    saved = json.loads((backup / f"deployment-operators-{DEPLOYMENT}.json").read_text())
    assert saved["metadata"]["labels"]["olm.owner"] == CSV and mg.HELM_MANAGED_BY_LABEL not in saved["metadata"]["labels"]
    assert sorted(result["backup"]["files"]) == sorted(str(backup / f) for f in files)

    before = len(cluster.requests)
    again = run()
    assert again["changed"] is False and again["steps_done"] == []
    assert [r for r in cluster.requests[before:] if r[1] not in ("GET", "LIST")] == []


def test_ineligible_operator_fails_before_any_write(env):
    make, run, backup = env
    cluster, _controller = make(targets=[NS])
    with pytest.raises(glue.MigrateError) as failure:
        run()
    assert "E1 OperatorGroup operators/global" in str(failure.value) and "Nothing was changed" in str(failure.value)
    assert failure.value.result["eligible"] is False and failure.value.result["refusals"][0]["rule"] == "E1"
    assert cluster.writes() == [] and not backup.exists()
    checked = run(check_mode=True)
    assert checked["eligible"] is False and checked["changed"] is False


def test_backup_dir_is_required_outside_check_mode(env):
    make, run, _backup = env
    cluster, _controller = make()
    with pytest.raises(InvalidInputError, match="backup_dir is required"):
        run(backup_dir=None)
    assert cluster.requests == []


def test_no_subscription_and_no_record(env):
    make, run, _backup = env
    cluster, _controller = make()
    cluster.objects["Subscription"] = []
    with pytest.raises(glue.MigrateError, match="has no Subscription of package kube-demo and no migration record"):
        run()


# ------------------------------------------------------------------------------------------------ kills


def kill_at(monkeypatch, step, before_recording):
    """Kill the run when the record is about to say ``step`` (``before_recording``: after the step's writes, before
    the record says so) or right after it does."""
    original = glue.Migration.record_phase

    def record_phase(self, phase):
        if phase == step and before_recording:
            raise Killed(step)
        original(self, phase)
        if phase == step:
            raise Killed(step)

    monkeypatch.setattr(glue.Migration, "record_phase", record_phase)


@pytest.mark.parametrize("before_recording", [False, True], ids=["after", "during"])
@pytest.mark.parametrize("step", STEPS)
def test_a_kill_after_or_during_each_step_resumes_to_the_same_end(env, monkeypatch, step, before_recording):
    make, run, _backup = env
    reference, _controller = make()
    run()
    expected = end_state(reference)

    cluster, _controller = make()
    with monkeypatch.context() as patch:
        kill_at(patch, step, before_recording)
        with pytest.raises(Killed):
            run()
    done = STEPS.index(step) if before_recording else STEPS.index(step) + 1
    assert record(cluster)["phase"] == (["record"] + STEPS)[done]
    result = run()
    assert result["steps_done"] == STEPS[done:] and result["changed"] is bool(STEPS[done:])  # after "done": nothing to do
    assert end_state(cluster) == expected


# ------------------------------------------------------------------------------------------------ the way back


def test_a_failed_install_is_rolled_back_to_olm_v0(env):
    make, run, _backup = env
    cluster, _controller = make(outcome="blocked")
    before = adopted_metadata(cluster)
    with pytest.raises(glue.MigrateError) as failure:
        run()
    message = str(failure.value)
    assert "operator-controller cannot install ClusterExtension kube-demo: bundle refused" in message and "Rolled back" in message
    result = failure.value.result
    assert result["rolled_back"] is True and result["steps_done"][-1] == "create_extension"
    assert result["eligible"] is True and result["plan"]["version"] == "0.0.1" and result["backup"]["files"]
    assert "deleted ClusterExtension kube-demo (propagation Orphan)" in result["rollback"]
    assert adopted_metadata(cluster) == before
    assert cluster.find("Subscription", PKG)["spec"]["installPlanApproval"] == "Automatic"
    assert cluster.find("ClusterServiceVersion", CSV) is not None and record(cluster)["phase"] == "rolled_back"


def test_a_silent_controller_is_rolled_back_after_the_timeout(env):
    make, run, _backup = env
    cluster, _controller = make(outcome="silent")
    with pytest.raises(glue.MigrateError, match=r"did not reach Installed at 0\.0\.1 within 300s .*Rolled back"):
        run()
    assert cluster.find(ce.KIND, PKG) is None and ("ClusterExtension", PKG, "Orphan") in cluster.deletions


def test_another_installed_version_is_rolled_back(env):
    make, run, _backup = env
    cluster, _controller = make(version="0.0.2")
    with pytest.raises(glue.MigrateError, match="installed version 0.0.2, not the installed version 0.0.1"):
        run()
    assert cluster.find(ce.KIND, PKG) is None


@pytest.mark.parametrize("step", ["freeze_v0", "stamp_helm_ownership", "create_installer", "create_extension", "wait_installed"])
def test_rolled_back_from_each_phase_where_olm_v0_still_manages(env, monkeypatch, step):
    make, run, _backup = env
    cluster, _controller = make()
    before = adopted_metadata(cluster)
    with monkeypatch.context() as patch:
        kill_at(patch, step, False)
        with pytest.raises(Killed):
            run()
    result = run(state="rolled_back", backup_dir=None)
    assert result["changed"] is True and result["rolled_back"] is True
    # nothing of OLM v1 is left: no ClusterExtension, release Secret, v1-created object, installer, Helm key
    assert cluster.find(ce.KIND, PKG) is None
    assert [s["metadata"]["name"] for s in cluster.objects["Secret"]] == ["unrelated"]
    assert not [o for items in cluster.objects.values() for o in items if (o["metadata"].get("labels") or {}).get(ce.OWNER_NAME_LABEL)]
    assert cluster.find("ServiceAccount", f"{PKG}-installer") is None
    assert adopted_metadata(cluster) == before
    assert cluster.find("Subscription", PKG)["spec"]["installPlanApproval"] == "Automatic"
    assert not [d for d in cluster.deletions if d[0] == ce.KIND and d[2] != "Orphan"]
    # a rerun of the way back changes nothing; a new move starts from the beginning and ends
    assert run(state="rolled_back", backup_dir=None)["changed"] is False
    moved = run()
    assert moved["steps_done"] == ["record"] + STEPS and record(cluster)["phase"] == "done"


@pytest.mark.parametrize("hold", [True, False], ids=["held", "without-the-hold"])
def test_an_adoption_in_flight_during_the_rollback_loses_no_crd(env, monkeypatch, hold):
    """Seen on the testbed: killed during the wait, rolled back at once - operator-controller's adoption, still in
    flight, put the ClusterExtension's reference back on the CRD after the Orphan deletion had taken them off, and
    the garbage collector deleted the CRD (its only owner gone) with every custom resource. The rollback holds the
    ClusterExtension with a finalizer until the references are off; without the hold the CRD is lost."""
    make, run, _backup = env
    cluster, _controller = make()
    before = adopted_metadata(cluster)
    with monkeypatch.context() as patch:
        kill_at(patch, "wait_installed", False)
        with pytest.raises(Killed):
            run()

    def late_adoption(name):
        for kind, obj_name in ADOPTED:
            refs = cluster.find(kind, obj_name)["metadata"].setdefault("ownerReferences", [])
            refs.append({"apiVersion": ce.API_VERSION, "kind": ce.KIND, "name": name, "uid": "uid-ext", "controller": True})

    cluster.late_adoption = late_adoption
    if not hold:
        monkeypatch.setattr(glue.Migration, "_hold", lambda self, obj: [])
    result = run(state="rolled_back", backup_dir=None)
    if not hold:
        assert ("CustomResourceDefinition", CRD) in cluster.collected and ("ClusterRole", VIEWER) in cluster.collected
        return
    assert result["rolled_back"] is True and cluster.collected == [] and adopted_metadata(cluster) == before
    assert cluster.find(ce.KIND, PKG) is None
    # the installer lost its bindings before the deletion: operator-controller writes as that ServiceAccount
    order = [(r[0], r[1]) for r in cluster.requests if r[1] == "DELETE"]
    assert order.index(("ClusterRoleBinding", "DELETE")) < order.index((ce.KIND, "DELETE")), order


def test_a_rollback_killed_midway_is_finished_before_anything_else(env, monkeypatch):
    make, run, _backup = env
    cluster, _controller = make(outcome="blocked")
    before = adopted_metadata(cluster)
    with monkeypatch.context() as patch:
        kill_at(patch, glue.ROLLING_BACK, False)
        with pytest.raises(Killed):
            run()
    cluster.objects[ce.KIND] = []  # the Orphan deletion went through before the kill
    assert record(cluster)["phase"] == "rolling_back"
    writes = len(cluster.writes())
    with pytest.raises(glue.MigrateError, match="a rollback of the migration of package kube-demo was interrupted .*state=rolled_back"):
        run()
    assert len(cluster.writes()) == writes
    result = run(state="rolled_back", backup_dir=None)
    assert result["rolled_back"] is True and adopted_metadata(cluster) == before and record(cluster)["phase"] == "rolled_back"
    assert cluster.find("Subscription", PKG)["spec"]["installPlanApproval"] == "Automatic"


def test_olm_v0_is_not_removed_unless_olm_v1_holds_the_operator(env, monkeypatch):
    """A resumed run after wait_installed reads the ClusterExtension again before deleting the Subscription: gone
    (or not Installed), the CSV's deletion would let the garbage collector delete the operator's objects."""
    make, run, _backup = env
    cluster, _controller = make()
    with monkeypatch.context() as patch:
        kill_at(patch, "wait_installed", False)
        with pytest.raises(Killed):
            run()
    cluster.objects[ce.KIND] = []
    with pytest.raises(glue.MigrateError, match="ClusterExtension kube-demo does not hold the operator at 0.0.1 .*left as they are"):
        run()
    assert cluster.find("Subscription", PKG) is not None and cluster.find("ClusterServiceVersion", CSV) is not None
    assert not [d for d in cluster.deletions if d[0] in ("Subscription", "ClusterServiceVersion")]


def test_no_way_back_once_the_subscription_is_deleted(env, monkeypatch):
    make, run, _backup = env
    cluster, _controller = make()
    with monkeypatch.context() as patch:
        kill_at(patch, "delete_subscription", False)
        with pytest.raises(Killed):
            run()
    before = len(cluster.writes())
    with pytest.raises(glue.MigrateError, match="past step delete_subscription: OLM v0's Subscription is deleted"):
        run(state="rolled_back", backup_dir=None)
    assert len(cluster.writes()) == before


def test_rolled_back_without_a_record(env):
    make, run, _backup = env
    cluster, _controller = make()
    result = run(state="rolled_back", backup_dir=None)
    assert result["changed"] is False and result["rolled_back"] is False and "nothing to roll back" in result["msg"]
    assert cluster.writes() == []


def test_a_manual_subscription_is_not_frozen_nor_thawed(env):
    make, run, _backup = env
    cluster, _controller = make(approval="Manual", outcome="blocked")
    with pytest.raises(glue.MigrateError):
        run()
    assert not cluster.writes("Subscription")


def test_a_resumed_move_keeps_its_extension_name(env, monkeypatch):
    make, run, _backup = env
    make()
    with monkeypatch.context() as patch:
        kill_at(patch, "stamp_helm_ownership", False)
        with pytest.raises(Killed):
            run()
    with pytest.raises(glue.MigrateError, match="to ClusterExtension kube-demo is under way .*extension_name=kube-demo"):
        run(extension_name="other")


# ------------------------------------------------------------------------------------------------ pieces


@pytest.mark.parametrize(
    "obj, changes, ops",
    [
        ({"metadata": {}}, {"labels": {"a/b": "x"}}, [{"op": "add", "path": "/metadata/labels", "value": {"a/b": "x"}}]),
        ({"metadata": {"labels": {"a/b": "x"}}}, {"labels": {"a/b": "x"}}, []),
        ({"metadata": {"labels": {"k": "1"}}}, {"labels": {"a/b": "x"}}, [{"op": "add", "path": "/metadata/labels/a~1b", "value": "x"}]),
        ({"metadata": {"annotations": {"t~x": "1"}}}, {"remove_annotations": ["t~x", "gone"]}, [{"op": "remove", "path": "/metadata/annotations/t~0x"}]),
        (
            {"metadata": {"ownerReferences": [{"kind": "ClusterExtension", "name": "e"}, {"kind": "ClusterServiceVersion", "name": "c"}]}},
            {"drop_owner": ("ClusterExtension", "e")},
            [{"op": "add", "path": "/metadata/ownerReferences", "value": [{"kind": "ClusterServiceVersion", "name": "c"}]}],
        ),
        ({"metadata": {"labels": {"k": "1"}}}, {"labels": {"k": "2"}, "remove_labels": ["k"]}, [{"op": "add", "path": "/metadata/labels/k", "value": "2"}]),
    ],
)
def test_metadata_patch(obj, changes, ops):
    assert glue.metadata_patch(obj, **changes) == ops


def test_dependents_by_required_crd_or_package():
    ours = live_csv()
    by_crd = {"metadata": {"name": "a", "namespace": "x"}, "spec": {"customresourcedefinitions": {"required": [{"name": CRD}]}}}
    props = {"properties": [{"type": "olm.package.required", "value": {"packageName": PKG, "versionRange": ">=0.0.1"}}]}
    by_package = {"metadata": {"name": "b", "namespace": "y", "annotations": {glue.PROPERTIES_ANNOTATION: json.dumps(props)}}, "spec": {}}
    unrelated = {"metadata": {"name": "c", "namespace": "z", "annotations": {glue.PROPERTIES_ANNOTATION: "not json"}}, "spec": {}}
    assert [d["metadata"]["name"] for d in glue.dependents([ours, by_crd, by_package, unrelated], ours, PKG)] == ["a", "b"]


def cluster_catalog(name, image, serving=True):
    conditions = [{"type": "Progressing", "status": "True", "reason": "Succeeded", "observedGeneration": 1}]
    if serving:
        conditions.append({"type": "Serving", "status": "True", "reason": "Available", "observedGeneration": 1})
    obj = {"apiVersion": ce.API_VERSION, "kind": "ClusterCatalog", "metadata": meta(name, labels={"olm.operatorframework.io/metadata.name": name})}
    obj["metadata"]["generation"] = 1
    obj["spec"] = {"source": {"type": "Image", "image": {"ref": image}}}
    obj["status"] = {"conditions": conditions, "resolvedSource": {"image": {"ref": image}}}
    return obj


BROKEN = "r.example/broken@sha256:0"


class FakeReader:
    """BundleReader over catalogs in memory: image -> bundles; records what it reads."""

    CATALOGS = {
        "r.example/a@sha256:1": [dict(FBC_BUNDLE, properties=[{"type": "olm.package", "value": {"packageName": PKG, "version": "0.0.2"}}])],
        "r.example/b@sha256:2": [FBC_BUNDLE],
        "r.example/c@sha256:3": [FBC_BUNDLE],
    }
    read = []

    def __init__(self, params):
        assert params == {"registry_auth": {"username": "u"}}

    def trust(self, image):
        pass

    def catalog(self, image):
        FakeReader.read.append(image)
        if image == BROKEN:
            raise KubeforgeError(f"GET https://r.example/v2/broken/manifests/sha256:0: 401 unauthorized ({image})")
        return type("Config", (), {"bundles": self.CATALOGS[image]})()

    def bundle_objects(self, bundle):
        return copy.deepcopy(MANIFESTS)

    def close(self):
        pass


@pytest.mark.parametrize(
    "catalog, found, read, warned",
    [
        # every serving catalog in name order until one has the installed version ("0-broken" cannot be read: passed
        # over with a warning); "c" is not serving yet
        (None, "b", [BROKEN, "r.example/a@sha256:1", "r.example/b@sha256:2"], ["ClusterCatalog 0-broken passed over: its image cannot be read"]),
        # catalog: that one only (by its name label)
        ("a", None, ["r.example/a@sha256:1"], []),
        ("c", None, [], []),
    ],
)
def test_the_bundle_of_the_installed_version_comes_from_a_serving_catalog(monkeypatch, catalog, found, read, warned):
    objects = {"ClusterCatalog": [cluster_catalog("b", "r.example/b@sha256:2"), cluster_catalog("a", "r.example/a@sha256:1")]}
    objects["ClusterCatalog"] += [cluster_catalog("c", "r.example/c@sha256:3", serving=False), cluster_catalog("0-broken", BROKEN)]
    cluster = FakeCluster(objects)
    monkeypatch.setattr(glue, "BundleReader", FakeReader)
    FakeReader.read, warnings = [], []
    name, bundle, manifests = glue.find_bundle(glue.Cluster(cluster), {"catalog": catalog, "registry_auth": {"username": "u"}}, PKG, "0.0.1", warnings)
    assert name == found and (bundle is not None) is bool(found) and (manifests is not None) is bool(found)
    assert FakeReader.read == read
    assert [w.split(" (")[0] for w in warnings] == warned and all("401 unauthorized" in w for w in warnings)


def test_the_catalog_named_must_be_readable(monkeypatch):
    cluster = FakeCluster({"ClusterCatalog": [cluster_catalog("0-broken", BROKEN)]})
    monkeypatch.setattr(glue, "BundleReader", FakeReader)
    with pytest.raises(KubeforgeError, match="401 unauthorized"):
        glue.find_bundle(glue.Cluster(cluster), {"catalog": "0-broken", "registry_auth": {"username": "u"}}, PKG, "0.0.1", [])
