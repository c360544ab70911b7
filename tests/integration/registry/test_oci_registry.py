"""End-to-end tests of module_utils.oci against a real registry (docker-registry, TLS + htpasswd, loopback)."""

import filecmp
import io
import json
import os
import tarfile

import pytest
import yaml
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    DOCKER_MANIFEST,
    OCI_INDEX,
    OCI_MANIFEST,
    client_for,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import (
    AuthenticationError,
    NotFoundError,
    TLSError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    CONFIGS_LABEL,
    OPM_CMD,
    OPM_ENTRYPOINT,
    BaseImage,
    build_catalog_image,
    build_directory_image,
    canonical_json,
    push_image,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import (
    make_image_puller,
    pull_bundle,
    pull_image,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

FBC_DIR = str(data_path("community-operators-prod", "catalogs", "v4.20", "kube-green"))
BUNDLE_DIR = str(data_path("opm-testdata", "alpha", "action", "testdata", "foo-bundle-v0.2.0"))


def _same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    assert not cmp.left_only and not cmp.right_only and not cmp.diff_files and not cmp.funny_files, cmp.report()
    for sub in cmp.common_dirs:
        _same_tree(os.path.join(a, sub), os.path.join(b, sub))
    for name in cmp.common_files:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            assert fa.read() == fb.read(), name


def test_ping_authenticates(registry):
    assert registry.client().ping() == "registry/2.0"


def test_push_pull_scratch_catalog(registry, tmp_path):
    client = registry.client()
    ref = "%s/catalogs/kube-green:v4.20" % registry.host
    image = build_catalog_image(FBC_DIR, labels={"org.example.team": "olm"})
    changed, stats = push_image(client, ref, image)
    assert changed and stats["uploaded"] == 2

    head = client.head_manifest("catalogs/kube-green", "v4.20")
    assert head["digest"] == image.digest and head["mediaType"] == OCI_MANIFEST

    pulled = pull_image(ref, str(tmp_path / "root"), client=client)
    assert pulled.digest == image.digest
    assert pulled.manifest["mediaType"] == OCI_MANIFEST
    assert len(pulled.manifest["layers"]) == 1
    assert pulled.labels == {CONFIGS_LABEL: "/configs", "org.example.team": "olm"}
    inner = pulled.config["config"]
    assert "Entrypoint" not in inner and "Cmd" not in inner  # binary-less (scratch), like opm generate dockerfile
    assert pulled.config["rootfs"]["diff_ids"] == [image.layer.diff_id]
    assert pulled.config["os"] == "linux" and pulled.config["architecture"] == "amd64"
    _same_tree(FBC_DIR, str(tmp_path / "root" / "configs"))


def test_push_is_idempotent(registry):
    client = registry.client()
    ref = "%s/catalogs/idem:v1" % registry.host
    first = build_catalog_image(FBC_DIR)
    assert push_image(client, ref, first)[0] is True
    again = build_catalog_image(FBC_DIR)
    assert again.digest == first.digest  # deterministic build
    changed, stats = push_image(registry.client(), ref, again)
    assert changed is False and stats == {"exists": 0, "mounted": 0, "uploaded": 0, "copied": 0}
    # check mode on a different label: would change, writes nothing
    other = build_catalog_image(FBC_DIR, labels={"x": "y"})
    assert push_image(client, ref, other, check_mode=True)[0] is True
    assert client.head_manifest("catalogs/idem", "v1")["digest"] == first.digest


def test_catalog_on_opm_base_mounts_layers(registry, opm_base, tmp_path):
    base_ref, base_image = opm_base
    client = registry.client()
    base = BaseImage.pull(base_ref, client)
    image = build_catalog_image(FBC_DIR, base=base)
    ref = "%s/catalogs/with-opm:v4.20" % registry.host
    changed, stats = push_image(client, ref, image)
    assert changed and stats["mounted"] == 1 and stats["uploaded"] == 2

    pulled = pull_image(ref, str(tmp_path / "root"), client=registry.client())
    inner = pulled.config["config"]
    assert inner["Entrypoint"] == OPM_ENTRYPOINT == ["/bin/opm"]
    assert inner["Cmd"] == OPM_CMD == ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]
    assert inner["Labels"][CONFIGS_LABEL] == "/configs"
    assert inner["Labels"]["org.example.base"] == "opm"  # base labels are inherited
    assert [d["digest"] for d in pulled.manifest["layers"]] == [base_image.layer.digest, image.layer.digest]
    assert len(pulled.config["rootfs"]["diff_ids"]) == 2
    assert len(pulled.config["history"]) == 2
    assert os.access(tmp_path / "root" / "bin" / "opm", os.X_OK)
    _same_tree(FBC_DIR, str(tmp_path / "root" / "configs"))


def test_base_from_other_registry_is_copied(registry, opm_base):
    """Base on "localhost:<port>", target on "127.0.0.1:<port>": different registry names, so layers are copied."""
    base_ref, base_image = opm_base
    port = registry.host.rsplit(":", 1)[1]
    other = "localhost:%s/%s" % (port, parse_reference(base_ref).repository)
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient

    other_client = RegistryClient("localhost:%s" % port, credentials=Credentials(registry.username, registry.password),
                                  ca_file=registry.ca_file)
    base = BaseImage.pull(other, other_client)
    image = build_catalog_image(FBC_DIR, base=base)
    changed, stats = push_image(registry.client(), "%s/catalogs/copied:v1" % registry.host, image)
    assert changed and stats == {"exists": 0, "mounted": 0, "uploaded": 2, "copied": 1}


def test_docker_schema2_manifest(registry):
    client = registry.client()
    image = build_catalog_image(FBC_DIR, manifest_format="docker")
    ref = parse_reference("%s/catalogs/docker-format:v1" % registry.host)
    push_image(client, ref, image)
    data, media_type, digest = client.get_manifest(ref.repository, ref.tag)
    assert media_type == DOCKER_MANIFEST and digest == image.digest
    doc = json.loads(data)
    assert doc["config"]["mediaType"] == "application/vnd.docker.container.image.v1+json"
    assert doc["layers"][0]["mediaType"] == "application/vnd.docker.image.rootfs.diff.tar.gzip"


def test_index_selects_platform(registry, tmp_path):
    client = registry.client()
    repo = "catalogs/multi"
    amd = build_catalog_image(FBC_DIR, labels={"arch": "amd64"})
    arm = build_catalog_image(FBC_DIR, labels={"arch": "arm64"}, platform="linux/arm64/v8")
    for img in (amd, arm):
        push_image(client, "%s/%s@%s" % (registry.host, repo, img.digest), img)
    index = {
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": arm.digest, "size": len(arm.manifest_bytes),
             "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
            {"mediaType": OCI_MANIFEST, "digest": amd.digest, "size": len(amd.manifest_bytes),
             "platform": {"os": "linux", "architecture": "amd64"}},
        ],
    }
    client.put_manifest(repo, "v1", canonical_json(index), OCI_INDEX)
    resolved = client.resolve_image(repo, "v1")
    assert resolved["digest"] == amd.digest and resolved["index_digest"] is not None
    assert resolved["config"]["config"]["Labels"]["arch"] == "amd64"
    assert client.resolve_image(repo, "v1", platform="linux/arm64")["digest"] == arm.digest
    pulled = pull_image("%s/%s:v1" % (registry.host, repo), str(tmp_path / "p"), client=client)
    assert pulled.labels["arch"] == "amd64"


