"""The fakes of the unit tests: one ``FakeModule`` (AnsibleModule, or a KubeforgeModule handed to glue code), one
fake dynamic client (``FakeDynamicClient``, kubernetes.dynamic's client with its discovery, its writes and watch
streams; a kind's LIST and WATCH answers can be scripted for the watch engine). It records what the code under test
asked for, so tests assert on requests as well as on results.
"""

import copy
import functools
import json
import threading
import time

from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

# ------------------------------------------------------------------------------------------------------ modules


class ModuleExit(Exception):
    """What ``FakeModule.exit_json`` and ``fail_json`` raise where AnsibleModule would end the process: ``kind`` is
    ``"exit"`` or ``"fail"``, ``result`` the keyword arguments."""

    def __init__(self, kind, result):
        super().__init__(kind)
        self.kind = kind
        self.result = result


class FakeModule:
    """Stands in for AnsibleModule (for instance as KubeforgeModule's ``module_class``) and for a KubeforgeModule
    handed to glue code.

    ``params`` start from the defaults of ``argument_spec`` (None where there is none), then ``params``.
    ``exit_json``/``fail_json`` keep their result in ``exited``/``failed`` and raise ModuleExit; ``warn`` and
    ``requires`` are recorded in ``warnings`` and ``required``; ``resource(kind, api_version)`` answers from
    ``resources`` (``{(kind, api_version): resource}``). Other keyword arguments (AnsibleModule's
    ``supports_check_mode``, ...) are kept in ``init_kwargs`` with ``argument_spec``.
    """

    def __init__(self, params=None, argument_spec=None, check_mode=False, diff=False, client=None, resources=None, **module_kwargs):
        self.init_kwargs = dict(module_kwargs, argument_spec=argument_spec)
        self.params = {name: spec.get("default") for name, spec in (argument_spec or {}).items()}
        self.params.update(params or {})
        self.check_mode = check_mode
        self.server_side_dry_run = check_mode  # what kubernetes.core's client reads to send dryRun=All
        self._diff = diff
        self._name = "fake"
        self.client = client
        self.resources = dict(resources or {})
        self.warnings = []
        self.no_log_values = set()
        self.required = []
        self.exited = None
        self.failed = None

    def warn(self, msg):
        self.warnings.append(msg)

    def requires(self, dependency, minimum=None, reason=None):
        self.required.append((dependency, minimum, reason))

    def exit_json(self, **result):
        self.exited = result
        raise ModuleExit("exit", result)

    def fail_json(self, **result):
        self.failed = result
        raise ModuleExit("fail", result)

    def resource(self, kind, api_version):
        assert (kind, api_version) in self.resources, f"unexpected resource {api_version} {kind}"
        return self.resources[(kind, api_version)]

    @property
    def cluster(self):
        """KubeforgeModule's ``Cluster`` facade, its lookups answered from ``resources`` first."""
        if getattr(self, "_cluster", None) is None:
            from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster  # noqa: PLC0415 - tests/lib imports no collection code at load

            self._cluster = Cluster(self.client, resources=self.resources)
        return self._cluster


# --------------------------------------------------------------------------------------------- the API server


def api_exception(status, message):
    """An ApiException with a Kubernetes Status body, as the client raises for an error answer."""
    exc = ApiException(status=status, reason="Forbidden" if status == 403 else "Error")
    exc.body = json.dumps({"kind": "Status", "message": message, "code": status})
    return exc


def not_found():
    return NotFoundError(api_exception(404, "not found"))


def apply_json_patch(obj, ops):
    """RFC 6902 add/replace/remove/test on a copy of ``obj``; a failed ``test`` answers 422 like the API server."""
    obj = copy.deepcopy(obj)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = obj
        for part in parts[:-1]:
            parent = parent[part]
        last = parts[-1]
        if op["op"] == "test":
            if parent.get(last) != op["value"]:
                raise api_exception(422, f"the server rejected our request due to an error in our request: test failed at {op['path']}")
        elif op["op"] == "replace" and last not in parent:
            raise api_exception(422, f"the server rejected our request due to an error in our request: replace of a missing {op['path']}")
        elif op["op"] in ("add", "replace"):
            parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "remove":
            del parent[last]
    return obj


