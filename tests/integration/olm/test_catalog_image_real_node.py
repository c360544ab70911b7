"""Image-based OLM v0 catalogs on the testbed's real node: catalog_image builds the catalog (on the testbed's opm
base image, and on the scratch default), olm_catalog_source serves it through a CatalogSource `image` whose registry
pod OLM really runs there, olm_operator installs from it. OLM's catalog operator reaches the pod through its Service
(CoreDNS, kube-proxy)."""

import json
import time
from pathlib import Path

import pytest
from kubernetes import client

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("real-node-olm")]

# catalog_image's images hold no pre-built opm cache: no cacheDir.
EXTRACT_CONTENT = {"catalogDir": "/configs"}


@pytest.fixture(scope="module")
def catalog_images(testbed, real_node, tmp_path_factory):
    """The testbed's test catalog as two catalog images in the testbed registry: on the opm base and on scratch."""
    from testbed import catalog

    fbc = tmp_path_factory.mktemp("fbc") / "catalog"
    catalog.copy_without_bundle_images(Path(testbed.run_dir) / "catalog", fbc)
    registry = real_node["registry"]
    password = Path(registry["password_file"]).read_text().strip()
    images = {}
    for name, base in (("opm-base", real_node["images"]["opm"]), ("scratch", "scratch")):
        ref = f"{registry['host']}/kubeforge-tests/catalog:{name}"
        args = {
            "path": str(fbc),
            "image": ref,
            "base_image": base,
            "push": True,
            "registry_username": registry["username"],
            "registry_password": password,
            "ca_file": registry["ca_file"],
        }
        from lib.runners import run_module_subprocess

        result = run_module_subprocess(tmp_path_factory.mktemp("build"), "catalog_image", args)
        assert not result.get("failed"), result
        images[name] = ref
    images["fbc"] = fbc  # what the images hold
    images["pull_args"] = {"registry_username": registry["username"], "registry_password": password, "ca_file": registry["ca_file"]}
    return images


def test_a_catalog_image_renders_like_the_catalog_it_holds(run_module, tmp_path, catalog_images):
    """catalog_render source_image (opm render <image>): the image's catalog, pulled from the authenticated registry
    without a container engine, renders byte for byte like the directory it was built from - on the scratch base
    (nothing but the catalog) and on the opm base (the catalog under /configs among opm's files)."""
    from_dir = run_module("catalog_render", {"source": str(catalog_images["fbc"]), "dest": str(tmp_path / "dir.yaml")})
    assert not from_dir.get("failed"), from_dir
    expected = (tmp_path / "dir.yaml").read_bytes()
    for name in ("scratch", "opm-base"):
        dest = tmp_path / f"{name}.yaml"
        result = run_module("catalog_render", dict(catalog_images["pull_args"], source_image=catalog_images[name], dest=str(dest)))
        assert not result.get("failed"), result
        assert dest.read_bytes() == expected, name
        assert result["source_image"]["ref"] == catalog_images[name] and result["source_image"]["digest"].startswith("sha256:"), result
        assert result["packages"] == from_dir["packages"] and result["pulled"] == []
    # oc-mirror's selection on the image: kube-demo alone, the head of each of its channels
    selected = run_module(
        "catalog_render",
        dict(
            catalog_images["pull_args"],
            source_image=catalog_images["scratch"],
            dest=str(tmp_path / "selected.yaml"),
            select={"packages": [{"name": "kube-demo"}]},
        ),
    )
    assert not selected.get("failed"), selected
    assert selected["packages"] == ["kube-demo"] and selected["bundles"] == ["kube-demo.v0.0.2"], selected
    refused = run_module(
        "catalog_render", {"source_image": catalog_images["scratch"], "dest": str(tmp_path / "x.yaml"), "ca_file": catalog_images["pull_args"]["ca_file"]}
    )
    assert refused.get("failed") and refused.get("status") == 401, refused  # the registry wants credentials


