"""catalog_image module without a registry: Dockerfile parity, OCI layout output, check mode, argument checks."""

import functools
import json
import os

import pytest

from ansible_collections.kubeforge.operators.plugins.modules import catalog_image

SCRATCH_WITH_LABELS = """# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM foo as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD bar /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs

# Set other custom labels
LABEL "key1"="value1"
LABEL "key2"="value2"
"""


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_image)


@pytest.fixture
def fbc(tmp_path):
    root = tmp_path / "bar"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "catalog.yaml").write_text("schema: olm.package\nname: pkg\n")
    return root


def test_dockerfile_only_matches_opm(fbc, tmp_path, run):
    args = {"path": str(fbc), "dockerfile_only": True, "builder_image": "foo",
            "labels": {"key2": "value2", "key1": "value1"}, "dockerfile_path": str(tmp_path / "bar.Dockerfile")}
    res = run(args)
    assert res["dockerfile"] == SCRATCH_WITH_LABELS and res["changed"] is True
    assert "digest" not in res
    assert (tmp_path / "bar.Dockerfile").read_text() == SCRATCH_WITH_LABELS
    assert run(args)["changed"] is False


def test_dockerfile_opm_base(fbc, run):
    res = run({"path": str(fbc) + "/", "dockerfile_only": True, "base_image": "quay.io/operator-framework/opm:v1.50"})
    text = res["dockerfile"]
    assert "FROM quay.io/operator-framework/opm:latest as builder\n" in text and "ADD bar /configs\n" in text
    assert 'ENTRYPOINT ["/bin/opm"]\nCMD ["serve", "/configs", "--cache-dir=/tmp/cache"]\n' in text
    assert text.endswith("LABEL operators.operatorframework.io.index.configs.v1=/configs\n")


def test_oci_layout_and_check_mode(fbc, tmp_path, run):
    out = tmp_path / "layout"
    args = {"path": str(fbc), "image": "127.0.0.1:5000/cat/alog:v1", "oci_layout": str(out), "labels": {"a": 1}}
    checked = run(args, check_mode=True)
    assert checked["changed"] is True and not out.exists()
    first = run(args)
    assert first["changed"] is True and first["digest"] == checked["digest"]
    assert first["image"] == "127.0.0.1:5000/cat/alog:v1@" + first["digest"]
    assert first["labels"] == {"a": "1", "operators.operatorframework.io.index.configs.v1": "/configs"}
    assert first["config"]["config"]["Labels"] == first["labels"]
    assert first["manifest"]["layers"][0]["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
    index = json.loads((out / "index.json").read_text())
    assert index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "v1"
    assert run(args)["changed"] is False
    assert run(args, check_mode=True)["changed"] is False
    # alias output_dir, docker format: new digest, layout rewritten
    docker = run({"path": str(fbc), "output_dir": str(out), "manifest_format": "docker"})
    assert docker["changed"] is True and docker["media_type"].startswith("application/vnd.docker.")
    assert "image" not in docker


@pytest.mark.parametrize("args,msg", [
    ({"push": True}, "push is True but all of the following are missing: image"),
    ({"dockerfile_only": True, "push": True, "image": "x/y"}, "image, push have no effect with dockerfile_only=true"),
    ({"image": "Bad/Ref"}, "invalid image reference"),
    ({"builder_image": "scratch", "dockerfile_only": True}, 'invalid builder image: "scratch"'),
])
def test_argument_errors(fbc, run, args, msg):
    res = run(dict(args, path=str(fbc)))
    assert res["failed"] is True and msg in res["msg"]


def test_missing_path(tmp_path, run):
    res = run({"path": str(tmp_path / "nope")})
    assert res["failed"] is True and "is not a directory" in res["msg"]


def test_registry_error_has_no_password(fbc, run):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    res = run({"path": str(fbc), "image": "127.0.0.1:%d/a/b:v1" % port, "push": True, "registry_username": "u",
               "registry_password": "Top-Secret-99", "timeout": 5})
    assert res["failed"] is True and "127.0.0.1:%d" % port in res["msg"] and "cannot connect" in res["msg"]
    assert "Top-Secret-99" not in json.dumps(res)


def _temps(*dirs):
    return [n for d in dirs if d.exists() for n in os.listdir(str(d)) if n.startswith(".kubeforge-") or
            n.endswith(".tmp")]


def test_dockerfile_check_and_diff_mode(fbc, tmp_path, run):
    path = tmp_path / "bar.Dockerfile"
    args = {"path": str(fbc), "dockerfile_only": True, "dockerfile_path": str(path)}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and not path.exists() and _temps(tmp_path) == []
    assert checked["diff"] == [{"before_header": str(path) + " (absent)", "after_header": str(path), "before": "",
                                "after": checked["dockerfile"]}]
    first = run(args, diff=True)
    assert first["changed"] is True and first["diff"] == checked["diff"] and path.read_text() == first["dockerfile"]
    again = run(args, check_mode=True, diff=True)
    assert again["changed"] is False and again["diff"] == []
    relabelled = run(dict(args, labels={"k": "v"}), check_mode=True, diff=True)
    assert relabelled["changed"] is True and relabelled["diff"][0]["before"] == first["dockerfile"]
    assert 'LABEL "k"="v"' in relabelled["diff"][0]["after"] and path.read_text() == first["dockerfile"]


def test_dockerfile_write_does_not_follow_old_temp_symlink(fbc, tmp_path, run):
    """Regression: the Dockerfile was written through a fixed ``<dockerfile>.tmp`` that followed a symlink."""
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    path = tmp_path / "bar.Dockerfile"
    os.symlink(str(victim), str(tmp_path / "bar.Dockerfile.tmp"))
    res = run({"path": str(fbc), "dockerfile_only": True, "dockerfile_path": str(path)})
    assert res["changed"] is True and path.read_text() == res["dockerfile"] and not path.is_symlink()
    assert victim.read_text() == "victim\n" and os.path.islink(str(tmp_path / "bar.Dockerfile.tmp"))
    assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".kubeforge-")] == []


