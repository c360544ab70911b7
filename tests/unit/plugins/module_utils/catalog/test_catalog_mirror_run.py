"""catalog.mirror_run without a registry: whose credentials the explicit options are, and a run from a directory
(from_dir) into a mirror that is an image layout standing in for a registry - every returned field in the form the
module documents (the direct run against real registries: tests/integration/registry/test_catalog_mirror.py), the
packages read back from the rebuilt catalog, directories written before the source catalog was annotated, and a copy
that fails for one image (failed_images, and a message whose count is totals.copied)."""

import io
import json
from pathlib import Path

import pytest
from lib.runners import module_params

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import mirror_run
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import MirrorError, rebuild_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror_run import (
    CATALOG_ANNOTATION,
    SOURCE_CATALOG_ANNOTATION,
    layout_catalog_packages,
    registry_credentials,
    run_mirror,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import OCI_INDEX, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import Copier, LayoutStore
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import RegistryError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import CONFIGS_LABEL, build_directory_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference
from ansible_collections.kubeforge.operators.plugins.modules import catalog_mirror

SRC = "src.example:5000"
MIRROR = "mirror.example:5000/ops"


def _params(**kw):
    return module_params(catalog_mirror.argspec(), **dict({"concurrency": 2, "timeout": 5}, **kw))


@pytest.mark.parametrize(
    "given, expected",
    [
        # direct: the mirror's pair for the mirror, the source pair for the source catalog's registry
        ({"mirror": MIRROR, "registry_username": "m", "registry_password": "mp"}, {"mirror.example:5000": ("m", "mp")}),
        (
            {"mirror": MIRROR, "registry_username": "m", "registry_password": "mp", "source_registry_username": "s", "source_registry_password": "sp"},
            {"mirror.example:5000": ("m", "mp"), SRC: ("s", "sp")},
        ),
        ({"mirror": MIRROR, "source_registry_username": "s", "source_registry_password": "sp"}, {SRC: ("s", "sp")}),
        # to_dir: no registry is written to; registry_username is the source's, as it always was
        ({"to_dir": "d", "registry_username": "m", "registry_password": "mp"}, {SRC: ("m", "mp")}),
        ({"to_dir": "d", "source_registry_username": "s", "source_registry_password": "sp"}, {SRC: ("s", "sp")}),
        # from_dir: only the mirror is a registry
        ({"source_image": None, "from_dir": "d", "mirror": MIRROR, "registry_username": "m", "registry_password": "mp"}, {"mirror.example:5000": ("m", "mp")}),
        ({"mirror": MIRROR}, {}),
    ],
)
def test_whose_credentials_the_options_are(given, expected):
    assert registry_credentials(_params(**dict({"source_image": SRC + "/c/index:v1"}, **given))) == expected


@pytest.mark.parametrize(
    "given, problem",
    [
        ({"to_dir": "d", "registry_username": "m", "source_registry_username": "s"}, "with to_dir, registry_username is the source catalog registry's"),
        (
            {"source_image": "mirror.example:5000/c/index:v1", "mirror": MIRROR, "registry_username": "m", "source_registry_username": "s"},
            "on the same registry",
        ),
    ],
)
def test_ambiguous_credentials_are_refused(given, problem):
    with pytest.raises(MirrorError, match=problem):
        registry_credentials(_params(**dict({"source_image": SRC + "/c/index:v1"}, **given)))


def _put(store, repo, image, reference=None, listed=True):
    """``image`` in ``store``; listed in index.json by digest, or by ``reference``, or (a child of an index) not."""
    for digest, data in image.blobs.items():
        store.put_blob(repo, {"digest": digest, "size": len(data)}, io.BytesIO(data))
    store.put_manifest(repo, image.digest, image.manifest_bytes, image.media_type, top=listed and reference is None)
    if reference is not None:
        store.put_manifest(repo, reference, image.manifest_bytes, image.media_type, top=True)


def _write(path, files):
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return str(path)


@pytest.fixture
def layout(tmp_path):
    """A directory as to_dir writes it: the source catalog (an index of one platform image) by digest, the rebuilt
    catalog (packages demo and other) by the source's tag, a bundle by digest and a helper by tag."""
    store = LayoutStore(str(tmp_path / "layout"))
    catalog_repo = SRC + "/c/index"
    old = _write(tmp_path / "old", {"demo/catalog.json": "{}", "gone/catalog.json": "{}"})
    platform = build_directory_image(old, "/configs", cmd=["serve", "/configs", "--cache-dir=/tmp/cache"], forced_labels={CONFIGS_LABEL: "/configs"})
    _put(store, catalog_repo, platform, listed=False)
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {
                    "mediaType": platform.media_type,
                    "digest": platform.digest,
                    "size": len(platform.manifest_bytes),
                    "platform": {"os": "linux", "architecture": "amd64"},
                }
            ],
        }
    ).encode()
    source_digest = sha256_digest(index)
    store.put_manifest(catalog_repo, source_digest, index, OCI_INDEX, top=True)
    plan = Copier(store, LayoutStore(str(tmp_path / "unused"))).plan(catalog_repo, source_digest, catalog_repo)
    kept = _write(
        tmp_path / "new",
        {
            "demo/catalog.json": json.dumps({"schema": "olm.package", "name": "demo"}),
            "other/catalog.json": json.dumps({"schema": "olm.package", "name": "other"}),
        },
    )
    rebuilt, (top, media_type) = rebuild_catalog(store, catalog_repo, plan, kept)
    for image in rebuilt:
        _put(store, catalog_repo, image, listed=False)
    store.put_manifest(catalog_repo, "v1", top, media_type, top=True)
    bundle = build_directory_image(_write(tmp_path / "bundle", {"manifests/csv.yaml": "kind: ClusterServiceVersion"}), "/")
    _put(store, SRC + "/c/demo-bundle", bundle)
    helper = build_directory_image(_write(tmp_path / "helper", {"helper": "help"}), "/")
    _put(store, SRC + "/c/helper", helper, "latest")
    store.annotate(catalog_repo, "v1", {CATALOG_ANNOTATION: "true"})
    store.save_index()
    return {
        "dir": str(tmp_path / "layout"),
        "source_digest": source_digest,
        "bundle": "%s/c/demo-bundle@%s" % (SRC, bundle.digest),
        "helper": SRC + "/c/helper:latest",
        "rebuilt": top,
        "catalog_repo": catalog_repo,
    }


