"""catalog.mirror's pure parts: names in the mirror (and the one form each returned name has), the images of kept
bundles, the blocked_images suggestion, opm's serve command for a rebuilt catalog, the mirror sets and the mapping,
resource names, and the rebuilt catalog over each platform image."""

import io
import json
import tarfile

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import (
    MirrorError,
    as_copied,
    blocked_hint,
    blocked_matcher,
    bundle_images,
    by_digest,
    check_mirror,
    mapping_text,
    mirror_reference,
    mirror_sets,
    parse_images,
    rebuild_catalog,
    resource_name,
    serve_command,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import OCI_INDEX, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import Copier, LayoutStore
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import CONFIGS_LABEL, build_directory_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    "source, mirror, expected",
    [
        ("quay.io/ns/app@" + DIGEST, "mirror.example:5000", "mirror.example:5000/ns/app@" + DIGEST),
        ("quay.io/ns/app:v1", "mirror.example/prefix/deeper", "mirror.example/prefix/deeper/ns/app:v1"),
        ("nginx", "mirror.example", "mirror.example/library/nginx:latest"),
    ],
)
def test_mirror_reference_keeps_the_repository_path(source, mirror, expected):
    assert str(mirror_reference(parse_reference(source), mirror)) == expected


@pytest.mark.parametrize(
    "mirror, problem",
    [
        ("prefix/only", "must start with a registry host"),
        ("", "must start with a registry host"),
        ("mirror.example/Upper", "not a registry host with an optional path"),
        ("mirror.example/ns:tag", "not a registry host with an optional path"),
    ],
)
def test_check_mirror_refuses(mirror, problem):
    with pytest.raises(MirrorError, match=problem):
        check_mirror(mirror)


def test_check_mirror_trims_slashes():
    assert check_mirror(" mirror.example:5000/ops/ ") == "mirror.example:5000/ops"


def test_bundle_images_and_their_bundles():
    cfg = DeclarativeConfig(
        bundles=[
            {"name": "a.v1", "image": "q.io/a/b@" + DIGEST, "relatedImages": [{"image": "q.io/a/op:v1"}, {"image": ""}]},
            {"name": "a.v2", "image": "q.io/a/b:v2", "relatedImages": [{"image": "q.io/a/op:v1"}, "junk"]},
        ]
    )
    assert bundle_images(cfg) == {"q.io/a/b:v2": ["a.v2"], "q.io/a/b@" + DIGEST: ["a.v1"], "q.io/a/op:v1": ["a.v1", "a.v2"]}
    with pytest.raises(MirrorError, match="named by a.v3"):
        parse_images({"q.io/a/BAD:v1": ["a.v3"]})


@pytest.mark.parametrize(
    "cmd, expected",
    [
        (["serve", "/configs", "--cache-dir=/tmp/cache"], ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]),
        (["serve", "/configs", "--cache-dir", "/c", "--cache-only"], ["serve", "/configs", "--cache-dir", "/c", "--cache-enforce-integrity=false"]),
        (
            ["serve", "/configs", "--cache-dir=/c", "--cache-enforce-integrity=false"],
            ["serve", "/configs", "--cache-dir=/c", "--cache-enforce-integrity=false"],
        ),
        (["serve", "/configs"], None),
        (None, None),
    ],
)
def test_serve_command(cmd, expected):
    assert serve_command({"config": {"Cmd": cmd}}) == expected


def test_mirror_sets_and_mapping():
    pairs = [
        (parse_reference(s), mirror_reference(parse_reference(s), "m.example/x"))
        for s in ("q.io/a/b@" + DIGEST, "q.io/a/b@sha256:" + "b" * 64, "q.io/a/op:v1", "r.io/c@" + DIGEST)
    ]
    idms, itms = mirror_sets(pairs, "ops")
    assert idms["spec"]["imageDigestMirrors"] == [{"source": "q.io/a/b", "mirrors": ["m.example/x/a/b"]}, {"source": "r.io/c", "mirrors": ["m.example/x/c"]}]
    assert itms == {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ImageTagMirrorSet",
        "metadata": {"name": "ops"},
        "spec": {"imageTagMirrors": [{"source": "q.io/a/op", "mirrors": ["m.example/x/a/op"]}]},
    }
    assert mirror_sets(pairs[:1], "ops")[1] is None
    assert mapping_text(pairs[2:3] * 2) == "q.io/a/op:v1=m.example/x/a/op:v1\n"


@pytest.mark.parametrize(
    "ref, name",
    [
        ("registry.redhat.io/redhat/redhat-operator-index:v4.20", "redhat-operator-index-v4-20"),
        ("q.io/a/index@" + DIGEST, "index-latest"),
        ("q.io/a/" + "x" * 80 + ":v1", "x" * 63),
    ],
)
def test_resource_name(ref, name):
    assert resource_name(parse_reference(ref)) == name


