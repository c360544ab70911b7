"""A throwaway PKI for the testbed: one CA, the apiserver serving cert, client certs, the SA key pair."""

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=365)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption())


def _name(cn: str, org: str = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


class Pki:
    """Creates (once) and exposes the PEM files of the testbed's PKI under a directory."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)

    def path(self, name: str) -> Path:
        return self.dir / name

    def ensure(self) -> None:
        if (self.dir / ".done").exists():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = _name("kubeforge-testbed-ca")
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        self._write("ca.crt", ca.public_bytes(serialization.Encoding.PEM))
        self._write("ca.key", _key_pem(ca_key))

        def issue(stem: str, cn: str, org: str = None, server: bool = False, sans=()):
            key = ec.generate_private_key(ec.SECP256R1())
            usage = [ExtendedKeyUsageOID.SERVER_AUTH] if server else [ExtendedKeyUsageOID.CLIENT_AUTH]
            builder = (
                x509.CertificateBuilder()
                .subject_name(_name(cn, org))
                .issuer_name(ca_name)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now)
                .not_valid_after(now + _VALIDITY)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            )
            if sans:
                builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
            cert = builder.sign(ca_key, hashes.SHA256())
            self._write(stem + ".crt", cert.public_bytes(serialization.Encoding.PEM))
            self._write(stem + ".key", _key_pem(key))

        local_sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        issue(
            "apiserver",
            "kube-apiserver",
            server=True,
            sans=local_sans
            + [x509.IPAddress(ipaddress.ip_address("10.0.0.1"))]
            + [x509.DNSName(n) for n in ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")],
        )
        issue("admin", "kubeforge-admin", org="system:masters")
        issue("controller-manager", "system:kube-controller-manager")
        issue("scheduler", "system:kube-scheduler")
        issue("kwok", "kwok-controller", org="system:masters")
        issue("olm", "olm-operator", org="system:masters")
        # OLM's catalog operator serves its health endpoint over TLS so it does not clash with olm's :8080.
        issue("catalog-serving", "localhost", server=True, sans=local_sans)

        sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._write("sa.key", _key_pem(sa_key))
        self._write("sa.pub", sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        (self.dir / ".done").write_text("ok\n")

    def _write(self, name: str, data: bytes) -> None:
        target = self.dir / name
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.chmod(0o600)
        tmp.replace(target)
