# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OLM v1 test catalog, published by the collection's own modules: bundle images built from the directories
under data/bundles and pushed to the testbed registry, a basic catalog template naming those images rendered with
the bundles pulled back (with olm.csv.metadata, so operator-controller and the module read the bundle images), the
catalog image pushed, and a ClusterCatalog that the real catalogd serves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from pathlib import Path

import pytest
import yaml
from module_runner import module_runner

DATA = Path(__file__).parent / "data"
CATALOG_NAME = "kubeforge-olmv1-test"
# package -> [(version, replaces)], oldest first
PACKAGES = {
    "kube-v1demo": [("0.1.0", None), ("0.2.0", "0.1.0"), ("0.3.0", "0.2.0")],
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
def v1_catalog(olmv1, kubeconfig, tmp_path_factory):
    """Publishes the test catalog and serves it through a ClusterCatalog; returns what the tests need."""
    work = tmp_path_factory.mktemp("olmv1-catalog")
    run = module_runner(work)
    auth = registry_args(olmv1)
    bundles = {}
    for package, versions in PACKAGES.items():
        for version, _replaces in versions:
            ref = bundle_image_ref(olmv1, package, version)
            result = run("bundle_image", dict(auth, path=str(DATA / "bundles" / package / version), image=ref, push=True))
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
        registry_auth=dict(username=olmv1["registry_username"], password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"]),
    )
