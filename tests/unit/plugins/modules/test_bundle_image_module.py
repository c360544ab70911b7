"""bundle_image module without a registry: Dockerfile output, OCI layout, check and diff mode, idempotence,
argument checks and refusals, on the kube-demo bundle of the testbed fixtures."""

import functools
import json
import os
import shutil
import socket

import pytest

from ansible_collections.kubeforge.operators.plugins.modules import bundle_image

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "testbed", "fixtures", "kube-demo", "bundles", "0.0.1")
PACKAGE_LABEL = "operators.operatorframework.io.bundle.package.v1"


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, bundle_image)


@pytest.fixture
def bundle(tmp_path):
    root = tmp_path / "bundles" / "0.0.1"
    shutil.copytree(FIXTURE, str(root))
    return root


def test_dockerfile_only_with_check_diff_and_idempotence(bundle, tmp_path, run):
    path = tmp_path / "bundle.Dockerfile"
    args = {"path": str(bundle), "dockerfile_only": True, "dockerfile_path": str(path)}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and not path.exists() and "digest" not in checked
    assert checked["dockerfile"].startswith("FROM scratch\n\n# Core bundle labels.\n")
    assert "LABEL %s=kube-demo\n" % PACKAGE_LABEL in checked["dockerfile"]
    assert checked["dockerfile"].endswith("COPY bundles/0.0.1/manifests /manifests/\nCOPY bundles/0.0.1/metadata /metadata/\n")
    assert checked["diff"][0]["after"] == checked["dockerfile"] and checked["diff"][0]["before"] == ""
    assert checked["package"] == "kube-demo" and checked["csv"] == {"name": "kube-demo.v0.0.1", "version": "0.0.1"}
    first = run(args)
    assert first["changed"] is True and path.read_text() == checked["dockerfile"]
    assert run(args)["changed"] is False and run(args, check_mode=True, diff=True)["diff"] == []


def test_oci_layout_check_mode_and_idempotence(bundle, tmp_path, run):
    out = tmp_path / "layout"
    args = {"path": str(bundle), "image": "127.0.0.1:5000/kubeforge/kube-demo-bundle:v0.0.1", "oci_layout": str(out), "labels": {"org.example.by": "unit"}}
    checked = run(args, check_mode=True)
    assert checked["changed"] is True and not out.exists()
    first = run(args)
    assert first["changed"] is True and first["digest"] == checked["digest"]
    assert first["image"] == "127.0.0.1:5000/kubeforge/kube-demo-bundle@" + first["digest"]  # no tag: pullable by OLM
    assert first["labels"][PACKAGE_LABEL] == "kube-demo" and first["labels"]["org.example.by"] == "unit"
    assert first["labels"]["operators.operatorframework.io.bundle.channel.default.v1"] == "stable"
    assert first["config"]["config"]["Labels"] == first["labels"] and len(first["manifest"]["layers"]) == 2
    assert "LABEL org.example.by=unit\n" in first["dockerfile"]
    index = json.loads((out / "index.json").read_text())
    assert index["manifests"][0]["digest"] == first["digest"]
    assert index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "v0.0.1"
    assert sorted(os.listdir(str(out / "blobs" / "sha256"))) == sorted(
        d.split(":")[1] for d in [first["digest"], first["manifest"]["config"]["digest"]] + [layer["digest"] for layer in first["manifest"]["layers"]]
    )
    assert run(args)["changed"] is False and run(args, check_mode=True)["changed"] is False
    docker = run(dict(args, manifest_format="docker", image=None))
    assert docker["changed"] is True and docker["media_type"] == "application/vnd.docker.distribution.manifest.v2+json"
    assert "image" not in docker and docker["digest"] != first["digest"]


def test_scorecard_and_warnings(bundle, run):
    (bundle / "tests" / "scorecard").mkdir(parents=True)
    (bundle / "tests" / "scorecard" / "config.yaml").write_text("kind: Configuration\n")
    res = run({"path": str(bundle)})
    # Ansible keeps warning records per process: look for this bundle's own message only
    assert str(bundle) not in json.dumps(res.get("warnings", [])) and len(res["manifest"]["layers"]) == 3
    assert res["labels"]["operators.operatorframework.io.test.config.v1"] == "tests/scorecard/"
    assert res["dockerfile"].endswith("COPY 0.0.1/tests/scorecard /tests/scorecard/\n")
    os.remove(str(bundle / "tests" / "scorecard" / "config.yaml"))
    res = run({"path": str(bundle), "dockerfile_only": True})
    assert "%s: tests/scorecard/ has no config.yaml" % bundle in json.dumps(res["warnings"])
    assert "scorecard" not in res["dockerfile"]


@pytest.mark.parametrize(
    "args,msg",
    [
        ({"push": True}, "push is True but all of the following are missing: image"),
        ({"dockerfile_only": True, "push": True, "image": "x/y"}, "image, push have no effect with dockerfile_only=true"),
        ({"dockerfile_only": True, "oci_layout": "/tmp/x"}, "oci_layout has no effect with dockerfile_only=true"),
        ({"image": "Bad/Ref"}, "invalid image reference"),
        ({"labels": {PACKAGE_LABEL: "other"}}, "contradicts the bundle's"),
    ],
)
def test_argument_errors(bundle, run, args, msg):
    res = run(dict(args, path=str(bundle)))
    assert res["failed"] is True and msg in res["msg"]


@pytest.mark.parametrize(
    "change,msg",
    [
        (lambda b: (b / "manifests" / "sub").mkdir(), "manifests/sub is a directory; OLM v1 requires a flat manifests/"),
        (lambda b: os.remove(str(b / "metadata" / "annotations.yaml")), "has no metadata/annotations.yaml"),
        (lambda b: os.remove(str(b / "manifests" / "kube-demo.clusterserviceversion.yaml")), "no ClusterServiceVersion"),
        (lambda b: shutil.rmtree(str(b / "manifests")), "has no manifests/ directory"),
    ],
)
def test_refusals_build_and_write_nothing(bundle, tmp_path, run, change, msg):
    change(bundle)
    out = tmp_path / "layout"
    res = run({"path": str(bundle), "oci_layout": str(out), "dockerfile_path": str(tmp_path / "D")})
    assert res["failed"] is True and msg in res["msg"] and str(bundle) in res["msg"]
    assert not out.exists() and not (tmp_path / "D").exists()


def test_missing_path(tmp_path, run):
    res = run({"path": str(tmp_path / "nope")})
    assert res["failed"] is True and "is not a directory" in res["msg"]


def test_registry_error_has_no_password(bundle, run):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    res = run(
        {"path": str(bundle), "image": "127.0.0.1:%d/a/b:v1" % port, "push": True, "registry_username": "u", "registry_password": "Top-Secret-99", "timeout": 5}
    )
    assert res["failed"] is True and "127.0.0.1:%d" % port in res["msg"] and "cannot connect" in res["msg"]
    assert "Top-Secret-99" not in json.dumps(res)
