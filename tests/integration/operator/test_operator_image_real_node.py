"""The kubeforge-operator from its image, published and installed by docs/operator.md's "Install it through OLM"
playbook run as written (lib.doc_examples, example ``operator-olm-install``) on the testbed's real node:

- the operator's image is built in Python (testbed/operator_image.py: ansible-operator, Debian's python3.11, the
  Python packages and this collection) and pushed where the CSV names it, under the mirror below;
- "your registry" - the playbook's two ``vars`` - is the testbed registry (its credentials in an auth file,
  ``REGISTRY_AUTH_FILE``; its CA in ``SSL_CERT_FILE``);
- quay.io is mirrored to the testbed registry as on a disconnected cluster: a ``registries.conf`` for the modules'
  pull of ``quay.io/operator-framework/opm:v1.73.0`` (the testbed's opm image), a containerd ``hosts.toml`` on the
  real node for its pull of ``quay.io/kubeforge/kubeforge-operator:0.1.0``;
- the playbook's namespace gets the real node's node selector first (a testbed-only step).

OLM serves the catalog image in its registry pod, unpacks the bundle image with its Job and runs the operator's
Deployment on the real node as the CSV's ServiceAccount. The operator then reconciles an OperatorInstall in the
namespace it watches (its own: OwnNamespace is the install mode chosen) - kube-demo from a catalog whose bundle runs
the testbed's pause image there."""

import base64
import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.doc_examples import runnable
from lib.olm_bundles import write_runnable_bundle
from lib.polling import poll_until
from lib.runners import ansible_env, run_module_subprocess
from testbed import cluster, operator_image, realnode

# The group of the other kubeforge-operator tests: one operator reconciles OperatorInstalls at a time, and both
# install into kubeforge-system.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("kubeforge-operator")]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = "operator-olm-install"
OPERATOR_NS = "kubeforge-system"  # the playbook's
CSV_IMAGE = "quay.io/kubeforge/kubeforge-operator:0.1.0"  # operator/bundle's CSV
GROUP, VERSION = "operators.kubeforge.io", "v1alpha1"


def _release_operator_installs(api, name):
    """OperatorInstalls left in ``name`` lose their finalizer: the operator that would run it goes with the namespace,
    and a finalizer nobody runs holds the namespace in Terminating for good."""
    custom = client.CustomObjectsApi(api)
    try:
        left = custom.list_namespaced_custom_object(GROUP, VERSION, name, "operatorinstalls")["items"]
    except ApiException as exc:
        if exc.status == 404:  # the CRD is not installed (yet)
            return
        raise
    for item in left:
        custom.patch_namespaced_custom_object(GROUP, VERSION, name, "operatorinstalls", item["metadata"]["name"], {"metadata": {"finalizers": None}})


def _namespace_gone(core, name):
    _release_operator_installs(core.api_client, name)
    try:
        core.delete_namespace(name)
    except ApiException as exc:
        if exc.status != 404:
            raise

    def gone():
        try:
            core.read_namespace(name)
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    poll_until(gone, 180, 1, f"namespace {name} to be gone")


