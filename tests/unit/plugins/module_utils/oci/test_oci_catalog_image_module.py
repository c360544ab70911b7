"""catalog_image module without a registry: Dockerfile parity, OCI layout output, check mode, argument checks."""

import functools
import json

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
    ({"dockerfile_only": True, "push": True, "image": "x/y"}, "dockerfile_only cannot be combined"),
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
