"""The testbed PKI: created once, and completed (not replaced) when a newer testbed needs more files."""

import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from testbed.pki import BENCH_USER, Pki


def _cert(pki, stem):
    return x509.load_pem_x509_certificate(pki.path(stem + ".crt").read_bytes())


def _signed_by(cert, ca):
    ca.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
    return cert.issuer == ca.subject


def test_an_older_pki_gets_only_the_missing_files_signed_by_its_existing_ca(tmp_path):
    pki = Pki(tmp_path)
    pki.ensure()
    ca_before = pki.path("ca.crt").read_bytes()
    admin_before = pki.path("admin.crt").read_bytes()
    for name in ("bench.crt", "bench.key", "front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt", "packageserver-serving.crt"):
        pki.path(name).unlink()

    pki.ensure()

    assert pki.path("ca.crt").read_bytes() == ca_before
    assert pki.path("admin.crt").read_bytes() == admin_before
    assert _signed_by(_cert(pki, "bench"), _cert(pki, "ca"))
    assert _signed_by(_cert(pki, "front-proxy-client"), _cert(pki, "front-proxy-ca"))
    # A CA of its own: kube-apiserver trusts X-Remote-* headers only from clients it signed.
    assert _cert(pki, "front-proxy-ca").subject != _cert(pki, "ca").subject


def test_the_bench_user_has_no_groups_and_packageserver_serves_its_service_name(tmp_path):
    pki = Pki(tmp_path)
    pki.ensure()
    bench = _cert(pki, "bench")
    assert [a.value for a in bench.subject] == [BENCH_USER]
    sans = _cert(pki, "packageserver-serving").extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "packageserver-service.olm.svc" in sans.get_values_for_type(x509.DNSName)
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in tmp_path.glob("*.key"))
