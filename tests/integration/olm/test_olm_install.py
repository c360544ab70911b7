"""olm_install against the testbed's real API server and OLM.

The testbed already runs OLM v0.46.0 as local processes, with OLM's CRDs installed by `kubectl create` and no OLM
Deployments. A real apply of upstream's `olm.yaml` there would create the packageserver CSV (whose APIService the
API server would reach through a Service IP: forbidden on the testbed) and downgrade the CRDs under the running OLM.
So the real manifests are only sent with server-side dry run (every object validated by the real API server), and
the real apply path (CRDs Established, ordering, Deployments rolled out, a CSV Succeeded through the testbed's
running OLM, idempotence, downloads) runs on a small OLM-shaped set of manifests with its own CRD group and
namespaces, generated per test.
"""

import functools
import json
import os
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.polling import poll_until
from lib.testdata import data_path
from testbed.config import CRASHLOOP_IMAGE

pytestmark = pytest.mark.testbed


def olm_manifests_dir(testbed):
    """The testbed's OLM quickstart directory (ansible-vars.json), else the same files from the Go module cache."""
    variables = json.loads((Path(testbed.run_dir) / "ansible-vars.json").read_text())
    if variables.get("testbed_olm_manifests_dir"):
        return variables["testbed_olm_manifests_dir"]
    from testbed.cluster import gomodcache

    return str(gomodcache() / "github.com/operator-framework/operator-lifecycle-manager@v0.46.0/deploy/upstream/quickstart")


def read(fn, *args):
    try:
        return fn(*args)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


@pytest.fixture
def apis(api):
    return {
        "ext": client.ApiextensionsV1Api(api),
        "apps": client.AppsV1Api(api),
        "core": client.CoreV1Api(api),
        "rbac": client.RbacAuthorizationV1Api(api),
        "custom": client.CustomObjectsApi(api),
        "reg": client.ApiregistrationV1Api(api),
    }


def install(run_module, kubeconfig, check_mode=False, **args):
    params = dict(kubeconfig=kubeconfig, wait_timeout=180)
    params.update(args)
    return run_module("olm_install", params, check_mode=check_mode)


# ------------------------------------------------------------------------------------------- real manifests


def crd_versions(apis, names):
    return {n: apis["ext"].read_custom_resource_definition(n).metadata.resource_version for n in names}


def test_real_manifests_check_mode_every_object_accepted_by_the_api_server(run_module, kubeconfig, testbed, apis):
    directory = olm_manifests_dir(testbed)
    # the testbed's files are the ones committed to tests/data (what the unit tests read)
    for name in ("crds.yaml", "olm.yaml"):
        assert Path(directory, name).read_bytes() == data_path("olm", "v0.46.0", name).read_bytes()
    crd_names = [d["metadata"]["name"] for d in yaml.safe_load_all(Path(directory, "crds.yaml").read_text()) if d]
    before = crd_versions(apis, crd_names)

    result = install(run_module, kubeconfig, check_mode=True, manifests_dir=directory, catalog_source=False, force=True)
    assert not result.get("failed"), result
    assert result["openshift"] is False and result["previous_install"] == "foreign"
    assert result["changed"] is True
    assert result["crds"] == crd_names
    assert result["left_out"] == ["CatalogSource olm/operatorhubio-catalog"]
    # every object went through the API server's validation and admission with dryRun=All
    assert len(result["objects"]) == len(crd_names) + 12
    assert all(o["validated"] for o in result["objects"]), [o for o in result["objects"] if not o["validated"]]
    for ref in (
        "Deployment olm/olm-operator",
        "Deployment olm/catalog-operator",
        "ClusterServiceVersion olm/packageserver",
        "ClusterRole system:controller:operator-lifecycle-manager",
        "ServiceAccount olm/olm-operator-serviceaccount",
    ):
        assert ref in result["created"]
    # the quickstart CRDs differ from the chart CRDs the testbed installed
    assert set(result["updated"]) == {"CustomResourceDefinition " + n for n in crd_names}
    assert result["version"] is None and result["image"].startswith("quay.io/operator-framework/olm@sha256:")
    assert "defines no OLMConfig CRD" in json.dumps(result.get("warnings"))  # entries are strings or event dicts

    # nothing was stored
    assert read(apis["apps"].read_namespaced_deployment, "olm-operator", "olm") is None
    assert read(apis["rbac"].read_cluster_role, "system:controller:operator-lifecycle-manager") is None
    assert read(apis["custom"].get_namespaced_custom_object, "operators.coreos.com", "v1alpha1", "olm", "clusterserviceversions", "packageserver") is None
    assert crd_versions(apis, crd_names) == before


