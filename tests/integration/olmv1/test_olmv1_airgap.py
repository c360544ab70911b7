# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The air-gap proof: kube-v1demo's bundles and catalog published to a source registry of the test's own, mirrored
by catalog_mirror into the testbed's registry, the source registry STOPPED, the ImageDigestMirrorSet the module wrote
translated into the registries.conf catalogd and operator-controller pull with (what OpenShift's machine-config
operator does for a node), the module's ClusterCatalog applied, and a ClusterExtension installed - operator-controller
pulls the bundle the catalog names by its ORIGINAL reference (on the stopped registry) from the mirror.

Exclusive: it restarts OLM v1 twice (containers/image reads registries.conf once per process)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import functools
import json
import os
import re
import shutil

import pytest
import yaml
from kubernetes import client as k8s
from lib.mirrors import registries_conf
from lib.olm_bundles import V1DEMO_PACKAGE, V1DEMO_VERSIONS
from lib.polling import poll_until
from lib.runners import run_module_subprocess
from testbed import procs
from testbed.registry import LocalRegistry

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_directory_image, push_image

pytestmark = [pytest.mark.testbed, pytest.mark.exclusive]

NAME = "kf-airgap"
IMAGE = re.compile(r"example\.invalid/kubeforge/(kube-v1demo-(?:operator|agent)):(v[0-9.]+)")
CRD = "kubev1demos.v1demo.kubeforge.io"


def _template(bundles):
    entries = [{"schema": "olm.package", "name": V1DEMO_PACKAGE, "defaultChannel": "stable"}]
    channel = []
    for version, (_kube_demo, replaces) in V1DEMO_VERSIONS.items():
        entry = {"name": f"{V1DEMO_PACKAGE}.v{version}"}
        if replaces:
            entry["replaces"] = f"{V1DEMO_PACKAGE}.v{replaces}"
        channel.append(entry)
    entries.append({"schema": "olm.channel", "package": V1DEMO_PACKAGE, "name": "stable", "entries": channel})
    entries += [{"schema": "olm.bundle", "image": image} for image in bundles.values()]
    return {"schema": "olm.template.basic", "entries": entries}


def _with_source_images(bundles, dest, source):
    """A copy of the bundle directories whose operator and agent images (example.invalid/..:vX) are real images,
    pushed to the source registry and named by digest, as a released catalog names them."""
    client = RegistryClient(source.host, credentials=Credentials(source.username, source.password), ca_file=source.ca_file)
    shutil.copytree(bundles, dest)
    pushed = {}

    def real(match):
        if match.group(0) not in pushed:
            content = dest.parent / ("image-" + match.group(1) + "-" + match.group(2))
            content.mkdir()
            (content / "binary").write_text(match.group(0))
            image = build_directory_image(str(content), "/")
            push_image(client, f"{source.host}/kubeforge/{match.group(1)}:{match.group(2)}", image)
            pushed[match.group(0)] = f"{source.host}/kubeforge/{match.group(1)}@{image.digest}"
        return pushed[match.group(0)]

    for path in sorted(p for p in dest.rglob("*") if p.is_file()):
        text = path.read_text()
        path.write_text(IMAGE.sub(real, text))
    assert len(pushed) == 2 * len(V1DEMO_VERSIONS), pushed
    return dest


