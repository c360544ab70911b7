# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import shutil

import pytest
import yaml
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    BundleLookup,
    is_bundle_dir,
    render_bundle_dir,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleNotFoundError,
    BundleRenderError,
    MigrationError,
)

CONF = str(data_path())
OPM = os.path.join(CONF, "opm-testdata")
ACTION = os.path.join(OPM, "alpha/action/testdata")
FOO = os.path.join(ACTION, "foo-bundle-v0.2.0")


def _decode_objects(blob):
    return [json.loads(base64.b64decode(p["value"]["data"]))
            for p in blob["properties"] if p["type"] == "olm.bundle.object"]


def test_foo_bundle_dir_exact():
    """fbc.md 6.4 / upstream render_test.go Success/BundleDirectory."""
    cfg = render_bundle_dir(FOO)
    assert len(cfg.bundles) == 1 and not cfg.packages and not cfg.channels
    b = cfg.bundles[0]
    assert list(b) == ["schema", "name", "package", "image", "properties", "relatedImages"]
    assert b["schema"] == "olm.bundle"
    assert b["name"] == "foo.v0.2.0"
    assert b["package"] == "foo"
    assert b["image"] == ""
    head = [p for p in b["properties"] if p["type"] != "olm.bundle.object"]
    assert head == [
        {"type": "olm.gvk", "value": {"group": "test.foo", "kind": "Foo", "version": "v1"}},
        {"type": "olm.gvk.required", "value": {"group": "test.bar", "kind": "Bar", "version": "v1alpha1"}},
        {"type": "olm.package", "value": {"packageName": "foo", "version": "0.2.0"}},
        {"type": "olm.package.required", "value": {"packageName": "bar", "versionRange": "<0.1.0"}},
    ]
    assert [p["type"] for p in b["properties"][4:]] == ["olm.bundle.object"] * 2
    kinds = [o["kind"] for o in _decode_objects(b)]
    assert kinds == ["CustomResourceDefinition", "ClusterServiceVersion"]
    r = "test.registry/foo-operator/"
    assert b["relatedImages"] == [
        {"name": "", "image": r + "foo-2:v0.2.0"},
        {"name": "", "image": r + "foo-init-2:v0.2.0"},
        {"name": "", "image": r + "foo-init:v0.2.0"},
        {"name": "other", "image": r + "foo-other:v0.2.0"},
        {"name": "operator", "image": r + "foo:v0.2.0"},
    ]
    assert cfg.csv_json["foo.v0.2.0"]["kind"] == "ClusterServiceVersion"


