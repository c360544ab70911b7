"""A real OCI registry on loopback: Debian's `docker-registry` (distribution v2.8) with TLS and htpasswd auth
(or distribution's token auth, trusting a token server such as testbed.token_server).

Used by the testbed (the demo pushes its catalog image there) and by the registry tests, each with its own
instance. Install the binaries with scripts/install-packages.sh (apt-get; never from a test).
"""

import datetime
import ipaddress
import json
import os
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from lib.polling import PollTimeout, poll_until

from testbed import procs
from testbed.errors import TestbedError

REGISTRY_BIN = os.environ.get("KUBEFORGE_REGISTRY_BIN", "/usr/bin/docker-registry")
HTPASSWD_BIN = os.environ.get("KUBEFORGE_HTPASSWD_BIN") or shutil.which("htpasswd") or "/usr/bin/htpasswd"
INSTALL_HINT = "run tests/testbed/scripts/install-packages.sh (apt-get install -y docker-registry apache2-utils)"
USERNAME = "kubeforge"


class RegistryError(TestbedError):
    """The registry could not be set up or started; the message says why (never the password)."""


def installed() -> bool:
    return os.access(REGISTRY_BIN, os.X_OK) and os.access(HTPASSWD_BIN, os.X_OK)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _make_ca(cn: str, now: datetime.datetime):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_pki(directory: Path) -> dict:
    """CA + server certificate for 127.0.0.1/localhost, and an unrelated CA (for negative TLS tests)."""
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    ca_key, ca = _make_ca("kubeforge-test-registry-ca", now)
    other_ca = _make_ca("kubeforge-unrelated-ca", now)[1]
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
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


def _write_htpasswd(path: Path, user: str, password: str) -> None:
    # -i reads the password from stdin: it never shows up in a process listing.
    out = subprocess.run([HTPASSWD_BIN, "-niB", "-C", "5", user], input=password.encode(), capture_output=True, check=False)  # noqa: S603
    if out.returncode != 0:
        raise RegistryError(f"htpasswd failed: {out.stderr.decode(errors='replace').strip()}")
    path.write_bytes(out.stdout)
    os.chmod(path, 0o600)


class LocalRegistry:
    """One registry instance rooted in `directory`: PKI, htpasswd, storage, config and log live there.

    `token_auth` (keys realm, service, issuer, rootcertbundle) switches from htpasswd to distribution's token auth:
    clients then get Bearer tokens from the realm (username/password are unused).
    """

    def __init__(self, directory: Path, username: str = USERNAME, password: Optional[str] = None, token_auth: Optional[dict] = None):
        self.root = Path(directory)
        self.username = username
        self.password = password or ("pw-" + os.urandom(12).hex())
        self.token_auth = token_auth
        self.port = 0
        self.record: Optional[dict] = None
        self.pki: dict = {}

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ca_file(self) -> str:
        return self.pki["ca.crt"]

    @property
    def other_ca_file(self) -> str:
        return self.pki["other-ca.crt"]

    @property
    def password_file(self) -> str:
        return str(self.root / "password")

    @property
    def log(self) -> Path:
        return self.root / "registry.log"

    def ensure_pki(self) -> dict:
        """Make the instance's CA and 127.0.0.1 server certificate once (a token server may serve with them too)."""
        if not self.pki:
            self.root.mkdir(parents=True, exist_ok=True)
            self.pki = make_pki(self.root)
        return self.pki

    def start(self, port: Optional[int] = None, timeout: float = 30.0) -> dict:
        """Write config, start the process detached, wait until /v2/ answers 401; return its process record."""
        if not installed():
            raise RegistryError(f"{REGISTRY_BIN} or htpasswd not found: {INSTALL_HINT}")
        self.ensure_pki()
        if self.token_auth:
            auth = "auth:\n  token:\n" + "".join(
                f"    {key}: {json.dumps(str(self.token_auth[key]))}\n" for key in ("realm", "service", "issuer", "rootcertbundle")
            )
        else:
            _write_htpasswd(self.root / "htpasswd", self.username, self.password)
            pw_file = Path(self.password_file)
            pw_file.write_text(self.password)
            pw_file.chmod(0o600)
            auth = f"auth:\n  htpasswd:\n    realm: kubeforge-testbed\n    path: {self.root / 'htpasswd'}\n"
        storage = self.root / "storage"
        storage.mkdir(exist_ok=True)
        self.port = port or procs.free_port()
        config = self.root / "config.yml"
        config.write_text(
            "version: 0.1\n"
            "log:\n  level: warn\n  accesslog:\n    disabled: true\n"
            f"storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n"
            f"http:\n  addr: {self.host}\n  secret: {os.urandom(16).hex()}\n"
            f"  tls:\n    certificate: {self.pki['server.crt']}\n    key: {self.pki['server.key']}\n" + auth
        )
        # REGISTRY_* variables would override the config file.
        env_unset = tuple(k for k in os.environ if k.startswith("REGISTRY_"))
        self.record = procs.start("registry", [REGISTRY_BIN, "serve", str(config)], self.root, unset=env_unset)
        self._wait_ready(timeout)
        return self.record

    def _wait_ready(self, timeout: float) -> None:
        ctx = ssl.create_default_context(cafile=self.ca_file)
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({}))
        last = ["no answer"]

        def challenged() -> bool:
            if not procs.alive(self.record["pid"], self.record["binary"]):
                raise RegistryError(f"docker-registry exited; last log lines:\n{procs.tail(self.record['log'])}")
            try:
                opener.open(f"https://{self.host}/v2/", timeout=2).close()
                last[0] = "unexpected 200 without credentials"
            except urllib.error.HTTPError as exc:
                if exc.code == 401:
                    return True
                last[0] = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                last[0] = str(exc)
            return False

        try:
            poll_until(challenged, timeout, interval=0.1, describe=f"docker-registry to answer 401 on https://{self.host}/v2/")
        except PollTimeout:
            self.stop()
            raise RegistryError(f"docker-registry did not answer 401 on https://{self.host}/v2/ within {timeout}s ({last[0]})") from None

    def stop(self) -> None:
        if self.record:
            procs.stop(self.record)