def test_olm_crds_without_olm_deployments_are_refused(run_module, kubeconfig, testbed, apis):
    directory = olm_manifests_dir(testbed)
    result = install(run_module, kubeconfig, check_mode=True, manifests_dir=directory)
    assert result.get("failed") is True, result
    assert result["previous_install"] == "foreign" and result["changed"] is False
    for fragment in ("catalogsources.operators.coreos.com", "Deployment olm/olm-operator", "force=true"):
        assert fragment in result["msg"]
    real = install(run_module, kubeconfig, manifests_dir=directory)
    assert real.get("failed") is True and real["previous_install"] == "foreign" and "objects" not in real
    assert read(apis["apps"].read_namespaced_deployment, "olm-operator", "olm") is None


# ------------------------------------------------------------------------------------------- an OLM-shaped set


def mini_olm(root, address, tag="v9.8.7"):
    """crds.yaml and olm.yaml shaped like OLM's: a CRD, Namespaces, RBAC, two Deployments, OperatorGroups, a CSV,
    a custom resource of the CRD and a CatalogSource (an address, the testbed's opm). Returns the names used."""
    sfx = os.urandom(3).hex()
    group = f"t{sfx}.kubeforge.io"
    ns, ops = f"mini-olm-{sfx}", f"mini-ops-{sfx}"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Cluster",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
            ],
        },
    }

    def deployment(name, image):
        labels = {"app": name}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"serviceAccountName": "olm-operator-serviceaccount", "containers": [{"name": name, "image": image}]},
                },
            },
        }

    rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "mini-packageserver", "namespace": ns},
        "spec": {
            "displayName": "mini packageserver",
            "version": "0.0.1",
            "installModes": [{"type": t, "supported": True} for t in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")],
            "install": {
                "strategy": "deployment",
                "spec": {
                    # OLM checks that the service account exists and holds these rules (the Role below)
                    "permissions": [{"serviceAccountName": "olm-operator-serviceaccount", "rules": [rule]}],
                    "deployments": [
                        {
                            "name": "mini-packageserver",
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": {"app": "mini-packageserver"}},
                                "template": {
                                    "metadata": {"labels": {"app": "mini-packageserver"}},
                                    "spec": {
                                        "serviceAccountName": "olm-operator-serviceaccount",
                                        "containers": [{"name": "packageserver", "image": "example.invalid/kubeforge/packageserver:v1"}],
                                    },
                                },
                            },
                        }
                    ],
                },
            },
        },
    }
    olm = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "olm-operator-serviceaccount", "namespace": ns}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},  # after a namespaced object on purpose
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ops}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "olm", "namespace": ns}, "rules": [rule]},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "olm", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "olm"},
            "subjects": [{"kind": "ServiceAccount", "name": "olm-operator-serviceaccount", "namespace": ns}],
        },
        deployment("olm-operator", f"example.invalid/kubeforge/olm:{tag}"),
        deployment("catalog-operator", f"example.invalid/kubeforge/olm:{tag}"),
        {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": {"name": "og", "namespace": ns}, "spec": {"targetNamespaces": [ns]}},
        {"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup", "metadata": {"name": "global", "namespace": ops}},
        csv,
        {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "cluster"}, "spec": {"size": 1}},
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "default-catalog", "namespace": ns},
            "spec": {"sourceType": "grpc", "address": address, "displayName": "mini"},
        },
    ]
    directory = Path(root) / tag
    directory.mkdir(parents=True)
    (directory / "crds.yaml").write_text(yaml.safe_dump(crd))
    (directory / "olm.yaml").write_text(yaml.safe_dump_all(olm))
    return {"dir": str(directory), "root": str(root), "group": group, "crd": f"widgets.{group}", "ns": ns, "ops": ops, "tag": tag}


