# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_diagnose module: read a namespace's OLM v0 state, or a ClusterExtension's OLM v1 state,
once, name the causes (``olm/diagnose.py``, ``olmv1/diagnose.py``) and optionally write everything read into a support tarball (through the one file-output
service, so it is written atomically or not at all).

The tarball holds one JSON ``List`` per kind, as ``kubectl get -o json`` writes it (``managedFields`` dropped;
environment values of variables named like a secret, InstallPlan steps' inline manifests and kubectl's
last-applied-configuration masked), the Warning events,
the last log lines of the operator's crashed or stuck containers (where the node serves logs: simulated nodes do
not), ``findings.json`` and ``summary.txt``. Secrets are not listed.

The logs are read once, before the diagnosis: a crash loop's finding quotes their last lines (``core.FINDING_LOG_LINES``)
and the tarball holds ``log_lines`` of the same read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import os
import re
import tarfile
import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, api_error_message, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import public
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import metadata, name_of, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import diagnose as core_v1

V1ALPHA1 = "operators.coreos.com/v1alpha1"
KINDS = (
    ("subscriptions", "Subscription", V1ALPHA1),
    ("installplans", "InstallPlan", V1ALPHA1),
    ("csvs", "ClusterServiceVersion", V1ALPHA1),
    ("operatorgroups", "OperatorGroup", "operators.coreos.com/v1"),
    ("catalogsources", "CatalogSource", V1ALPHA1),
    ("pods", "Pod", "v1"),
    ("replicasets", "ReplicaSet", "apps/v1"),
)
PACKAGESERVER_API = "v1.packages.operators.coreos.com"
SECRET_NAME = re.compile(r"pass|secret|token|key|credential", re.I)
MASKED = "<masked>"


def _list(cluster, kind, api_version, namespace, notes, **selectors):
    try:
        return cluster.list(kind, namespace, api_version, **selectors)
    except K8sError as exc:
        notes.append(f"{kind} not read: {exc.msg}")
    except Exception as exc:  # a kind this cluster does not serve, a denied list: reported, the rest still read
        notes.append(f"{kind} in {namespace or 'the cluster'} not read: {excerpt(api_error_message(exc))}")
    return []


def read_snapshot(cluster, namespace, package=None, events=50):
    """One read of what ``olm/diagnose.py`` needs; returns ``(snapshot, notes)`` (notes: what could not be read)."""
    notes = []
    snap = {"namespace": namespace, "package": package, "now": time.time()}
    for key, kind, api_version in KINDS:
        snap[key] = _list(cluster, kind, api_version, namespace, notes)
    # The catalogs the Subscriptions name, wherever they are (the global catalog namespace, usually).
    have = {(metadata(c).get("namespace"), name_of(c)) for c in snap["catalogsources"]}
    for sub in snap["subscriptions"]:
        where = (spec(sub).get("sourceNamespace") or namespace, spec(sub).get("source"))
        if where[1] and where not in have:
            have.add(where)
            try:
                found = cluster.get("CatalogSource", where[1], where[0], V1ALPHA1)
            except K8sError as exc:
                notes.append(f"CatalogSource {where[0]}/{where[1]} not read: {exc.msg}")
                found = None
            if found is not None:
                snap["catalogsources"].append(found)
    totals = {}
    snap["events"] = _warning_events(cluster, namespace, events, notes, totals)
    snap["events_total"] = totals.get("events", 0)
    snap["packageserver"] = _get(cluster, "APIService", "apiregistration.k8s.io/v1", PACKAGESERVER_API, None, notes)
    return snap, notes


def _get(cluster, kind, api_version, name, namespace, notes):
    try:
        return cluster.get(kind, name, namespace, api_version)
    except K8sError as exc:
        notes.append(f"{kind} {namespace + '/' if namespace else ''}{name} not read: {exc.msg}")
    except Exception as exc:  # a kind this cluster does not serve, a denied read: reported, the rest still read
        notes.append(f"{kind} {namespace + '/' if namespace else ''}{name} not read: {excerpt(api_error_message(exc))}")
    return None


def _warning_events(cluster, namespace, events, notes, totals=None):
    """The latest ``events`` Warning events of the namespace, oldest first; ``totals["events"]``: how many there are."""
    warnings = _list(cluster, "Event", "v1", namespace, notes, field_selector="type=Warning")
    warnings.sort(key=core.event_time)
    if totals is not None:
        totals["events"] = len(warnings)
    return warnings[-events:] if events else []


def olmv1_namespace(catalogs):
    """OLM v1's namespace, from where catalogd serves a catalog (``https://catalogd-service.<ns>.svc/...``), or None."""
    for catalog in catalogs:
        host = (cc.base_url(catalog) or "").split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        parts = host.split(".")
        if len(parts) >= 3 and parts[2] == "svc":
            return parts[1]
    return None


