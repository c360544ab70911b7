"""A minimal registry token server (the Docker/OCI "token" auth that distribution's `auth: token` trusts), for tests.

    GET /token?service=<service>&scope=repository:<name>:<actions>[&scope=...]   (HTTP Basic credentials)
    POST /token  grant_type=refresh_token&refresh_token=<identity token>&service=..&client_id=..&scope=..  (OAuth2)

Users live in an in-memory table; an ACL of ``(user, fnmatch pattern, actions)`` rules decides what each requested
scope is granted (the intersection: asking for ``pull,push`` with pull-only rights yields a pull-only token, as the
spec says; the registry then refuses the push). Several ``scope`` parameters (and space-separated scopes in one) are
honoured, as a cross-repository mount needs ``pull`` on the source and ``push`` on the destination.

The answer is ``{"token", "access_token", "expires_in", "issued_at"}``; the token is an ES256 JWT with the claims
``iss, sub, aud, exp, nbf, iat, jti, access``, and its signing certificate in the ``x5c`` header. That certificate is
self-signed and written to ``rootcertbundle``, the file the registry's config names. The server is HTTPS on a free
127.0.0.1 port, in a daemon thread of the calling process: ``stop()`` (or the process exiting) ends it.
"""

import base64
import datetime
import fnmatch
import hmac
import json
import ssl
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

SERVICE = "kubeforge-token-registry"
ISSUER = "kubeforge-testbed-token-server"
# (user, repository pattern, actions it may be granted)
DEFAULT_ACL = (
    ("pusher", "kubeforge/*", ("pull", "push")),
    ("reader", "kubeforge/*", ("pull",)),
)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def parse_scopes(values) -> list:
    """``["repository:a/b:pull,push repository:c:pull"]`` -> ``[("repository", "a/b", ["pull", "push"]), ...]``."""
    out = []
    for value in values:
        for scope in value.split():
            kind, _sep, rest = scope.partition(":")
            name, _sep, actions = rest.rpartition(":")
            if kind and name:
                out.append((kind, name, [a for a in actions.split(",") if a]))
    return out


class TokenServer:
    """One token server: ``start()``, then ``realm`` / ``registry_auth`` for the registry config, ``stop()``.

    ``requests`` lists every token request as ``{"user", "scopes", "granted", "status"}`` (no secrets), so tests
    can see which scopes a client asked for.
    """

    def __init__(self, directory: Path, users: dict, tls_cert: str, tls_key: str, acl=DEFAULT_ACL, service: str = SERVICE,
                 issuer: str = ISSUER, ttl: int = 300):
        self.root = Path(directory)
        self.users = dict(users)
        # An identity token per user (docker login's refresh token, the OAuth2 flow of the token spec).
        self.identity_tokens = {"idt-" + uuid.uuid4().hex: user for user in self.users}
        self.acl = tuple(acl)
        self.service = service
        self.issuer = issuer
        self.ttl = ttl
        self.tls_cert, self.tls_key = tls_cert, tls_key
        self.requests: list = []
        self.port = 0
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self._key = None
        self._x5c: list = []

    @property
    def realm(self) -> str:
        return f"https://127.0.0.1:{self.port}/token"

    @property
    def rootcertbundle(self) -> str:
        return str(self.root / "token-signer.crt")

    @property
    def registry_auth(self) -> dict:
        """The values of distribution's ``auth: token:`` section (see testbed.registry.LocalRegistry)."""
        return {"realm": self.realm, "service": self.service, "issuer": self.issuer, "rootcertbundle": self.rootcertbundle}

    # ------------------------------------------------------------------ grants and tokens
    def allowed(self, user: str, kind: str, name: str) -> set:
        if kind != "repository":
            return set()
        granted = set()
        for rule_user, pattern, actions in self.acl:
            if rule_user == user and fnmatch.fnmatchcase(name, pattern):
                granted.update(actions)
        return granted

    def grant(self, user: str, scopes: list) -> list:
        """The ``access`` claim: per requested resource, the requested actions the ACL allows (empty ones dropped)."""
        merged: dict = {}
        for kind, name, actions in scopes:
            allowed = self.allowed(user, kind, name)
            merged.setdefault((kind, name), set()).update(a for a in actions if a in allowed)
        return [{"type": k, "name": n, "actions": sorted(a)} for (k, n), a in merged.items() if a]

    def issue(self, user: str, access: list) -> dict:
        now = int(time.time())
        header = {"typ": "JWT", "alg": "ES256", "x5c": self._x5c}
        claims = {"iss": self.issuer, "sub": user, "aud": self.service, "exp": now + self.ttl, "nbf": now - 1, "iat": now,
                  "jti": uuid.uuid4().hex, "access": access}
        signing_input = _b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + _b64url(
            json.dumps(claims, separators=(",", ":")).encode())
        r, s = decode_dss_signature(self._key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256())))
        token = signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))  # JWS: raw r || s
        issued = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"token": token, "access_token": token, "expires_in": self.ttl, "issued_at": issued}

    def _make_signer(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubeforge-token-signer")])
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, False, False, False), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self._x5c = [base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode("ascii")]  # std base64
        self.root.mkdir(parents=True, exist_ok=True)
        Path(self.rootcertbundle).write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def check_user(self, header: str) -> Optional[str]:
        """The user name when ``header`` is valid Basic auth for a known user, else ``None``."""
        if not header.lower().startswith("basic "):
            return None
        try:
            user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        expected = self.users.get(user)
        if not sep or expected is None or not hmac.compare_digest(password.encode(), expected.encode()):
            return None
        return user

    def identity_token(self, user: str) -> str:
        return next(token for token, owner in self.identity_tokens.items() if owner == user)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "TokenServer":
        self._make_signer()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.tls_cert, self.tls_key)
        self._httpd = _HTTPSServer(("127.0.0.1", 0), _handler(self), ctx)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name=f"token-server-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=10)
            self._httpd = None


