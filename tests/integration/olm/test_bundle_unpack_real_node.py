"""Bundles referenced only by image, unpacked by OLM's real Jobs on the testbed's real node: kube-demo 0.0.1 and
0.0.2 rebuilt from their bundle directories with the testbed's pause image as the operator image (so the operator
really runs), pushed by bundle_image, listed in a catalog image (catalog_image) without their olm.bundle.object
properties; olm_operator installs, upgrades and removes from it. A bundle image that does not exist fails fast with
OLM's unpack reason. Every pod of the test namespace runs on the real node (its node selector)."""

import tarfile
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.olm_bundles import RUNNABLE_BUNDLES, write_runnable_bundle
from lib.runners import run_module_subprocess

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("real-node-olm")]

UNPACK_LABEL = "operatorframework.io/bundle-unpack-ref"


def registry_args(real_node):
    registry = real_node["registry"]
    password = Path(registry["password_file"]).read_text().strip()
    return {"registry_username": registry["username"], "registry_password": password, "ca_file": registry["ca_file"]}


def build(workdir, module, args):
    result = run_module_subprocess(workdir, module, args)
    assert not result.get("failed"), result
    return result


# The one package of the catalog in the global catalog namespace: a name no other test installs. Such a catalog takes
# part in the resolution of every namespace, so with kube-demo in it a concurrent kube-demo install elsewhere failed
# to resolve while its registry was unreachable ("error using catalogsource olm/unpack").
GLOBAL_PACKAGE = "kube-global-unpack"


def image_only_catalog(testbed, bundle_refs, directory, packages=("kube-demo", "kube-crashloop"), rename=None):
    """The testbed's kube-demo and kube-crashloop packages, their bundles named by image only (OLM must unpack them);
    ``rename`` gives each package of ``packages`` a new name."""
    for package in packages:
        new = (rename or {}).get(package, package)
        docs = list(yaml.safe_load_all((Path(testbed.run_dir) / "catalog" / package / "catalog.yaml").read_text()))
        for doc in docs:
            if doc and doc.get("schema") == "olm.bundle":
                doc["image"] = bundle_refs[doc["name"]]
                doc["properties"] = [p for p in doc["properties"] if p["type"] != "olm.bundle.object"]
                for prop in doc["properties"]:
                    if prop["type"] == "olm.package":
                        prop["value"]["packageName"] = new
            if doc:
                doc["name" if doc.get("schema") == "olm.package" else "package"] = new
        (directory / new).mkdir(parents=True)
        (directory / new / "catalog.yaml").write_text(yaml.safe_dump_all([d for d in docs if d], sort_keys=False))
    return directory


@pytest.fixture(scope="module")
def unpack_catalogs(testbed, real_node, tmp_path_factory):
    """Three catalog images: `images` (bundles 0.0.1 and 0.0.2 pushed), `missing` (their images never pushed) and
    `global` (kube-demo of `missing` as GLOBAL_PACKAGE)."""
    host = real_node["registry"]["host"]
    creds = registry_args(real_node)
    refs = {}
    for package, version in RUNNABLE_BUNDLES:
        bundle = write_runnable_bundle(tmp_path_factory.mktemp("bundle") / version, package, version, real_node["images"])
        ref = f"{host}/kubeforge-tests/{package}-bundle:v{version}"
        build(tmp_path_factory.mktemp("build"), "bundle_image", dict(creds, path=str(bundle), image=ref, push=True))
        refs[f"{package}.v{version}"] = ref
    catalogs = {}
    missing = {name: ref.replace("-bundle:", "-bundle-missing:") for name, ref in refs.items()}
    shapes = {"images": (refs, {}), "missing": (missing, {}), "global": (missing, {"packages": ("kube-demo",), "rename": {"kube-demo": GLOBAL_PACKAGE}})}
    for name, (bundle_refs, shape) in shapes.items():
        fbc = image_only_catalog(testbed, bundle_refs, tmp_path_factory.mktemp("fbc") / "catalog", **shape)
        ref = f"{host}/kubeforge-tests/catalog:unpack-{name}"
        build(tmp_path_factory.mktemp("build"), "catalog_image", dict(creds, path=str(fbc), image=ref, base_image=real_node["images"]["opm"], push=True))
        catalogs[name] = ref
    return catalogs