def selected(obj, label_selector=None, field_selector=None):
    """Whether ``obj`` matches a label selector of ``key=value`` and ``!key`` terms and a ``metadata.name=`` field
    selector (what the code under test sends)."""
    labels = obj["metadata"].get("labels") or {}
    for term in filter(None, (label_selector or "").split(",")):
        if term.startswith("!"):
            if term[1:] in labels:
                return False
        else:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
    if field_selector:
        assert field_selector.startswith("metadata.name="), field_selector
        return obj["metadata"]["name"] == field_selector.split("=", 1)[1]
    return True


# Kinds a request must name no namespace for.
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "APIService",
        "ClusterCatalog",
        "ClusterExtension",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Namespace",
        "Node",
        "Operator",
        "SecurityContextConstraints",
    }
)


class DiscoveredResource:
    """What discovery returns for a kind (kubernetes.dynamic's Resource, as far as the fakes need it). Found through a
    FakeDynamicClient's discovery it is bound to that client, as a real Resource is: ``resource.get(...)``,
    ``resource.create(...)``, ... are ``client.get(resource, ...)``, ... (kubernetes.core's K8SClient and the watch
    engine call resources this way)."""

    def __init__(self, kind, api_version=None, client=None):
        self.kind = kind
        self.api_version = api_version
        self.client = client
        self.name = kind.lower() + "s"  # the plural, as discovery names it (for the kinds the tests use)
        self.namespaced = kind not in CLUSTER_SCOPED_KINDS

    def __getattr__(self, name):
        if name.startswith("_") or self.__dict__.get("client") is None:
            raise AttributeError(name)
        return functools.partial(getattr(self.client, name), self)


class FakeDiscovery:
    """A dynamic client's ``resources``: ``get(api_version, kind)`` finds the kinds in ``served`` whose group version
    is in the discovery cache (``cached``); ``invalidate_cache()`` (a refresh) caches everything served. Lookups
    (``(api_version, kind)``) and refreshes are counted. ``handles`` gives the resource object to return for a kind
    (default: a DiscoveredResource bound to ``client``)."""

    def __init__(self, served=(), cached=None, handles=None, client=None):
        self.handles = dict(handles or {})
        self.served = set(served) | set(self.handles)
        self.cached = {api_version for api_version, _kind in self.served} if cached is None else set(cached)
        self.client = client
        self.lookups = []
        self.invalidations = 0

    def parse_api_groups(self, request_resources=False):
        assert request_resources is False
        groups = {}
        for api_version in self.cached:
            if "/" in api_version:  # the core group ("v1") is under "api"
                group, version = api_version.split("/")
                groups.setdefault(group, {})[version] = object()
        return {"api": {"": {"v1": object()}}, "apis": groups}

    def get(self, api_version, kind):
        self.lookups.append((api_version, kind))
        if (api_version, kind) not in self.served or api_version not in self.cached:
            raise ResourceNotFoundError(f"No matches found for {{'api_version': '{api_version}', 'kind': '{kind}'}}")
        return self.handles.get((api_version, kind)) or DiscoveredResource(kind, api_version, self.client)

    def invalidate_cache(self):
        self.invalidations += 1
        self.cached = {api_version for api_version, _kind in self.served}


