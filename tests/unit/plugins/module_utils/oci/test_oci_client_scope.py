"""Bearer ``insufficient_scope`` handling of RegistryClient against a tiny in-process registry + token realm.

Like distribution: a valid token that lacks an action gets 401 with ``error="insufficient_scope"`` and the scope the
request needs. When the client already asked for that scope, the token server granted less and would again: the
client stops at once with a clear error. When the registry wants more than the client asked for, it asks again.
"""

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import AuthenticationError

PASSWORD = "Sc0pe-Pa55word"
GRANTS = {"reader": {"pull"}, "writer": {"pull", "push"}}


class ScopeRegistry:
    def __init__(self):
        self.tokens = {}  # token -> {(repo): actions}
        self.token_requests = []


def _handler(reg):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _send(self, code, body=b"", headers=None):
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _token(self, query):
            user, _sep, password = base64.b64decode(self.headers["Authorization"][6:]).decode().partition(":")
            if password != PASSWORD or user not in GRANTS:
                return self._send(401)
            scopes = [p for v in query.get("scope", []) for p in v.split()]
            reg.token_requests.append(scopes)
            access = {}
            for scope in scopes:
                _kind, name, actions = scope.split(":")
                access.setdefault(name, set()).update(set(actions.split(",")) & GRANTS[user])
            tok = "tok-%d" % len(reg.tokens)
            reg.tokens[tok] = access
            return self._send(200, json.dumps({"token": tok}).encode())

        def _deny(self, needed, error=None):
            chal = 'Bearer realm="http://127.0.0.1:%d/token",service="scope-registry",scope="%s"' % (
                self.server.server_address[1], " ".join("repository:%s:%s" % (r, ",".join(sorted(a))) for r, a in needed.items()))
            if error:
                chal += ',error="%s"' % error
            self._send(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}', {"WWW-Authenticate": chal})

        def handle_one(self):
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            if url.path == "/token":
                return self._token(query)
            repo, _sep, rest = url.path[len("/v2/"):].partition("/blobs/")
            needed = {repo: {"pull", "push"} if self.command == "POST" else {"pull"}}
            if "from" in query:
                needed[query["from"][0]] = {"pull"}
            auth = self.headers.get("Authorization") or ""
            if not auth.startswith("Bearer ") or auth[7:] not in reg.tokens:
                return self._deny(needed)
            access = reg.tokens[auth[7:]]
            if any(not acts <= access.get(r, set()) for r, acts in needed.items()):
                return self._deny(needed, "insufficient_scope")
            if self.command == "POST":
                return self._send(201, b"", {"Location": "/v2/%s/blobs/%s" % (repo, query.get("mount", ["x"])[0])})
            return self._send(200, b"", {"Docker-Content-Digest": rest})

        do_GET = do_HEAD = do_POST = handle_one

    return Handler


@pytest.fixture
def scope_registry():
    reg = ScopeRegistry()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(reg))
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    reg.host = "127.0.0.1:%d" % server.server_address[1]
    yield reg
    server.shutdown()
    server.server_close()
    t.join(5)


def _client(reg, user):
    return RegistryClient(reg.host, credentials=Credentials(user, PASSWORD), plain_http=True)


def test_insufficient_scope_fails_once_and_clearly(scope_registry):
    client = _client(scope_registry, "reader")
    assert client.blob_exists("team/app", "sha256:" + "a" * 64) is True  # pull is granted
    with pytest.raises(AuthenticationError) as info:
        client.mount_blob("team/app", "sha256:" + "b" * 64, "team/other")
    msg = str(info.value)
    assert scope_registry.host in msg and "team/app" in msg and "user reader" in msg
    assert "insufficient_scope" in msg and "repository:team/app:pull,push" in msg
    assert "check the username/password" not in msg
    assert info.value.status == 401
    assert PASSWORD not in msg and not any(tok in msg for tok in scope_registry.tokens)
    # one token per scope set: no futile re-requests of a scope the token server already cut down
    assert scope_registry.token_requests == [["repository:team/app:pull"],
                                             ["repository:team/app:pull,push", "repository:team/other:pull"]]


def test_registry_wanting_more_scope_gets_a_wider_token(scope_registry):
    """The registry needs pull on the mount source too, which the request did not name: the client asks again."""
    client = _client(scope_registry, "writer")
    assert client.blob_exists("team/dest", "sha256:" + "c" * 64, push=True)  # a cached token for team/dest only
    with client.request("POST", "/v2/team/dest/blobs/uploads/?mount=sha256:%s&from=team/src" % ("c" * 64),
                        ["repository:team/dest:pull,push"], "team/dest", "blob upload", {"Content-Length": "0"}, b"",
                        ok=(201, 202)) as resp:
        assert resp.status == 201
    assert len(scope_registry.token_requests) == 2
    assert scope_registry.token_requests[-1] == ["repository:team/dest:pull,push", "repository:team/src:pull"]


def test_mount_with_both_scopes_asked_upfront(scope_registry):
    client = _client(scope_registry, "writer")
    assert client.mount_blob("team/dest", "sha256:" + "d" * 64, "team/src") is True
    assert sorted(scope_registry.token_requests[-1]) == ["repository:team/dest:pull,push", "repository:team/src:pull"]
