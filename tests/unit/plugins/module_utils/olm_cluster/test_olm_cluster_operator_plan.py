"""olm_cluster.operator.install: check mode reports the plan and writes nothing; the real run (wait=false) executes
exactly the plan's writes, in order, and both return the same created objects and diff (without status)."""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import Result
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as glue

NS, PACKAGE, CATALOG, CATALOG_NS = "demo", "kube-demo", "cat", "olm"


class FakeCluster:
    """Objects by ``(kind, namespace, name)``; ``writes`` records the creates and patches the run sent."""

    def __init__(self, objects):
        self.objects = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}
        self.client = object()
        self.writes = []

    def resource(self, kind, api_version=None):
        return kind

    def get(self, kind, name, namespace, api_version=None):
        return copy.deepcopy(self.objects.get((kind, namespace, name)))

    def list(self, kind, namespace, api_version=None, **selectors):
        return [copy.deepcopy(o) for (k, n, _name), o in sorted(self.objects.items()) if k == kind and n == namespace]


class FakeReader:
    """The PackageManifests of the catalog: ``PACKAGES`` names the packages it serves, ``MANIFEST`` is this one's."""

    PACKAGES = []
    MANIFEST = None

    def __init__(self, client, namespace):
        self.warnings = []

    def package_manifest(self, package, source, source_namespace):
        return self.MANIFEST

    def package_names(self, source, source_namespace):
        return list(self.PACKAGES)


@pytest.fixture(name="cluster")
def fixture_cluster(monkeypatch):
    holder = {}

    def create(_client, resource, definition, namespace=None):
        holder["cluster"].writes.append(("create", resource, definition["metadata"]["name"]))
        stored = dict(copy.deepcopy(definition), status={"noise": "from the server"})
        stored["metadata"]["resourceVersion"] = "1"
        return Result(True, None, stored)

    def patch(_client, resource, name, body, namespace=None):
        holder["cluster"].writes.append(("patch", resource, name))
        current = holder["cluster"].get(resource, name, namespace)
        current["spec"].update(body.get("spec") or {})
        return Result(True, None, current)

    monkeypatch.setattr(glue, "create_object", create)
    monkeypatch.setattr(glue, "patch_object", patch)
    monkeypatch.setattr(glue, "CatalogReader", FakeReader)
    monkeypatch.setattr(FakeReader, "PACKAGES", [PACKAGE])
    monkeypatch.setattr(FakeReader, "MANIFEST", MANIFEST)

    def make(objects):
        holder["cluster"] = FakeCluster(objects)
        return holder["cluster"]

    return make


MANIFEST = {
    "metadata": {"name": PACKAGE},
    "status": {
        "packageName": PACKAGE,
        "defaultChannel": "stable",
        "channels": [
            {
                "name": "stable",
                "currentCSVDesc": {"installModes": [{"type": "OwnNamespace", "supported": True}]},
                "entries": [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}, {"name": "kube-demo.v0.0.1", "version": "0.0.1"}],
            }
        ],
    },
}
SOURCE = {
    "kind": "CatalogSource",
    "metadata": {"name": CATALOG, "namespace": CATALOG_NS},
    "spec": {"sourceType": "grpc"},
    "status": {"connectionState": {"lastObservedState": "READY"}},
}


def params(**options):
    return dict({"namespace": NS, "package": PACKAGE, "catalog": CATALOG, "catalog_namespace": CATALOG_NS, "channel": "stable"}, **options)


def without_timing(result):
    return {k: v for k, v in result.items() if k != "duration"}


def test_a_fresh_install_in_a_new_namespace_check_mode_equals_the_real_run(cluster):
    checked = cluster([SOURCE])
    check = glue.install(checked, params(namespace_labels={"team": "a"}), check_mode=True, wait=False, timeout=10)
    assert checked.writes == []
    real_cluster = cluster([SOURCE])
    real = glue.install(real_cluster, params(namespace_labels={"team": "a"}), check_mode=False, wait=False, timeout=10)
    assert real_cluster.writes == [("create", "Namespace", NS), ("create", "OperatorGroup", NS), ("create", "Subscription", PACKAGE)]
    assert check["created"] == real["created"] == {"namespace": NS, "operator_group": NS, "subscription": PACKAGE}
    assert check["changed"] and real["changed"]
    assert check["diff"] == real["diff"]
    after = check["diff"]["after"]
    assert sorted(after) == ["namespace", "namespace_labels", "operator_group", "subscription"]
    assert after["namespace"]["metadata"] == {"name": NS, "labels": {"team": "a"}}
    assert after["operator_group"]["spec"] == {"targetNamespaces": [NS]}
    # diffs show metadata and spec only: no status, no resourceVersion
    assert "status" not in after["subscription"] and "resourceVersion" not in after["subscription"]["metadata"]


