"""bundle_image end to end: kube-demo's bundle directory built by the module and pushed to the testbed's registry
(TLS + htpasswd), twice (the second push changes nothing), then pulled back with ``oci.pull.pull_bundle`` and
compared file by file, byte for byte, with the directory it came from; labels read back from the pushed config.
The real ``opm render`` (containers/image) pulls the pushed image and renders the same bundle as from the directory."""

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_bundle

pytestmark = pytest.mark.testbed

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = ROOT / "tests" / "testbed" / "fixtures" / "kube-demo" / "bundles" / "0.0.1"
ANNOTATIONS = {
    "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
    "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
    "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    "operators.operatorframework.io.bundle.package.v1": "kube-demo",
    "operators.operatorframework.io.bundle.channels.v1": "alpha,stable",
    "operators.operatorframework.io.bundle.channel.default.v1": "stable",
}


@pytest.fixture
def registry(testbed):
    """The testbed registry's host and credentials, as playbooks get them (ansible-vars.json + the password file)."""
    variables = json.loads((Path(testbed.run_dir) / "ansible-vars.json").read_text())
    return {
        "host": variables["testbed_registry"],
        "registry_username": variables["testbed_registry_username"],
        "registry_password": Path(variables["testbed_registry_password_file"]).read_text().strip(),
        "ca_file": variables["testbed_registry_ca_file"],
    }


def files_below(root, subdirs):
    """``{relative path: bytes}`` of every file below ``root/<subdir>``."""
    out = {}
    for sub in subdirs:
        for dirpath, _dirnames, filenames in os.walk(os.path.join(root, sub)):
            for name in filenames:
                full = os.path.join(dirpath, name)
                with open(full, "rb") as f:
                    out[os.path.relpath(full, root)] = f.read()
    return out


def push_pull_compare(run_module, registry, bundle_dir, image, tmp_path, subdirs):
    auth = {k: registry[k] for k in ("registry_username", "registry_password", "ca_file")}
    args = dict(auth, path=str(bundle_dir), image=image, push=True, labels={"org.opencontainers.image.source": "kubeforge"})
    first = run_module("bundle_image", args)
    assert first.get("failed") is not True, first.get("msg")
    second = run_module("bundle_image", args)
    checked = run_module("bundle_image", dict(args, labels={"org.opencontainers.image.source": "check-mode"}), check_mode=True)
    output = json.dumps([first, second, checked])
    assert registry["registry_password"] not in output

    assert first["changed"] is True and first["pushed"] is True
    assert first["image"] == "%s@%s" % (image.rsplit(":", 1)[0], first["digest"])
    assert first["package"] == "kube-demo" and first["csv"] == {"name": "kube-demo.v0.0.1", "version": "0.0.1"}
    assert first["blobs"]["uploaded"] + first["blobs"]["exists"] == 1 + len(subdirs)
    assert second["changed"] is False and second["pushed"] is False and second["digest"] == first["digest"]
    assert checked["changed"] is True and checked["pushed"] is True and checked["digest"] != first["digest"]

    client = client_for(image, username=auth["registry_username"], password=auth["registry_password"], ca_file=auth["ca_file"])
    ref = image.split("/", 1)[1]
    repo, tag = ref.rsplit(":", 1)
    assert client.head_manifest(repo, tag)["digest"] == first["digest"]  # check mode pushed nothing
    config = client.resolve_image(repo, tag)["config"]
    pulled_root = pull_bundle(image, str(tmp_path / "pulled"), client=client)
    source = files_below(str(bundle_dir), subdirs)
    pulled = files_below(pulled_root, sorted(os.listdir(pulled_root)))
    assert len(source) >= 2 and pulled == source
    return first, config["config"]["Labels"]


def opm_render(testbed, registry, ref, home):
    """``opm render <ref> -o json`` of the testbed's opm, pulling through containers/image with the registry's
    credentials in a private docker config (TLS verification off: containers/image reads CAs for root only from
    /etc/containers/certs.d, which a test must not touch)."""
    policy = home / ".config" / "containers" / "policy.json"
    policy.parent.mkdir(parents=True)
    policy.write_text(json.dumps({"default": [{"type": "insecureAcceptAnything"}]}))
    auth = base64.b64encode(("%s:%s" % (registry["registry_username"], registry["registry_password"])).encode()).decode()
    config = home / "config.json"
    config.write_text(json.dumps({"auths": {registry["host"]: {"auth": auth}}}))
    config.chmod(0o600)
    args = [str(Path(testbed.state["bin"]) / "opm"), "render", "-o", "json", "--skip-tls-verify", ref]
    proc = subprocess.run(args, env=dict(os.environ, HOME=str(home), DOCKER_CONFIG=str(home)), capture_output=True, text=True, timeout=300, check=False)  # noqa: S603
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_kube_demo_bundle_pushed_twice_and_pulled_back(testbed, registry, run_module, tmp_path):
    image = "%s/kubeforge/bundle-image-test:v0.0.1-%s" % (registry["host"], os.urandom(3).hex())
    first, labels = push_pull_compare(run_module, registry, BUNDLE, image, tmp_path, ["manifests", "metadata"])
    assert labels == dict(ANNOTATIONS, **{"org.opencontainers.image.source": "kubeforge"}) == first["labels"]
    assert len(first["manifest"]["layers"]) == 2

    # opm pulls and unpacks the image itself; apart from the image reference (and opm listing the bundle image
    # among the related images) it renders what it renders from the directory
    from_image = opm_render(testbed, registry, first["image"], tmp_path / "opm-home")
    from_dir = opm_render(testbed, registry, str(BUNDLE), tmp_path / "opm-home-dir")
    assert from_image["image"] == first["image"] and from_dir["image"] == ""
    assert {"name": "", "image": first["image"]} in from_image["relatedImages"]
    from_image["relatedImages"].remove({"name": "", "image": first["image"]})
    assert dict(from_image, image="") == from_dir and from_dir["name"] == "kube-demo.v0.0.1"


def test_bundle_with_scorecard_config_round_trips(testbed, registry, run_module, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(str(BUNDLE), str(bundle))
    (bundle / "tests" / "scorecard").mkdir(parents=True)
    (bundle / "tests" / "scorecard" / "config.yaml").write_text("apiVersion: scorecard.operatorframework.io/v1alpha3\nkind: Configuration\n")
    (bundle / "README.md").write_text("not part of the image\n")
    image = "%s/kubeforge/bundle-image-test:scorecard-%s" % (registry["host"], os.urandom(3).hex())
    first, labels = push_pull_compare(run_module, registry, bundle, image, tmp_path, ["manifests", "metadata", "tests"])
    assert labels == dict(
        ANNOTATIONS,
        **{
            "org.opencontainers.image.source": "kubeforge",
            "operators.operatorframework.io.test.mediatype.v1": "scorecard+v1",
            "operators.operatorframework.io.test.config.v1": "tests/scorecard/",
        },
    )
    assert len(first["manifest"]["layers"]) == 3
    assert not (tmp_path / "pulled" / "README.md").exists()