def test_wrong_password_is_clear_and_secret_free(registry, tmp_path):
    bad = "definitely-Not-The-Pa55word"
    client = registry.client(credentials=Credentials(registry.username, bad))
    with pytest.raises(AuthenticationError) as info:
        client.head_manifest("catalogs/kube-green", "v4.20")
    msg, rep = str(info.value), repr(info.value)
    assert registry.host in msg and "401" in msg and "catalogs/kube-green" in msg
    for text in (msg, rep, repr(client), repr(client.credentials)):
        assert bad not in text and registry.password not in text
    assert info.value.status == 401
    # push attempt with the wrong password, through a docker config.json "auth" entry
    cfg = tmp_path / "config.json"
    import base64

    cfg.write_text(json.dumps({"auths": {"https://%s" % registry.host: {
        "auth": base64.b64encode(("%s:%s" % (registry.username, bad)).encode()).decode()}}}))
    client2 = client_for("%s/catalogs/x:y" % registry.host, docker_config=str(cfg), ca_file=registry.ca_file)
    with pytest.raises(AuthenticationError) as info2:
        push_image(client2, "%s/catalogs/x:y" % registry.host, build_catalog_image(FBC_DIR))
    assert bad not in str(info2.value) and bad not in repr(info2.value)
    # no credentials at all
    with pytest.raises(AuthenticationError, match="no credentials"):
        registry.client(credentials=None).ping()


