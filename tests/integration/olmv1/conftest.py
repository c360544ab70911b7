# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OLM v1 test catalog, published by the collection's own modules: bundle images built from the bundle
directories (kube-v1demo generated from the testbed's kube-demo by lib.olm_bundles, kube-ownns under data/bundles) and
pushed to the testbed registry, a basic catalog template naming those images rendered with the bundles pulled back
(with olm.csv.metadata, so operator-controller and the module read the bundle images), the catalog image pushed, and
a ClusterCatalog that the real catalogd serves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
from pathlib import Path

import pytest
import yaml
from lib.olm_bundles import V1DEMO_PACKAGE, V1DEMO_VERSIONS, write_v1demo_bundles
from lib.runners import run_module_subprocess

DATA = Path(__file__).parent / "data"
CATALOG_NAME = "kubeforge-olmv1-test"
# package -> [(version, replaces)], oldest first
PACKAGES = {
    V1DEMO_PACKAGE: [(version, replaces) for version, (_kube_demo_version, replaces) in V1DEMO_VERSIONS.items()],
    "kube-ownns": [("0.1.0", None)],
}


def registry_args(olmv1):
    return dict(registry_username=olmv1["registry_username"], registry_password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"])


def bundle_image_ref(olmv1, package, version):
    return f"{olmv1['registry']}/kubeforge/olmv1/{package}-bundle:v{version}"


def catalog_template(olmv1):
    entries = []
    for package, versions in PACKAGES.items():
        entries.append({"schema": "olm.package", "name": package, "defaultChannel": "stable"})
        channel = []
        for version, replaces in versions:
            entry = {"name": f"{package}.v{version}"}
            if replaces:
                entry["replaces"] = f"{package}.v{replaces}"
            channel.append(entry)
        entries.append({"schema": "olm.channel", "package": package, "name": "stable", "entries": channel})
        entries.extend({"schema": "olm.bundle", "image": bundle_image_ref(olmv1, package, v)} for v, _r in versions)
    return {"schema": "olm.template.basic", "entries": entries}


@pytest.fixture(scope="session")
def olmv1_bundle_dirs(tmp_path_factory):
    """package -> the directory of its bundles (``<version>/manifests``, ``<version>/metadata``)."""
    generated = write_v1demo_bundles(tmp_path_factory.mktemp("olmv1-bundles") / V1DEMO_PACKAGE)
    return {V1DEMO_PACKAGE: generated, "kube-ownns": DATA / "bundles" / "kube-ownns"}


@pytest.fixture(scope="session")
def v1_catalog(olmv1, kubeconfig, tmp_path_factory, olmv1_bundle_dirs):
    """Publishes the test catalog and serves it through a ClusterCatalog; returns what the tests need."""
    work = tmp_path_factory.mktemp("olmv1-catalog")
    run = functools.partial(run_module_subprocess, work)
    auth = registry_args(olmv1)
    bundles = {}
    for package, versions in PACKAGES.items():
        for version, _replaces in versions:
            ref = bundle_image_ref(olmv1, package, version)
            result = run("bundle_image", dict(auth, path=str(olmv1_bundle_dirs[package] / version), image=ref, push=True))
            assert not result.get("failed"), result
            bundles[(package, version)] = (ref, result["image"])
    template = work / "catalog-template.yaml"
    template.write_text(yaml.safe_dump(catalog_template(olmv1), sort_keys=False))
    rendered = run("catalog_render", dict(auth, template=str(template), dest=str(work / "catalog") + "/", migrate_level="bundle-object-to-csv-metadata"))
    assert not rendered.get("failed"), rendered
    image = f"{olmv1['registry']}/kubeforge/olmv1/catalog:test"
    pushed = run("catalog_image", dict(auth, path=str(work / "catalog"), image=image, push=True))
    assert not pushed.get("failed"), pushed
    served = run("olm_cluster_catalog", dict(name=CATALOG_NAME, image=image, wait=True, wait_timeout=180, kubeconfig=kubeconfig))
    assert not served.get("failed"), served
    return dict(
        name=CATALOG_NAME,
        image=image,
        digest=pushed["digest"],
        served=served,
        bundles=bundles,
        bundle_dirs=olmv1_bundle_dirs,
        registry_auth=dict(username=olmv1["registry_username"], password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"]),
    )