def test_install_from_the_mirror_with_the_source_registry_stopped(testbed, olmv1, olmv1_bundle_dirs, api, kubeconfig, tmp_path):
    run = functools.partial(run_module_subprocess, tmp_path)
    source = LocalRegistry(tmp_path / "source-registry", password="src-Pa55-" + os.urandom(4).hex())
    source.start()
    mirror = f"{olmv1['registry']}/kubeforge/airgap"
    try:
        src_auth = dict(registry_username=source.username, registry_password=source.password, ca_file=source.ca_file)
        bundle_dirs = _with_source_images(olmv1_bundle_dirs[V1DEMO_PACKAGE], tmp_path / "bundles", source)
        bundles = {}
        for version in V1DEMO_VERSIONS:
            pushed = run("bundle_image", dict(src_auth, path=str(bundle_dirs / version),
                                              image=f"{source.host}/kubeforge/{V1DEMO_PACKAGE}-bundle:v{version}", push=True))
            assert not pushed.get("failed"), pushed
            bundles[version] = f"{source.host}/kubeforge/{V1DEMO_PACKAGE}-bundle@{pushed['digest']}"
        template = tmp_path / "template.yaml"
        template.write_text(yaml.safe_dump(_template(bundles), sort_keys=False))
        # the bundles' objects leave the catalog (OpenShift 4.17+'s migration): olm_cluster_extension reads them from
        # the bundle images, so both it and operator-controller pull the bundles - from the mirror
        rendered = run("catalog_render", dict(src_auth, template=str(template), dest=str(tmp_path / "catalog") + "/",
                                              migrate_level="bundle-object-to-csv-metadata"))
        assert not rendered.get("failed"), rendered
        catalog = run("catalog_image", dict(src_auth, path=str(tmp_path / "catalog"), image=f"{source.host}/kubeforge/index:v1", push=True))
        assert not catalog.get("failed"), catalog

        config = tmp_path / "auth.json"
        config.write_text(json.dumps({"auths": {source.host: {"auth": base64.b64encode(f"{source.username}:{source.password}".encode()).decode()}}}))
        cas = tmp_path / "cas.pem"
        cas.write_text(open(source.ca_file).read() + open(olmv1["registry_ca_file"]).read())
        mirrored = run("catalog_mirror", dict(
            source_image=f"{source.host}/kubeforge/index:v1", mirror=mirror, manifests_dir=str(tmp_path / "resources"),
            resource_name=NAME, select={"packages": [{"name": V1DEMO_PACKAGE, "min_version": "0.2.0"}]},
            docker_config=str(config), ca_file=str(cas),
            registry_username=olmv1["registry_username"], registry_password=olmv1["registry_password"]))
        assert not mirrored.get("failed"), mirrored["msg"]
        # the catalog, bundles 0.2.0 and 0.3.0, and their operator and agent images
        assert mirrored["totals"]["images"] == 7 and mirrored["changed"] is True, mirrored["images"]
        assert source.password not in json.dumps(mirrored) and olmv1["registry_password"] not in json.dumps(mirrored)
    finally:
        source.stop()
    # the source registry is down for the rest of the test (its process group may take a moment to let the port go)
    port = int(source.host.rsplit(":", 1)[1])
    poll_until(lambda: not procs.port_open(port), 30, describe=f"the source registry's port {port} to close")

    resources = tmp_path / "resources"
    idms = yaml.safe_load((resources / "imagedigestmirrorset.yaml").read_text())
    cluster_catalog = yaml.safe_load((resources / "clustercatalog.yaml").read_text())
    assert idms["spec"]["imageDigestMirrors"] == [{"source": f"{source.host}/kubeforge/{V1DEMO_PACKAGE}-{kind}",
                                                   "mirrors": [f"{mirror}/kubeforge/{V1DEMO_PACKAGE}-{kind}"]}
                                                  for kind in ("agent", "bundle", "operator")]
    # the module reads the bundle images through the same registries.conf (CONTAINERS_REGISTRIES_CONF, as podman),
    # with the mirror's credentials in an auth file (the explicit ones are for the catalog's registry)
    conf = tmp_path / "registries.conf"
    conf.write_text(registries_conf(idms))
    mirror_auth = tmp_path / "mirror-auth.json"
    token = base64.b64encode(f"{olmv1['registry_username']}:{olmv1['registry_password']}".encode()).decode()
    mirror_auth.write_text(json.dumps({"auths": {olmv1["registry"]: {"auth": token}}}))
    extension = dict(
        name=NAME, namespace=NAME, package=V1DEMO_PACKAGE, create_service_account=True,
        catalog_selector={"matchLabels": {"olm.operatorframework.io/metadata.name": NAME}},
        registry_auth=dict(username=olmv1["registry_username"], password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"],
                           docker_config=str(mirror_auth)),
        wait=True, wait_timeout=240, kubeconfig=kubeconfig)
    through_mirrors = {"CONTAINERS_REGISTRIES_CONF": str(conf)}
    try:
        custom = k8s.CustomObjectsApi(api)
        custom.create_cluster_custom_object("olm.operatorframework.io", "v1", "clustercatalogs", cluster_catalog)
        served = run("olm_cluster_catalog", dict(name=NAME, image=cluster_catalog["spec"]["source"]["image"]["ref"],
                                                 wait=True, wait_timeout=180, kubeconfig=kubeconfig))
        assert not served.get("failed") and served["changed"] is False, served

        # without the mirrors, the bundles cannot be pulled: their registry is gone - for the module first
        unread = run("olm_cluster_extension", dict(extension, wait_timeout=25))
        assert unread.get("failed") and f"registry {source.host}: cannot connect" in unread["msg"], unread["msg"]
        # then for operator-controller (the module reads through the mirrors, OLM v1 does not yet)
        unmirrored = run("olm_cluster_extension", dict(extension, wait_timeout=25), env=through_mirrors)
        assert unmirrored.get("failed") and source.host in unmirrored["msg"] and "error copying image" in unmirrored["msg"], unmirrored["msg"]
        run("olm_cluster_extension", dict(name=NAME, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))

        testbed.olmv1_mirrors(conf.read_text())
        installed = run("olm_cluster_extension", extension, env=through_mirrors)
        assert not installed.get("failed"), installed
        assert installed["installed_version"] == "0.3.0", installed
        # what operator-controller installed is the bundle by its original reference, on the stopped registry
        assert installed["installed_bundle"]["name"] == f"{V1DEMO_PACKAGE}.v0.3.0"
        assert k8s.ApiextensionsV1Api(api).read_custom_resource_definition(CRD)
    finally:
        run("olm_cluster_extension", dict(name=NAME, state="absent", delete_crds_and_data=True, wait=True, wait_timeout=180, kubeconfig=kubeconfig))
        run("olm_cluster_catalog", dict(name=NAME, state="absent", kubeconfig=kubeconfig))
        try:
            k8s.CoreV1Api(api).delete_namespace(NAME)
        except k8s.rest.ApiException as exc:
            if exc.status != 404:
                raise
        testbed.olmv1_mirrors("")