def read_extension_snapshot(cluster, name, events=50):
    """One read of what ``olmv1/diagnose.py`` needs for ClusterExtension ``name``; returns ``(snapshot, notes)``.
    Raises ``ValueError`` when the ClusterExtension does not exist."""
    notes = []
    extension = _get(cluster, ce.KIND, ce.API_VERSION, name, None, notes)
    if extension is None:
        raise InvalidInputError(f"ClusterExtension {name} does not exist{': ' + notes[0] if notes else ''}")
    namespace = spec(extension).get("namespace")
    selector = ((spec(extension).get("source") or {}).get("catalog") or {}).get("selector")
    selectors = {"label_selector": ce.selector_string(selector)} if selector else {}
    snap = {"extension": extension, "namespace": namespace, "now": time.time()}
    snap["clustercatalogs"] = _list(cluster, cc.KIND, cc.API_VERSION, None, notes, **selectors)
    owned = f"{ce.OWNER_KIND_LABEL}={ce.KIND},{ce.OWNER_NAME_LABEL}={name}"
    snap["deployments"] = _list(cluster, "Deployment", "apps/v1", namespace, notes, label_selector=owned)
    snap["replicasets"] = _list(cluster, "ReplicaSet", "apps/v1", namespace, notes)
    snap["pods"] = _list(cluster, "Pod", "v1", namespace, notes)
    snap["events"] = _warning_events(cluster, namespace, events, notes)
    account = (spec(extension).get("serviceAccount") or {}).get("name")
    snap["serviceaccount"] = _get(cluster, "ServiceAccount", "v1", account, namespace, notes) if account else None
    system = olmv1_namespace(snap["clustercatalogs"])
    if system:
        snap["controllers"] = _list(cluster, "Deployment", "apps/v1", system, notes)
    else:
        notes.append("OLM v1's namespace is not known (no ClusterCatalog is served at catalogd's in-cluster Service): its controllers were not read")
        snap["controllers"] = []
    return snap, notes


# The kubelet names a container its pod status still shows after its garbage collection removed it (a crash loop
# restarts every few seconds and it keeps one dead container); the status catches up at its next pod sync, which on a
# busy node comes seconds later (seen: more than 2 s on a loaded 2-core testbed). Asked again for up to 10 s, which is
# spent only while the kubelet keeps naming a removed container.
CONTAINER_GONE = "unable to retrieve container logs"
LOG_ROUNDS = 6
LOG_ROUND_PAUSE_SECONDS = 2.0


def pod_logs(cluster, namespace, pods, lines, sleep=time.sleep, now=None):
    """``{"<pod>/<container>": text}``: the last ``lines`` of each stuck or crashed container (its previous run for a
    container that restarted). A node that serves no logs (KWOK's simulated ones) gives a note instead."""
    logs = {}
    if not lines:
        return logs
    resource = cluster.resource("Pod", "v1")
    for pod in pods:
        if not core.pod_is_stuck(pod, now):
            continue
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            logs[f"{name_of(pod)}/{container.get('name')}"] = _container_log(resource, namespace, name_of(pod), container, lines, sleep)
    return logs


def _container_log(resource, namespace, pod_name, container, lines, sleep):
    # A crashed container that is not running now is the current one; while it runs (or waits in back-off) again,
    # what it said before is the previous one's log. A container that restarts meanwhile moves one to the other (and
    # the kubelet removes the older one), so the other is asked too.
    state = container.get("state") or {}
    exited = bool(state.get("terminated"))
    if not (exited or state.get("running") or (container.get("lastState") or {}).get("terminated") or container.get("restartCount")):
        return f"{core.NO_LOG}the container has not run yet)"  # waiting for its image, say: the kubelet has nothing to serve
    if not container.get("restartCount"):
        attempts = [False]
    else:
        attempts = [False, True] if exited else [True, False]
    for round_ in range(LOG_ROUNDS):
        if round_:
            sleep(LOG_ROUND_PAUSE_SECONDS)
        for previous in attempts:
            params = {"container": container.get("name"), "tailLines": lines}
            if previous:
                params["previous"] = "true"
            try:
                return resource.log.get(name=pod_name, namespace=namespace, serialize=False, query_params=params).data.decode("utf-8", "replace")
            except Exception as exc:  # the node serves no logs, the container never ran: said in the tarball and the finding
                message = api_error_message(exc)
        if CONTAINER_GONE not in message:
            break
    return f"{core.NO_LOG}{excerpt(message)})"


