"""A throwaway PKI for the testbed: the cluster CA, the front-proxy CA, serving and client certs, the SA key pair.

Files are created once and kept in the run directory; a PKI created by an older testbed gets only the files
it lacks (issued by its existing CAs).
"""

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=365)

# The aggregator dials an APIService's Service as https://<externalName>:<port> but checks the serving
# certificate for <service>.<namespace>.svc (kube-aggregator handler_proxy.go): the packageserver's
# certificate carries both.
PACKAGESERVER_SERVICE = ("packageserver-service", "olm")
# The client certificate kube-apiserver presents to aggregated API servers (--proxy-client-cert-file);
# its CN is the one --requestheader-allowed-names lists.
FRONT_PROXY_CLIENT_CN = "front-proxy-client"
# The user whose API requests the audit log records (client certificate, no groups).
BENCH_USER = "kubeforge-bench"

_LOCAL_SANS = (("dns", "localhost"), ("ip", "127.0.0.1"))
# stem -> (issuing CA, common name, organisation, server cert?, extra SANs)
CERTS = {
    "apiserver": (
        "ca",
        "kube-apiserver",
        None,
        True,
        (("ip", "10.0.0.1"),)
        + tuple(("dns", n) for n in ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")),
    ),
    "admin": ("ca", "kubeforge-admin", "system:masters", False, ()),
    "controller-manager": ("ca", "system:kube-controller-manager", None, False, ()),
    "scheduler": ("ca", "system:kube-scheduler", None, False, ()),
    "kwok": ("ca", "kwok-controller", "system:masters", False, ()),
    "olm": ("ca", "olm-operator", "system:masters", False, ()),
    # OLM's catalog operator serves its health endpoint over TLS so it does not clash with olm's :8080.
    "catalog-serving": ("ca", "localhost", None, True, ()),
    "packageserver-serving": ("ca", "packageserver", None, True, (("dns", "{}.{}.svc".format(*PACKAGESERVER_SERVICE)),)),
    # OLM v1's catalogd: catalog content (https://127.0.0.1:<port>/catalogs/...) and its mutating webhook.
    "catalogd-serving": ("ca", "catalogd", None, True, ()),
    # OpenShift's SCC admission webhook (scc_admission.py): its API identity and its serving certificate.
    "sccadmission": ("ca", "kubeforge-testbed-sccadmission", None, False, ()),
    "sccadmission-serving": ("ca", "sccadmission", None, True, ()),
    # The real node (realnode.py): its kubelet's identity and serving certificate (on the bridge address), and the
    # API server's client certificate for calling kubelets.
    "kubelet-client": ("ca", "system:node:real-node-0", "system:nodes", False, ()),
    "kubelet-serving": ("ca", "real-node-0", None, True, (("dns", "real-node-0"), ("ip", "10.88.0.1"))),
    "apiserver-kubelet-client": ("ca", "kube-apiserver-kubelet-client", "system:masters", False, ()),
    # The real node's kube-proxy (bootstrap RBAC binds system:kube-proxy to system:node-proxier) and CoreDNS.
    "kube-proxy": ("ca", "system:kube-proxy", None, False, ()),
    "coredns": ("ca", "kubeforge-testbed-coredns", None, False, ()),
    "front-proxy-client": ("front-proxy-ca", FRONT_PROXY_CLIENT_CN, None, False, ()),
    "bench": ("ca", BENCH_USER, None, False, ()),
}
CAS = {"ca": "kubeforge-testbed-ca", "front-proxy-ca": "kubeforge-testbed-front-proxy-ca"}


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption())


def _name(cn: str, org: str = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _san(kind: str, value: str) -> x509.GeneralName:
    return x509.IPAddress(ipaddress.ip_address(value)) if kind == "ip" else x509.DNSName(value)


class Pki:
    """Creates (once) and exposes the PEM files of the testbed's PKI under a directory."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)

    def path(self, name: str) -> Path:
        return self.dir / name

    def _expected(self) -> list:
        names = [stem + ext for stem in list(CAS) + list(CERTS) for ext in (".crt", ".key")]
        return names + ["sa.key", "sa.pub"]

    def ensure(self) -> None:
        if all((self.dir / name).exists() for name in self._expected()):
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
        cas = {stem: self._ca(stem, cn, now) for stem, cn in CAS.items()}
        for stem, (issuer, cn, org, server, sans) in CERTS.items():
            if (self.dir / (stem + ".crt")).exists() and (self.dir / (stem + ".key")).exists():
                continue
            ca_cert, ca_key = cas[issuer]
            all_sans = [_san(k, v) for k, v in (_LOCAL_SANS + sans if server else sans)]
            self._issue(stem, ca_cert, ca_key, _name(cn, org), server, all_sans, now)
        if not (self.dir / "sa.key").exists() or not (self.dir / "sa.pub").exists():
            sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self._write("sa.key", _key_pem(sa_key))
            self._write("sa.pub", sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        (self.dir / ".done").write_text("ok\n")

    def _ca(self, stem: str, cn: str, now: datetime.datetime):
        """Load the CA `stem`, creating it first when it does not exist yet."""
        crt, key = self.dir / (stem + ".crt"), self.dir / (stem + ".key")
        if crt.exists() and key.exists():
            return x509.load_pem_x509_certificate(crt.read_bytes()), serialization.load_pem_private_key(key.read_bytes(), password=None)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(cn))
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        self._write(stem + ".crt", ca.public_bytes(serialization.Encoding.PEM))
        self._write(stem + ".key", _key_pem(ca_key))
        return ca, ca_key

    def _issue(self, stem, ca_cert, ca_key, subject, server, sans, now) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        usage = [ExtendedKeyUsageOID.SERVER_AUTH] if server else [ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        self._write(stem + ".crt", cert.public_bytes(serialization.Encoding.PEM))
        self._write(stem + ".key", _key_pem(key))

    def _write(self, name: str, data: bytes) -> None:
        target = self.dir / name
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.chmod(0o600)
        tmp.replace(target)
