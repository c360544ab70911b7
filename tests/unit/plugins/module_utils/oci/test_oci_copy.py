"""oci.copy between OCI layout directories (the same walk, skips and ordering as against registries, which
tests/integration/registry/test_catalog_mirror.py proves): a two-platform index copied whole, a re-run copying
nothing, a copy interrupted after its blobs resumed, a source blob that lies about its digest or size refused; the read-ahead of a blob stream."""

import io
import json
import os

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import OCI_INDEX, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import (
    Copier,
    CopyError,
    LayoutStore,
    _ReadAhead,
    _VerifyingReader,
    run_all,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import DigestMismatchError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_directory_image

REPO = "quay.io/example/app"


def _image(tmp_path, platform, text):
    src = tmp_path / ("src-" + platform.replace("/", "-"))
    src.mkdir()
    (src / "file").write_text(text)
    return build_directory_image(str(src), "/", platform=platform)


def _put(store, image):
    for digest, data in image.blobs.items():
        store.put_blob(REPO, {"digest": digest, "size": len(data)}, io.BytesIO(data))
    store.put_manifest(REPO, image.digest, image.manifest_bytes, image.media_type)


@pytest.fixture
def source(tmp_path):
    """A layout holding a two-platform index of REPO under tag v1."""
    store = LayoutStore(str(tmp_path / "source"))
    images = [_image(tmp_path, p, p) for p in ("linux/amd64", "linux/arm64")]
    for image in images:
        _put(store, image)
    index = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
        {"mediaType": i.media_type, "digest": i.digest, "size": len(i.manifest_bytes),
         "platform": {"os": "linux", "architecture": i.config["architecture"]}} for i in images]}).encode()
    store.put_manifest(REPO, "v1", index, OCI_INDEX, top=True)
    store.save_index()
    return store, images, sha256_digest(index)


def test_index_copied_whole_then_nothing(source, tmp_path):
    store, images, index_digest = source
    dest = LayoutStore(str(tmp_path / "dest"))
    copier = Copier(LayoutStore(store.directory), dest)
    plan = copier.plan(REPO, "v1", REPO, "v1")
    assert plan["digest"] == index_digest and not plan["present"]
    assert [m[0] for m in plan["manifests"]] == [images[0].digest, images[1].digest, index_digest]  # children first
    assert plan["size"] == sum(len(d) for i in images for d in i.blobs.values()) + sum(len(m[1]) for m in plan["manifests"])
    stats = copier.copy(REPO, plan, REPO, "v1")
    assert stats["uploaded"] == 4 and stats["exists"] == 0
    assert dest.save_index() is True
    for image in images:
        for digest, data in image.blobs.items():
            assert open(os.path.join(dest.directory, "blobs", "sha256", digest[7:]), "rb").read() == data
    assert LayoutStore(dest.directory).head_manifest(REPO, "v1") == {"digest": index_digest}

    again = Copier(LayoutStore(store.directory), LayoutStore(dest.directory))
    plan = again.plan(REPO, "v1", REPO, "v1")
    assert plan["present"] and again.copy(REPO, plan, REPO, "v1")["uploaded"] == 0


