"""The kubeforge-operator from its image, as users run it: the testbed builds the image in Python
(testbed/operator_image.py: ansible-operator, Debian's python3.11, the Python packages and this collection), the
operator's bundle names it and is pushed as a bundle image, a catalog image lists that bundle by image only, and
olm_operator installs it through OLM - which unpacks the bundle with its Job and runs the operator's Deployment on
the real node (its namespace's node selector) as the CSV's ServiceAccount. The operator then reconciles an
OperatorInstall in the namespace it watches (simulated nodes there: kube-demo's operator only has to be scheduled)."""

import functools
import shutil
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.polling import poll_until
from lib.runners import run_module_subprocess
from testbed import cluster, operator_image

# The group of the other kubeforge-operator tests: one operator reconciles OperatorInstalls at a time.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("kubeforge-operator")]

ROOT = Path(__file__).resolve().parents[3]
OPERATOR_DIR = ROOT / "operator"
CSV_IMAGE = "quay.io/kubeforge/kubeforge-operator:0.1.0"
TEMPLATE_BUNDLE_IMAGE = "quay.io/kubeforge/kubeforge-operator-bundle:v0.1.0"  # operator/catalog-template.yaml
GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"


@pytest.fixture(scope="module")
def operator_catalog(testbed, real_node, tmp_path_factory):
    """A catalog image whose only bundle is the kubeforge-operator's bundle image, which names the image built here."""
    work = tmp_path_factory.mktemp("operator-image")
    run = functools.partial(run_module_subprocess, work)
    registry = real_node["registry"]
    password = Path(registry["password_file"]).read_text().strip()
    creds = {"registry_username": registry["username"], "registry_password": password, "ca_file": registry["ca_file"]}
    version = testbed.state["versions"]["ansible_operator"]
    operator_image.check_python()
    image = operator_image.build_and_push(cluster.bin_dir(), version, registry, work / "image")
    bundle = work / "bundle"
    shutil.copytree(OPERATOR_DIR / "bundle", bundle)
    csv = bundle / "manifests" / "kubeforge-operator.clusterserviceversion.yaml"
    csv.write_text(csv.read_text().replace(CSV_IMAGE, image))
    bundle_ref = f"{registry['host']}/kubeforge-tests/kubeforge-operator-bundle:v0.1.0"
    pushed = run("bundle_image", dict(creds, path=str(bundle), image=bundle_ref, push=True))
    assert not pushed.get("failed"), pushed
    rendered = run(
        "catalog_render",
        {
            "template": str(OPERATOR_DIR / "catalog-template.yaml"),
            "dest": str(work / "catalog" / "kubeforge-operator" / "catalog.yaml"),
            "bundle_images": {TEMPLATE_BUNDLE_IMAGE: str(bundle)},
            "pull": False,
        },
    )
    assert not rendered.get("failed"), rendered
    # Only the bundle image (the one pushed here) tells OLM what to install: it must unpack it.
    path = work / "catalog" / "kubeforge-operator" / "catalog.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        if doc.get("schema") == "olm.bundle":
            doc["image"] = bundle_ref
            doc["properties"] = [p for p in doc["properties"] if p["type"] != "olm.bundle.object"]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    ref = f"{registry['host']}/kubeforge-tests/catalog:kubeforge-operator"
    built = run("catalog_image", dict(creds, path=str(work / "catalog"), image=ref, base_image=real_node["images"]["opm"], push=True))
    assert not built.get("failed"), built
    return {"catalog": ref, "image": image}


def test_operator_from_its_image_reconciles_as_its_service_account(
    run_module, kubeconfig, real_node_namespace, namespace, real_node, testbed, operator_catalog, api
):
    operator_ns, watched = real_node_namespace, namespace
    served = run_module(
        "olm_catalog_source",
        {"kubeconfig": kubeconfig, "namespace": operator_ns, "name": "kubeforge", "image": operator_catalog["catalog"], "wait": True, "wait_timeout": 120},
    )
    assert not served.get("failed"), served["msg"]
    installed = run_module(
        "olm_operator",
        {
            "kubeconfig": kubeconfig,
            "namespace": operator_ns,
            "package": "kubeforge-operator",
            "catalog": "kubeforge",
            "target_namespaces": [watched],
            "wait_timeout": 300,
        },
    )
    assert not installed.get("failed"), installed["msg"]
    assert installed["installed_csv"] == "kubeforge-operator.v0.1.0"
    core = client.CoreV1Api(api)
    pods = [
        p for p in core.list_namespaced_pod(operator_ns, label_selector="app.kubernetes.io/name=kubeforge-operator").items if not p.metadata.deletion_timestamp
    ]
    assert [(p.spec.node_name, p.spec.containers[0].image, p.spec.service_account_name) for p in pods] == [
        (real_node["name"], operator_catalog["image"], "kubeforge-operator")
    ]
    assert all(c.ready for c in pods[0].status.container_statuses), pods[0].status

    custom = client.CustomObjectsApi(api)
    custom.create_namespaced_custom_object(
        "operators.coreos.com",
        "v1alpha1",
        watched,
        "catalogsources",
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "testbed-catalog"},
            "spec": {"sourceType": "grpc", "address": testbed.catalog_address},
        },
    )
    custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        watched,
        "operatorinstalls",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "OperatorInstall",
            "metadata": {"name": "kube-demo"},
            "spec": {"package": "kube-demo", "catalog": "testbed-catalog", "channel": "stable", "version": "0.0.1"},
        },
    )

    def ready():
        obj = custom.get_namespaced_custom_object(GROUP, VERSION, watched, "operatorinstalls", "kube-demo")
        return obj if any(c["type"] == "Ready" and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions") or []) else None

    def log_tail():
        return core.read_namespaced_pod_log(pods[0].metadata.name, operator_ns)[-3000:]

    obj = poll_until(ready, 300, 2, "the OperatorInstall Ready, reconciled by the operator's pod", show=lambda last: log_tail())
    assert obj["status"]["installedCSV"] == "kube-demo.v0.0.1", obj["status"]
    log = core.read_namespaced_pod_log(pods[0].metadata.name, operator_ns)
    assert "kube-demo" in log, log[-2000:]

    custom.delete_namespaced_custom_object(GROUP, VERSION, watched, "operatorinstalls", "kube-demo")
    poll_until(
        lambda: not custom.list_namespaced_custom_object(GROUP, VERSION, watched, "operatorinstalls")["items"],
        240,
        2,
        "the OperatorInstall gone (the operator's finalizer)",
    )
    removed = run_module(
        "olm_operator", {"kubeconfig": kubeconfig, "namespace": operator_ns, "package": "kubeforge-operator", "catalog": "kubeforge", "state": "absent"}
    )
    assert not removed.get("failed"), removed["msg"]
