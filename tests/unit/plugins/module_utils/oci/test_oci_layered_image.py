"""oci.image.build_layered_image: one layer per copied directory, and push_image uploading every new layer once."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import ImageBuildError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    build_directory_image,
    build_layered_image,
    layout_blobs,
    push_image,
)


class RecordingClient:
    """The push side of a RegistryClient: remembers blobs and manifests per repository."""

    registry = "registry.example"

    def __init__(self):
        self.blobs = {}
        self.manifests = {}
        self.uploads = []

    def head_manifest(self, repo, ref, push=False):
        found = self.manifests.get((repo, ref))
        return {"digest": found} if found else None

    def blob_exists(self, repo, digest, push=False):
        return (repo, digest) in self.blobs

    def upload_blob(self, repo, data, digest):
        if (repo, digest) in self.blobs:
            return "exists"
        self.uploads.append(digest)
        self.blobs[(repo, digest)] = data
        return "uploaded"

    def put_manifest(self, repo, ref, data, media_type):
        import hashlib

        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.manifests[(repo, ref)] = digest
        return digest


@pytest.fixture
def dirs(tmp_path):
    for name, files in (("one", {"a.yaml": "a: 1\n"}), ("two", {"b.yaml": "b: 2\n"}), ("same", {"a.yaml": "a: 1\n"})):
        (tmp_path / name).mkdir()
        for fname, text in files.items():
            (tmp_path / name / fname).write_text(text)
    return tmp_path


def test_one_layer_per_directory_in_order(dirs):
    image = build_layered_image([(str(dirs / "one"), "/x/"), (str(dirs / "two"), "/y/")], labels={"k": 1}, manifest_format="docker")
    assert [d["digest"] for d in image.manifest["layers"]] == [layer.digest for layer in image.layers]
    assert image.config["rootfs"]["diff_ids"] == [layer.diff_id for layer in image.layers]
    assert image.layer is image.layers[-1] and image.labels == {"k": "1"}
    assert image.manifest["layers"][0]["mediaType"] == "application/vnd.docker.image.rootfs.diff.tar.gzip"
    assert {d for d, _data in layout_blobs(image)} == {image.digest, image.manifest["config"]["digest"]} | {layer.digest for layer in image.layers}


def test_a_single_directory_is_build_directory_image(dirs):
    single = build_directory_image(str(dirs / "one"), "/x/", labels={"k": "v"})
    assert build_layered_image([(str(dirs / "one"), "/x/")], labels={"k": "v"}).digest == single.digest


def test_no_contents_is_refused():
    with pytest.raises(ImageBuildError, match="at least one directory"):
        build_layered_image([])


def test_push_uploads_every_new_layer_once_and_is_idempotent(dirs):
    # "one" and "same" hold the same bytes at the same destination: identical layers, one blob
    image = build_layered_image([(str(dirs / "one"), "/x/"), (str(dirs / "two"), "/y/"), (str(dirs / "same"), "/x/")])
    assert image.layers[0].digest == image.layers[2].digest != image.layers[1].digest
    client = RecordingClient()
    assert push_image(client, "registry.example/a/b:v1", image, check_mode=True) == (True, {"exists": 0, "mounted": 0, "uploaded": 0, "copied": 0})
    assert client.uploads == [] and client.manifests == {}
    changed, stats = push_image(client, "registry.example/a/b:v1", image)
    assert changed is True and stats["uploaded"] == 3 and len(client.uploads) == 3
    assert set(client.uploads) == {image.manifest["config"]["digest"], image.layers[0].digest, image.layers[1].digest}
    assert client.manifests[("a/b", "v1")] == image.digest
    assert push_image(client, "registry.example/a/b:v1", image) == (False, {"exists": 0, "mounted": 0, "uploaded": 0, "copied": 0})