def test_interrupted_copy_resumes(source, tmp_path, monkeypatch):
    store, images, index_digest = source
    dest = LayoutStore(str(tmp_path / "dest"))
    copier = Copier(store, dest)
    plan = copier.plan(REPO, "v1", REPO, "v1")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(dest, "put_manifest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        copier.copy(REPO, plan, REPO, "v1")
    monkeypatch.undo()
    assert not dest.has_manifest(REPO, index_digest)  # no manifest names a blob the destination lacks
    resumed = Copier(store, LayoutStore(dest.directory))
    plan = resumed.plan(REPO, "v1", REPO, "v1")
    assert not plan["present"]
    stats = resumed.copy(REPO, plan, REPO, "v1")
    assert stats == {"uploaded": 0, "mounted": 0, "exists": 4, "bytes": 0}
    assert resumed.dest.has_manifest(REPO, index_digest)
    assert not [n for n in os.listdir(os.path.join(dest.directory, "blobs", "sha256")) if n.startswith(".")]


@pytest.mark.parametrize("data, size, message", [
    (b"abce", 4, "failed digest verification"),
    (b"abc", 4, "ended after 3 of 4 bytes"),
    (b"abcdef", 4, "larger than its descriptor's 4 bytes"),
])
def test_verifying_reader_refuses_what_the_descriptor_does_not_say(data, size, message):
    reader = _VerifyingReader(io.BytesIO(data), sha256_digest(b"abcd"), size, "source app")
    with pytest.raises(DigestMismatchError, match=message):
        while reader.read(2):
            pass


def test_layout_refuses_a_manifest_under_another_digest_and_a_missing_image(tmp_path):
    store = LayoutStore(str(tmp_path / "l"))
    with pytest.raises(CopyError, match="manifest content is"):
        store.put_manifest(REPO, "sha256:" + "0" * 64, b"{}", "application/json")
    with pytest.raises(CopyError, match="holds no image quay.io/example/app:v9"):
        store.get_manifest(REPO, "v9")


def test_run_all_collects_every_failure():
    def fail():
        raise ValueError("boom")

    results = run_all([lambda: 1, fail, lambda: 3], 2)
    assert [r for r, _e in results] == [1, None, 3]
    assert str(results[1][1]) == "boom"


class _Chunks:
    """A stream of ``chunks``, then ``error`` raised (or the end); counts reads."""

    def __init__(self, chunks, error=None):
        self.chunks = list(chunks)
        self.error = error
        self.reads = 0

    def read(self, amount):
        self.reads += 1
        if self.chunks:
            return self.chunks.pop(0)
        if self.error is not None:
            raise self.error
        return b""


def test_read_ahead_hands_over_every_chunk_then_the_end():
    ahead = _ReadAhead(_Chunks([b"a", b"b", b"c"]))
    assert [ahead.read(), ahead.read(), ahead.read(), ahead.read(), ahead.read()] == [b"a", b"b", b"c", b"", b""]
    ahead.close()


def test_read_ahead_raises_the_source_error_where_it_was_reached():
    ahead = _ReadAhead(_Chunks([b"a"], OSError("connection reset")))
    assert ahead.read() == b"a"
    with pytest.raises(OSError, match="connection reset"):
        ahead.read()
    with pytest.raises(OSError, match="connection reset"):
        ahead.read()  # and again on every read after
    ahead.close()


def test_read_ahead_stays_bounded_and_closes_when_the_reader_stops_early():
    stream = _Chunks([b"x"] * 100)
    ahead = _ReadAhead(stream, depth=2)
    assert ahead.read() == b"x"
    ahead.close()  # the pump was blocked on a full queue: close() ends it
    assert stream.reads <= 5  # read ahead by the queue's depth, not the whole stream


def test_platforms_copy_the_index_unchanged_with_the_chosen_images_only(source, tmp_path):
    store, images, index_digest = source
    dest = LayoutStore(str(tmp_path / "dest"))
    copier = Copier(LayoutStore(store.directory), dest, platforms=["linux/arm64"])
    plan = copier.plan(REPO, "v1", REPO, "v1")
    arm64, amd64 = images[1], images[0]
    assert plan["digest"] == index_digest  # the index itself, so every digest reference to it stays valid
    assert [m[0] for m in plan["manifests"]] == [arm64.digest, index_digest]
    assert plan["size"] == sum(len(d) for d in arm64.blobs.values()) + sum(len(m[1]) for m in plan["manifests"])
    copier.copy(REPO, plan, REPO, "v1")
    assert dest.has_manifest(REPO, index_digest) and dest.has_manifest(REPO, arm64.digest)
    assert not dest.has_manifest(REPO, amd64.digest) and not any(dest.has_blob(REPO, d) for d in set(amd64.blobs) - set(arm64.blobs))

    with pytest.raises(CopyError, match=r"has none of the platforms chosen \(it has linux/amd64, linux/arm64\)"):
        Copier(LayoutStore(store.directory), dest, platforms=["linux/s390x"]).plan(REPO, "v1", REPO, "v1")
    # the sparse layout read back whole: the image left out is named
    with pytest.raises(CopyError, match="holds no manifest %s" % amd64.digest):
        Copier(dest, LayoutStore(str(tmp_path / "again"))).plan(REPO, "v1", REPO, "v1")


def test_attestations_of_a_chosen_image_come_along():
    children = [
        {"digest": "sha256:a", "platform": {"os": "linux", "architecture": "amd64"}},
        {"digest": "sha256:b", "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
        {"digest": "sha256:c", "platform": {"os": "unknown", "architecture": "unknown"}, "annotations": {"vnd.docker.reference.digest": "sha256:b"}},
        {"digest": "sha256:d", "platform": {"os": "unknown", "architecture": "unknown"}, "annotations": {"vnd.docker.reference.digest": "sha256:a"}},
    ]
    kept = Copier(None, None, platforms=["linux/arm64"])._kept_children("img", children)
    assert [c["digest"] for c in kept] == ["sha256:b", "sha256:c"]
    assert [c["digest"] for c in Copier(None, None, platforms=["linux/arm64/v8"])._kept_children("img", children)] == ["sha256:b", "sha256:c"]
    with pytest.raises(CopyError, match=r"img has none of the platforms chosen \(it has linux/amd64, linux/arm64/v8, unknown/unknown"):
        Copier(None, None, platforms=["linux/arm64/v7"])._kept_children("img", children)  # another variant