class FakeDynamicClient:
    """kubernetes.dynamic's client over objects in memory, for the code under test's reads, writes and watches.

    ``objects``: kind -> list of object dicts (tests read and change them directly). Every request is recorded in
    ``requests`` as ``(kind, verb, name or label selector, field selector or patch body)``; discovery documents as
    ``("discovery", method, path, None)``; and with all its parameters (``dry_run``, ``field_manager``, the delete
    options, ...) in ``calls`` as ``(verb, kind, params)``. ``served``/``cached``/``handles``: what discovery knows
    (FakeDiscovery). ``errors``: kind (or ``"discovery"``) -> the exception every request for it raises.
    ``failures``: kind -> the exceptions the next writes of that kind raise, in order. ``namespaces``: the namespaces
    requests may name (None: any); kinds in CLUSTER_SCOPED_KINDS must name none. With ``dry_run`` (or a request's
    ``dry_run="All"``, as kubernetes.core's client sends in check mode) writes are answered but not stored.

    Writes behave as the API server's do where the code under test depends on it: a create of an existing name is
    409, a JSON patch's failed ``test`` 422, a merge patch merges (RFC 7386), a server-side apply merges the
    definition into the object (creating it when missing), a delete with a ``resourceVersion`` precondition of
    another version is 409, and an object with finalizers is only marked deleted (and returned). Patches and applies
    move the resourceVersion on.

    Watches: ``script(kind, listings, streams)`` scripts a kind's LISTs and WATCHes (``Script``); an unscripted kind
    is listed from ``objects`` and its watch stays open and quiet. ``stop_watches()`` ends every open stream.
    """

    def __init__(self, objects=None, served=(), cached=None, handles=None, errors=None, namespaces=None, dry_run=False):
        self.objects = {} if objects is None else objects
        self.resources = FakeDiscovery(served, cached, handles, client=self)
        self.errors = errors or {}
        self.failures = {}
        self.namespaces = None if namespaces is None else set(namespaces)
        self.dry_run = dry_run
        self.requests = []
        self.calls = []
        self.scripts = {}
        self.closed = threading.Event()  # ends the quiet streams of unscripted kinds
        self.last_resource_version = 1000

    # ---------------------------------------------------------------------------------------------- reads

    def request(self, method, path, serialize=True):
        """A discovery document: ``/apis/<group>/<version>``; ``/readyz``: "ok" unless ``errors["readyz"]``."""
        self.requests.append(("discovery", method, path, None))
        if path == "/readyz":
            if "readyz" in self.errors:
                raise self.errors["readyz"]
            return "ok"
        if "discovery" in self.errors:
            raise self.errors["discovery"]
        if path[len("/apis/") :] not in {api_version for api_version, _kind in self.resources.served}:
            raise NotFoundError(ApiException(status=404, reason="Not Found"))
        return {"kind": "APIResourceList"}

    def get(self, resource, name=None, namespace=None, label_selector=None, field_selector=None, watch=False, **params):
        """A GET (``name``), a LIST or (``watch``) a WATCH; ``serialize``, ``resource_version`` and the other
        parameters of a real client are recorded in ``calls``."""
        self._check_namespace(resource.kind, namespace)
        verb = "WATCH" if watch else "GET" if name else "LIST"
        self.requests.append((resource.kind, verb, name or label_selector or None, field_selector))
        call = dict(params, name=name, namespace=namespace, label_selector=label_selector, field_selector=field_selector)
        self.calls.append((verb, resource.kind, _given(call)))
        if resource.kind in self.errors:
            raise self.errors[resource.kind]
        script = self.scripts.get(resource.kind)
        if script is not None:
            return script.answer(verb, self.calls[-1][2])
        if watch:
            return WatchResponse([], self.closed)
        if name:
            return copy.deepcopy(self._find(resource.kind, name, namespace)[1])
        items = [obj for obj in self.objects.get(resource.kind, []) if self._in(obj, namespace) and selected(obj, label_selector, field_selector)]
        return {"kind": resource.kind + "List", "metadata": {"resourceVersion": str(self.last_resource_version)}, "items": copy.deepcopy(items)}

    def stored(self, kind, name):
        """The stored object (not a copy)."""
        return self._find(kind, name, None)[1]

    def script(self, kind, listings, streams=(), interval=0):
        """Script the LISTs and WATCHes of ``kind`` (``Script``); returns the script, which records them."""
        self.scripts[kind] = Script(listings, streams, interval)
        return self.scripts[kind]

    def stop_watches(self):
        """End every watch stream that is open (the server going away at the end of a test)."""
        self.closed.set()
        for script in self.scripts.values():
            script.closed.set()

    # --------------------------------------------------------------------------------------------- writes

    def patch(self, resource, body, name=None, namespace=None, content_type=None, **params):
        """A JSON patch (RFC 6902, ``application/json-patch+json``) or a merge patch (RFC 7386)."""
        assert content_type in ("application/json-patch+json", "application/merge-patch+json"), f"{content_type} patches are not implemented"
        self._write("PATCH", resource, namespace, name, json.dumps(body), dict(params, name=name, namespace=namespace, body=body, content_type=content_type))
        index, obj = self._find(resource.kind, name, namespace)
        after = apply_json_patch(obj, body) if content_type == "application/json-patch+json" else merge_patch(obj, body)
        return self._store(resource.kind, index, after, params)

    def apply(self, resource, body, namespace=None, **params):
        """A server-side apply: ``body`` merged into the object (a merge patch without deletions), or created."""
        name = body["metadata"]["name"]
        self._write("APPLY", resource, namespace, name, None, dict(params, namespace=namespace, body=body))
        try:
            index, obj = self._find(resource.kind, name, namespace)
        except NotFoundError:
            index, obj = None, {}
        return self._store(resource.kind, index, merge_patch(obj, body), params)

    def delete(self, resource, name=None, namespace=None, body=None, **params):
        self._write("DELETE", resource, namespace, name, None, dict(params, name=name, namespace=namespace, body=body))
        index, obj = self._find(resource.kind, name, namespace)
        expected = ((body or {}).get("preconditions") or {}).get("resourceVersion")
        if expected is not None and expected != obj["metadata"].get("resourceVersion"):
            stored = obj["metadata"].get("resourceVersion")
            raise api_exception(409, f"Precondition failed: ResourceVersion in precondition: {expected}, in object meta: {stored}")
        if obj["metadata"].get("finalizers"):
            return self._store(resource.kind, index, dict(obj, metadata=dict(obj["metadata"], deletionTimestamp="2026-01-01T00:00:00Z")), params)
        if not self._dry(params):
            del self.objects[resource.kind][index]
        return {"kind": "Status", "status": "Success"}

    def create(self, resource, body, namespace=None, **params):
        name = body["metadata"].get("name")
        self._write("CREATE", resource, namespace, name or body["metadata"].get("generateName"), None, dict(params, namespace=namespace, body=body))
        if name and any(o["metadata"].get("name") == name and self._in(o, namespace) for o in self.objects.get(resource.kind, [])):
            raise api_exception(409, f'{resource.kind.lower()}s "{name}" already exists')
        if not self._dry(params):
            self.objects.setdefault(resource.kind, []).append(copy.deepcopy(body))
        return copy.deepcopy(body)

    def writes(self, kind=None):
        return [r for r in self.requests if r[1] in ("PATCH", "APPLY", "DELETE", "CREATE") and (kind is None or r[0] == kind)]

    # ------------------------------------------------------------------------------------------- internals

    def _write(self, verb, resource, namespace, name, detail, call):
        """Check and record a write; raise the next failure scripted for the kind."""
        self._check_namespace(resource.kind, namespace)
        self.requests.append((resource.kind, verb, name, detail))
        self.calls.append((verb, resource.kind, _given(call)))
        queue = self.failures.get(resource.kind) or []
        if queue:
            raise queue.pop(0)

    def _dry(self, params):
        return self.dry_run or params.get("dry_run") == "All"

    def _store(self, kind, index, after, params):
        """``after`` with the next resourceVersion, stored (at ``index``; None: added) unless a dry run; a copy."""
        self.last_resource_version += 1
        after["metadata"]["resourceVersion"] = str(self.last_resource_version)
        if not self._dry(params):
            if index is None:
                self.objects.setdefault(kind, []).append(after)
            else:
                self.objects[kind][index] = after
        return copy.deepcopy(after)

    def _check_namespace(self, kind, namespace):
        if kind in CLUSTER_SCOPED_KINDS:
            assert namespace is None, f"{kind} is cluster-scoped, asked for in namespace {namespace}"
        elif self.namespaces is not None:
            assert namespace in self.namespaces, f"{kind} asked for in namespace {namespace}, expected one of {sorted(self.namespaces)}"

    @staticmethod
    def _in(obj, namespace):
        return namespace is None or obj["metadata"].get("namespace", namespace) == namespace

    def _find(self, kind, name, namespace):
        for index, obj in enumerate(self.objects.get(kind, [])):
            if obj["metadata"].get("name") == name and self._in(obj, namespace):
                return index, obj
        raise not_found()


