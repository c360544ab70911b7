import gzip
import io
import json
import os
import shutil
import tarfile

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    DOCKER_MANIFEST,
    OCI_MANIFEST,
    sha256_digest,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import ImageBuildError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    CONFIGS_LABEL,
    build_catalog_image,
    build_configs_layer,
    layout_blob_path,
    layout_has_blob,
    oci_index,
    write_oci_layout,
)


def _make_fbc(root, mtime=None):
    (root / "pkg-b").mkdir(parents=True)
    (root / "pkg-a" / "nested").mkdir(parents=True)
    files = {
        "pkg-b/catalog.yaml": "schema: olm.package\nname: b\n",
        "pkg-a/catalog.json": '{"schema": "olm.package", "name": "a"}\n',
        "pkg-a/nested/extra.yaml": "---\nschema: olm.channel\n",
        "README.md": "# catalog\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(text)
        if mtime is not None:
            os.utime(root / rel, (mtime, mtime))
    return files


def test_layer_is_deterministic(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _make_fbc(a, mtime=1000)
    _make_fbc(b, mtime=2_000_000_000)
    os.chmod(b / "README.md", 0o600)  # group/other bits are not recorded
    la, lb = build_configs_layer(str(a)), build_configs_layer(str(b))
    assert la.digest == lb.digest and la.diff_id == lb.diff_id
    assert la.digest == build_configs_layer(str(a)).digest
    assert la.diff_id == sha256_digest(gzip.decompress(la.data))
    assert la.data[4:8] == b"\x00\x00\x00\x00"  # gzip header mtime 0
    (b / "README.md").write_text("# changed\n")
    assert build_configs_layer(str(b)).digest != la.digest


def test_layer_entries(tmp_path):
    _make_fbc(tmp_path / "fbc")
    layer = build_configs_layer(str(tmp_path / "fbc"))
    with tarfile.open(fileobj=io.BytesIO(layer.data), mode="r:gz") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == ["configs", "configs/README.md", "configs/pkg-a", "configs/pkg-a/catalog.json",
                     "configs/pkg-a/nested", "configs/pkg-a/nested/extra.yaml", "configs/pkg-b",
                     "configs/pkg-b/catalog.yaml"]
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (0, 0, 0, "", "")
        assert m.mode == (0o755 if m.isdir() else 0o644)
    assert sorted(layer.files) == sorted(["README.md", "pkg-a/catalog.json", "pkg-a/nested/extra.yaml",
                                          "pkg-b/catalog.yaml"])


def test_layer_rejects_escaping_symlink_and_missing_dir(tmp_path):
    (tmp_path / "fbc").mkdir()
    os.symlink("/etc/passwd", tmp_path / "fbc" / "evil.yaml")
    with pytest.raises(ImageBuildError, match="points outside"):
        build_configs_layer(str(tmp_path / "fbc"))
    with pytest.raises(ImageBuildError, match="not a directory"):
        build_configs_layer(str(tmp_path / "missing"))


def test_layer_keeps_internal_symlink(tmp_path):
    _make_fbc(tmp_path / "fbc")
    os.symlink("pkg-b/catalog.yaml", tmp_path / "fbc" / "link.yaml")
    layer = build_configs_layer(str(tmp_path / "fbc"))
    with tarfile.open(fileobj=io.BytesIO(layer.data), mode="r:gz") as tar:
        link = tar.getmember("configs/link.yaml")
    assert link.issym() and link.linkname == "pkg-b/catalog.yaml"


def test_catalog_image_scratch(tmp_path):
    _make_fbc(tmp_path / "fbc")
    img = build_catalog_image(str(tmp_path / "fbc"), labels={"b": "2", "a": 1, CONFIGS_LABEL: "/elsewhere"})
    cfg = json.loads(img.config_bytes)
    assert cfg["config"]["Labels"] == {"a": "1", "b": "2", CONFIGS_LABEL: "/configs"}
    assert "Entrypoint" not in cfg["config"] and "Cmd" not in cfg["config"]
    assert cfg["rootfs"] == {"type": "layers", "diff_ids": [img.layer.diff_id]}
    assert (cfg["os"], cfg["architecture"]) == ("linux", "amd64")
    assert "created" not in cfg
    m = json.loads(img.manifest_bytes)
    assert m["mediaType"] == OCI_MANIFEST and m["config"]["digest"] == sha256_digest(img.config_bytes)
    assert m["layers"] == [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": img.layer.digest,
                            "size": img.layer.size}]
    assert img.digest == sha256_digest(img.manifest_bytes)
    # same input, same digest; docker format differs
    assert build_catalog_image(str(tmp_path / "fbc"), labels={"a": "1", "b": "2"}).digest == img.digest
    d = build_catalog_image(str(tmp_path / "fbc"), manifest_format="docker")
    assert json.loads(d.manifest_bytes)["mediaType"] == DOCKER_MANIFEST
    arm = build_catalog_image(str(tmp_path / "fbc"), platform="linux/arm64/v8")
    assert (arm.config["architecture"], arm.config["variant"]) == ("arm64", "v8")
    with pytest.raises(ImageBuildError):
        build_catalog_image(str(tmp_path / "fbc"), manifest_format="v1")


def test_catalog_image_on_base():
    class FakeBase:
        ref = "quay.io/operator-framework/opm:latest"
        config = {"architecture": "amd64", "os": "linux", "created": "2025-01-01T00:00:00Z",
                  "config": {"Env": ["PATH=/bin"], "Entrypoint": ["/bin/sh"], "Labels": {"base": "yes"},
                             "User": "1001"},
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "1" * 64]},
                  "history": [{"created_by": "base layer"}]}
        layers = [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "digest": "sha256:" + "2" * 64,
                   "size": 10}]

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "x.yaml"), "w").write("a: 1\n")
        img = build_catalog_image(d, base=FakeBase())
    inner = img.config["config"]
    assert inner["Entrypoint"] == ["/bin/opm"] and inner["Cmd"] == ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]
    assert inner["User"] == "1001" and inner["Labels"] == {"base": "yes", CONFIGS_LABEL: "/configs"}
    assert img.config["rootfs"]["diff_ids"][0] == "sha256:" + "1" * 64 and len(img.config["history"]) == 2
    assert "created" not in img.config
    assert img.manifest["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
    assert FakeBase.config["config"]["Entrypoint"] == ["/bin/sh"]  # base not mutated


def test_write_oci_layout(tmp_path):
    _make_fbc(tmp_path / "fbc")
    img = build_catalog_image(str(tmp_path / "fbc"))
    out = tmp_path / "layout"
    assert write_oci_layout(img, str(out), tag="v1") is True
    assert write_oci_layout(img, str(out), tag="v1") is False
    assert json.loads((out / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((out / "index.json").read_text())
    desc = index["manifests"][0]
    assert desc["digest"] == img.digest and desc["annotations"]["org.opencontainers.image.ref.name"] == "v1"
    for digest in [img.digest, img.manifest["config"]["digest"], img.layer.digest]:
        blob = (out / "blobs" / "sha256" / digest.split(":")[1]).read_bytes()
        assert sha256_digest(blob) == digest
    shutil.rmtree(out / "blobs")
    assert write_oci_layout(img, str(out), tag="v1") is True


def _tree(root):
    """{relative path: bytes or link target} of everything below ``root``."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, str(root))
            if os.path.islink(full):
                out[rel] = "-> " + os.readlink(full)
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    out[rel] = f.read()
    return out


def test_write_oci_layout_check_mode_and_diff(tmp_path):
    _make_fbc(tmp_path / "fbc")
    img = build_catalog_image(str(tmp_path / "fbc"))
    out = tmp_path / "layout"
    with FileOutput(check_mode=True, diff=True) as check:
        assert write_oci_layout(img, str(out), tag="v1", output=check) is True
        check.commit()
    assert not out.exists()
    assert sorted(d["after_header"] for d in check.diffs) == [str(out / "index.json"), str(out / "oci-layout")]
    assert write_oci_layout(img, str(out), tag="v1") is True
    written = _tree(out)
    with FileOutput(check_mode=True, diff=True) as check:
        assert write_oci_layout(img, str(out), tag="v1", output=check) is False
    assert check.diffs == []
    # another tag: only index.json changes; in check mode it is reported, not written
    with FileOutput(check_mode=True, diff=True) as check:
        assert write_oci_layout(img, str(out), tag="v2", output=check) is True
        check.commit()
    assert [d["after_header"] for d in check.diffs] == [str(out / "index.json")]
    assert '"v2"' in check.diffs[0]["after"] and '"v1"' in check.diffs[0]["before"]
    assert _tree(out) == written
    # a blob missing in check mode: a change, nothing fetched or written
    os.unlink(layout_blob_path(str(out), img.layer.digest))
    with FileOutput(check_mode=True) as check:
        assert write_oci_layout(img, str(out), tag="v1", output=check) is True
    assert not os.path.exists(layout_blob_path(str(out), img.layer.digest))
    # the caller's output: blobs are in place before the caller commits index.json
    with FileOutput() as caller:
        assert write_oci_layout(img, str(out), tag="v3", output=caller) is True
        assert layout_has_blob(str(out), img.layer.digest)
        assert json.loads((out / "index.json").read_text()) == oci_index(img, "v1")
        caller.commit()
    assert json.loads((out / "index.json").read_text()) == oci_index(img, "v3")


def test_write_oci_layout_replaces_corrupt_blob(tmp_path):
    _make_fbc(tmp_path / "fbc")
    img = build_catalog_image(str(tmp_path / "fbc"))
    out = tmp_path / "layout"
    write_oci_layout(img, str(out))
    blob = layout_blob_path(str(out), img.layer.digest)
    with open(blob, "wb") as f:
        f.write(b"truncated")
    assert layout_has_blob(str(out), img.layer.digest) is False
    assert write_oci_layout(img, str(out)) is True
    assert layout_has_blob(str(out), img.layer.digest) is True
    assert write_oci_layout(img, str(out)) is False


def test_write_oci_layout_does_not_follow_old_temp_symlinks(tmp_path):
    """Regression: the layout writer used a fixed ``<file>.tmp`` name and followed a symlink of that name."""
    _make_fbc(tmp_path / "fbc")
    img = build_catalog_image(str(tmp_path / "fbc"))
    out = tmp_path / "layout"
    blob_dir = out / "blobs" / "sha256"
    blob_dir.mkdir(parents=True)
    victims = {}
    for name in ["index.json.tmp", "oci-layout.tmp"]:
        victims[out / name] = tmp_path / ("victim-" + name)
    for digest in [img.digest, img.manifest["config"]["digest"], img.layer.digest]:
        victims[blob_dir / (digest.split(":")[1] + ".tmp")] = tmp_path / ("victim-" + digest.split(":")[1])
    for link, victim in victims.items():
        victim.write_text("victim\n")
        os.symlink(str(victim), str(link))
    assert write_oci_layout(img, str(out), tag="v1") is True
    for link, victim in victims.items():
        assert victim.read_text() == "victim\n" and os.path.islink(str(link))
    assert json.loads((out / "index.json").read_text()) == oci_index(img, "v1")
    for digest in [img.digest, img.manifest["config"]["digest"], img.layer.digest]:
        assert layout_has_blob(str(out), digest)
    assert not [n for n in os.listdir(str(blob_dir)) if n.startswith(".kubeforge-")]
    assert not [n for n in os.listdir(str(out)) if n.startswith(".kubeforge-")]


@pytest.mark.parametrize("digest", ["sha256:../../../etc/passwd", "sha512:" + "a" * 128, "sha256:" + "A" * 64,
                                    "sha256:" + "a" * 64 + "\n"])
def test_layout_blob_path_rejects_odd_digests(tmp_path, digest):
    with pytest.raises(ImageBuildError, match="unsupported blob digest"):
        layout_blob_path(str(tmp_path), digest)


def test_write_oci_layout_fetches_missing_base_layers_only(tmp_path):
    _make_fbc(tmp_path / "fbc")
    base_layer = b"base layer bytes"
    base_digest = sha256_digest(base_layer)
    fetched = []

    class FakeBase:
        ref = "example.com/base:1"
        layers = [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": base_digest,
                   "size": len(base_layer)}]
        config = {"architecture": "amd64", "os": "linux", "config": {}, "rootfs": {"diff_ids": ["sha256:" + "1" * 64]}}

        def fetch_blob(self, digest):
            fetched.append(digest)
            return base_layer

    img = build_catalog_image(str(tmp_path / "fbc"), base=FakeBase())
    out = tmp_path / "layout"
    with FileOutput(check_mode=True) as check:
        assert write_oci_layout(img, str(out), output=check) is True
    assert fetched == []
    assert write_oci_layout(img, str(out)) is True and fetched == [base_digest]
    assert write_oci_layout(img, str(out)) is False and fetched == [base_digest]
    assert layout_has_blob(str(out), base_digest)
