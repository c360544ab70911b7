"""RegistryClient against the in-process fake registry of lib.registry (a Bearer token realm, plain HTTP on 127.0.0.1)."""

import base64

import pytest
from lib.registry import FakeRegistry, serving

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    OCI_INDEX,
    OCI_MANIFEST,
    RegistryClient,
    select_platform,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import (
    AuthenticationError,
    DigestMismatchError,
    OCIError,
    PlatformNotFoundError,
    RegistryConnectionError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_catalog_image, build_directory_image, push_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import CATALOG_CONFIGS_LABEL, pull_catalog, pull_image

USER, PASSWORD = "alice", "Wonderland-Pa55"


@pytest.fixture
def fake():
    with serving(FakeRegistry(users={USER: (PASSWORD, {"pull", "push"})})) as registry:
        yield registry


@pytest.fixture
def fbc(tmp_path):
    d = tmp_path / "fbc" / "pkg"
    d.mkdir(parents=True)
    (d / "catalog.yaml").write_text("schema: olm.package\nname: pkg\n")
    return str(tmp_path / "fbc")


def _client(fake, password=PASSWORD):
    return RegistryClient(fake.host, credentials=Credentials(USER, password), plain_http=True)


def test_bearer_flow_push_pull(fake, fbc, tmp_path):
    client = _client(fake)
    assert client.ping() == "registry/2.0"
    image = build_catalog_image(fbc)
    ref = "%s/team/catalog:v1" % fake.host
    assert push_image(client, ref, image) == (True, {"exists": 0, "mounted": 0, "uploaded": 2, "copied": 0})
    assert push_image(client, ref, image)[0] is False
    scopes = {s for r in fake.token_requests for s in r.get("scope", [])}
    assert "repository:team/catalog:pull,push" in scopes
    assert all(r.get("service") == ["fake-registry"] for r in fake.token_requests)
    # tokens are cached per scope: far fewer token requests than registry requests
    assert len(fake.token_requests) <= 4
    fake.redirect_blobs = True
    pulled = pull_image(ref, str(tmp_path / "out"), client=_client(fake))
    assert pulled.digest == image.digest
    assert (tmp_path / "out" / "configs" / "pkg" / "catalog.yaml").read_text() == "schema: olm.package\nname: pkg\n"
    assert fake.leaked_auth == []  # Authorization is not forwarded on redirects


def test_pull_catalog_reads_the_directory_its_label_names_and_refuses_other_images(fake, fbc, tmp_path):
    client = _client(fake)
    ref = "%s/team/catalog:v1" % fake.host
    push_image(client, ref, build_catalog_image(fbc))
    path, pulled = pull_catalog(ref, str(tmp_path / "catalog"), client=client)
    assert path == str(tmp_path / "catalog" / "configs") and pulled.labels[CATALOG_CONFIGS_LABEL] == "/configs"
    plain = "%s/team/plain:v1" % fake.host  # the same files without the label: not a catalog image
    push_image(client, plain, build_directory_image(fbc, "/configs"))
    with pytest.raises(OCIError, match="is not a catalog image: it has no label operators.operatorframework.io.index.configs.v1"):
        pull_catalog(plain, str(tmp_path / "plain"), client=client)


def test_cross_repo_mount_with_bearer(fake, fbc):
    client = _client(fake)
    image = build_catalog_image(fbc)
    push_image(client, "%s/a/one:v1" % fake.host, image)
    status = client.upload_blob("b/two", image.layer.data, image.layer.digest, mount_from="a/one")
    assert status == "mounted" and fake.mounts == 1
    assert client.upload_blob("b/two", image.layer.data, image.layer.digest) == "exists"
    assert any("repository:a/one:pull" in r.get("scope", []) for r in fake.token_requests)


def test_bad_password_at_token_realm(fake):
    bad = "Bad-Pa55-not-right"
    client = _client(fake, password=bad)
    with pytest.raises(AuthenticationError) as info:
        client.get_manifest("team/catalog", "v1")
    msg = str(info.value)
    assert "credentials rejected" in msg and fake.host in msg and "401" in msg
    assert bad not in msg and bad not in repr(info.value)
    assert base64.b64encode(("%s:%s" % (USER, bad)).encode()).decode() not in msg


def test_token_never_in_error(fake, fbc):
    client = _client(fake)
    with pytest.raises(Exception) as info:
        client.get_manifest("team/missing", "v1")
    assert "404" in str(info.value) and "team/missing" in str(info.value)
    for tok in fake.tokens:
        assert tok not in str(info.value) and tok not in repr(info.value)


def test_blob_digest_verified(fake, fbc, tmp_path):
    client = _client(fake)
    image = build_catalog_image(fbc)
    push_image(client, "%s/team/c:v1" % fake.host, image)
    fake.corrupt.add(image.layer.digest)
    with pytest.raises(DigestMismatchError, match="digest"):
        client.get_blob("team/c", image.layer.digest)
    with pytest.raises(DigestMismatchError):
        pull_image("%s/team/c:v1" % fake.host, str(tmp_path / "o"), client=client)


def test_manifest_digest_verified(fake, fbc):
    client = _client(fake)
    fake.manifests[("team/c", "sha256:" + "0" * 64)] = (b'{"schemaVersion":2}', OCI_MANIFEST)
    with pytest.raises(DigestMismatchError):
        client.get_manifest("team/c", "sha256:" + "0" * 64)


def test_connection_refused_is_clear():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    client = RegistryClient("127.0.0.1:%d" % port, credentials=Credentials("u", "secret-xyz"), plain_http=True,
                            timeout=5)
    with pytest.raises(RegistryConnectionError) as info:
        client.ping()
    assert "127.0.0.1:%d" % port in str(info.value) and "secret-xyz" not in str(info.value)


def test_basic_over_plain_http_refused_for_remote_hosts():
    client = RegistryClient("registry.example.com", credentials=Credentials("u", "p"), plain_http=True)
    with pytest.raises(AuthenticationError, match="plain HTTP"):
        client._handle_challenge('Basic realm="x"', [], "r", False)


INDEX = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [
    {"digest": "sha256:" + "1" * 64, "platform": {"os": "linux", "architecture": "arm", "variant": "v7"}},
    {"digest": "sha256:" + "2" * 64, "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
    {"digest": "sha256:" + "3" * 64, "platform": {"os": "unknown", "architecture": "unknown"}},
    {"digest": "sha256:" + "4" * 64, "platform": {"os": "linux", "architecture": "amd64"}},
]}


@pytest.mark.parametrize("platform,expected", [
    ("linux/amd64", "4"), ("linux/arm64", "2"), ("linux/arm64/v8", "2"), ("linux/arm/v7", "1"),
])
def test_select_platform(platform, expected):
    assert select_platform(INDEX, platform)["digest"] == "sha256:" + expected * 64


def test_select_platform_missing():
    with pytest.raises(PlatformNotFoundError, match="linux/s390x.*available: linux/arm/v7"):
        select_platform(INDEX, "linux/s390x")