def test_rebuild_catalog_replaces_the_catalog_of_every_platform(tmp_path):
    """A two-platform catalog index plus an attestation manifest: each platform image gets an opaque layer with the
    new catalog over its own layers, the index keeps the platforms, the attestation (no catalog label) is dropped."""
    store = LayoutStore(str(tmp_path / "layout"))
    repo = "q.io/a/index"
    old, new = tmp_path / "old", tmp_path / "new"
    (old / "pkg").mkdir(parents=True)
    (old / "pkg" / "catalog.json").write_text("{}")
    (new / "kept").mkdir(parents=True)
    (new / "kept" / "catalog.json").write_text('{"schema": "olm.package", "name": "kept"}')
    images = [
        build_directory_image(str(old), "/configs", platform=p, cmd=["serve", "/configs", "--cache-dir=/tmp/cache"], forced_labels={CONFIGS_LABEL: "/configs"})
        for p in ("linux/amd64", "linux/arm64")
    ]
    images.append(build_directory_image(str(old), "/attestation"))
    descs = []
    for image in images:
        for digest, data in image.blobs.items():
            store.put_blob(repo, {"digest": digest, "size": len(data)}, io.BytesIO(data))
        store.put_manifest(repo, image.digest, image.manifest_bytes, image.media_type)
        descs.append(
            {
                "mediaType": image.media_type,
                "digest": image.digest,
                "size": len(image.manifest_bytes),
                "platform": {"os": "linux", "architecture": image.config["architecture"]},
            }
        )
    descs[2]["platform"] = {"os": "unknown", "architecture": "unknown"}
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": descs}).encode()
    store.put_manifest(repo, "v1", index, OCI_INDEX, top=True)
    plan = Copier(store, LayoutStore(str(tmp_path / "dest"))).plan(repo, "v1", repo)

    rebuilt, (top, media_type) = rebuild_catalog(store, repo, plan, str(new))
    assert media_type == OCI_INDEX and len(rebuilt) == 2
    doc = json.loads(top)
    assert [d["platform"]["architecture"] for d in doc["manifests"]] == ["amd64", "arm64"]
    assert [d["digest"] for d in doc["manifests"]] == [i.digest for i in rebuilt]
    for source, image in zip(images, rebuilt):
        assert image.manifest["layers"][:-1] == source.manifest["layers"]
        assert image.config["config"]["Cmd"][-1] == "--cache-enforce-integrity=false"
        with tarfile.open(fileobj=io.BytesIO(image.layer.data)) as layer:
            names = layer.getnames()
        assert names[:2] == ["configs", "configs/.wh..wh..opq"] and "configs/kept/catalog.json" in names
    assert sha256_digest(top) != plan["digest"]


@pytest.mark.parametrize(
    "source, expected",
    [
        # a digest: by digest only, whatever tag the source has beside it (catalogd refuses tag + digest)
        ("q.io/a/b@" + DIGEST, "m.example/x/a/b@" + DIGEST),
        ("q.io/a/b:v1@" + DIGEST, "m.example/x/a/b@" + DIGEST),
        # a tag: by its tag, as the mapping line and the ImageTagMirrorSet pair it
        ("q.io/a/b:v1", "m.example/x/a/b:v1"),
    ],
)
def test_a_copy_is_named_in_the_form_of_its_source(source, expected):
    ref = parse_reference(source)
    copied = as_copied(ref, "m.example", "x/" + ref.repository, "sha256:" + "f" * 64)
    assert str(copied) == expected
    assert not (copied.tag and copied.digest)


@pytest.mark.parametrize(
    "source, digest, expected",
    [
        ("q.io/a/index:v4.20", DIGEST, "q.io/a/index@" + DIGEST),
        ("q.io/a/index:v4.20@sha256:" + "b" * 64, DIGEST, "q.io/a/index@" + DIGEST),
        ("q.io/a/index@" + DIGEST, None, "q.io/a/index@" + DIGEST),
    ],
)
def test_by_digest_drops_the_tag(source, digest, expected):
    assert str(by_digest(parse_reference(source), digest)) == expected
    assert by_digest(parse_reference("q.io/a/index:v1")) is None


def test_the_blocked_images_hint_names_a_pattern_per_registry_that_blocks_them():
    refs = [parse_reference(r) for r in ("example.invalid/k/op:v1", "example.invalid/k/agent:v1", "127.0.0.1:5000/a@" + DIGEST)]
    hint = blocked_hint(refs)
    assert hint.endswith("blocked_images: ['^127[.]0[.]0[.]1:5000/', '^example[.]invalid/']"), hint
    patterns = [p.strip(" '") for p in hint.split("[", 1)[1].rsplit("]", 1)[0].split("', '")]
    matches = blocked_matcher(patterns)
    assert all(matches(str(ref)) for ref in refs)
    assert not matches("quay.io/example.invalid/x:v1")
    assert blocked_hint([]) == ""