def serve(run_module, kubeconfig, namespace, image):
    result = run_module(
        "olm_catalog_source", {"kubeconfig": kubeconfig, "namespace": namespace, "name": "unpack", "image": image, "wait": True, "wait_timeout": 120}
    )
    assert not result.get("failed"), result["msg"]


def operator(run_module, kubeconfig, namespace, **args):
    params = {"kubeconfig": kubeconfig, "namespace": namespace, "package": "kube-demo", "catalog": "unpack", "channel": "stable", "wait_timeout": 240}
    params.update(args)
    return run_module("olm_operator", params)


def operator_pods(api, namespace):
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app.kubernetes.io/name=kube-demo-operator").items
    return [(p.spec.node_name, p.spec.containers[0].image, p.status.phase) for p in pods if p.metadata.deletion_timestamp is None]


def test_install_upgrade_remove_from_bundle_images(run_module, kubeconfig, real_node_namespace, real_node, unpack_catalogs, api):
    ns = real_node_namespace
    serve(run_module, kubeconfig, ns, unpack_catalogs["images"])

    installed = operator(run_module, kubeconfig, ns, version="0.0.1")
    assert not installed.get("failed"), installed["msg"]
    assert installed["installed_csv"] == "kube-demo.v0.0.1"
    # OLM's unpack Jobs (one per bundle; the next upgrade's may still run): their pods ran on the real node.
    jobs = client.BatchV1Api(api).list_namespaced_job(ns).items
    assert jobs and all(UNPACK_LABEL in (j.metadata.labels or {}) for j in jobs), [j.metadata.name for j in jobs]
    assert any(j.status.succeeded == 1 for j in jobs), [(j.metadata.name, j.status) for j in jobs]
    unpack_pods = client.CoreV1Api(api).list_namespaced_pod(ns, label_selector="job-name").items
    assert unpack_pods and {p.spec.node_name for p in unpack_pods} == {real_node["name"]}
    assert operator_pods(api, ns) == [(real_node["name"], real_node["images"]["pause"], "Running")]

    upgraded = operator(run_module, kubeconfig, ns, version="0.0.2")
    assert not upgraded.get("failed"), upgraded["msg"]
    assert upgraded["installed_csv"] == "kube-demo.v0.0.2"

    removed = operator(run_module, kubeconfig, ns, state="absent")
    assert not removed.get("failed"), removed["msg"]
    custom = client.CustomObjectsApi(api)
    assert custom.list_namespaced_custom_object("operators.coreos.com", "v1alpha1", ns, "subscriptions")["items"] == []


def test_missing_bundle_image_fails_fast_with_the_kubelets_reason(run_module, kubeconfig, real_node_namespace, unpack_catalogs):
    """OLM itself says BundleUnpackFailed only after its unpack timeout (10 minutes by default), without the cause;
    olm_operator fails as soon as the unpack pod's kubelet backs off pulling the bundle image, naming it."""
    ns = real_node_namespace
    serve(run_module, kubeconfig, ns, unpack_catalogs["missing"])
    started = time.monotonic()
    result = operator(run_module, kubeconfig, ns, version="0.0.1")
    assert result.get("failed") and result.get("reason") == "ImagePullBackOff", result["msg"]
    assert "the bundle cannot be unpacked: bundle unpack pod" in result["msg"] and "kube-demo-bundle-missing:v0.0.1" in result["msg"], result["msg"]
    assert time.monotonic() - started < 90, result["msg"]