def catalog_source(run_module, kubeconfig, namespace, image, real_node, pull_secrets=None, **pod_config):
    grpc_pod_config = {"nodeSelector": real_node["node_selector"], "tolerations": real_node["tolerations"], **pod_config}
    args = {
        "kubeconfig": kubeconfig,
        "namespace": namespace,
        "name": "images",
        "image": image,
        "grpc_pod_config": grpc_pod_config,
        "wait": True,
        "wait_timeout": 120,
    }
    if pull_secrets:
        args["pull_secrets"] = pull_secrets
    return run_module("olm_catalog_source", args)


def registry_pods(api, namespace):
    return client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="olm.catalogSource=images").items


def test_catalog_on_the_opm_base_serves_through_a_real_registry_pod(run_module, kubeconfig, namespace, real_node, catalog_images, api):
    # the private registry's credentials as a pull secret: OLM hands spec.secrets to its registry pod
    auth = catalog_images["pull_args"]
    config = {"auths": {catalog_images["opm-base"].split("/")[0]: {"username": auth["registry_username"], "password": auth["registry_password"]}}}
    secret = {"metadata": {"name": "catalog-pull"}, "type": "kubernetes.io/dockerconfigjson", "stringData": {".dockerconfigjson": json.dumps(config)}}
    client.CoreV1Api(api).create_namespaced_secret(namespace, secret)
    result = catalog_source(run_module, kubeconfig, namespace, catalog_images["opm-base"], real_node, pull_secrets=["catalog-pull"])
    assert not result.get("failed"), result
    assert result["catalog_source"]["spec"]["secrets"] == ["catalog-pull"]
    pods = registry_pods(api, namespace)
    assert [(p.spec.node_name, p.status.phase) for p in pods] == [(real_node["name"], "Running")]
    assert [s.name for s in pods[0].spec.image_pull_secrets or []] == ["catalog-pull"]
    installed = run_module(
        "olm_operator",
        {
            "kubeconfig": kubeconfig,
            "namespace": namespace,
            "package": "kube-demo",
            "catalog": "images",
            "channel": "stable",
            "version": "0.0.1",
            "wait_timeout": 180,
        },
    )
    assert not installed.get("failed"), installed.get("msg")
    assert installed["installed_csv"] == "kube-demo.v0.0.1"


def test_scratch_catalog_serves_with_extract_content(run_module, kubeconfig, namespace, real_node, catalog_images, api):
    result = catalog_source(run_module, kubeconfig, namespace, catalog_images["scratch"], real_node, extractContent=EXTRACT_CONTENT)
    assert not result.get("failed"), result
    pods = registry_pods(api, namespace)
    assert [(p.spec.node_name, p.status.phase) for p in pods] == [(real_node["name"], "Running")]
    assert [c.name for c in pods[0].spec.init_containers] == ["extract-utilities", "extract-content"]


def test_scratch_catalog_without_extract_content_fails_fast_with_the_fix(run_module, kubeconfig, namespace, real_node, catalog_images):
    result = catalog_source(run_module, kubeconfig, namespace, catalog_images["scratch"], real_node)
    assert result.get("failed"), result
    assert "CreateContainerError" in result["msg"] and "no command specified" in result["msg"], result["msg"]
    assert "grpc_pod_config.extractContent" in result["msg"], result["msg"]
    assert result["duration"] < 60, result["duration"]
    # olm_operator installing from that catalog stops as soon as it reads the registry pod, not at its timeout
    started = time.monotonic()
    installed = run_module(
        "olm_operator",
        {"kubeconfig": kubeconfig, "namespace": namespace, "package": "kube-demo", "catalog": "images", "channel": "stable", "wait_timeout": 180},
    )
    assert installed.get("failed") and installed["reason"] == "CatalogSourceUnhealthy", installed
    assert "its registry pod is CreateContainerError" in installed["msg"] and "grpc_pod_config.extractContent" in installed["msg"], installed["msg"]
    assert time.monotonic() - started < 60
