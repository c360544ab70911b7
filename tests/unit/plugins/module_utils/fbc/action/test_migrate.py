# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    MIGRATION_LEVELS,
    check_migrate_level,
    csv_from_bundle,
    csv_metadata,
    decode_bundle_object,
    migrate,
    migrate_bundle,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import load_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import MigrationError

CATALOGS = str(data_path("community-operators-prod", "catalogs"))

CSV = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "a.v1.0.0", "annotations": {"z": "1", "a": "2"}, "labels": {"l": "v"}},
    "spec": {
        "version": "1.0.0",
        "displayName": "A",
        "description": "desc",
        "keywords": ["k"],
        "maturity": "alpha",
        "minKubeVersion": "1.20.0",
        "provider": {"name": "ACME"},
        "maintainers": [{"name": "m", "email": "m@x"}],
        "links": [{"name": "doc", "url": "https://x"}],
        "installModes": [{"type": "OwnNamespace", "supported": True}, {"type": "AllNamespaces", "supported": False}],
        "customresourcedefinitions": {"owned": [{
            "name": "as.x.io", "version": "v1", "kind": "A", "displayName": "A", "extra": "dropped",
            "specDescriptors": [{"path": "size", "x-descriptors": ["urn:x"], "value": {"k": 1}}]}]},
        "apiservicedefinitions": {"owned": [{"name": "b", "group": "g", "version": "v1", "kind": "B",
                                             "containerPort": 443, "deploymentName": "d"}]},
        "nativeAPIs": [{"group": "", "version": "v1", "kind": "Pod"}],
        "icon": [{"base64data": "AAAA", "mediatype": "image/png"}],
        "install": {"strategy": "deployment"},
    },
}


def _obj(o):
    return {"type": "olm.bundle.object",
            "value": {"data": base64.b64encode(json.dumps(o).encode()).decode()}}


def _bundle(image="reg/a:1", props=None):
    return {"schema": "olm.bundle", "name": "a.v1.0.0", "package": "a", "image": image,
            "properties": props if props is not None else [
                {"type": "olm.package", "value": {"packageName": "a", "version": "1.0.0"}},
                _obj({"kind": "CustomResourceDefinition", "metadata": {"name": "as.x.io"}}),
                _obj(CSV)]}


def test_levels():
    assert MIGRATION_LEVELS == ("none", "bundle-object-to-csv-metadata", "all")
    assert check_migrate_level(None) == "none"
    assert check_migrate_level("") == "none"
    with pytest.raises(MigrationError, match='^unknown migration level "x"$'):
        check_migrate_level("x")


def test_csv_metadata_field_order_and_omitempty():
    m = csv_metadata(CSV)
    assert list(m) == ["annotations", "apiServiceDefinitions", "crdDescriptions", "description", "displayName",
                       "installModes", "keywords", "labels", "links", "maintainers", "maturity", "minKubeVersion",
                       "nativeAPIs", "provider"]
    assert list(m["annotations"]) == ["a", "z"]  # Go map: sorted keys
    assert m["crdDescriptions"] == {"owned": [{"name": "as.x.io", "version": "v1", "kind": "A", "displayName": "A",
                                               "specDescriptors": [{"path": "size", "x-descriptors": ["urn:x"],
                                                                    "value": {"k": 1}}]}]}
    assert m["apiServiceDefinitions"] == {"owned": [{"name": "b", "group": "g", "version": "v1", "kind": "B",
                                                     "deploymentName": "d", "containerPort": 443}]}
    assert m["installModes"][1] == {"type": "AllNamespaces", "supported": False}
    empty = csv_metadata({"kind": "ClusterServiceVersion"})
    assert empty == {"apiServiceDefinitions": {}, "crdDescriptions": {}, "provider": {}}


def test_csv_metadata_bad_types():
    with pytest.raises(MigrationError):
        csv_metadata({"spec": {"keywords": "notalist"}})
    with pytest.raises(MigrationError):
        csv_metadata({"spec": {"displayName": 3}})
    with pytest.raises(MigrationError):
        csv_metadata({"metadata": {"annotations": {"a": 1}}})


def test_migrate_bundle():
    b = _bundle()
    out = migrate_bundle(b)
    assert out is not b and len(b["properties"]) == 3
    assert [p["type"] for p in out["properties"]] == ["olm.package", "olm.csv.metadata"]
    assert out["properties"][1]["value"] == csv_metadata(CSV)
    # idempotent: already has csv metadata
    assert migrate_bundle(out) is out
    # no image: untouched
    nb = _bundle(image="")
    assert migrate_bundle(nb) is nb
    # no CSV: untouched
    nc = _bundle(props=[{"type": "olm.package", "value": {}}])
    assert migrate_bundle(nc) is nc
    # explicit CSV wins
    out2 = migrate_bundle(_bundle(props=[]), csv=CSV)
    assert out2["properties"][0]["type"] == "olm.csv.metadata"


def test_migrate_cfg():
    cfg = DeclarativeConfig(bundles=[_bundle(), _bundle(image="")])
    migrate(cfg, "none")
    assert len(cfg.bundles[0]["properties"]) == 3
    migrate(cfg, "all")
    assert cfg.bundles[0]["properties"][-1]["type"] == "olm.csv.metadata"
    assert cfg.bundles[1]["properties"][-1]["type"] == "olm.bundle.object"


def test_decode_bundle_object_yaml_and_errors():
    y = base64.b64encode(b"kind: ClusterServiceVersion\nmetadata:\n  name: x\n").decode()
    assert decode_bundle_object({"data": y}) == {"kind": "ClusterServiceVersion", "metadata": {"name": "x"}}
    with pytest.raises(MigrationError):
        decode_bundle_object({"data": 3})
    with pytest.raises(MigrationError):
        decode_bundle_object("x")
    assert csv_from_bundle({"properties": [{"type": "olm.bundle.object", "value": {"data": "!!!"}}]}) is None


@pytest.mark.parametrize("pkg", ["kube-green", "kairos-operator", "patterns-operator"])
def test_real_catalog_v416_migrates_to_v420(pkg):
    """The v4.16 bundles (olm.bundle.object) migrate exactly to the committed v4.20 bundles (olm.csv.metadata)."""
    old = load_catalog(os.path.join(CATALOGS, "v4.16", pkg))
    new = {b["image"]: b for b in load_catalog(os.path.join(CATALOGS, "v4.20", pkg)).bundles}
    matched = 0
    for b in old.bundles:
        if b["image"] in new:
            assert migrate_bundle(b) == new[b["image"]]
            matched += 1
    assert matched == len(old.bundles) == len(new)