def test_really_crash_looping_operator_fails_fast_with_the_kubelets_reason(
    run_module, kubeconfig, real_node_namespace, real_node, unpack_catalogs, api, tmp_path
):
    ns = real_node_namespace
    serve(run_module, kubeconfig, ns, unpack_catalogs["images"])
    started = time.monotonic()
    result = operator(run_module, kubeconfig, ns, package="kube-crashloop")
    assert result.get("failed") and result.get("reason") == "CrashLoopBackOff", result["msg"]
    # The kubelet's shape (terminated between restarts), not the simulation's waiting/CrashLoopBackOff.
    assert "exited with code 1 (Error)" in result["msg"] and "kube-crashloop.v0.1.0 phase" in result["msg"], result["msg"]
    assert time.monotonic() - started < 150, result["msg"]
    pods = [p for p in client.CoreV1Api(api).list_namespaced_pod(ns).items if p.metadata.name.startswith("kube-crashloop-controller-manager-")]
    assert [(p.spec.node_name, p.spec.containers[0].image) for p in pods] == [(real_node["name"], real_node["images"]["crash"])]

    # olm_diagnose names the crash loop, and its support tarball holds what the container last said (a real
    # kubelet serves the previous run's log).
    dest = tmp_path / "crash.tar.gz"
    diagnosis = run_module("olm_diagnose", {"kubeconfig": kubeconfig, "namespace": ns, "package": "kube-crashloop", "dest": str(dest)})
    assert "CrashLoop" in diagnosis["causes"], diagnosis.get("summary") or diagnosis
    with tarfile.open(dest) as tar:
        logs = {n: tar.extractfile(n).read().decode() for n in tar.getnames() if "/logs/" in n}
    assert any("this container crashes on purpose" in text for text in logs.values()), logs


# Serial: a CatalogSource in the global catalog namespace takes part in every Subscription's resolution, so while its
# registry pod is not serving, OLM fails the resolution of other tests' Subscriptions (seen in a parallel run).
@pytest.mark.exclusive
def test_unpack_in_the_global_catalog_namespace_is_watched(run_module, kubeconfig, real_node_namespace, unpack_catalogs, api):
    """OLM takes a Subscription's catalog from its own namespace or the global catalog namespace (the testbed's
    `olm`), and unpacks bundles with Jobs in the CatalogSource's namespace: with a global catalog, olm_operator still
    sees the unpack pod back off and fails fast, naming it. Meanwhile new pods of the global namespace go to the real
    node: only unpack Jobs are made there (OLM and packageserver run as processes; the testbed's catalog serves its
    bundles inline), and this file's tests run one after the other."""
    from testbed import realnode

    ns, global_ns = real_node_namespace, "olm"
    core = client.CoreV1Api(api)
    core.patch_namespace(global_ns, {"metadata": {"annotations": dict(realnode.NAMESPACE_ANNOTATIONS)}})
    try:
        serve(run_module, kubeconfig, global_ns, unpack_catalogs["global"])
        started = time.monotonic()
        result = operator(run_module, kubeconfig, ns, package=GLOBAL_PACKAGE, catalog_namespace=global_ns)  # its channel head
        assert result.get("failed") and result.get("reason") == "ImagePullBackOff", result["msg"]
        assert "the bundle cannot be unpacked: bundle unpack pod" in result["msg"], result["msg"]
        assert time.monotonic() - started < 90, result["msg"]
        assert core.list_namespaced_pod(global_ns, label_selector=UNPACK_LABEL).items
        assert not core.list_namespaced_pod(ns, label_selector=UNPACK_LABEL).items
    finally:
        run_module("olm_catalog_source", {"kubeconfig": kubeconfig, "namespace": global_ns, "name": "unpack", "state": "absent"})
        # OLM may already be deleting its Jobs with the CatalogSource: a collection delete does not race it.
        client.BatchV1Api(api).delete_collection_namespaced_job(global_ns, label_selector=UNPACK_LABEL, propagation_policy="Background")
        core.patch_namespace(global_ns, {"metadata": {"annotations": {k: None for k in realnode.NAMESPACE_ANNOTATIONS}}})