def test_foo_bundle_objects_byte_exact_vs_upstream_index():
    """The base64 payloads equal opm's (json.Marshal: sorted keys, compact, HTML escaped '<' as \\u003c)."""
    b = render_bundle_dir(FOO).bundles[0]
    with open(os.path.join(ACTION, "foo-index-v0.2.0-declcfg/foo/index.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    exp = [d for d in docs if d.get("schema") == "olm.bundle" and d.get("name") == "foo.v0.2.0"][0]
    want = sorted(p["value"]["data"] for p in exp["properties"] if p["type"] == "olm.bundle.object")
    got = sorted(p["value"]["data"] for p in b["properties"] if p["type"] == "olm.bundle.object")
    assert got == want
    assert any('"olm.skipRange":"\\u003c0.2.0"' in base64.b64decode(g).decode() for g in got)


def test_image_ref_template():
    cfg = render_bundle_dir(FOO, image_ref_template="test.registry/{{.Package}}-operator/{{.Package}}:v{{.Version}}")
    assert cfg.bundles[0]["image"] == "test.registry/foo-operator/foo:v0.2.0"


def test_bundle_image_added_to_related_images():
    blob, _csv = render_bundle_dir_blob(FOO, image="quay.io/x/foo-bundle:v0.2.0")
    imgs = [r["image"] for r in blob["relatedImages"]]
    assert "quay.io/x/foo-bundle:v0.2.0" in imgs
    assert imgs == sorted(imgs)
    assert blob["image"] == "quay.io/x/foo-bundle:v0.2.0"


def test_no_csv_related_images_derived_from_deployments():
    b = render_bundle_dir(os.path.join(ACTION, "foo-bundle-v0.2.0-no-csv-related-images")).bundles[0]
    r = "test.registry/foo-operator/"
    assert b["relatedImages"] == [{"name": "", "image": r + x} for x in
                                  ("foo-2:v0.2.0", "foo-init-2:v0.2.0", "foo-init:v0.2.0", "foo:v0.2.0")]


@pytest.mark.parametrize("rel,name,package,version,gvks", [
    ("alpha/action/testdata/bar-bundle-v0.1.0", "bar.v0.1.0", "bar", "0.1.0", [("test.bar", "Bar", "v1alpha1")]),
    ("alpha/action/testdata/bar-bundle-v0.2.0", "bar.v0.2.0", "bar", "0.2.0", None),
    ("alpha/action/testdata/bar-bundle-v1.0.0", "bar.v1.0.0", "bar", "1.0.0", None),
    ("alpha/action/testdata/baz-bundle-v1.0.0", "baz.v1.0.0", "baz", "1.0.0", None),
    ("alpha/action/testdata/baz-bundle-v1.0.1", "baz.v1.0.1", "baz", "1.0.1", [("test.baz", "Baz", "v1")]),
    ("alpha/action/testdata/foo-bundle-v0.1.0", "foo.v0.1.0", "foo", "0.1.0", [("test.foo", "Foo", "v1")]),
    ("alpha/action/testdata/foo-bundle-v0.3.1", "foo.v0.3.1", "foo", "0.3.1",
     [("test.foo", "Foo", "v1"), ("test.foo", "Foo", "v2")]),
    ("pkg/lib/bundle/testdata/validate/valid_bundle", "etcdoperator.v0.9.4", "etcd", "0.9.4",
     [("etcd.database.coreos.com", k, "v1beta2") for k in ("EtcdBackup", "EtcdCluster", "EtcdRestore")]),
    ("pkg/lib/bundle/testdata/validate/valid_bundle_2", "lib-bucket-provisioner.v1.0.0", "lib-bucket-provisioner",
     "1.0.0", [("objectbucket.io", "ObjectBucket", "v1alpha1"), ("objectbucket.io", "ObjectBucketClaim", "v1alpha1")]),
    ("pkg/registry/testdata/v1crd_bundle", "lib-bucket-provisioner.v1.0.0", "lib-bucket-provisioner", "1.0.0",
     [("objectbucket.io", "ObjectBucket", "v1alpha1"), ("objectbucket.io", "ObjectBucketClaim", "v1alpha1")]),
    ("test/e2e/testdata/bundles/kiali.1.4.2", "kiali-operator.v1.4.2", "kiali-operator.v1.4.2", "1.4.2",
     [("kiali.io", "Kiali", "v1alpha1"), ("monitoring.kiali.io", "MonitoringDashboard", "v1alpha1")]),
    ("test/e2e/testdata/bundles/redis.0.4.0", "redis-operator.v0.4.0", "redis-operator.0.4.0", "0.4.0",
     [("redis.redis.opstreelabs.in", "Redis", "v1beta1")]),
])
def test_bundle_dirs(rel, name, package, version, gvks):
    path = os.path.join(OPM, rel)
    assert is_bundle_dir(path)
    b = render_bundle_dir(path).bundles[0]
    assert (b["name"], b["package"], b["image"]) == (name, package, "")
    pkg = [p["value"] for p in b["properties"] if p["type"] == "olm.package"]
    assert pkg == [{"packageName": package, "version": version}]
    if gvks is not None:
        got = [(p["value"]["group"], p["value"]["kind"], p["value"]["version"])
               for p in b["properties"] if p["type"] == "olm.gvk"]
        assert got == gvks
    types = [p["type"] for p in b["properties"]]
    n_obj = types.count("olm.bundle.object")
    assert types[-n_obj:] == ["olm.bundle.object"] * n_obj
    head = [p for p in b["properties"] if p["type"] != "olm.bundle.object"]
    assert head == sorted(head, key=lambda p: (p["type"], json.dumps(p["value"], separators=(",", ":"))))
    objs = _decode_objects(b)
    assert sum(1 for o in objs if o["kind"] == "ClusterServiceVersion") == 1
    manifests = [n for n in os.listdir(os.path.join(path, "manifests")) if not n.startswith(".")]
    assert len(objs) <= len(manifests)
    imgs = [r["image"] for r in b.get("relatedImages", [])]
    assert imgs == sorted(imgs)


def test_etcd_extra_manifests_kept_as_objects():
    b = render_bundle_dir(os.path.join(OPM, "pkg/lib/bundle/testdata/validate/valid_bundle")).bundles[0]
    kinds = sorted(o["kind"] for o in _decode_objects(b))
    assert kinds == sorted(["ClusterServiceVersion", "ConfigMap", "CustomResourceDefinition",
                            "CustomResourceDefinition", "CustomResourceDefinition", "PodDisruptionBudget",
                            "PriorityClass", "Secret", "VerticalPodAutoscaler"])


def test_migrate_level_on_dir():
    cfg = render_bundle_dir(FOO, migrate_level="bundle-object-to-csv-metadata")
    # opm only migrates bundles that have an image: a directory render has image "" -> unchanged
    assert any(p["type"] == "olm.bundle.object" for p in cfg.bundles[0]["properties"])
    cfg = render_bundle_dir(FOO, migrate_level="bundle-object-to-csv-metadata",
                            image_ref_template="r/{{.Package}}:{{.Version}}")
    types = [p["type"] for p in cfg.bundles[0]["properties"]]
    assert "olm.bundle.object" not in types and types[-1] == "olm.csv.metadata"
    meta = cfg.bundles[0]["properties"][-1]["value"]
    assert meta["annotations"] == {"olm.skipRange": "<0.2.0"}
    assert meta["displayName"] == "Foo Operator"
    assert meta["apiServiceDefinitions"] == {} and meta["provider"] == {}
    assert meta["crdDescriptions"] == {"owned": [{"name": "foos.test.foo", "version": "v1", "kind": "Foo"}]}


def test_unknown_migrate_level():
    with pytest.raises(MigrationError, match='unknown migration level "bogus"'):
        render_bundle_dir(FOO, migrate_level="bogus")


def _copy_bundle(tmp_path):
    dst = tmp_path / "b"
    shutil.copytree(FOO, str(dst))
    return dst


def test_errors(tmp_path):
    with pytest.raises(BundleRenderError, match="is not a directory"):
        render_bundle_dir(str(tmp_path / "missing"))
    with pytest.raises(BundleRenderError, match="not a bundle directory"):
        render_bundle_dir(os.path.join(OPM, "test/e2e/testdata/aqua"))
    d = _copy_bundle(tmp_path)
    for f in (d / "metadata").iterdir():
        f.unlink()
    with pytest.raises(BundleRenderError, match="^Could not find annotations file$"):
        render_bundle_dir(str(d))
    d2 = tmp_path / "c"
    shutil.copytree(FOO, str(d2))
    (d2 / "manifests" / "foo.v0.2.0.csv.yaml").unlink()
    with pytest.raises(BundleRenderError, match="^no csv in bundle$"):
        render_bundle_dir(str(d2))
    for f in (d2 / "manifests").iterdir():
        f.unlink()
    (d2 / "manifests" / "junk.yaml").write_text("a: [1, 2\n")
    with pytest.raises(BundleRenderError, match="^no bundle objects found$"):
        render_bundle_dir(str(d2))


def test_missing_owned_crd(tmp_path):
    d = _copy_bundle(tmp_path)
    (d / "manifests" / "foos.test.foo.crd.yaml").unlink()
    with pytest.raises(BundleRenderError, match="error checking provided apis in bundle foo.v0.2.0: couldn't find "
                                                "test.foo/v1/Foo \\(foos\\) in bundle"):
        render_bundle_dir(str(d))


def test_properties_file_and_csv_annotation(tmp_path):
    d = _copy_bundle(tmp_path)
    (d / "metadata" / "properties.yaml").write_text(
        "properties:\n- type: olm.label\n  value: {label: x}\n- type: olm.gvk\n  value: {group: test.foo, kind: Foo,"
        " version: v1}\n")
    csv = d / "manifests" / "foo.v0.2.0.csv.yaml"
    text = csv.read_text().replace(
        "    olm.skipRange: <0.2.0\n",
        "    olm.skipRange: <0.2.0\n    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.9\"}]'\n")
    csv.write_text(text)
    b = render_bundle_dir(str(d)).bundles[0]
    types = [p["type"] for p in b["properties"] if p["type"] != "olm.bundle.object"]
    assert types == ["olm.gvk", "olm.gvk.required", "olm.label", "olm.maxOpenShiftVersion", "olm.package",
                     "olm.package.required"]


def test_hidden_and_subdirs_skipped(tmp_path):
    d = _copy_bundle(tmp_path)
    (d / "manifests" / ".hidden.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (d / "manifests" / "sub").mkdir()
    b = render_bundle_dir(str(d)).bundles[0]
    assert len(_decode_objects(b)) == 2


# --------------------------------------------------------------------------- lookup

def _catalog_with(blob):
    return DeclarativeConfig(bundles=[blob])


def test_lookup_from_catalog_shares_blob():
    blob = {"schema": "olm.bundle", "name": "a.v1.0.0", "package": "a", "image": "reg/a:1",
            "properties": [{"type": "olm.package", "value": {"packageName": "a", "version": "1.0.0"}}]}
    lk = BundleLookup([_catalog_with(blob)])
    assert "reg/a:1" in lk
    cfg = lk("reg/a:1")
    assert cfg.bundles == [blob] and cfg.bundles[0] is blob
    with pytest.raises(BundleNotFoundError, match='bundle image "reg/b:1" not found'):
        lk("reg/b:1")


@pytest.mark.parametrize(
    "wanted, shown",
    [
        ("reg/a:2", "the lookup has: reg/a:1, reg/a@sha256:" + "1" * 64),  # the same repository, other tag or digest
        ("reg/ab:1", "the lookup has: reg/a:1"),  # a near name
        ("other.example/zzz:9", None),  # nothing alike: no list
    ],
)
def test_a_missing_bundle_image_names_what_the_lookup_has(wanted, shown):
    """The image a template names is often a tag or a digest off from the catalog's: the error shows the near ones."""
    blobs = [
        {"schema": "olm.bundle", "name": "a.v1", "package": "a", "image": image, "properties": []}
        for image in ("reg/a:1", "reg/a@sha256:" + "1" * 64, "quay.example/unrelated/thing:7")
    ]
    with pytest.raises(BundleNotFoundError) as raised:
        BundleLookup([DeclarativeConfig(bundles=blobs)])(wanted)
    if shown:
        assert str(raised.value).endswith(shown), raised.value
    else:
        assert "the lookup has" not in str(raised.value)


def test_lookup_first_catalog_wins():
    a = {"schema": "olm.bundle", "name": "x", "image": "i", "properties": []}
    b = {"schema": "olm.bundle", "name": "y", "image": "i", "properties": []}
    assert BundleLookup([_catalog_with(a), _catalog_with(b)])("i").bundles[0]["name"] == "x"


def test_lookup_bundle_dirs_and_puller(tmp_path):
    lk = BundleLookup(bundle_dirs={"reg/foo:0.2.0": FOO})
    b = lk("reg/foo:0.2.0").bundles[0]
    assert b["image"] == "reg/foo:0.2.0" and b["name"] == "foo.v0.2.0"
    assert {"name": "", "image": "reg/foo:0.2.0"} in b["relatedImages"]
    calls = []

    def puller(ref):
        calls.append(ref)
        return FOO

    lk = BundleLookup(image_puller=puller, migrate_level="bundle-object-to-csv-metadata")
    b = lk("reg/foo:0.2.0").bundles[0]
    assert b["properties"][-1]["type"] == "olm.csv.metadata"
    lk("reg/foo:0.2.0")
    assert calls == ["reg/foo:0.2.0"]  # cached

    def bad(ref):
        raise RuntimeError("network down")
    with pytest.raises(BundleRenderError, match="network down"):
        BundleLookup(image_puller=bad)("x")
    with pytest.raises(BundleNotFoundError):
        BundleLookup(image_puller=lambda ref: None)("x")
    with pytest.raises(BundleRenderError, match="not a bundle directory"):
        BundleLookup(image_puller=lambda ref: str(tmp_path))("x")


def test_lookup_migrates_without_mutating_catalog():
    cat = os.path.join(CONF, "community-operators-prod/catalogs/v4.16/kube-green")
    lk = BundleLookup([cat], migrate_level="bundle-object-to-csv-metadata")
    img = next(iter(lk._by_image))
    orig = lk._by_image[img]
    n = len(orig["properties"])
    out = lk(img).bundles[0]
    assert out is not orig and len(orig["properties"]) == n
    assert out["properties"][-1]["type"] == "olm.csv.metadata"
    assert lk(img).csv_json[out["name"]]["kind"] == "ClusterServiceVersion"


def test_non_string_csv_version(tmp_path):
    d = _copy_bundle(tmp_path)
    csv = d / "manifests" / "foo.v0.2.0.csv.yaml"
    csv.write_text(csv.read_text().replace("  version: 0.2.0\n", "  version: 1.5\n"))
    with pytest.raises(BundleRenderError, match="^get version: json: cannot unmarshal number into Go value of type "
                                                "string$"):
        render_bundle_dir(str(d))


def test_required_crd_and_apiservices(tmp_path):
    d = _copy_bundle(tmp_path)
    csv = d / "manifests" / "foo.v0.2.0.csv.yaml"
    csv.write_text(csv.read_text().replace(
        "        name: foos.test.foo\n",
        "        name: foos.test.foo\n    required:\n      - {name: bazs.test.baz, version: v1, kind: Baz}\n"
        "  apiservicedefinitions:\n    owned:\n      - {name: widgets, group: w.io, version: v2, kind: Widget}\n"
        "    required:\n      - {name: gadgets, group: g.io, version: v1, kind: Gadget}\n", 1))
    b = render_bundle_dir(str(d)).bundles[0]
    gvk = [p["value"] for p in b["properties"] if p["type"] == "olm.gvk"]
    req = [p["value"] for p in b["properties"] if p["type"] == "olm.gvk.required"]
    assert gvk == [{"group": "test.foo", "kind": "Foo", "version": "v1"},
                   {"group": "w.io", "kind": "Widget", "version": "v2"}]
    assert req == [{"group": "g.io", "kind": "Gadget", "version": "v1"},
                   {"group": "test.bar", "kind": "Bar", "version": "v1alpha1"},
                   {"group": "test.baz", "kind": "Baz", "version": "v1"}]
    bad = _copy_bundle(tmp_path / "x")
    csv = bad / "manifests" / "foo.v0.2.0.csv.yaml"
    csv.write_text(csv.read_text().replace("name: foos.test.foo\n", "name: foos\n", 1))
    with pytest.raises(BundleRenderError, match="couldn't parse plural.group from crd name: foos"):
        render_bundle_dir(str(bad))