@pytest.fixture
def mini(tmp_path, testbed, apis):
    names = mini_olm(tmp_path / "releases", testbed.catalog_address)
    yield names
    for namespace in (names["ns"], names["ops"]):
        read(apis["core"].delete_namespace, namespace)
    read(apis["ext"].delete_custom_resource_definition, names["crd"])


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_root():
    """A loopback HTTP server; ``serve(directory) -> base URL``."""
    servers = []

    def serve(directory):
        handler = functools.partial(QuietHandler, directory=directory)
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def actions(result):
    return {f"{o['kind']} {o['namespace'] + '/' if o['namespace'] else ''}{o['name']}": (o["action"], o["validated"]) for o in result["objects"]}


def applied(result):
    """``(kind, namespace, name, action)`` of every object a run applied (check mode: would apply), in order."""
    return [(o["kind"], o.get("namespace"), o["name"], o["action"]) for o in result["objects"]]


def test_install_waits_is_idempotent_downloads_and_repairs(run_module, kubeconfig, mini, apis, http_root):
    ns, ops, crd = mini["ns"], mini["ops"], mini["crd"]

    # check mode on a fresh cluster: the CRD and the namespaces can be dry-run, what lives in them cannot
    predicted = install(run_module, kubeconfig, check_mode=True, manifests_dir=mini["dir"], catalog_source=False)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True and predicted["previous_install"] == "none" and predicted["version"] == "v9.8.7"
    got = actions(predicted)
    assert got[f"CustomResourceDefinition {crd}"] == ("created", True)
    assert got[f"Namespace {ns}"] == ("created", True) and got[f"Namespace {ops}"] == ("created", True)
    assert got[f"Deployment {ns}/olm-operator"] == ("created", False)
    assert got["Widget cluster"] == ("created", False)
    assert predicted["left_out"] == [f"CatalogSource {ns}/default-catalog"]
    assert read(apis["ext"].read_custom_resource_definition, crd) is None and read(apis["core"].read_namespace, ns) is None

    # the real run: CRD Established before the Widget, Namespaces before the ServiceAccount, Deployments rolled out,
    # the CSV Succeeded (installed by the testbed's running OLM)
    first = install(run_module, kubeconfig, manifests_dir=mini["dir"], catalog_source=False, wait=True)
    assert not first.get("failed"), first
    assert first["changed"] is True and first["previous_install"] == "none" and first["updated"] == []
    assert [o["kind"] for o in first["objects"]][:3] == ["CustomResourceDefinition", "Namespace", "Namespace"]
    assert len(first["created"]) == 12 and all(a == ("created", True) for a in actions(first).values())
    print(f"mini OLM installed and ready in {first['duration']}s")
    assert apis["apps"].read_namespaced_deployment("olm-operator", ns).status.available_replicas == 1
    csv = apis["custom"].get_namespaced_custom_object("operators.coreos.com", "v1alpha1", ns, "clusterserviceversions", "mini-packageserver")
    assert csv["status"]["phase"] == "Succeeded"
    assert apis["custom"].get_cluster_custom_object(mini["group"], "v1", "widgets", "cluster")["spec"] == {"size": 1}
    assert read(apis["custom"].get_namespaced_custom_object, "operators.coreos.com", "v1alpha1", ns, "catalogsources", "default-catalog") is None
    # check mode ran the real run's plan as dry runs: the same objects in the same order, the same verdicts
    assert applied(predicted) == applied(first)
    for key in ("created", "updated", "left_out", "previous_install", "version", "source"):
        assert predicted[key] == first[key], key

    # second run, downloaded from a loopback mirror laid out like the GitHub releases: nothing to do
    base = http_root(mini["root"])
    again = install(run_module, kubeconfig, manifests_url=base, version=mini["tag"], catalog_source=False, wait=True)
    assert not again.get("failed"), again
    assert again["changed"] is False and again["previous_install"] == "installed"
    assert again["source"] == {"crds.yaml": f"{base}v9.8.7/crds.yaml", "olm.yaml": f"{base}v9.8.7/olm.yaml"}
    assert set(actions(again).values()) == {("unchanged", True)}
    assert install(run_module, kubeconfig, check_mode=True, manifests_dir=mini["dir"], catalog_source=False)["changed"] is False

    # the default catalog is added when asked for
    with_catalog = install(run_module, kubeconfig, manifests_dir=mini["dir"])
    assert with_catalog["created"] == [f"CatalogSource {ns}/default-catalog"] and with_catalog["left_out"] == []

    # a deleted Deployment is put back
    apis["apps"].delete_namespaced_deployment("catalog-operator", ns)
    repaired = install(run_module, kubeconfig, manifests_dir=mini["dir"], wait=True)
    assert not repaired.get("failed"), repaired
    assert repaired["previous_install"] == "partial" and repaired["created"] == [f"Deployment {ns}/catalog-operator"]

    # a missing release on the mirror is a clear error
    missing = install(run_module, kubeconfig, manifests_url=base, version="v0.0.1")
    assert missing.get("failed") is True and f"{base}v0.0.1/crds.yaml" in missing["msg"] and "HTTP 404" in missing["msg"], missing