def tail(text, lines):
    """The last ``lines`` lines of a log text (a note that there is no log stays whole)."""
    if text.startswith(core.NO_LOG):
        return text
    kept = text.splitlines(True)[-lines:] if lines else []
    return "".join(kept)


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _mask_env(value):
    """A copy of ``value`` without what may hold secrets: values of environment variables named like secrets,
    InstallPlan steps' inline manifests (every bundle object, Secrets included, as JSON) and kubectl's
    last-applied-configuration annotation (a second copy of the object)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "manifest" and isinstance(item, str):
                out[key] = MASKED
            elif key == "annotations" and isinstance(item, dict) and LAST_APPLIED in item:
                out[key] = {k: (MASKED if k == LAST_APPLIED else v) for k, v in item.items()}
            elif key == "env" and isinstance(item, list):
                out[key] = [
                    dict(e, value=MASKED) if isinstance(e, dict) and "value" in e and SECRET_NAME.search(str(e.get("name"))) else _mask_env(e) for e in item
                ]
            else:
                out[key] = _mask_env(item)
        return out
    if isinstance(value, list):
        return [_mask_env(item) for item in value]
    return value


def _json(value):
    return (json.dumps(value, indent=2, sort_keys=False, default=str) + "\n").encode("utf-8")


# Single objects of a snapshot: (key, file name).
SINGLE_OBJECTS = (("packageserver", "packageserver-apiservice"), ("extension", "clusterextension"), ("serviceaccount", "serviceaccount"))


def tarball_files(snapshot, notes, logs, findings, lines, keys=core.SNAPSHOT_KEYS):
    """``{relative path: bytes}`` of the support tarball (pure); ``keys``: the snapshot's lists."""
    files = {}
    for key in keys:
        objects = [_mask_env(public(obj)) for obj in snapshot.get(key) or []]
        files[f"objects/{key}.json"] = _json({"apiVersion": "v1", "kind": "List", "items": objects})
    for key, name in SINGLE_OBJECTS:
        if snapshot.get(key) is not None:
            files[f"objects/{name}.json"] = _json(_mask_env(public(snapshot[key])))
    for key, text in sorted(logs.items()):
        files[f"logs/{key.replace('/', '_')}.log"] = text.encode("utf-8")
    files["findings.json"] = _json([f._asdict() for f in findings])
    files["summary.txt"] = ("\n".join(lines + [f"note: {n}" for n in notes]) + "\n").encode("utf-8")
    return files


def write_tarball(path, top, files, check_mode):
    """Write ``files`` under the directory ``top`` into the gzip'd tarball ``path`` (atomically); returns changed."""
    now = int(time.time())

    def produce(handle):
        with tarfile.open(fileobj=handle, mode="w:gz") as tar:
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size, info.mtime, info.mode = len(data), now, 0o644
                tar.addfile(info, io.BytesIO(data))

    with FileOutput(check_mode=check_mode, mode=0o600) as out:
        changed, _value = out.stream(path, produce)
        out.commit()
    if not check_mode:
        os.chmod(path, 0o600)  # FileOutput keeps a replaced file's mode; the support tarball stays private
    return changed


def execute(module):
    """Entry point of the olm_diagnose module."""
    p = module.params
    namespace, package = p.get("namespace"), p.get("package")
    for option in ("events", "log_lines"):
        if p[option] < 0:
            raise InvalidInputError(f"{option} must be 0 or more, not {p[option]}")
    timer = Deadline()
    extension = p.get("cluster_extension")
    if extension:
        snapshot, notes = read_extension_snapshot(module.cluster, extension, p["events"])
        operator = {"workload_deployments": [name_of(d) for d in snapshot["deployments"]]}
    else:
        snapshot, notes = read_snapshot(module.cluster, namespace, package, p["events"])
        operator = {}
    # One read of the stuck containers' logs: the crash loop findings quote their last lines, the tarball holds more.
    tarball_lines = p["log_lines"] if p.get("dest") else 0
    pods = core.operator_pods(dict(snapshot, **operator))
    logs = pod_logs(module.cluster, snapshot["namespace"], pods, max(tarball_lines, core.FINDING_LOG_LINES), now=snapshot.get("now"))
    snapshot["logs"], snapshot["tarball"] = logs, bool(tarball_lines)
    if extension:
        findings = core_v1.diagnose(snapshot)
        lines = core.summary(findings, None, subject=f"ClusterExtension {extension}")
        keys, subject = core_v1.SNAPSHOT_KEYS, extension
    else:
        findings = core.diagnose(snapshot)
        lines = core.summary(findings, namespace, package)
        keys, subject = core.SNAPSHOT_KEYS, namespace
    result = {
        "changed": False,
        "findings": [f._asdict() for f in findings],
        "causes": sorted({f.cause for f in findings}),
        "summary": lines,
        "counts": {key: len(snapshot.get(key) or []) for key in keys},
    }
    if extension:
        result["namespace"] = snapshot["namespace"]
    else:
        result["overview"] = dict(core.overview(snapshot), events_total=snapshot.get("events_total", len(snapshot.get("events") or [])))
    if notes:
        result["notes"] = notes
    if p.get("dest"):
        kept = {key: tail(text, tarball_lines) for key, text in logs.items()} if tarball_lines else {}
        files = tarball_files(snapshot, notes, kept, findings, lines, keys)
        top = f"olm-diagnose-{subject}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        result["changed"] = write_tarball(p["dest"], top, files, module.check_mode)
        result["dest"] = p["dest"]
        result["files"] = sorted(f"{top}/{name}" for name in files)
    result["duration"] = timer.elapsed()
    return result