class _HTTPSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, ctx: ssl.SSLContext):
        super().__init__(address, handler)
        self.ssl_context = ctx

    def finish_request(self, request, client_address):
        # TLS handshake in the request's own thread, so a stalled client cannot block accept().
        request.settimeout(10)
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def _handler(server: TokenServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "kubeforge-token-server"

        def log_message(self, *args):
            pass

        def _json(self, code: int, doc: dict, headers: Optional[dict] = None) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 - BaseHTTPRequestHandler's naming
            url = urlsplit(self.path)
            if url.path != "/token":
                return self._json(404, {"errors": [{"code": "NOT_FOUND", "message": "no such endpoint"}]})
            query = parse_qs(url.query)
            scopes = parse_scopes(query.get("scope", []))
            record = {"user": None, "scopes": [s for v in query.get("scope", []) for s in v.split()], "granted": [], "status": 0}
            server.requests.append(record)
            if query.get("service", [server.service])[0] != server.service:
                record["status"] = 400
                return self._json(400, {"errors": [{"code": "INVALID_REQUEST", "message": "unknown service"}]})
            user = server.check_user(self.headers.get("Authorization") or "")
            if user is None:
                record["status"] = 401
                return self._json(401, {"errors": [{"code": "UNAUTHORIZED", "message": "invalid username or password"}]},
                                  {"WWW-Authenticate": 'Basic realm="kubeforge-token-server"'})
            record["user"] = user
            record["granted"] = server.grant(user, scopes)
            record["status"] = 200
            return self._json(200, server.issue(user, record["granted"]))

        def do_POST(self):  # noqa: N802 - BaseHTTPRequestHandler's naming
            """The OAuth2 form of the token spec: ``grant_type=refresh_token`` with an identity token."""
            if urlsplit(self.path).path != "/token":
                return self._json(404, {"errors": [{"code": "NOT_FOUND", "message": "no such endpoint"}]})
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(min(length, 64 * 1024)).decode("utf-8", "replace"))
            scopes = [s for v in form.get("scope", []) for s in v.split()]
            record = {"user": None, "scopes": scopes, "granted": [], "status": 0, "grant_type": form.get("grant_type", [""])[0]}
            server.requests.append(record)
            if record["grant_type"] != "refresh_token" or form.get("service", [""])[0] != server.service or not form.get("client_id"):
                record["status"] = 400
                return self._json(400, {"error": "invalid_request"})
            user = server.identity_tokens.get(form.get("refresh_token", [""])[0])
            if user is None:
                record["status"] = 401
                return self._json(401, {"error": "invalid_grant"})
            record["user"] = user
            record["granted"] = server.grant(user, parse_scopes(scopes))
            record["status"] = 200
            issued = server.issue(user, record["granted"])
            return self._json(200, {"access_token": issued["access_token"], "expires_in": issued["expires_in"], "issued_at": issued["issued_at"]})

    return Handler