@pytest.fixture(scope="module")
def doc_flow(testbed, real_node, api, kubeconfig, tmp_path_factory):
    """The playbook run as written in a checkout's copy; what it installed is removed afterwards."""
    work = tmp_path_factory.mktemp("operator-doc-flow")
    shutil.copytree(ROOT / "operator", work / "operator")
    registry = real_node["registry"]
    host = registry["host"]
    password = Path(registry["password_file"]).read_text().strip()
    operator_image.check_python()
    version = testbed.state["versions"]["ansible_operator"]
    repository, tag = CSV_IMAGE.split("/", 1)[1].rsplit(":", 1)
    image = operator_image.build_and_push(cluster.bin_dir(), version, registry, work / "image", repository=repository, tag=tag)

    auth = work / "auth.json"
    auth.write_text(json.dumps({"auths": {host: {"auth": base64.b64encode(f"{registry['username']}:{password}".encode()).decode()}}}))
    mirrors = work / "registries.conf"
    quay = "quay.io/operator-framework"
    mirrors.write_text(f'[[registry]]\nprefix = "{quay}"\nlocation = "{quay}"\n[[registry.mirror]]\nlocation = "{host}/kubeforge-testbed"\n')
    node_mirror = Path(testbed.state["real_node"]["base"]) / "certs.d" / "quay.io" / "hosts.toml"
    node_mirror.parent.mkdir(parents=True, exist_ok=True)
    node_mirror.write_text(realnode.registry_hosts_toml(registry, "quay.io"))
    core = client.CoreV1Api(api)
    _namespace_gone(core, OPERATOR_NS)  # the other kubeforge-operator tests leave theirs, on simulated nodes
    core.create_namespace({"metadata": {"name": OPERATOR_NS, "annotations": dict(realnode.NAMESPACE_ANNOTATIONS)}})

    block = runnable()[EXAMPLE]
    (work / "install.yml").write_text(block.body)
    extra = {
        "bundle_ref": f"{host}/kubeforge-tests/kubeforge-operator-bundle:v0.1.0",
        "catalog_ref": f"{host}/kubeforge-tests/kubeforge-catalog:v0.1.0",
        "ansible_python_interpreter": sys.executable,
    }
    (work / "registry.json").write_text(json.dumps(extra))
    env = dict(
        ansible_env(work),
        K8S_AUTH_KUBECONFIG=kubeconfig,
        REGISTRY_AUTH_FILE=str(auth),
        CONTAINERS_REGISTRIES_CONF=str(mirrors),
        SSL_CERT_FILE=registry["ca_file"],
    )
    try:
        proc = subprocess.run(  # noqa: S603
            [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "install.yml", "-e", "@registry.json"],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, f"{block.path}:{block.line} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
        yield {"image": image, "work": work, "output": proc.stdout}
    finally:
        node_mirror.unlink(missing_ok=True)
        _namespace_gone(core, OPERATOR_NS)


def test_the_documented_flow_runs_the_operator_from_the_mirrored_image(doc_flow, real_node, api):
    core = client.CoreV1Api(api)
    pods = core.list_namespaced_pod(OPERATOR_NS, label_selector="app.kubernetes.io/name=kubeforge-operator").items
    pods = [p for p in pods if not p.metadata.deletion_timestamp]
    assert [(p.spec.node_name, p.spec.containers[0].image, p.spec.service_account_name) for p in pods] == [(real_node["name"], CSV_IMAGE, "kubeforge-operator")]
    status = pods[0].status.container_statuses[0]
    assert status.ready and status.image_id.endswith(doc_flow["image"].split("@", 1)[1]), status  # the image built here, through the mirror
    catalog = client.CustomObjectsApi(api).list_namespaced_custom_object("operators.coreos.com", "v1alpha1", OPERATOR_NS, "catalogsources")["items"]
    assert [c["spec"]["image"] for c in catalog] == [f"{real_node['registry']['host']}/kubeforge-tests/kubeforge-catalog:v0.1.0"], catalog


def test_operator_reconciles_as_its_service_account(doc_flow, real_node, api, kubeconfig, testbed, tmp_path):
    run = functools.partial(run_module_subprocess, tmp_path)
    bundle = write_runnable_bundle(tmp_path / "kube-demo", "kube-demo", "0.0.1", real_node["images"])
    template = tmp_path / "template.yaml"
    bundle_ref = "kubeforge-tests/kube-demo-bundle:runnable"  # never pulled: the catalog embeds the bundle's objects
    template.write_text(
        yaml.safe_dump(
            {
                "schema": "olm.template.basic",
                "entries": [
                    {"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable"},
                    {"schema": "olm.channel", "package": "kube-demo", "name": "stable", "entries": [{"name": "kube-demo.v0.0.1"}]},
                    {"schema": "olm.bundle", "image": bundle_ref},
                ],
            }
        )
    )
    dest = tmp_path / "catalog" / "kube-demo" / "catalog.yaml"
    rendered = run("catalog_render", {"template": str(template), "dest": str(dest), "bundle_images": {bundle_ref: str(bundle)}})
    assert not rendered.get("failed"), rendered
    custom = client.CustomObjectsApi(api)
    custom.create_namespaced_custom_object(
        "operators.coreos.com",
        "v1alpha1",
        OPERATOR_NS,
        "catalogsources",
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "runnable"},
            "spec": {"sourceType": "grpc", "address": testbed.serve_catalog(tmp_path / "catalog")},
        },
    )
    try:
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            OPERATOR_NS,
            "operatorinstalls",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "OperatorInstall",
                "metadata": {"name": "kube-demo"},
                "spec": {"package": "kube-demo", "catalog": "runnable", "channel": "stable", "version": "0.0.1"},
            },
        )
        core = client.CoreV1Api(api)
        operator_pod = core.list_namespaced_pod(OPERATOR_NS, label_selector="app.kubernetes.io/name=kubeforge-operator").items[0].metadata.name

        def ready():
            obj = custom.get_namespaced_custom_object(GROUP, VERSION, OPERATOR_NS, "operatorinstalls", "kube-demo")
            return obj if any(c["type"] == "Ready" and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions") or []) else None

        def log_tail():
            return core.read_namespaced_pod_log(operator_pod, OPERATOR_NS)[-3000:]

        obj = poll_until(ready, 300, 2, "the OperatorInstall Ready, reconciled by the operator's pod", show=lambda last: log_tail())
        assert obj["status"]["installedCSV"] == "kube-demo.v0.0.1", obj["status"]
        assert "kube-demo" in core.read_namespaced_pod_log(operator_pod, OPERATOR_NS)
        # the operator's finalizer uninstalls kube-demo, as its service account too
        custom.delete_namespaced_custom_object(GROUP, VERSION, OPERATOR_NS, "operatorinstalls", "kube-demo")

        def gone():
            try:
                custom.get_namespaced_custom_object(GROUP, VERSION, OPERATOR_NS, "operatorinstalls", "kube-demo")
            except ApiException as exc:
                if exc.status == 404:
                    return True
                raise
            return False

        poll_until(gone, 300, 2, "the operator to uninstall kube-demo and release its OperatorInstall", show=lambda last: log_tail())
    finally:
        testbed.stop_catalog()
