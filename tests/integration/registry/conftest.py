"""A real OCI registry (Debian's ``docker-registry``, distribution v2.8) on a free loopback port, with TLS from a
throwaway CA and htpasswd (bcrypt) auth. Started once per session, stopped at the end (no orphan process).

Install it with ``tests/integration/registry/install-registry.sh`` (the build step does that); the fixture fails,
it does not skip, when the binary is missing.
"""

import datetime
import ipaddress
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

REGISTRY_BIN = os.environ.get("KUBEFORGE_REGISTRY_BIN", "/usr/bin/docker-registry")
HTPASSWD_BIN = shutil.which("htpasswd") or "/usr/bin/htpasswd"
INSTALL_HINT = "run tests/integration/registry/install-registry.sh (apt-get install -y docker-registry apache2-utils)"
USERNAME = "kubeforge"
PASSWORD = "s3cr3t-Pa55w0rd-" + os.urandom(4).hex()


class Registry:
    """Handle on the running registry: ``host`` (``127.0.0.1:<port>``), ``ca_file``, ``username``/``password``."""

    def __init__(self, host, ca_file, other_ca_file, username, password, root, log):
        self.host = host
        self.ca_file = ca_file
        self.other_ca_file = other_ca_file
        self.username = username
        self.password = password
        self.root = root
        self.log = log

    def client(self, **kw):
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient

        kw.setdefault("credentials", Credentials(self.username, self.password))
        kw.setdefault("ca_file", self.ca_file)
        return RegistryClient(self.host, **kw)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _make_ca(cn, now):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn)).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_pki(directory: Path):
    """CA + server certificate for 127.0.0.1/localhost, and an unrelated CA (for negative TLS tests)."""
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    ca_key, ca = _make_ca("kubeforge-test-registry-ca", now)
    _, other_ca = _make_ca("kubeforge-unrelated-ca", now)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(_name("127.0.0.1")).issuer_name(ca.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = {
        "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
        "other-ca.crt": other_ca.public_bytes(serialization.Encoding.PEM),
        "server.crt": cert.public_bytes(serialization.Encoding.PEM),
        "server.key": _pem_key(key),
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
        os.chmod(directory / name, 0o600)
    return {k: str(directory / k) for k in files}


def _htpasswd(path: Path, user, password):
    if not os.path.exists(HTPASSWD_BIN):
        try:
            import bcrypt  # noqa: F401
        except ImportError:
            pytest.fail("htpasswd is not installed: " + INSTALL_HINT, pytrace=False)
        import bcrypt

        path.write_text("%s:%s\n" % (user, bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode()))
        return
    # -i reads the password from stdin: it never shows up in a process listing
    out = subprocess.run([HTPASSWD_BIN, "-niB", "-C", "5", user], input=password.encode(), capture_output=True,
                         check=True)
    path.write_bytes(out.stdout)


def _wait_ready(url, ca_file, proc, log: Path, timeout=30.0):
    ctx = ssl.create_default_context(cafile=ca_file)
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail("docker-registry exited with %s:\n%s" % (proc.returncode, log.read_text()[-3000:]),
                        pytrace=False)
        try:
            opener.open(url, timeout=2).close()
            last = "unexpected 200 without credentials"
        except urllib.error.HTTPError as e:
            if e.code == 401:
                return
            last = "HTTP %s" % e.code
        except (urllib.error.URLError, OSError) as e:
            last = str(e)
        time.sleep(0.1)
    pytest.fail("docker-registry did not answer 401 on %s within %ss (%s):\n%s" % (url, timeout, last,
                                                                                  log.read_text()[-3000:]), pytrace=False)


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    """Start docker-registry with TLS + htpasswd on 127.0.0.1:<free port>; yield a :class:`Registry`."""
    if not os.access(REGISTRY_BIN, os.X_OK):
        pytest.fail("%s not found: %s" % (REGISTRY_BIN, INSTALL_HINT), pytrace=False)
    base = tmp_path_factory.mktemp("oci-registry")
    pki = make_pki(base)
    htpasswd = base / "htpasswd"
    _htpasswd(htpasswd, USERNAME, PASSWORD)
    storage = base / "storage"
    storage.mkdir()
    port = _free_port()
    config = base / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n  accesslog:\n    disabled: true\n"
        "storage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\n" % storage
        + "http:\n  addr: 127.0.0.1:%d\n  secret: %s\n  tls:\n    certificate: %s\n    key: %s\n"
        % (port, os.urandom(16).hex(), pki["server.crt"], pki["server.key"])
        + "auth:\n  htpasswd:\n    realm: kubeforge-test\n    path: %s\n" % htpasswd
    )
    log = base / "registry.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REGISTRY_")}
    with open(log, "wb") as logf:
        proc = subprocess.Popen([REGISTRY_BIN, "serve", str(config)], stdout=logf, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        _wait_ready("https://127.0.0.1:%d/v2/" % port, pki["ca.crt"], proc, log)
        yield Registry("127.0.0.1:%d" % port, pki["ca.crt"], pki["other-ca.crt"], USERNAME, PASSWORD, base, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


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
    changed, _ = push_image(registry.client(), ref, image)
    assert changed
    return ref, image