def _given(params):
    """A request's parameters without those left unset (the namespace is kept: None names a cluster-wide request)."""
    return {key: value for key, value in params.items() if value is not None or key == "namespace"}


def merge_patch(obj, patch):
    """RFC 7386 on a copy of ``obj``: objects merge, None removes a member, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


# ------------------------------------------------------------------------------------------------ watch streams

# The last entry of a fake watch stream: the server ends the stream there (without it, it stays open and quiet).
WATCH_CLOSE = object()


class WatchResponse:
    """The HTTP response of a watch as kubernetes' ``Watch`` reads it: one JSON line per event of ``events`` (a
    ``bytes`` entry is sent as it is; a ``threading.Event`` is waited for, up to 10 s, before the rest), ``interval``
    seconds apart, then open and quiet until ``closed`` (an Event) is set, or ended at a ``WATCH_CLOSE`` entry (the
    server closed the stream)."""

    def __init__(self, events, closed, interval=0):
        self.events, self.closed, self.interval = events, closed, interval

    def stream(self, amt=None, decode_content=False):
        for entry in self.events:
            if entry is WATCH_CLOSE:
                return
            if isinstance(entry, threading.Event):
                assert entry.wait(10), "the stream's gate was not opened"
                continue
            if self.interval and self.closed.wait(self.interval):
                return
            yield entry if isinstance(entry, bytes) else json.dumps(entry).encode() + b"\n"
        while not self.closed.wait(0.01):
            yield from ()

    def close(self):
        pass

    def release_conn(self):
        pass


class Script:
    """The scripted LIST and WATCH answers of one kind of a FakeDynamicClient (``client.script``): LISTs answer
    ``listings`` in order (an exception among them is raised), the last one again once they run out; WATCHes answer
    ``streams`` in order (an exception is raised, a list is streamed as ``WatchResponse`` streams it, events
    ``interval`` seconds apart), then stay open and quiet until ``closed`` is set. Each LIST's parameters are in
    ``list_calls`` and its ``time.monotonic()`` in ``list_times``; each WATCH's parameters in ``watch_calls``."""

    def __init__(self, listings, streams=(), interval=0):
        self.listings = list(listings)
        self.streams = list(streams)
        self.interval = interval
        self.list_calls, self.list_times, self.watch_calls = [], [], []
        self.closed = threading.Event()

    def answer(self, verb, params):
        params = {key: value for key, value in params.items() if key not in ("serialize", "watch", "_preload_content")}
        if verb == "WATCH":
            self.watch_calls.append(params)
            if not self.streams:
                return WatchResponse([], self.closed)
            stream = self.streams.pop(0)
            if isinstance(stream, Exception):
                raise stream
            return WatchResponse(stream, self.closed, self.interval)
        self.list_calls.append(params)
        self.list_times.append(time.monotonic())
        item = self.listings.pop(0) if len(self.listings) > 1 else self.listings[0]
        if isinstance(item, Exception):
            raise item
        return item
