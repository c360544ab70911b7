"""olm_bundle_run's pod mode for real, on the testbed's real node: the catalog in ConfigMaps, a registry pod running
the testbed's opm image, the CatalogSource pointing at the pod's IP, OLM installing from it; then bundle-upgrade
(a new registry pod) and cleanup; a bundle added to an index image that holds its dependency. kube-demo's bundles
run the testbed's pause image as their operator, so the operator's pod really starts. Every pod of the namespace
runs on the real node (its node selector)."""

import base64
import json

import pytest
from kubernetes import client
from lib.olm_bundles import write_runnable_bundle
from lib.polling import poll_until

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import bundle_run as core

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("real-node-olm")]

CATALOG = "kube-demo-catalog"


def run(run_module, kubeconfig, namespace, opm_image, check_mode=False, **args):
    params = {"kubeconfig": kubeconfig, "namespace": namespace, "serve": "pod", "opm_image": opm_image, "wait_timeout": 240}
    params.update(args)
    return run_module("olm_bundle_run", params, check_mode=check_mode, diff=check_mode)


def registry_pods(api, namespace):
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=core.selector(CATALOG)).items
    return [p for p in pods if p.metadata.deletion_timestamp is None]


def pushed_bundle_image(run_module, registry, password, path, version):
    """The bundle directory ``path`` built and pushed to the testbed registry by bundle_image; its reference by digest."""
    pushed = run_module(
        "bundle_image",
        {
            "path": str(path),
            "image": f"{registry['host']}/kubeforge/bundle-run/kube-demo-bundle:v{version}",
            "push": True,
            "registry_username": registry["username"],
            "registry_password": password,
            "ca_file": registry["ca_file"],
        },
    )
    assert not pushed.get("failed"), pushed["msg"]
    return pushed["image"]