def test_a_kind_the_cluster_does_not_serve_is_refused_before_the_first_write(run_module, kubeconfig, mini, apis):
    olm = Path(mini["dir"], "olm.yaml")
    gadget = {"apiVersion": "gadgets.example.invalid/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    olm.write_text(olm.read_text().rstrip("\n") + "\n---\n" + yaml.safe_dump(gadget))
    for check_mode in (True, False):
        result = install(run_module, kubeconfig, check_mode=check_mode, manifests_dir=mini["dir"], catalog_source=False)
        assert result.get("failed") is True, result
        assert "Gadget g: the cluster does not serve gadgets.example.invalid/v1 Gadget" in result["msg"], result["msg"]
        assert result["changed"] is False and result["objects"] == [], result
    # nothing was written: neither the CRD (first in a real run) nor the namespaces
    assert read(apis["ext"].read_custom_resource_definition, mini["crd"]) is None
    assert read(apis["core"].read_namespace, mini["ns"]) is None


def test_wait_timeout_reports_the_object_and_partial_result(run_module, kubeconfig, mini):
    # a Deployment whose pods never become ready (the testbed's KWOK stage for this image)
    olm = Path(mini["dir"], "olm.yaml")
    olm.write_text(olm.read_text().replace("example.invalid/kubeforge/olm:v9.8.7", "example.invalid/kubeforge/never-ready:v1", 1))
    result = install(run_module, kubeconfig, manifests_dir=mini["dir"], catalog_source=False, wait=True, wait_timeout=8)
    assert result.get("failed") is True, result
    assert f"Timed out waiting for Deployment {mini['ns']}/olm-operator" in result["msg"] and "0/1 available" in result["msg"]
    assert result["changed"] is True and len(result["objects"]) == 12
    assert result["last_object"]["metadata"]["name"] == "olm-operator"


def test_a_deployment_whose_pods_crash_loop_fails_fast_with_the_pods_reason(run_module, kubeconfig, mini):
    # olm-operator's pods crash-loop (the testbed's KWOK stage for this image): OLM would never run, and the
    # Deployment itself only says "0/1 available" until its progress deadline (600 s by default)
    olm = Path(mini["dir"], "olm.yaml")
    olm.write_text(olm.read_text().replace("example.invalid/kubeforge/olm:v9.8.7", CRASHLOOP_IMAGE, 1))
    started = time.monotonic()
    result = install(run_module, kubeconfig, manifests_dir=mini["dir"], catalog_source=False, wait=True, wait_timeout=300)
    assert result.get("failed") is True, result
    assert f"Deployment {mini['ns']}/olm-operator does not roll out" in result["msg"] and "CrashLoopBackOff" in result["msg"], result["msg"]
    assert time.monotonic() - started < 120


def test_openshift_named_crds_are_not_openshift(run_module, kubeconfig, mini, apis):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "projects.project.openshift.io"},
        "spec": {
            "group": "project.openshift.io",
            "names": {"kind": "Project", "plural": "projects", "singular": "project", "listKind": "ProjectList"},
            "scope": "Cluster",
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
            ],
        },
    }
    apis["ext"].create_custom_resource_definition(crd)
    try:
        # the API server registers a local APIService for the CRD's group (shortly after the CRD is Established):
        # same name as OpenShift's, no Service
        local = poll_until(
            functools.partial(read, apis["reg"].read_api_service, "v1.project.openshift.io"),
            30,
            0.2,
            "the local APIService v1.project.openshift.io",
            until=lambda service: service is not None,
        )
        assert local is not None and local.spec.service is None
        result = install(run_module, kubeconfig, check_mode=True, manifests_dir=mini["dir"], catalog_source=False)
        assert not result.get("failed"), result
        assert result["openshift"] is False and result["changed"] is True
    finally:
        apis["ext"].delete_custom_resource_definition("projects.project.openshift.io")