def test_docker_config_credentials_work(registry, tmp_path):
    import base64

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"auths": {registry.host: {
        "auth": base64.b64encode(("%s:%s" % (registry.username, registry.password)).encode()).decode()}}}))
    client = client_for("%s/catalogs/kube-green" % registry.host, docker_config=str(cfg), ca_file=registry.ca_file)
    assert client.ping() == "registry/2.0"
    with pytest.raises(NotFoundError) as info:
        client.get_manifest("catalogs/does-not-exist", "v1")
    assert "404" in str(info.value) and "catalogs/does-not-exist" in str(info.value)


@pytest.mark.parametrize("which", ["system-ca", "unrelated-ca"])
def test_tls_verification_fails_clearly(registry, which):
    ca = None if which == "system-ca" else registry.other_ca_file
    client = registry.client(ca_file=ca)
    with pytest.raises(TLSError) as info:
        client.ping()
    msg = str(info.value)
    assert "certificate verification failed" in msg and registry.host in msg and "ca_file" in msg
    assert registry.password not in msg


def test_tls_verification_can_be_disabled(registry):
    assert registry.client(ca_file=None, verify=False).ping() == "registry/2.0"


def test_pull_bundle_round_trip(registry, tmp_path):
    with open(os.path.join(BUNDLE_DIR, "metadata", "annotations.yaml")) as f:
        labels = yaml.safe_load(f)["annotations"]
    labels.update({
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    })
    image = build_directory_image(BUNDLE_DIR, "/", labels=labels)
    ref = "%s/bundles/foo-bundle:v0.2.0" % registry.host
    push_image(registry.client(), ref, image)

    path = pull_bundle(ref, dest_dir=str(tmp_path / "b"), username=registry.username, password=registry.password,
                       ca_file=registry.ca_file)
    assert os.path.isdir(os.path.join(path, "manifests")) and os.path.isdir(os.path.join(path, "metadata"))
    _same_tree(BUNDLE_DIR, path)

    puller = make_image_puller(cache_dir=str(tmp_path / "cache"), username=registry.username,
                               password=registry.password, ca_file=registry.ca_file)
    try:
        p1 = puller(ref)
        assert puller(ref) == p1  # cached
        _same_tree(BUNDLE_DIR, p1)
        assert p1.startswith(puller.root + os.sep)
    finally:
        puller.cleanup()
    assert not os.path.exists(puller.root)


def test_pull_rejects_unsafe_layer(registry, tmp_path):
    """A hostile layer (../ entry) pushed to the registry is refused at extraction time."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import UnsafeLayerError
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import Layer

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    import gzip

    layer = Layer(gzip.compress(raw.getvalue(), mtime=0), "sha256:" + __import__("hashlib").sha256(raw.getvalue()).hexdigest())
    image = build_catalog_image(FBC_DIR)
    image.manifest["layers"] = [{"mediaType": layer.media_type, "digest": layer.digest, "size": layer.size}]
    image.manifest_bytes = canonical_json(image.manifest)
    image.blobs[layer.digest] = layer.data
    image.layer = layer
    ref = "%s/evil/layer:v1" % registry.host
    push_image(registry.client(), ref, image)
    with pytest.raises(UnsafeLayerError, match=r"\.\."):
        pull_image(ref, str(tmp_path / "x" / "root"), client=registry.client())
    assert not (tmp_path / "x" / "escape.txt").exists()


def test_credential_helper_from_docker_config(registry, tmp_path, monkeypatch):
    """credHelpers names a real docker-credential-* executable; its answer authenticates against the registry."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    helper = bindir / "docker-credential-kubeforge-test"
    helper.write_text("#!/bin/sh\nread -r server\n[ \"$server\" = %s ] || { echo 'credentials not found in native "
                      "keychain'; exit 1; }\nprintf '{\"ServerURL\":\"%%s\",\"Username\":\"%s\",\"Secret\":\"%s\"}' "
                      "\"$server\"\n" % (registry.host, registry.username, registry.password))
    helper.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"auths": {registry.host: {}}, "credHelpers": {registry.host: "kubeforge-test"}}))
    ref = "%s/catalogs/helper-auth:v1" % registry.host
    client = client_for(ref, docker_config=str(cfg), ca_file=registry.ca_file)
    assert client.ping() == "registry/2.0"
    image = build_catalog_image(FBC_DIR)
    changed, _stats = push_image(client, ref, image)
    assert changed and registry.client().head_manifest("catalogs/helper-auth", "v1")["digest"] == image.digest
    assert registry.password not in repr(client) and registry.password not in repr(client.credentials)
