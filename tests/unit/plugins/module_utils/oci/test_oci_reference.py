import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import InvalidReferenceError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import (
    is_loopback_host,
    parse_reference,
)

DIGEST = "sha256:" + "a" * 64

CASES = [
    ("busybox", "docker.io", "library/busybox", "latest", None),
    ("busybox:1.36", "docker.io", "library/busybox", "1.36", None),
    ("library/busybox", "docker.io", "library/busybox", "latest", None),
    ("docker.io/busybox", "docker.io", "library/busybox", "latest", None),
    ("index.docker.io/busybox", "docker.io", "library/busybox", "latest", None),
    ("registry-1.docker.io/foo/bar:x", "docker.io", "foo/bar", "x", None),
    ("foo/bar", "docker.io", "foo/bar", "latest", None),
    ("quay.io/operator-framework/opm:latest", "quay.io", "operator-framework/opm", "latest", None),
    ("quay.io/operator-framework/opm", "quay.io", "operator-framework/opm", "latest", None),
    ("localhost/foo", "localhost", "foo", "latest", None),
    ("localhost:5000/foo/bar:v1", "localhost:5000", "foo/bar", "v1", None),
    ("127.0.0.1:5000/a/b/c:v1.0-rc.1", "127.0.0.1:5000", "a/b/c", "v1.0-rc.1", None),
    ("[::1]:5000/foo", "[::1]:5000", "foo", "latest", None),
    ("quay.io/a/b@" + DIGEST, "quay.io", "a/b", None, DIGEST),
    ("quay.io/a/b:v1@" + DIGEST, "quay.io", "a/b", "v1", DIGEST),
    ("Example.com/a", "Example.com", "a", "latest", None),
    ("registry.example.com:443/ns/my_repo__x.y-z", "registry.example.com:443", "ns/my_repo__x.y-z", "latest", None),
]


@pytest.mark.parametrize("ref,registry,repository,tag,digest", CASES)
def test_parse(ref, registry, repository, tag, digest):
    r = parse_reference(ref)
    assert (r.registry, r.repository, r.tag, r.digest) == (registry, repository, tag, digest)
    assert r.reference == (digest or tag)
    # canonical string re-parses to itself
    assert parse_reference(str(r)) == r


@pytest.mark.parametrize("ref", [
    "", "foo/UPPER", "quay.io/Foo/bar", "foo:bad tag", "foo@sha256:abc", "foo@sha256:" + "A" * 64, "https://quay.io/a/b",
    "quay.io/", "quay.io//a", "foo/-bar", "foo:" + "x" * 129, "foo::v1", "a/b@notadigest", "quay.io/a/b:",
])
def test_invalid(ref):
    with pytest.raises(InvalidReferenceError) as info:
        parse_reference(ref)
    assert "invalid image reference" in str(info.value)


def test_api_host_and_name():
    assert parse_reference("busybox").api_host == "registry-1.docker.io"
    assert parse_reference("quay.io/a/b").api_host == "quay.io"
    assert str(parse_reference("busybox")) == "docker.io/library/busybox:latest"
    assert parse_reference("quay.io/a/b:v1").with_digest(DIGEST).reference == DIGEST


@pytest.mark.parametrize("host,expected", [
    ("localhost", True), ("localhost:5000", True), ("127.0.0.1", True), ("127.0.0.1:443", True),
    ("127.1.2.3:80", True), ("[::1]:5000", True), ("quay.io", False), ("10.0.0.1:5000", False),
    ("localhost.example.com", False),
])
def test_loopback(host, expected):
    assert is_loopback_host(host) is expected