def test_check_mode_before_the_catalog_exists_reports_the_namespace_and_group(cluster):
    checked = cluster([])
    result = glue.install(checked, params(), check_mode=True, wait=True, timeout=10)
    assert checked.writes == []
    assert result["created"] == {"namespace": NS, "operator_group": NS, "subscription": PACKAGE}
    assert "does not exist (yet)" in result["warnings"][0]


@pytest.mark.parametrize("check_mode", [True, False])
def test_a_package_the_serving_catalog_lacks_fails_the_same_way_before_any_write(cluster, monkeypatch, check_mode):
    monkeypatch.setattr(FakeReader, "MANIFEST", None)
    monkeypatch.setattr(FakeReader, "PACKAGES", ["etcd"])
    fake = cluster([SOURCE])
    with pytest.raises(glue.OperatorError, match=r"package kube-demo is not in CatalogSource olm/cat \(its packages: etcd\)") as raised:
        glue.install(fake, params(), check_mode=check_mode, wait=True, timeout=10)
    assert fake.writes == []
    assert raised.value.result == {"reason": "ConstraintsNotSatisfiable", "refused": True}


@pytest.mark.parametrize(
    "objects, options, message",
    [
        ([], {}, "CatalogSource olm/cat does not exist"),
        ([SOURCE], {"version": "0.0.1"}, "version pins the operator, which needs approval=Manual"),
        ([SOURCE], {"operator_group_spec": {"targetNamespaces": ["a"]}}, "targetNamespaces"),
    ],
)
def test_every_refusal_before_the_first_write_is_marked_refused(cluster, objects, options, message):
    fake = cluster(objects)
    with pytest.raises(glue.OperatorError, match=message) as raised:
        glue.install(fake, params(**options), check_mode=False, wait=True, timeout=10)
    assert fake.writes == [] and raised.value.result["refused"] is True


def test_a_catalog_that_serves_nothing_yet_is_not_refused(cluster, monkeypatch):
    monkeypatch.setattr(FakeReader, "MANIFEST", None)
    monkeypatch.setattr(FakeReader, "PACKAGES", [])
    result = glue.install(cluster([SOURCE]), params(), check_mode=True, wait=True, timeout=10)
    assert result["changed"] and result["created"]["subscription"] == PACKAGE


def upgrade_objects():
    sub = {
        "kind": "Subscription",
        "metadata": {"name": PACKAGE, "namespace": NS, "resourceVersion": "7", "managedFields": [{"manager": "olm"}]},
        "spec": {"name": PACKAGE, "channel": "stable", "source": CATALOG, "sourceNamespace": CATALOG_NS, "installPlanApproval": "Manual"},
        "status": {"installedCSV": "kube-demo.v0.0.1", "currentCSV": "kube-demo.v0.0.2", "installPlanRef": {"name": "install-2"}},
    }
    installed = {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "kube-demo.v0.0.1", "namespace": NS},
        "spec": {"version": "0.0.1"},
        "status": {"phase": "Succeeded"},
    }
    plan = {
        "kind": "InstallPlan",
        "metadata": {"name": "install-2", "namespace": NS},
        "spec": {"approved": False, "clusterServiceVersionNames": ["kube-demo.v0.0.2"]},
        "status": {"phase": "RequiresApproval"},
    }
    namespace = {"kind": "Namespace", "metadata": {"name": NS}}
    return [sub, installed, plan, namespace]


def test_a_manual_upgrade_in_check_mode_says_which_install_plan_it_would_approve(cluster):
    fake = cluster(upgrade_objects())
    result = glue.install(fake, params(version="0.0.2", approval="Manual"), check_mode=True, wait=True, timeout=10)
    assert fake.writes == []
    assert result["changed"]
    assert result["would_approve"] == {
        "install_plan": "install-2",
        "csvs": ["kube-demo.v0.0.2"],
        "message": "would approve InstallPlan install-2 (CSV kube-demo.v0.0.2)",
    }
    assert result["diff"]["before"]["install_plans"] == {"install-2": {"approved": False, "csvs": ["kube-demo.v0.0.2"]}}
    assert result["diff"]["after"]["install_plans"] == {"install-2": {"approved": True, "csvs": ["kube-demo.v0.0.2"]}}
    # the Subscription's diff: no status, no managedFields or resourceVersion
    assert result["diff"]["before"]["subscription"]["metadata"] == {"name": PACKAGE, "namespace": NS}
    assert "status" not in result["diff"]["after"]["subscription"]


def test_an_installed_operator_costs_no_catalog_read_and_no_write(cluster, monkeypatch):
    objects = upgrade_objects()
    objects[0]["status"] = {"installedCSV": "kube-demo.v0.0.1", "currentCSV": "kube-demo.v0.0.1"}
    objects[0]["spec"]["installPlanApproval"] = "Automatic"
    monkeypatch.setattr(glue, "CatalogReader", None)  # reading the catalog would fail the test
    fake = cluster(objects)
    result = glue.install(fake, params(), check_mode=False, wait=True, timeout=10)
    assert fake.writes == [] and not result["changed"]
    assert without_timing(result)["installed_csv"] == "kube-demo.v0.0.1"
