# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Persistent (keep-alive) connections for ``urllib``: one TLS handshake per connection, not per request.

urllib sends ``Connection: close`` on every request. A registry copy makes hundreds of small requests (HEAD, POST,
manifest PUT), each paying a TCP and TLS handshake; these handlers keep idle connections in a small pool per host
instead. A connection goes back to the pool only when its response was read to the end (or had no body) and the
server did not ask to close; bodies that are streams (blob uploads) always use a fresh connection, so a request is
only re-sent - once, on a fresh connection - when it has no body or a bytes body and an idle connection turned out
to be closed by the server.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client
import ssl
import threading
from urllib.error import URLError
from urllib.request import HTTPHandler, HTTPSHandler

MAX_IDLE = 8  # idle connections kept per host
SEND_BLOCK = 1 << 20  # a streamed body is sent in 1 MiB blocks (http.client's default, 8 KiB, costs a call each)
_DRAIN_LIMIT = 64 * 1024  # an unread body up to this size is read to keep the connection
_STALE = (http.client.RemoteDisconnected, ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


class _Pool:
    def __init__(self):
        self._idle = {}
        self._lock = threading.Lock()

    def take(self, key):
        with self._lock:
            conns = self._idle.get(key)
            return conns.pop() if conns else None

    def give(self, key, conn):
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if len(conns) < MAX_IDLE:
                conns.append(conn)
                return
        conn.close()

    def close(self):
        with self._lock:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()


class _PooledResponse(http.client.HTTPResponse):
    """Gives its connection back to the pool on ``close()`` when the body was read to the end."""

    release = None

    def close(self):
        release, self.release = self.release, None
        reusable = False
        if release is not None and not self.will_close:
            if self.fp is not None and self.length is not None and self.length <= _DRAIN_LIMIT:
                try:
                    self.read()
                except (OSError, http.client.HTTPException):
                    pass
            reusable = self.fp is None or self.length == 0
        super().close()
        if release is not None:
            release(reusable)


class _KeepAliveMixin:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pool = _Pool()

    def do_open(self, http_class, req, **http_conn_args):
        # a tunnel (proxy) or a streamed body: urllib's own one-shot connection
        if req._tunnel_host or not (req.data is None or isinstance(req.data, bytes)):
            return super().do_open(http_class, req, blocksize=SEND_BLOCK, **http_conn_args)
        if not req.host:
            raise URLError("no host given")
        key = (http_class, req.host)
        headers = dict(req.unredirected_hdrs)
        headers.update({k: v for k, v in req.headers.items() if k not in headers})
        headers = {name.title(): value for name, value in headers.items()}
        for fresh in (False, True):
            conn = None if fresh else self.pool.take(key)
            reused = conn is not None
            if conn is None:
                conn = http_class(req.host, timeout=req.timeout, **http_conn_args)
                conn.response_class = _PooledResponse
            try:
                conn.request(req.get_method(), req.selector, req.data, headers,
                             encode_chunked=req.has_header("Transfer-encoding"))
                resp = conn.getresponse()
            except _STALE as err:
                conn.close()
                if reused:
                    continue  # the server closed the idle connection: once more on a new one
                raise URLError(err) from None
            except OSError as err:
                conn.close()
                raise URLError(err) from None
            except BaseException:
                conn.close()
                raise
            break

        def release(reusable, conn=conn):
            if reusable:
                self.pool.give(key, conn)
            else:
                conn.close()

        resp.release = release
        resp.url = req.get_full_url()
        resp.msg = resp.reason
        return resp


class KeepAliveHTTPSHandler(_KeepAliveMixin, HTTPSHandler):
    """``HTTPSHandler`` with a pool of persistent connections."""


class KeepAliveHTTPHandler(_KeepAliveMixin, HTTPHandler):
    """``HTTPHandler`` with a pool of persistent connections."""