def test_oci_layout_write_does_not_follow_old_temp_symlinks(fbc, tmp_path, run):
    """Regression, OCI layout: index.json, oci-layout and blobs were written through fixed ``<name>.tmp`` names."""
    out = tmp_path / "layout"
    args = {"path": str(fbc), "image": "127.0.0.1:5000/cat/alog:v1", "oci_layout": str(out),
            "dockerfile_path": str(tmp_path / "bar.Dockerfile")}
    digests = run(args, check_mode=True)["manifest"]
    blob_dir = out / "blobs" / "sha256"
    blob_dir.mkdir(parents=True)
    names = ["index.json.tmp", "oci-layout.tmp"]
    links = [out / n for n in names] + [blob_dir / (d.split(":")[1] + ".tmp") for d in
                                        [digests["config"]["digest"], digests["layers"][0]["digest"]]]
    for i, link in enumerate(links):
        (tmp_path / ("victim%d" % i)).write_text("victim\n")
        os.symlink(str(tmp_path / ("victim%d" % i)), str(link))
    res = run(args)
    assert res["changed"] is True
    for i, link in enumerate(links):
        assert (tmp_path / ("victim%d" % i)).read_text() == "victim\n" and os.path.islink(str(link))
    index = json.loads((out / "index.json").read_text())
    assert index["manifests"][0]["digest"] == res["digest"]
    assert (blob_dir / res["digest"].split(":")[1]).is_file()
    assert run(args)["changed"] is False


def test_oci_layout_check_mode_writes_nothing_and_diffs(fbc, tmp_path, run):
    out = tmp_path / "layout"
    args = {"path": str(fbc), "image": "127.0.0.1:5000/cat/alog:v1", "oci_layout": str(out)}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and not out.exists()
    assert sorted(d["after_header"] for d in checked["diff"]) == [str(out / "index.json"), str(out / "oci-layout")]
    run(args)
    before = sorted(os.listdir(str(out)))
    # a new tag only rewrites index.json; check mode reports it and leaves the layout alone
    retag = run(dict(args, image="127.0.0.1:5000/cat/alog:v2"), check_mode=True, diff=True)
    assert retag["changed"] is True and [d["after_header"] for d in retag["diff"]] == [str(out / "index.json")]
    assert '"v1"' in (out / "index.json").read_text() and sorted(os.listdir(str(out))) == before
    # a corrupt blob is detected (check mode) and replaced (real run)
    blob = out / "blobs" / "sha256" / checked["manifest"]["layers"][0]["digest"].split(":")[1]
    blob.write_bytes(b"corrupt")
    assert run(args, check_mode=True, diff=True)["changed"] is True and blob.read_bytes() == b"corrupt"
    assert run(args)["changed"] is True and blob.read_bytes() != b"corrupt"
    assert run(args)["changed"] is False


def test_base_image_pull_and_push_share_the_registry_client(fbc, run, monkeypatch):
    """The explicit credentials reach the base registry only when it is the push registry; then one client does
    both (the push can mount the base layers)."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import image as catalog_image_rules
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci import image as oci_image

    clients = []

    def fake_client_for(ref, **kwargs):
        client = {"registry": ref.registry, "password": kwargs.get("password")}
        clients.append(client)
        return client

    pulled = []

    def fake_pull(ref, client, platform=None):
        pulled.append((str(ref), client))
        raise oci_image.ImageBuildError("stop after pull")

    monkeypatch.setattr(catalog_image_rules, "client_for", fake_client_for)
    monkeypatch.setattr(oci_image.BaseImage, "pull", staticmethod(fake_pull))
    base = {"path": str(fbc), "image": "quay.io/a/b:v1", "push": True, "registry_password": "pw",
            "registry_username": "u"}
    res = run(dict(base, base_image="quay.io/operator-framework/opm:latest"))
    assert res["failed"] is True and res["msg"] == "stop after pull"
    assert clients == [{"registry": "quay.io", "password": "pw"}] and pulled[0][1] is clients[0]
    del clients[:]
    run(dict(base, base_image="ghcr.io/operator-framework/opm:latest"))
    assert clients == [{"registry": "quay.io", "password": "pw"}, {"registry": "ghcr.io", "password": None}]
    assert pulled[1][1] is clients[1]