def pull_secret(api, namespace, registry, password):
    """A kubernetes.io/dockerconfigjson Secret with the testbed registry's credentials, as `oc create secret docker-registry`."""
    auth = base64.b64encode(f"{registry['username']}:{password}".encode()).decode()
    config = {"auths": {registry["host"]: {"username": registry["username"], "password": password, "auth": auth}}}
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="registry-credentials"),
        type="kubernetes.io/dockerconfigjson",
        data={".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    )
    client.CoreV1Api(api).create_namespaced_secret(namespace, secret)
    return "registry-credentials"


def test_run_upgrade_cleanup_with_a_real_registry_pod(run_module, kubeconfig, real_node_namespace, real_node, api, tmp_path, testbed):
    """Installed from a bundle directory, upgraded from a bundle image in the (authenticated) testbed registry pulled
    with the credentials of a pull secret, as operator-sdk run bundle-upgrade <image> --pull-secret-name does."""
    ns, opm = real_node_namespace, real_node["images"]["opm"]
    v1 = write_runnable_bundle(tmp_path / "0.0.1", "kube-demo", "0.0.1", real_node["images"])
    v2 = write_runnable_bundle(tmp_path / "0.0.2", "kube-demo", "0.0.2", real_node["images"])
    registry = testbed.state["registry"]
    with open(registry["password_file"], encoding="utf-8") as handle:
        password = handle.read().strip()
    v2_image = pushed_bundle_image(run_module, registry, password, v2, "0.0.2")
    secret = pull_secret(api, ns, registry, password)

    # a pull secret that does not exist would leave the registry pod pulling without it: refused, nothing created
    missing = run(run_module, kubeconfig, ns, opm, bundle_dir=str(v1), pull_secret="no-such-secret")
    assert missing.get("failed") and f"Secret {ns}/no-such-secret does not exist" in missing["msg"], missing
    assert registry_pods(api, ns) == []

    first = run(run_module, kubeconfig, ns, opm, bundle_dir=str(v1))
    assert not first.get("failed"), first["msg"]
    assert first["operation"] == "install" and first["installed_csv"] == "kube-demo.v0.0.1" and first["phase"] == "Succeeded"
    pods = registry_pods(api, ns)
    assert [(p.metadata.name, p.spec.node_name, p.status.phase) for p in pods] == [(first["registry_pod"], real_node["name"], "Running")]
    assert first["catalog_source"]["spec"]["address"] == f"{pods[0].status.pod_ip}:50051"

    # without credentials the authenticated registry refuses the pull, before anything changes
    refused = run(run_module, kubeconfig, ns, opm, bundle_image=v2_image, registry_auth={"ca_file": registry["ca_file"]})
    assert refused.get("failed") and refused.get("status") == 401 and "authentication required" in refused["msg"], refused
    # check mode: the upgrade it would do, nothing created
    planned = run(run_module, kubeconfig, ns, opm, True, bundle_image=v2_image, pull_secret=secret, registry_auth={"ca_file": registry["ca_file"]})
    assert not planned.get("failed") and planned["changed"] is True and planned["operation"] == "upgrade", planned
    assert [p.metadata.name for p in registry_pods(api, ns)] == [first["registry_pod"]]
    upgraded = run(run_module, kubeconfig, ns, opm, bundle_image=v2_image, pull_secret=secret, registry_auth={"ca_file": registry["ca_file"]})
    assert not upgraded.get("failed"), upgraded["msg"]
    assert upgraded["operation"] == "upgrade" and upgraded["installed_csv"] == "kube-demo.v0.0.2"
    assert upgraded["registry_pod"] != first["registry_pod"]
    pod = client.CoreV1Api(api).read_namespaced_pod(upgraded["registry_pod"], ns)
    assert [s.name for s in pod.spec.image_pull_secrets or []] == [secret]
    injected = json.loads(upgraded["catalog_source"]["metadata"]["annotations"][core.ANNOTATION_INJECTED_BUNDLES])
    assert {"name": "kube-demo.v0.0.2", "version": "0.0.2", "image": v2_image} in injected, injected
    poll_until(
        lambda: [p.metadata.name for p in registry_pods(api, ns)],
        60,
        0.5,
        "the old registry pod to go",
        until=lambda names: names == [upgraded["registry_pod"]],
    )

    removed = run(run_module, kubeconfig, ns, opm, state="absent", bundle_dir=str(v2))
    assert not removed.get("failed"), removed["msg"]
    assert removed["removed"]["catalog_source"] == CATALOG and removed["removed"]["csv"] == "kube-demo.v0.0.2"
    poll_until(lambda: registry_pods(api, ns), 60, 0.5, "the registry pod to go with its CatalogSource", until=lambda left: not left)


def test_a_bundle_added_to_an_index_image_resolves_its_dependency_from_it(run_module, kubeconfig, real_node_namespace, real_node, api, tmp_path, testbed):
    """operator-sdk run bundle --index-image: kube-demo-addon needs kube-demo (an olm.gvk dependency) that only the
    index image has. The module pulls the index from the authenticated registry, adds the bundle and serves both;
    OLM installs the add-on and, from the same catalog, kube-demo."""
    ns, opm = real_node_namespace, real_node["images"]["opm"]
    registry = testbed.state["registry"]
    with open(registry["password_file"], encoding="utf-8") as handle:
        password = handle.read().strip()
    auth = {"registry_username": registry["username"], "registry_password": password, "ca_file": registry["ca_file"]}
    kube_demo = write_runnable_bundle(tmp_path / "kube-demo", "kube-demo", "0.0.1", real_node["images"])
    addon = write_runnable_bundle(tmp_path / "addon", "kube-demo-addon", "0.1.0", real_node["images"])
    # the index: a catalog of kube-demo alone (its bundle image pushed: OLM unpacks a bundle named by image), rendered
    # from its bundle directory and built into an image
    bundle_ref = pushed_bundle_image(run_module, registry, password, kube_demo, "0.0.1")
    template = {
        "schema": "olm.template.basic",
        "entries": [
            {"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": "kube-demo", "name": "stable", "entries": [{"name": "kube-demo.v0.0.1"}]},
            {"schema": "olm.bundle", "image": bundle_ref},
        ],
    }
    (tmp_path / "template.json").write_text(json.dumps(template))
    fbc = tmp_path / "index" / "catalog"
    rendered = run_module(
        "catalog_render", {"template": str(tmp_path / "template.json"), "dest": f"{fbc}/", "bundle_images": {bundle_ref: str(kube_demo)}, "pull": False}
    )
    assert not rendered.get("failed"), rendered
    index_ref = f"{registry['host']}/kubeforge/bundle-run/index:v1"
    built = run_module("catalog_image", dict(auth, path=str(fbc), image=index_ref, push=True))
    assert not built.get("failed"), built

    registry_auth = {"username": registry["username"], "password": password, "ca_file": registry["ca_file"]}
    result = run(run_module, kubeconfig, ns, opm, bundle_dir=str(addon), index_image=index_ref, registry_auth=registry_auth)
    assert not result.get("failed"), result["msg"]
    assert result["installed_csv"] == "kube-demo-addon.v0.1.0" and result["phase"] == "Succeeded", result
    assert result["index_image"]["ref"] == index_ref and result["index_image"]["digest"].startswith("sha256:"), result
    annotations = result["catalog_source"]["metadata"]["annotations"]
    assert annotations[core.ANNOTATION_INDEX_IMAGE] == index_ref
    assert json.loads(annotations[core.ANNOTATION_INJECTED_BUNDLES]) == [{"name": "kube-demo-addon.v0.1.0", "version": "0.1.0"}]
    csvs = client.CustomObjectsApi(api).list_namespaced_custom_object(
        "operators.coreos.com", "v1alpha1", ns, "clusterserviceversions", label_selector="!olm.copiedFrom"
    )["items"]
    phases = {c["metadata"]["name"]: (c.get("status") or {}).get("phase") for c in csvs}
    assert phases.get("kube-demo.v0.0.1") == "Succeeded", phases  # the dependency, from the index
    again = run(run_module, kubeconfig, ns, opm, bundle_dir=str(addon), index_image=index_ref, registry_auth=registry_auth)
    assert again["changed"] is False and again["index_image"] is None, again  # the served catalog holds the index: not pulled again
