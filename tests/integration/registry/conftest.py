"""A real OCI registry (Debian's ``docker-registry``, distribution v2.8) on a free loopback port, with TLS from a
throwaway CA and htpasswd (bcrypt) auth. Started once per session, stopped at the end (no orphan process).

Install it with ``tests/testbed/scripts/install-packages.sh`` (the build step does that); the fixture fails,
it does not skip, when the binary is missing.
"""

import os

import pytest
from testbed.registry import INSTALL_HINT, LocalRegistry, RegistryError, installed


class Registry(LocalRegistry):
    """The running registry: ``host`` (``127.0.0.1:<port>``), ``ca_file``, ``other_ca_file``, ``username``/``password``."""

    def client(self, **kw):
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient

        kw.setdefault("credentials", Credentials(self.username, self.password))
        kw.setdefault("ca_file", self.ca_file)
        return RegistryClient(self.host, **kw)


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    """docker-registry with TLS + htpasswd on 127.0.0.1:<free port>, for this test session only."""
    if not installed():
        pytest.fail("docker-registry or htpasswd is not installed: " + INSTALL_HINT, pytrace=False)
    reg = Registry(tmp_path_factory.mktemp("oci-registry"), password="s3cr3t-Pa55w0rd-" + os.urandom(4).hex())
    try:
        reg.start()
    except RegistryError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield reg
    finally:
        reg.stop()


class TokenRegistry(Registry):
    """A registry with distribution's token auth; ``tokens`` is its :class:`testbed.token_server.TokenServer`
    (users ``pusher``: push/pull ``kubeforge/*``, ``reader``: pull only)."""

    tokens = None

    def client(self, user="pusher", password=None, **kw):
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials

        kw.setdefault("credentials", Credentials(user, self.tokens.users[user] if password is None else password))
        return super().client(**kw)


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory):
    """docker-registry with ``auth: token`` (own storage and port) and an in-process HTTPS token server sharing its
    PKI; both stopped at the end of the session."""
    from testbed.token_server import TokenServer

    if not installed():
        pytest.fail("docker-registry or htpasswd is not installed: " + INSTALL_HINT, pytrace=False)
    reg = TokenRegistry(tmp_path_factory.mktemp("oci-token-registry"))
    pki = reg.ensure_pki()
    users = {"pusher": "push-Pa55-" + os.urandom(6).hex(), "reader": "read-Pa55-" + os.urandom(6).hex()}
    reg.tokens = TokenServer(reg.root / "token-server", users, pki["server.crt"], pki["server.key"])
    try:
        try:
            reg.tokens.start()
            reg.token_auth = reg.tokens.registry_auth
            reg.start()
        except RegistryError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield reg
    finally:
        reg.stop()
        reg.tokens.stop()


@pytest.fixture(scope="session")
def opm_base(registry, tmp_path_factory):
    """A stand-in for quay.io/operator-framework/opm: one layer with bin/opm, pushed to <registry>/operator-framework/opm."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_directory_image, push_image

    src = tmp_path_factory.mktemp("opm-base")
    (src / "bin").mkdir()
    (src / "bin" / "opm").write_text("#!/bin/sh\necho fake opm\n")
    os.chmod(src / "bin" / "opm", 0o755)
    image = build_directory_image(str(src), "/", labels={"org.example.base": "opm"}, entrypoint=["/bin/opm"],
                                  cmd=["--help"])
    ref = "%s/operator-framework/opm:latest" % registry.host
    changed = push_image(registry.client(), ref, image)[0]
    assert changed
    return ref, image
