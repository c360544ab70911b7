"""One fake OCI registry for the unit tests: in-process on 127.0.0.1 (plain HTTP), with a Bearer token realm that
grants what distribution's token servers grant.

Every request needs scopes: ``pull`` on its repository, ``pull,push`` for writes, and ``pull`` on the source of a
cross-repository mount (``from``). A request without a valid token gets 401 with a ``WWW-Authenticate: Bearer``
challenge naming those scopes; a valid token that lacks one gets the same with ``error="insufficient_scope"``. The
token realm (``/token``, Basic auth) grants the scopes asked for, cut down to the user's actions (``users``:
``{name: (password, {"pull", "push"})}``). Blobs and manifests are stored per repository; ``corrupt`` digests are
served with one byte flipped and ``redirect_blobs`` sends blob GETs to ``/storage/`` (which records a forwarded
Authorization header in ``leaked_auth``).

The registry on the testbed (tests/testbed) is the real one; this fake is for what it cannot do on demand.
"""

import base64
import contextlib
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SERVICE = "fake-registry"


class FakeRegistry:
    def __init__(self, users):
        self.users = users
        self.host = None  # "127.0.0.1:<port>" once served
        self.manifests = {}  # (repo, ref) -> (bytes, media type)
        self.blobs = {}  # digest -> bytes
        self.repo_blobs = set()  # (repo, digest)
        self.tokens = {}  # token -> {repo: actions granted}
        self.token_requests = []  # the query of each token request: {"scope": [...], "service": [...]}
        self.corrupt = set()
        self.redirect_blobs = False
        self.leaked_auth = []
        self.uploads = {}
        self.mounts = 0

    def add_blob(self, repo, digest, data=b"blob"):
        self.blobs[digest] = data
        self.repo_blobs.add((repo, digest))

    def requested_scopes(self):
        """The scopes of each token request, in order (a space-separated scope parameter split)."""
        return [[scope for value in query.get("scope", []) for scope in value.split()] for query in self.token_requests]


def _scope_text(needed):
    return " ".join("repository:%s:%s" % (repo, ",".join(sorted(actions))) for repo, actions in needed.items())


def _handler(reg):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, code, body=b"", headers=None):
            self.send_response(code)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _token(self, query):
            reg.token_requests.append(query)
            auth = self.headers.get("Authorization") or ""
            user, _sep, password = base64.b64decode(auth[6:]).decode().partition(":") if auth.startswith("Basic ") else ("", "", None)
            if user not in reg.users or reg.users[user][0] != password:
                return self._send(401, b'{"details":"incorrect username or password"}')
            access = {}
            for scope in (p for value in query.get("scope", []) for p in value.split()):
                _kind, repo, actions = scope.split(":")
                access.setdefault(repo, set()).update(set(actions.split(",")) & reg.users[user][1])
            token = "tok-%d-%s" % (len(reg.tokens), hashlib.sha1(json.dumps(sorted(query.items())).encode()).hexdigest()[:8])
            reg.tokens[token] = access
            return self._send(200, json.dumps({"token": token, "expires_in": 300}).encode(), {"Content-Type": "application/json"})

        def _authorized(self, needed):
            auth = self.headers.get("Authorization") or ""
            token = auth[7:] if auth.startswith("Bearer ") else None
            error = None
            if token in reg.tokens:
                if all(actions <= reg.tokens[token].get(repo, set()) for repo, actions in needed.items()):
                    return True
                error = "insufficient_scope"
            challenge = 'Bearer realm="http://%s/token",service="%s"' % (reg.host, SERVICE)
            if needed:
                challenge += ',scope="%s"' % _scope_text(needed)
            if error:
                challenge += ',error="%s"' % error
            body = json.dumps({"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]}).encode()
            self._send(401, body, {"WWW-Authenticate": challenge, "Content-Type": "application/json"})
            return False

        def handle_one(self):
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/token":
                return self._token(query)
            if url.path.startswith("/storage/"):
                if self.headers.get("Authorization"):
                    reg.leaked_auth.append(url.path)
                return self._send(200, reg.blobs[url.path.rsplit("/", 1)[1]])
            if url.path == "/v2/":
                if self._authorized({}):
                    self._send(200, b"{}", {"Docker-Distribution-API-Version": "registry/2.0"})
                return None
            match = re.match(r"^/v2/(.+)/(manifests|blobs)/(.+)$", url.path)
            if not match:
                return self._send(404)
            repo, kind, ref = match.groups()
            needed = {repo: {"pull", "push"} if self.command in ("PUT", "POST", "PATCH") else {"pull"}}
            if "from" in query:
                needed.setdefault(query["from"][0], set()).add("pull")
            if not self._authorized(needed):
                return None
            if kind == "manifests":
                return self._manifest(repo, ref)
            return self._blob(repo, ref, query)

        def _manifest(self, repo, ref):
            if self.command == "PUT":
                body = self._body()
                digest = "sha256:" + hashlib.sha256(body).hexdigest()
                media_type = self.headers.get("Content-Type")
                reg.manifests[(repo, ref)] = reg.manifests[(repo, digest)] = (body, media_type)
                return self._send(201, b"", {"Docker-Content-Digest": digest})
            if (repo, ref) not in reg.manifests:
                return self._send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}')
            body, media_type = reg.manifests[(repo, ref)]
            return self._send(200, body, {"Content-Type": media_type, "Docker-Content-Digest": "sha256:" + hashlib.sha256(body).hexdigest()})

        def _blob(self, repo, ref, query):
            if ref == "uploads/":
                mount, source = query.get("mount", [None])[0], query.get("from", [None])[0]
                if mount and (source, mount) in reg.repo_blobs:
                    reg.repo_blobs.add((repo, mount))
                    reg.mounts += 1
                    return self._send(201, b"", {"Location": "/v2/%s/blobs/%s" % (repo, mount)})
                upload = "u%d" % len(reg.uploads)
                reg.uploads[upload] = repo
                return self._send(202, b"", {"Location": "/v2/%s/blobs/uploads/%s?_state=abc" % (repo, upload)})
            if ref.startswith("uploads/") and self.command == "PUT":
                body = self._body()
                digest = query["digest"][0]
                if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
                    return self._send(400, b'{"errors":[{"code":"DIGEST_INVALID"}]}')
                reg.add_blob(repo, digest, body)
                return self._send(201, b"", {"Docker-Content-Digest": digest})
            if (repo, ref) not in reg.repo_blobs:
                return self._send(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')
            if reg.redirect_blobs and self.command == "GET":
                return self._send(307, b"", {"Location": "/storage/%s" % ref})
            data = reg.blobs[ref]
            if ref in reg.corrupt:
                data = data[:-1] + bytes([data[-1] ^ 1])
            return self._send(200, data, {"Docker-Content-Digest": ref})

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = handle_one

    return Handler


@contextlib.contextmanager
def serving(registry):
    """Serve ``registry`` on a free 127.0.0.1 port (``registry.host``) until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(registry))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    registry.host = "127.0.0.1:%d" % server.server_address[1]
    try:
        yield registry
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
