"""End-to-end checks of the adapter with the real kubernetes client against a tiny fake API server on 127.0.0.1.

Covers what fakes of the client cannot: kubeconfig → kubernetes.core client → discovery → HTTP, the dryRun query
parameter actually sent in check mode, and watch_until on a real chunked watch stream (including 410 Gone).
The lead's integration tests run the same code against a real kube-apiserver.
"""

import functools
import json
import os
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import client as kf_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import objects, observe, watch
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError

CONFIGMAPS = {
    "name": "configmaps",
    "singularName": "configmap",
    "namespaced": True,
    "kind": "ConfigMap",
    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    "shortNames": ["cm"],
}

WIDGETS = {"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget", "verbs": ["get", "list", "watch"]}


class FakeAPI:
    def __init__(self):
        self.objects = {}
        self.resource_version = 100
        self.requests = []
        self.watch_scripts = []
        self.widgets_installed = False
        self.lock = threading.Lock()
        self.watches_ended = 0  # watch streams that reached the end of their script
        self.stopped = threading.Event()  # set when the test ends: sleeping streams end at once

    def next_rv(self):
        self.resource_version += 1
        return str(self.resource_version)

    def configmap(self, name, data, namespace="ns"):
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": self.next_rv()},
            "data": data,
        }


def make_handler(api):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked watch streams, like a real API server

        def log_message(self, *args):
            pass

        def _send(self, code, body):
            payload = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def _route(self, method):
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            with api.lock:
                api.requests.append((method, url.path, query))
            parts = url.path.strip("/").split("/")
            if url.path == "/version":
                return self._send(200, {"major": "1", "minor": "35", "gitVersion": "v1.35.0"})
            if url.path == "/api":
                return self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
            if url.path == "/apis":
                groups = []
                if api.widgets_installed:
                    version = {"groupVersion": "example.com/v1", "version": "v1"}
                    groups.append({"name": "example.com", "versions": [version], "preferredVersion": version})
                return self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
            if url.path == "/apis/example.com/v1" and api.widgets_installed:
                return self._send(200, {"kind": "APIResourceList", "groupVersion": "example.com/v1", "resources": [WIDGETS]})
            if url.path == "/api/v1":
                return self._send(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [CONFIGMAPS]})
            if parts[:3] == ["api", "v1", "namespaces"] and len(parts) >= 5 and parts[4] == "configmaps":
                namespace = parts[3]
                name = parts[5] if len(parts) > 5 else None
                return self._configmaps(method, namespace, name, query)
            return self._send(404, {"kind": "Status", "code": 404, "message": "no route " + url.path})

        def _configmaps(self, method, namespace, name, query):
            key = (namespace, name)
            if method == "GET" and name is None and query.get("watch") in ("True", "true", "1"):
                return self._watch(float(query.get("timeoutSeconds") or 30))
            if method == "GET" and name is None:
                selected = query.get("fieldSelector", "")
                items = [o for (ns, n), o in api.objects.items() if ns == namespace and (not selected or selected == "metadata.name=" + n)]
                return self._send(
                    200, {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": str(api.resource_version)}, "items": items}
                )
            if method == "GET":
                if key not in api.objects:
                    return self._send(404, {"kind": "Status", "code": 404, "reason": "NotFound", "message": "not found"})
                return self._send(200, api.objects[key])
            if method == "POST":
                body = self._body()
                body["metadata"]["creationTimestamp"] = "2026-11-21T00:00:00Z"
                body["metadata"]["resourceVersion"] = api.next_rv()
                if "dryRun" not in query:
                    api.objects[(namespace, body["metadata"]["name"])] = body
                return self._send(201, body)
            if method == "PATCH":
                current = json.loads(json.dumps(api.objects[key]))
                current.setdefault("data", {}).update(self._body().get("data", {}))
                current["metadata"]["resourceVersion"] = api.next_rv()
                if "dryRun" not in query:
                    api.objects[key] = current
                return self._send(200, current)
            if method == "DELETE":
                if "dryRun" not in query:
                    api.objects.pop(key, None)
                return self._send(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
            return self._send(405, {"kind": "Status", "code": 405})

        def _watch(self, timeout_seconds):
            # Like the real API server, end the stream after timeoutSeconds.
            ends = time.monotonic() + timeout_seconds
            script = api.watch_scripts.pop(0) if api.watch_scripts else [("sleep", 0.2)]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for step in script:
                    if isinstance(step, tuple) and step[0] == "sleep":
                        if api.stopped.wait(max(0, min(step[1], ends - time.monotonic()))):
                            break
                        continue
                    if time.monotonic() >= ends:
                        break
                    if callable(step):
                        step = step()
                    line = json.dumps(step).encode() + b"\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                api.watches_ended += 1
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped watching

        def do_GET(self):
            self._route("GET")

        def do_POST(self):
            self._route("POST")

        def do_PATCH(self):
            self._route("PATCH")

        def do_DELETE(self):
            self._route("DELETE")

    return Handler


@pytest.fixture
def api(tmp_path, monkeypatch):
    # kubernetes.core's discovery cache file goes to tempfile.gettempdir(): keep it in tmp_path.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    state = FakeAPI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "fake", "user": {"token": "t"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
        "current-context": "fake",
    }
    state.kubeconfig = str(tmp_path / "kubeconfig")
    with open(state.kubeconfig, "w") as handle:
        yaml.safe_dump(config, handle)
    yield state
    state.stopped.set()
    server.shutdown()
    server.server_close()


def connect(api, fake_module, check_mode=False):
    return kf_client.get_client(fake_module({"kubeconfig": api.kubeconfig}, check_mode=check_mode))


def mutations(api):
    return [(m, p, q) for m, p, q in api.requests if m != "GET"]


@pytest.mark.parametrize("check_mode", [False, True])
def test_create_patch_delete_send_dry_run_only_in_check_mode(api, fake_module, check_mode):
    client = connect(api, fake_module, check_mode)
    resource = kf_client.find_resource(client, "ConfigMap", "v1")
    definition = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns"}, "data": {"a": "1"}}

    created = objects.create_object(client, resource, definition)
    assert created.changed and created.before is None
    assert created.after["metadata"]["creationTimestamp"]  # what the server would store
    assert (("ns", "cfg") in api.objects) is not check_mode

    api.objects[("ns", "cfg")] = api.configmap("cfg", {"a": "1"})
    patched = objects.patch_object(client, resource, "cfg", {"data": {"a": "2"}}, namespace="ns")
    assert patched.changed and patched.before is None and patched.after["data"] == {"a": "2"}  # not read first
    assert api.objects[("ns", "cfg")]["data"] == ({"a": "1"} if check_mode else {"a": "2"})

    deleted = objects.delete_object(client, resource, "cfg", namespace="ns")
    assert deleted.changed and deleted.after is None
    assert (("ns", "cfg") in api.objects) is check_mode

    sent = mutations(api)
    assert [m for m, _path, _query in sent] == ["POST", "PATCH", "DELETE"]
    assert all((q.get("dryRun") == "All") is check_mode for _m, _path, q in sent)


def test_watch_until_on_a_real_stream(api, fake_module):
    client = connect(api, fake_module)
    api.objects[("ns", "cfg")] = api.configmap("cfg", {"phase": "Pending"})
    api.watch_scripts = [
        [
            {"type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "150"}}},
            lambda: {"type": "MODIFIED", "object": api.configmap("cfg", {"phase": "Installing"})},
            ("sleep", 0.1),
            lambda: {"type": "MODIFIED", "object": api.configmap("cfg", {"phase": "Succeeded"})},
            ("sleep", 60),
        ]
    ]
    result = watch.watch_until(client, "v1", "ConfigMap", "cfg", "ns", lambda o: o is not None and o["data"]["phase"] == "Succeeded", 120)
    assert result["data"] == {"phase": "Succeeded"}
    assert api.watches_ended == 0  # returned on the event, did not wait for the stream to end
    watches = [q for m, p, q in api.requests if q.get("watch")]
    assert watches[0]["fieldSelector"] == "metadata.name=cfg"
    assert watches[0]["resourceVersion"] == "101"


def test_watch_until_relists_after_gone(api, fake_module):
    client = connect(api, fake_module)
    api.objects[("ns", "cfg")] = api.configmap("cfg", {"phase": "Pending"})

    def flip():
        api.objects[("ns", "cfg")] = api.configmap("cfg", {"phase": "Succeeded"})
        return {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "code": 410, "reason": "Expired", "message": "too old"}}

    api.watch_scripts = [[flip]]
    result = watch.watch_until(client, "v1", "ConfigMap", "cfg", "ns", lambda o: o["data"]["phase"] == "Succeeded", 20)
    assert result["data"] == {"phase": "Succeeded"}
    lists = [q for m, p, q in api.requests if p == "/api/v1/namespaces/ns/configmaps" and not q.get("watch")]
    assert len(lists) == 2


def test_watch_until_times_out_with_last_object(api, fake_module, monkeypatch):
    """The deadline passes once the predicate has judged the streamed object (a clock of the test's own: with a real
    one, a loaded machine may not deliver the stream within the timeout); the wait ends though the stream is open."""
    client = connect(api, fake_module)
    api.objects[("ns", "cfg")] = api.configmap("cfg", {"phase": "Pending"})
    api.watch_scripts = [[lambda: {"type": "MODIFIED", "object": api.configmap("cfg", {"phase": "Installing"})}, ("sleep", 60)]]
    judged = []

    def never(o):
        judged.append(o["data"]["phase"])
        return False

    def clock():  # real time, 30 s ahead once the streamed object was judged
        return time.monotonic() + (30 if judged[-1:] == ["Installing"] else 0)

    monkeypatch.setattr(watch, "observe", functools.partial(observe.observe, clock=clock))
    with pytest.raises(ResourceTimeoutError) as info:
        watch.watch_until(client, "v1", "ConfigMap", "cfg", "ns", never, 20)
    assert info.value.last_object["data"] == {"phase": "Installing"}
    assert info.value.duration >= 30
    assert api.watches_ended == 0


def test_find_resource_sees_a_crd_installed_after_discovery(api, fake_module):
    # kubernetes.core #351: "Failed to find exact match" right after a CRD/operator install (stale discovery cache).
    client = connect(api, fake_module)
    kf_client.find_resource(client, "ConfigMap", "v1")  # discovery cached without example.com
    with pytest.raises(ResourceNotFoundError):
        client.resource("Widget", "example.com/v1")
    api.widgets_installed = True
    resource = kf_client.find_resource(client, "Widget", "example.com/v1")
    assert resource.kind == "Widget" and resource.group_version == "example.com/v1"
    # a fresh client (new module run) reads the refreshed on-disk cache
    cache_files = [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("k8srcp-")]
    assert cache_files
    with open(os.path.join(tempfile.gettempdir(), cache_files[0])) as handle:
        assert "example.com" in handle.read()
