# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Minimal OCI distribution (Registry HTTP API v2) client on the standard library (``urllib`` + ``ssl``).

Supported: ``/v2/`` ping, Basic and Bearer (token realm) auth challenges, manifest HEAD/GET/PUT (OCI index and
manifest, Docker manifest list and schema 2), platform selection from an index, blob HEAD/GET with digest
verification, monolithic blob upload (POST + PUT ``?digest=``) and cross-repository mount.

TLS verification is on by default (``ca_file`` adds a CA bundle); plain HTTP is only used when ``plain_http=True``.
Error messages name the registry, repository and HTTP status and never contain credentials or tokens.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import io
import json
import re
import socket
import ssl
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode, urljoin, urlsplit, urlunsplit
from urllib.request import ProxyHandler, Request, build_opener

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import (
    Credentials,
    pick_challenge,
    resolve_credentials,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import (
    AuthenticationError,
    DigestMismatchError,
    NotFoundError,
    PlatformNotFoundError,
    RegistryConnectionError,
    RegistryError,
    TLSError,
    UnsupportedMediaTypeError,
    redact,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.keepalive import KeepAliveHTTPHandler, KeepAliveHTTPSHandler
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import is_loopback_host, parse_reference

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
OCI_LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
DOCKER_LAYER_GZIP = "application/vnd.docker.image.rootfs.diff.tar.gzip"
DOCKER_FOREIGN_LAYER = "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip"

INDEX_TYPES = (OCI_INDEX, DOCKER_LIST)
IMAGE_MANIFEST_TYPES = (OCI_MANIFEST, DOCKER_MANIFEST)
MANIFEST_TYPES = IMAGE_MANIFEST_TYPES + INDEX_TYPES
DEFAULT_PLATFORM = "linux/amd64"
USER_AGENT = "kubeforge.operators-oci/0.1"
CLIENT_ID = "kubeforge.operators"  # the OAuth2 client_id of identity-token requests
MAX_MANIFEST_SIZE = 4 * 1024 * 1024
_CHUNK = 1024 * 1024


def sha256_digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def verify_digest(data, digest, what="content"):
    """Raise :class:`DigestMismatchError` unless ``data`` hashes to ``digest`` (sha256/sha384/sha512)."""
    algo, _sep, expected = digest.partition(":")
    if algo not in ("sha256", "sha384", "sha512"):
        raise DigestMismatchError("unsupported digest algorithm %r for %s" % (algo, what))
    actual = hashlib.new(algo, data).hexdigest()
    if actual != expected.lower():
        raise DigestMismatchError("%s digest mismatch: expected %s, got %s:%s" % (what, digest, algo, actual))


_PLATFORM_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?\Z")


def parse_platform(platform):
    """``"linux/arm64/v8"`` → ``{"os": "linux", "architecture": "arm64", "variant": "v8"}``."""
    platform = platform or DEFAULT_PLATFORM
    if not isinstance(platform, str) or not _PLATFORM_RE.match(platform):
        # also refuses line breaks and other characters that have no place in an image config or index
        raise InvalidInputError("invalid platform %r: expected os/arch[/variant]" % excerpt(str(platform)))
    parts = platform.split("/")
    out = {"os": parts[0], "architecture": parts[1]}
    if len(parts) > 2:
        out["variant"] = parts[2]
    return out


def select_platform(index, platform=DEFAULT_PLATFORM):
    """Pick the manifest descriptor for ``platform`` from an OCI index / Docker manifest list dict."""
    want = parse_platform(platform)
    candidates = []
    available = []
    for desc in index.get("manifests") or []:
        p = desc.get("platform") or {}
        available.append("/".join(x for x in (p.get("os"), p.get("architecture"), p.get("variant")) if x) or "?")
        if p.get("os") != want["os"] or p.get("architecture") != want["architecture"]:
            continue
        if "variant" in want and p.get("variant") and p.get("variant") != want["variant"]:
            continue
        candidates.append(desc)
    if not candidates:
        raise PlatformNotFoundError(
            "no manifest for platform %s in image index (available: %s)" % (platform, ", ".join(available) or "none")
        )
    if "variant" in want:
        exact = [d for d in candidates if (d.get("platform") or {}).get("variant") == want["variant"]]
        if exact:
            return exact[0]
    return candidates[0]


def _scope_actions(scopes):
    """``["repository:a/b:pull,push repository:c:pull"]`` -> ``{("repository", "a/b"): {"pull", "push"}, ...}``."""
    out = {}
    for scope in scopes:
        for part in (scope or "").split():
            kind, _sep, rest = part.partition(":")
            name, _sep, actions = rest.rpartition(":")
            out.setdefault((kind, name), set()).update(a for a in actions.split(",") if a)
    return out


def _insufficient_scope(params):
    return (params or {}).get("error") == "insufficient_scope"


def _strip_query(url):
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class RegistryClient:
    """Client for one registry host (``host[:port]``, e.g. ``quay.io`` or ``127.0.0.1:5000``).

    ``credentials``: :class:`Credentials` or ``None`` (anonymous). ``ca_file``: extra CA bundle (PEM).
    ``verify``: TLS verification (default on). ``plain_http``: talk HTTP instead of HTTPS (explicit opt-in).
    """

    def __init__(self, registry, credentials=None, ca_file=None, verify=True, plain_http=False, timeout=60,
                 user_agent=USER_AGENT):
        self.registry = registry
        self.api_host = "registry-1.docker.io" if registry == "docker.io" else registry
        self.credentials = credentials
        self.ca_file = ca_file
        self.verify = verify
        self.docker_config = None  # where client_for() looked for credentials: for_registry() looks there too
        self.plain_http = bool(plain_http)
        self.timeout = timeout
        self.user_agent = user_agent
        self.base_url = ("http" if self.plain_http else "https") + "://" + self.api_host
        self._secrets = [v for v in (credentials.password, credentials.identity_token) if v] if credentials else []
        self._scheme = None  # "basic" | "bearer" once a challenge was seen
        self._bearer = None  # challenge params
        self._tokens = {}
        handlers = []
        if not self.plain_http:
            try:
                ctx = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
            except (OSError, ssl.SSLError) as e:
                raise TLSError("registry %s: cannot load ca_file %s: %s" % (registry, ca_file, e),
                               registry=registry) from None
            if not verify:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            self._ssl_context = ctx
            handlers.append(KeepAliveHTTPSHandler(context=ctx))
        else:
            self._ssl_context = None
            handlers.append(KeepAliveHTTPHandler())
        if is_loopback_host(self.api_host):
            handlers.append(ProxyHandler({}))
        self._opener = build_opener(*handlers)

    def for_registry(self, registry, verify=None):
        """A client for another registry (a mirror) with this one's TLS settings and timeout; its credentials come
        from the auth files only (explicit credentials stay with the registry they were given for)."""
        creds = resolve_credentials(registry, None, None, self.docker_config)
        client = RegistryClient(registry, credentials=creds, ca_file=self.ca_file,
                                verify=self.verify if verify is None else verify, plain_http=self.plain_http,
                                timeout=self.timeout, user_agent=self.user_agent)
        client.docker_config = self.docker_config
        return client

    def __repr__(self):
        return "RegistryClient(%r, user=%r)" % (self.registry, self.credentials.username if self.credentials else None)

    # ------------------------------------------------------------------ low level
    def _url(self, path):
        if path.startswith("http://") or path.startswith("https://"):
            return path
        return urljoin(self.base_url + "/", path.lstrip("/"))

    def _auth_header(self, scopes):
        if self._scheme == "basic" and self.credentials:
            return self.credentials.basic_header()
        if self._scheme == "bearer":
            key = tuple(sorted(set(scopes)))
            token = self._tokens.get(key)
            if token is None and self._bearer is not None:
                token = self._fetch_token(key)
            if token:
                return "Bearer " + token
        return None

    def _fetch_token(self, scopes, repository=None):
        realm = self._bearer.get("realm")
        if not realm:
            raise AuthenticationError(
                "registry %s: Bearer challenge without realm" % self.registry, registry=self.registry,
                repository=repository, status=401)
        params = []
        if self._bearer.get("service"):
            params.append(("service", self._bearer["service"]))
        for scope in scopes:
            params.append(("scope", scope))
        url = realm + ("&" if "?" in realm else "?") + urlencode(params) if params else realm
        realm_host = urlsplit(realm).netloc
        if urlsplit(realm).scheme != "https" and not (self.plain_http or is_loopback_host(realm_host)):
            raise AuthenticationError(
                "registry %s: refusing to send credentials to non-TLS token realm %s" % (self.registry,
                                                                                         _strip_query(realm)),
                registry=self.registry, repository=repository)
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if self.credentials and self.credentials.identity_token:
            # OAuth2 (the token spec's POST form): the identity token is a refresh token
            form = [("grant_type", "refresh_token"), ("refresh_token", self.credentials.identity_token),
                    ("client_id", CLIENT_ID), ("scope", " ".join(scopes))]
            if self._bearer.get("service"):
                form.append(("service", self._bearer["service"]))
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            req = Request(realm, data=urlencode(form).encode("ascii"), method="POST", headers=headers)
        else:
            req = Request(url, method="GET", headers=headers)
            if self.credentials:
                req.add_unredirected_header("Authorization", self.credentials.basic_header())
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                body = resp.read(1024 * 1024)
        except HTTPError as e:
            status = e.code
            e.close()
            raise AuthenticationError(
                "registry %s: token request to %s failed with HTTP %s%s" % (
                    self.registry, _strip_query(realm), status,
                    " (credentials rejected)" if status in (401, 403) else ""),
                registry=self.registry, repository=repository, status=status) from None
        except (URLError, socket.timeout, OSError) as e:
            raise self._connection_error(e, "token realm " + _strip_query(realm)) from None
        try:
            doc = json.loads(body.decode("utf-8"))
            token = doc.get("token") or doc.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not token:
            raise AuthenticationError(
                "registry %s: token realm %s returned no token" % (self.registry, _strip_query(realm)),
                registry=self.registry, repository=repository)
        self._secrets.append(token)
        self._tokens[tuple(scopes)] = token
        return token

    def _handle_challenge(self, header, scopes, repository, attempt_had_auth):
        challenge = pick_challenge(header or "")
        if challenge is None:
            return False
        scheme, params = challenge
        if scheme == "basic":
            if not self.credentials:
                raise AuthenticationError(
                    "registry %s: authentication required for repository %s but no credentials were given "
                    "(set registry_username/registry_password or a docker config.json entry)" % (
                        self.registry, repository or "-"),
                    registry=self.registry, repository=repository, status=401)
            if self.credentials.identity_token and not self.credentials.password:
                raise AuthenticationError(
                    "registry %s asks for Basic authentication; an identity token works only with token auth (log in "
                    "with a username and password)" % self.registry, registry=self.registry, repository=repository,
                    status=401)
            if self._scheme == "basic" and attempt_had_auth:
                return False
            if self.plain_http and not is_loopback_host(self.api_host):
                raise AuthenticationError(
                    "registry %s: refusing to send Basic credentials over plain HTTP to a non-loopback host"
                    % self.registry, registry=self.registry, repository=repository)
            self._scheme = "basic"
            return True
        if attempt_had_auth and self._scheme == "bearer" and _insufficient_scope(params):
            have = _scope_actions(scopes)
            if all(acts <= have.get(res, set()) for res, acts in _scope_actions([params.get("scope")]).items()):
                # the token was requested for everything the registry wants, yet lacks some of it: the token server
                # granted less (the user lacks that access) and would do so again
                return False
        self._scheme = "bearer"
        self._bearer = params
        wanted = set(scopes)
        if params.get("scope"):
            wanted.update(params["scope"].split(" "))
        key = tuple(sorted(wanted))
        if key != tuple(sorted(set(scopes))):
            # the server asked for more than we anticipated: remember under our key too
            token = self._fetch_token(key, repository)
            self._tokens[tuple(sorted(set(scopes)))] = token
        else:
            self._fetch_token(key, repository)
        return True

    def _connection_error(self, exc, what):
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ssl.SSLCertVerificationError) or isinstance(exc, ssl.SSLCertVerificationError):
            detail = getattr(reason, "verify_message", None) or str(reason)
            return TLSError(
                "registry %s: TLS certificate verification failed for %s: %s (give the registry CA with ca_file, or "
                "disable verification explicitly)" % (self.registry, what, redact(detail, self._secrets)),
                registry=self.registry)
        if isinstance(reason, ssl.SSLError) or isinstance(exc, ssl.SSLError):
            return TLSError("registry %s: TLS error for %s: %s" % (self.registry, what, redact(reason, self._secrets)),
                            registry=self.registry)
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return RegistryConnectionError("registry %s: timed out after %ss (%s)" % (self.registry, self.timeout,
                                                                                      what), registry=self.registry)
        return RegistryConnectionError("registry %s: cannot connect (%s): %s" % (
            self.registry, what, redact(reason, self._secrets)), registry=self.registry)

    def _http_error(self, e, method, what, repository):
        status = e.code
        detail = ""
        try:
            body = e.read(64 * 1024)
            doc = json.loads(body.decode("utf-8"))
            errs = doc.get("errors") or []
            detail = "; ".join("%s: %s" % (x.get("code", "?"), x.get("message", "")) for x in errs if isinstance(x, dict))
        except Exception:  # noqa: BLE001 - body is best effort
            detail = ""
        finally:
            e.close()
        detail = redact(detail, self._secrets)
        base = "registry %s: %s %s%s failed: HTTP %s" % (
            self.registry, method, what, " in repository %s" % repository if repository else "", status)
        if detail:
            base += " (%s)" % detail
        cls = RegistryError
        challenge = pick_challenge(e.headers.get("WWW-Authenticate") or "") if status == 401 and e.headers else None
        if challenge and challenge[0] == "bearer" and _insufficient_scope(challenge[1]):
            cls = AuthenticationError
            base += ": access denied, the token server did not grant %s the scope %s (insufficient_scope)" % (
                "user %s" % self.credentials.username if self.credentials else "anonymous access",
                challenge[1].get("scope") or "this request")
        elif status == 401:
            cls = AuthenticationError
            base += ": authentication failed, check the username/password or docker config"
        elif status == 403:
            cls = AuthenticationError
            base += ": access denied"
        elif status == 404:
            cls = NotFoundError
        return cls(redact(base, self._secrets), registry=self.registry, repository=repository, status=status,
                   reason=detail)

    def request(self, method, path, scopes=(), repository=None, what=None, headers=None, data=None, ok=(200,)):
        """Send one request with auth-challenge handling; return the open response (caller closes it).

        Statuses outside ``ok`` raise (401/403 → :class:`AuthenticationError`, 404 → :class:`NotFoundError`).
        """
        url = self._url(path)
        what = what or _strip_query(url)
        scopes = list(scopes)
        for attempt in range(3):
            hdrs = {"User-Agent": self.user_agent}
            hdrs.update(headers or {})
            req = Request(url, data=data, method=method, headers=hdrs)
            auth = self._auth_header(scopes)
            if auth:
                req.add_unredirected_header("Authorization", auth)
            try:
                resp = self._opener.open(req, timeout=self.timeout)
            except HTTPError as e:
                if e.code == 401 and attempt < 2:
                    header = e.headers.get("WWW-Authenticate")
                    if self._handle_challenge(header, scopes, repository, bool(auth)):
                        e.close()
                        continue
                if e.code in ok:
                    return e
                raise self._http_error(e, method, what, repository) from None
            except (URLError, socket.timeout, OSError) as e:
                raise self._connection_error(e, what) from None
            if resp.status not in ok:
                status = resp.status
                resp.close()
                raise RegistryError("registry %s: %s %s returned unexpected HTTP %s" % (
                    self.registry, method, what, status), registry=self.registry, repository=repository, status=status)
            return resp
        raise AuthenticationError("registry %s: authentication failed for repository %s" % (
            self.registry, repository or "-"), registry=self.registry, repository=repository, status=401)

    # ------------------------------------------------------------------ API
    @staticmethod
    def _pull_scope(repository):
        return "repository:%s:pull" % repository

    @staticmethod
    def _push_scope(repository):
        return "repository:%s:pull,push" % repository

    def ping(self):
        """``GET /v2/`` (authenticating if challenged); returns the ``Docker-Distribution-API-Version`` header."""
        with self.request("GET", "/v2/", what="/v2/") as resp:
            return resp.headers.get("Docker-Distribution-API-Version", "")

    def head_manifest(self, repository, reference, accept=MANIFEST_TYPES, push=False):
        """Return ``{"mediaType", "digest", "size"}`` for a manifest, or ``None`` if it does not exist."""
        scope = self._push_scope(repository) if push else self._pull_scope(repository)
        try:
            with self.request("HEAD", "/v2/%s/manifests/%s" % (repository, quote(reference, safe=":")), [scope],
                              repository, "manifest %s" % reference, {"Accept": ", ".join(accept)}) as resp:
                digest = resp.headers.get("Docker-Content-Digest")
                return {"mediaType": (resp.headers.get("Content-Type") or "").split(";")[0].strip(),
                        "digest": digest, "size": int(resp.headers.get("Content-Length") or 0)}
        except NotFoundError:
            return None

    def get_manifest(self, repository, reference, accept=MANIFEST_TYPES):
        """Return ``(bytes, media_type, digest)``; a digest reference is verified against the content."""
        with self.request("GET", "/v2/%s/manifests/%s" % (repository, quote(reference, safe=":")),
                          [self._pull_scope(repository)], repository, "manifest %s" % reference,
                          {"Accept": ", ".join(accept)}) as resp:
            data = resp.read(MAX_MANIFEST_SIZE + 1)
            media_type = (resp.headers.get("Content-Type") or "").split(";")[0].strip()
            header_digest = resp.headers.get("Docker-Content-Digest")
        if len(data) > MAX_MANIFEST_SIZE:
            raise RegistryError("registry %s: manifest %s in repository %s is larger than %d bytes" % (
                self.registry, reference, repository, MAX_MANIFEST_SIZE), registry=self.registry, repository=repository)
        if ":" in reference:
            verify_digest(data, reference, "manifest %s/%s" % (repository, reference))
            digest = reference
        else:
            digest = sha256_digest(data)
            if header_digest and header_digest.startswith("sha256:") and header_digest != digest:
                raise DigestMismatchError("registry %s: manifest %s:%s digest header %s does not match content %s" % (
                    self.registry, repository, reference, header_digest, digest), registry=self.registry)
        if not media_type or media_type in ("application/json", "text/plain"):
            try:
                media_type = json.loads(data.decode("utf-8")).get("mediaType") or media_type
            except (ValueError, AttributeError):
                pass
        return data, media_type, digest

    def put_manifest(self, repository, reference, data, media_type):
        """``PUT`` a manifest under a tag or digest; returns the digest."""
        with self.request("PUT", "/v2/%s/manifests/%s" % (repository, quote(reference, safe=":")),
                          [self._push_scope(repository)], repository, "manifest %s" % reference,
                          {"Content-Type": media_type}, data, ok=(200, 201, 202)) as resp:
            digest = resp.headers.get("Docker-Content-Digest")
        return digest or sha256_digest(data)

    def blob_exists(self, repository, digest, push=False):
        scope = self._push_scope(repository) if push else self._pull_scope(repository)
        try:
            with self.request("HEAD", "/v2/%s/blobs/%s" % (repository, digest), [scope], repository,
                              "blob %s" % digest):
                return True
        except NotFoundError:
            return False

    def get_blob(self, repository, digest):
        """Download a blob into memory and verify its digest."""
        chunks = []
        self.download_blob(repository, digest, chunks.append)
        return b"".join(chunks)

    def download_blob(self, repository, digest, write):
        """Stream a blob to ``write(chunk)`` (e.g. ``fileobj.write``) verifying the digest at the end."""
        algo, _sep, expected = digest.partition(":")
        h = hashlib.new(algo if algo in ("sha256", "sha384", "sha512") else "sha256")
        size = 0
        with self.request("GET", "/v2/%s/blobs/%s" % (repository, digest), [self._pull_scope(repository)],
                          repository, "blob %s" % digest) as resp:
            while True:
                chunk = resp.read(_CHUNK)
                if not chunk:
                    break
                h.update(chunk)
                size += len(chunk)
                write(chunk)
        if h.hexdigest() != expected.lower():
            raise DigestMismatchError("registry %s: blob %s in repository %s failed digest verification (got %s:%s)" % (
                self.registry, digest, repository, algo, h.hexdigest()), registry=self.registry, repository=repository)
        return size

    def _start_upload(self, repository, mount=None, mount_from=None):
        query = ""
        scopes = [self._push_scope(repository)]
        if mount and mount_from:
            query = "?" + urlencode([("mount", mount), ("from", mount_from)])
            scopes.append(self._pull_scope(mount_from))
        with self.request("POST", "/v2/%s/blobs/uploads/%s" % (repository, query), scopes, repository,
                          "blob upload", {"Content-Length": "0"}, b"", ok=(201, 202)) as resp:
            return resp.status, resp.headers.get("Location")

    def mount_blob(self, repository, digest, from_repository):
        """Cross-repository mount; ``True`` when the registry mounted the blob (HTTP 201)."""
        status = self._start_upload(repository, digest, from_repository)[0]
        return status == 201

    def upload_blob(self, repository, data, digest=None, mount_from=None):
        """Upload ``data`` unless present. Returns ``"exists"``, ``"mounted"`` or ``"uploaded"``."""
        return self.upload_blob_stream(repository, digest or sha256_digest(data), len(data), io.BytesIO(data),
                                       mount_from)

    def _finish_upload(self, repository, location, digest, body, size):
        url = urljoin(self.base_url + "/", location)
        url += ("&" if "?" in url else "?") + urlencode([("digest", digest)])
        with self.request("PUT", url, [self._push_scope(repository)], repository, "blob %s" % digest,
                          {"Content-Type": "application/octet-stream", "Content-Length": str(size)}, body,
                          ok=(201, 204)):
            pass

    def open_blob(self, repository, digest):
        """The open response of ``GET`` blob (the caller reads and closes it; the digest is not verified here)."""
        return self.request("GET", "/v2/%s/blobs/%s" % (repository, digest), [self._pull_scope(repository)],
                            repository, "blob %s" % digest)

    def upload_blob_stream(self, repository, digest, size, reader, mount_from=None, check_exists=True):
        """Upload ``size`` bytes read from ``reader`` (a file object, read in chunks: never whole in memory; or a
        callable returning a context manager of one, opened only when the bytes are needed) as blob ``digest``,
        unless present (``check_exists``: a caller that just looked passes ``False``) or mountable from
        ``mount_from`` (a repository of this registry). Returns ``"exists"``, ``"mounted"`` or ``"uploaded"``; the
        registry refuses content of another digest."""
        if check_exists and self.blob_exists(repository, digest, push=True):
            return "exists"
        status, location = self._start_upload(repository, digest if mount_from else None, mount_from)
        if status == 201:
            return "mounted"
        if not location:
            raise RegistryError("registry %s: blob upload in repository %s returned no Location" % (
                self.registry, repository), registry=self.registry, repository=repository)
        if callable(reader):
            with reader() as opened:
                self._finish_upload(repository, location, digest, opened, size)
        else:
            self._finish_upload(repository, location, digest, reader, size)
        return "uploaded"

    # ------------------------------------------------------------------ helpers
    def resolve_image(self, repository, reference, platform=DEFAULT_PLATFORM):
        """Resolve a tag/digest to a single-platform image.

        Returns a dict: ``manifest`` (parsed), ``manifest_bytes``, ``media_type``, ``digest`` (of the platform
        manifest), ``index_digest`` (or ``None``), ``config`` (parsed), ``config_bytes``.
        """
        data, media_type, digest = self.get_manifest(repository, reference)
        try:
            doc = json.loads(data.decode("utf-8"))
        except ValueError:
            raise UnsupportedMediaTypeError("registry %s: manifest %s:%s is not JSON" % (
                self.registry, repository, reference), registry=self.registry, repository=repository) from None
        media_type = media_type or doc.get("mediaType")
        index_digest = None
        if media_type in INDEX_TYPES or (not media_type and "manifests" in doc):
            index_digest = digest
            try:
                desc = select_platform(doc, platform)
            except PlatformNotFoundError as e:
                raise PlatformNotFoundError("registry %s: %s:%s: %s" % (self.registry, repository, reference, e),
                                            registry=self.registry, repository=repository) from None
            data, media_type, digest = self.get_manifest(repository, desc["digest"])
            doc = json.loads(data.decode("utf-8"))
            media_type = media_type or doc.get("mediaType")
        if media_type not in IMAGE_MANIFEST_TYPES and not (doc.get("schemaVersion") == 2 and "config" in doc):
            raise UnsupportedMediaTypeError("registry %s: %s:%s has unsupported manifest media type %r" % (
                self.registry, repository, reference, media_type), registry=self.registry, repository=repository)
        config_digest = doc["config"]["digest"]
        config_bytes = self.get_blob(repository, config_digest)
        return {
            "manifest": doc,
            "manifest_bytes": data,
            "media_type": media_type or OCI_MANIFEST,
            "digest": digest,
            "index_digest": index_digest,
            "config": json.loads(config_bytes.decode("utf-8")),
            "config_bytes": config_bytes,
        }


def client_for(ref, username=None, password=None, docker_config=None, ca_file=None, verify=True, plain_http=False,
               timeout=60):
    """Build a :class:`RegistryClient` for an image reference (string or ``ImageReference``).

    Credentials: explicit ``username``/``password``, else the docker config (``docker_config`` or the default
    ``$DOCKER_CONFIG/config.json`` / ``~/.docker/config.json``).
    """
    if isinstance(ref, str):
        ref = parse_reference(ref)
    creds = resolve_credentials(ref.registry, username, password, docker_config)
    client = RegistryClient(ref.registry, credentials=creds, ca_file=ca_file, verify=verify, plain_http=plain_http,
                            timeout=timeout)
    client.docker_config = docker_config
    return client


__all__ = [
    "Credentials",
    "RegistryClient",
    "client_for",
    "select_platform",
    "parse_platform",
    "sha256_digest",
    "verify_digest",
]