@pytest.fixture
def mirror_store(tmp_path, monkeypatch):
    """The mirror registry, played by an image layout (every registry the run asks for is this store)."""
    store = LayoutStore(str(tmp_path / "mirror"))
    monkeypatch.setattr(mirror_run._Run, "store", lambda self, ref_text: store)
    return store


def test_a_run_from_a_directory_returns_every_field_in_its_documented_form(layout, mirror_store, tmp_path):
    params = _params(from_dir=layout["dir"], mirror=MIRROR, manifests_dir=str(tmp_path / "resources"), resource_name="ops")
    plan = run_mirror(params, check_mode=True)
    assert plan["changed"] is True and plan["catalog"]["image"] == ""  # not in the mirror before
    assert [i["state"] for i in plan["images"]] == ["missing"] * 3

    result = run_mirror(params)
    source_catalog = "%s@%s" % (layout["catalog_repo"], layout["source_digest"])
    host = "mirror.example:5000"
    # images: the source catalog first, by the digest read, copied by digest into the rebuilt catalog's repository
    assert [(i["source"], i["mirror"], i["state"]) for i in result["images"]] == [
        (source_catalog, "%s/ops/c/index@%s" % (host, layout["source_digest"]), "copied"),
        (layout["bundle"], layout["bundle"].replace(SRC, host + "/ops"), "copied"),
        (layout["helper"], "%s/ops/c/helper:latest" % host, "copied"),
    ]
    assert result["totals"]["images"] == 3 and result["totals"]["copied"] == 3 and result["totals"]["failed"] == 0
    # the rebuilt catalog: by digest only, pushed (last) under the source's tag too; its packages read back
    catalog = result["catalog"]
    assert catalog["image"] == "%s/ops/c/index@%s" % (host, catalog["digest"]) and "@" not in catalog["image"].split("/")[-1].split("@")[0]
    assert mirror_store.head_manifest("ops/c/index", "v1") == {"digest": catalog["digest"]}
    assert catalog["source"] == source_catalog and catalog["packages"] == ["demo", "other"]
    # the resources name the catalog as catalog.image; the mirror sets leave the source catalog out
    resources = result["resources"]
    assert resources["catalog_source"]["spec"]["image"] == catalog["image"]
    assert resources["cluster_catalog"]["spec"]["source"]["image"]["ref"] == catalog["image"]
    assert resources["image_digest_mirror_set"]["spec"]["imageDigestMirrors"] == [{"source": SRC + "/c/demo-bundle", "mirrors": [host + "/ops/c/demo-bundle"]}]
    assert resources["image_tag_mirror_set"]["spec"]["imageTagMirrors"] == [{"source": SRC + "/c/helper", "mirrors": [host + "/ops/c/helper"]}]
    # mapping: one line per image, source=mirror as images[] pairs them; none for the rebuilt catalog
    assert result["mapping"] == sorted("%s=%s" % (i["source"], i["mirror"]) for i in result["images"])
    assert not any(catalog["digest"] in line for line in result["mapping"])
    assert (tmp_path / "resources" / "mapping.txt").read_text().splitlines() == result["mapping"]

    again = run_mirror(params)
    assert again["changed"] is False and [i["state"] for i in again["images"]] == ["present"] * 3
    assert again["catalog"] == catalog


