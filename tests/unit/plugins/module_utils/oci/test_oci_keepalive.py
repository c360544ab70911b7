"""oci.keepalive against a real HTTP/1.1 server on loopback: requests share one connection, a small unread body is
drained to keep it, a large one is not, a streamed body gets a one-shot connection, and an idle connection the server
closed is replaced without the caller noticing."""

import http.server
import io
import threading
from urllib.request import Request, build_opener

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.keepalive import (
    MAX_IDLE,
    KeepAliveHTTPHandler,
    _Pool,
)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.server.connections += 1

    def log_message(self, *args):
        pass

    def _reply(self, body):
        # recorded before the answer: the client asserts as soon as it has read it
        self.server.connection_headers.append(self.headers.get("Connection"))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.path == "/then-hang-up":
            self.close_connection = True  # closes without saying so: the client's idle connection goes stale

    def do_GET(self):
        self._reply(b"x" * (1 << 20) if self.path == "/big" else b"ok")

    def do_PUT(self):
        self._reply(self.rfile.read(int(self.headers["Content-Length"])))


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.connections = 0
    srv.connection_headers = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _url(server, path):
    return "http://127.0.0.1:%d%s" % (server.server_address[1], path)


def test_requests_share_one_connection(server):
    opener = build_opener(KeepAliveHTTPHandler())
    for attempt in range(5):
        with opener.open(_url(server, "/?%d" % attempt), timeout=5) as resp:
            assert resp.read() == b"ok"
    assert server.connections == 1
    assert server.connection_headers == [None] * 5  # urllib's "Connection: close" is not sent


def test_a_small_unread_body_is_drained_a_large_one_is_not(server):
    opener = build_opener(KeepAliveHTTPHandler())
    with opener.open(_url(server, "/"), timeout=5):
        pass  # "ok" unread: read on close, the connection kept
    with opener.open(_url(server, "/"), timeout=5) as resp:
        assert resp.read() == b"ok"
    assert server.connections == 1
    with opener.open(_url(server, "/big"), timeout=5) as resp:
        assert resp.read(10) == b"x" * 10  # 1 MiB left unread: the connection is dropped, not drained
    with opener.open(_url(server, "/"), timeout=5) as resp:
        assert resp.read() == b"ok"
    assert server.connections == 2


def test_a_streamed_body_gets_a_connection_of_its_own(server):
    opener = build_opener(KeepAliveHTTPHandler())
    req = Request(_url(server, "/upload"), data=io.BytesIO(b"streamed"), method="PUT", headers={"Content-Length": "8"})
    with opener.open(req, timeout=5) as resp:
        assert resp.read() == b"streamed"
    assert server.connection_headers == ["close"]


def test_an_idle_connection_the_server_closed_is_replaced(server):
    opener = build_opener(KeepAliveHTTPHandler())
    with opener.open(_url(server, "/then-hang-up"), timeout=5) as resp:
        assert resp.read() == b"ok"
    with opener.open(Request(_url(server, "/again"), data=b"bytes body", method="PUT"), timeout=5) as resp:
        assert resp.read() == b"bytes body"
    assert server.connections == 2


def test_the_pool_keeps_a_bounded_number_of_idle_connections():
    closed = []

    class Conn:
        def __init__(self, n):
            self.n = n

        def close(self):
            closed.append(self.n)

    pool = _Pool()
    for n in range(MAX_IDLE + 2):
        pool.give("host", Conn(n))
    assert closed == [MAX_IDLE, MAX_IDLE + 1]
    assert pool.take("host").n == MAX_IDLE - 1
    assert pool.take("other") is None
    pool.close()
    assert len(closed) == MAX_IDLE + 1