def test_the_rebuilt_catalog_names_its_source_catalog_among_several_copies(layout, mirror_store):
    """A directory written twice while the source's tag moved holds two copies of the source catalog: the rebuilt
    catalog's annotation says which it was built on, the other is left out; an older directory (no annotation) with
    two copies is refused, naming them."""
    store = LayoutStore(layout["dir"])
    name = "%s@%s" % (layout["catalog_repo"], layout["source_digest"])
    stale = build_directory_image(_write(Path(layout["dir"]).parent / "stale", {"demo/catalog.json": "{}"}), "/configs")
    _put(store, layout["catalog_repo"], stale)
    store.save_index()
    with pytest.raises(MirrorError, match="does not say which copy of the source catalog .* was rebuilt from") as refused:
        run_mirror(_params(from_dir=layout["dir"], mirror=MIRROR), check_mode=True)
    assert name in str(refused.value) and stale.digest in str(refused.value)

    store.annotate(layout["catalog_repo"], "v1", {SOURCE_CATALOG_ANNOTATION: name})
    store.save_index()
    result = run_mirror(_params(from_dir=layout["dir"], mirror=MIRROR), check_mode=True)
    assert result["catalog"]["source"] == result["images"][0]["source"] == name
    assert [i["source"] for i in result["images"]] == [name, layout["bundle"], layout["helper"]]


def test_the_packages_of_a_rebuilt_catalog_in_a_directory(layout, tmp_path):
    assert layout_catalog_packages(LayoutStore(layout["dir"]), parse_reference(layout["catalog_repo"] + ":v1"), str(tmp_path)) == ["demo", "other"]


class _RefusingStore(LayoutStore):
    """A mirror that refuses every blob of one repository, as a registry refusing a push would."""

    def put_blob(self, repository, desc, reader, known_missing=False):
        if repository.endswith("/helper"):
            raise RegistryError("denied: requested access to the resource is denied")
        return super().put_blob(repository, desc, reader, known_missing)


def test_a_failed_copy_lists_failed_images_and_counts_what_copied(layout, tmp_path, monkeypatch):
    store = _RefusingStore(str(tmp_path / "mirror"))
    monkeypatch.setattr(mirror_run._Run, "store", lambda self, ref_text: store)
    with pytest.raises(MirrorError) as failed:
        run_mirror(_params(from_dir=layout["dir"], mirror=MIRROR))
    result = failed.value.result
    assert "failed" not in result  # Ansible would replace it with its boolean
    assert [f["source"] for f in result["failed_images"]] == [layout["helper"]] and "denied" in result["failed_images"][0]["error"]
    assert [i["state"] for i in result["images"]] == ["copied", "copied", "failed"]
    assert result["totals"]["copied"] == 2 and result["totals"]["failed"] == 1
    assert str(failed.value).startswith("1 image(s) could not be copied (%d copied)" % result["totals"]["copied"])
    assert store.head_manifest("ops/c/index", "v1") is None  # the rebuilt catalog is pushed after every image


def test_a_catalog_image_off_the_mirror_registry_is_refused(layout, mirror_store):
    with pytest.raises(MirrorError, match="catalog_image other.example/c/index:v1 is not on the mirror registry mirror.example:5000"):
        run_mirror(_params(from_dir=layout["dir"], mirror=MIRROR, catalog_image="other.example/c/index:v1"))
