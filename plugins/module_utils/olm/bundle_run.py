# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``operator-sdk run bundle`` / ``run bundle-upgrade`` / ``cleanup`` as pure functions (olm.md sections 4 and 4.1).

A bundle directory is rendered with our FBC engine (``opm render`` parity: an ``olm.bundle`` with embedded
``olm.bundle.object`` properties and ``image: ""``) into a small File-Based Catalog: one ``olm.package``, one
``olm.channel`` and the bundles. An upgrade adds the new bundle to the catalog already served, as an entry that
replaces the installed CSV (operator-sdk's ``upgradeFBC``).

The catalog is served by a registry pod, as operator-sdk's ``FBCRegistryPod`` does, with two differences: the FBC
is stored as plain JSON in immutable ConfigMaps (at most ``CONFIGMAP_DATA_LIMIT`` bytes each, split between
documents) that the pod mounts through one projected volume, so no init container has to decompress them; and the
names of the pod and its ConfigMaps carry the catalog's digest, so a new catalog gets a new pod and the old one is
removed only after the CatalogSource points at the new one. Everything here builds plain dicts; the cluster glue
is ``olm_cluster/bundle_run.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import re
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    ANNOTATION_CHANNELS,
    ANNOTATION_DEFAULT_CHANNEL,
    parse_bundle_metadata,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import (
    SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
    DeclarativeConfig,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import dumps_json, iter_json
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.graph import channel_head
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import API_VERSION as CATALOG_SOURCE_API_VERSION
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import KIND as CATALOG_SOURCE_KIND
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import catalog_source_definition
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.operator import MANUAL, same_version, version_after
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import (
    POD_FAILURES,
    condition,
    condition_true,
    csv_version,
    first_problem,
    metadata,
    name_of,
    spec,
    status,
)

# The opm release the testbed runs (tests/testbed: opm v1.73.0); the image has /bin/opm and /bin/grpc_health_probe.
DEFAULT_OPM_IMAGE = "quay.io/operator-framework/opm:v1.73.0"
GRPC_PORT = 50051
# operator-sdk's channel when a bundle names none (fbcutil.DefaultChannel).
DEFAULT_CHANNEL = "operator-sdk-run-bundle"
PUBLISHER = "kubeforge"

# The API server refuses a ConfigMap whose data exceed 1 MiB (corev1 validation, MaxSecretSize); the rest of the
# object (metadata, owner reference) and the JSON framing stay well inside what is left.
CONFIGMAP_DATA_LIMIT = 1024 * 1024 - 64 * 1024
CONFIGMAP_KEY = "catalog.json"
CATALOG_DIR = "/configs"

SECURITY_RESTRICTED = "restricted"
SECURITY_LEGACY = "legacy"

# operator-sdk's CatalogSource annotations (internal/olm/operator/registry/index_image.go).
ANNOTATION_INDEX_IMAGE = "operators.operatorframework.io/index-image"
ANNOTATION_INJECTED_BUNDLES = "operators.operatorframework.io/injected-bundles"
ANNOTATION_REGISTRY_POD = "operators.operatorframework.io/registry-pod-name"
# Ours: the sha256 of the served FBC, naming the ConfigMaps that hold it (read back for the next upgrade).
ANNOTATION_DIGEST = "operators.kubeforge.io/catalog-digest"

# The same key as olm_cluster.operator.CREATED_BY_LABEL (a unit test keeps them equal), with this module's value.
CREATED_BY_LABEL = "operators.kubeforge.io/created-by"
CREATED_BY = "kubeforge.operators.olm_bundle_run"
CATALOG_LABEL = "operators.kubeforge.io/catalog-source"
DIGEST_LABEL = "operators.kubeforge.io/catalog-digest"
DIGEST_LENGTH = 10

# What the install is, compared with what is installed.
INSTALL = "install"
UPGRADE = "upgrade"
SAME = "same"

VERDICT_READY = "ready"
VERDICT_WAITING = "waiting"
VERDICT_FAILED = "failed"

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

Bundle = namedtuple("Bundle", ["blob", "csv", "name", "package", "version", "channel", "install_modes", "path"])


class BundleRunError(KubeforgeError):
    """A bundle, catalog or request that ``olm_bundle_run`` cannot serve or install."""


# ------------------------------------------------------------------------------------------------ the bundle


def read_bundle(path, package=None, channel=None, image=None):
    """Render the bundle directory ``path`` (unpacked from ``image``, which the catalog then names) and pick its
    package and channel; returns a ``Bundle``.

    The package comes from the bundle's annotations (``package`` must match them when given); the channel is
    ``channel``, else the bundle's default channel, else its first channel, else operator-sdk's
    ``operator-sdk-run-bundle``. Raises ``FBCError`` (rendering) or ``BundleRunError``.
    """
    blob, csv = render_bundle_dir_blob(path, image=image) if image else render_bundle_dir_blob(path)
    annotations = parse_bundle_metadata(f"{path}/metadata")[0]
    name, own_package = blob.get("name"), blob.get("package")
    if not name:
        raise BundleRunError(f"the ClusterServiceVersion in {excerpt(path)} has no metadata.name")
    if not own_package:
        raise BundleRunError(f"the bundle {excerpt(path)} names no package (annotation operators.operatorframework.io.bundle.package.v1)")
    if package and package != own_package:
        raise BundleRunError(f"package {excerpt(package)!r} differs from the bundle's package {own_package!r} ({excerpt(path)})")
    version = (csv.get("spec") or {}).get("version")
    if not version:
        raise BundleRunError(f"the ClusterServiceVersion {name} has no spec.version: the module pins the version it installs")
    channels = [c.strip() for c in str(annotations.get(ANNOTATION_CHANNELS) or "").split(",") if c.strip()]
    chosen = channel or str(annotations.get(ANNOTATION_DEFAULT_CHANNEL) or "").strip() or (channels[0] if channels else DEFAULT_CHANNEL)
    install_modes = (csv.get("spec") or {}).get("installModes") or []
    return Bundle(blob, csv, name, own_package, str(version), chosen, install_modes, path)


def catalog_name(package):
    """operator-sdk's ``CatalogNameForPackage``: ``<package>-catalog``."""
    return f"{package}-catalog"


def relation(installed_version, bundle):
    """``INSTALL`` (nothing installed), ``SAME`` or ``UPGRADE``; raises when a newer version is installed."""
    if installed_version is None:
        return INSTALL
    if same_version(installed_version, bundle.version):
        return SAME
    if version_after(bundle.version, installed_version):
        return UPGRADE
    raise BundleRunError(
        f"version {installed_version} of {bundle.package} is installed, newer than the bundle's {bundle.version} "
        f"({bundle.name}); OLM does not downgrade. Run with state=absent first to reinstall an older version",
        result={"reason": "NewerVersionInstalled"},
    )


# ------------------------------------------------------------------------------------------------ the catalog


def _validated(cfg):
    result = validate_config(cfg)
    if not result.valid:
        raise BundleRunError("the generated File-Based Catalog is invalid: " + "; ".join(excerpt(e) for e in result.errors[:5]))
    return cfg


def _find(items, **fields):
    for item in items:
        if all(item.get(k) == v for k, v in fields.items()):
            return item
    return None


def catalog_with_bundle(existing, blob, channel, replaces=None):
    """A copy of ``existing`` (a DeclarativeConfig, or None) that serves ``blob`` in ``channel`` (pure).

    The package's default channel becomes ``channel``; a bundle of the same name is replaced; the bundle gets a
    channel entry (``replaces``: the CSV it upgrades, if any). The result is validated like ``opm validate``.
    """
    package, name = blob.get("package"), blob.get("name")
    existing = existing or DeclarativeConfig()
    cfg = DeclarativeConfig(
        packages=copy.deepcopy(existing.packages),
        channels=copy.deepcopy(existing.channels),
        bundles=[b for b in existing.bundles if not (b.get("package") == package and b.get("name") == name)] + [blob],
        deprecations=copy.deepcopy(existing.deprecations),
        others=copy.deepcopy(existing.others),
    )
    pkg = _find(cfg.packages, name=package)
    if pkg is None:
        pkg = {"schema": SCHEMA_PACKAGE, "name": package}
        cfg.packages.append(pkg)
    pkg["defaultChannel"] = channel
    chan = _find(cfg.channels, package=package, name=channel)
    if chan is None:
        chan = {"schema": SCHEMA_CHANNEL, "name": channel, "package": package, "entries": []}
        cfg.channels.append(chan)
    entries = chan.setdefault("entries", [])
    entry = _find(entries, name=name)
    if entry is None:
        entry = {"name": name}
        entries.append(entry)
    if replaces and replaces != name and not entry.get("replaces"):
        entry["replaces"] = replaces
    return _validated(cfg)


def new_catalog(blobs, channel):
    """A catalog of one package's bundles, oldest first, each replacing the one before it (pure)."""
    if not blobs:
        raise BundleRunError("a catalog needs at least one bundle")
    cfg, previous = None, None
    for blob in blobs:
        cfg = catalog_with_bundle(cfg, blob, channel, previous)
        previous = blob.get("name")
    return cfg


def catalog_with_index(index, bundle):
    """``index`` (the DeclarativeConfig of an index image) with ``bundle`` added as operator-sdk's ``--index-image``
    adds it: an entry of its channel that replaces the channel's head (a new channel otherwise). An index that has
    the bundle already is refused, as operator-sdk asks (pure)."""
    if any(b.get("name") == bundle.name for b in index.bundles):
        raise BundleRunError(f"the index image already has bundle {bundle.name}: run a bundle it does not have")
    head = None
    if any(c.get("package") == bundle.package and c.get("name") == bundle.channel for c in index.channels):
        try:
            head = channel_head(convert_to_model(index, validate=False), bundle.package, bundle.channel)
        except FBCError as exc:
            raise BundleRunError(f"the index image's channel {bundle.channel} of {bundle.package} has no single head: {exc}") from exc
    return catalog_with_bundle(index, bundle.blob, bundle.channel, head)


def plan_catalog(existing, bundle, kind, installed_name=None, index=None):
    """The catalog to serve for ``bundle`` (``kind`` from ``relation``): for a first install a fresh one, or the
    ``index`` with the bundle added; else ``existing`` (what is served now, or None) with the bundle added, replacing
    the installed CSV on an upgrade."""
    if (kind == INSTALL or (existing is None and kind == SAME)) and index is not None:
        return catalog_with_index(index, bundle)
    if kind == INSTALL or (existing is None and kind == SAME):
        return new_catalog([bundle.blob], bundle.channel)
    return catalog_with_bundle(existing, bundle.blob, bundle.channel, installed_name if kind == UPGRADE else None)


def fbc_documents(cfg):
    """The catalog as opm's JSON documents, in a canonical form: re-rendering a catalog read back from its
    ConfigMaps gives the same bytes (and digest) as rendering it from the bundle directories."""
    canonical = load_bytes(dumps_json(cfg).encode("utf-8"), source="generated catalog")
    return list(iter_json(canonical))


def load_documents(texts):
    """A DeclarativeConfig from catalog file contents (the ConfigMaps' data), in order."""
    cfg = DeclarativeConfig()
    for index, text in enumerate(texts):
        load_bytes(text.encode("utf-8"), source=f"catalog part {index + 1}", cfg=cfg)
    return cfg


def catalog_digest(documents):
    """``sha256:<hex>`` of the catalog documents."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(doc.encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def short_digest(digest):
    return digest.split(":", 1)[-1][:DIGEST_LENGTH]


def chunk_documents(documents, limit=CONFIGMAP_DATA_LIMIT):
    """Pack the documents, in order, into as few texts of at most ``limit`` UTF-8 bytes as possible.

    A document is never split (each file must hold whole FBC objects); one larger than ``limit`` is an error.
    """
    chunks, current, size = [], [], 0
    for doc in documents:
        length = len(doc.encode("utf-8"))
        if length > limit:
            name = json.loads(doc).get("name") if doc.lstrip().startswith("{") else None
            raise BundleRunError(
                f"the catalog object {name or '(unnamed)'} is {length} bytes of JSON, more than a ConfigMap holds ({limit} bytes): "
                "serve this bundle with serve=address (for example opm serve on a catalog built with catalog_render)",
                result={"reason": "BundleTooLarge"},
            )
        if current and size + length > limit:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(doc)
        size += length
    if current:
        chunks.append("".join(current))
    return chunks


def injected_bundles(cfg=None, previous=None, bundle=None, only=None):
    """operator-sdk's ``injected-bundles`` annotation: ``[{"name": csv, "version": v}]``, JSON.

    From the catalog's bundles (pod mode; ``only``: the names to list, for a catalog that holds an index image's
    bundles too), or the previous annotation plus ``bundle`` (address mode, where the module does not know what else
    the catalog serves). Entries name CSVs (bundle directories have no image), and carry ``image`` for a bundle run
    from an image.
    """
    items = []
    if cfg is not None:
        for blob in sorted(cfg.bundles, key=lambda b: b.get("name") or ""):
            if only is not None and blob.get("name") not in only:
                continue
            version = next((p["value"].get("version") for p in blob.get("properties") or [] if p.get("type") == "olm.package"), None)
            item = {"name": blob.get("name"), "version": version}
            if blob.get("image"):
                item["image"] = blob["image"]
            items.append(item)
    else:
        try:
            items = [i for i in json.loads(previous or "[]") if isinstance(i, dict) and i.get("name")]
        except ValueError:
            items = []
        if bundle is not None and not any(i.get("name") == bundle.name for i in items):
            items.append({"name": bundle.name, "version": bundle.version})
    return json.dumps(items, separators=(",", ":"))


# ------------------------------------------------------------------------------------------ cluster objects


def label_value(text):
    """``text`` as a label value (at most 63 characters; longer ones keep a prefix and a hash)."""
    if len(text) <= 63 and _LABEL_VALUE.match(text):
        return text
    tail = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    head = re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:52].strip("-_.")
    return f"{head}-{tail}" if head else tail


def labels(catalog, digest=None):
    out = {CREATED_BY_LABEL: CREATED_BY, CATALOG_LABEL: label_value(catalog)}
    if digest:
        out[DIGEST_LABEL] = short_digest(digest)
    return out


def selector(catalog):
    """Label selector of every registry object (ConfigMaps, pods) this module made for ``catalog``."""
    return f"{CREATED_BY_LABEL}={CREATED_BY},{CATALOG_LABEL}={label_value(catalog)}"


def is_ours(obj):
    return (metadata(obj).get("labels") or {}).get(CREATED_BY_LABEL) == CREATED_BY


def owner_reference(catalog_source):
    """A (non-controller) owner reference to the CatalogSource: deleting it garbage-collects the registry."""
    meta = metadata(catalog_source)
    return {"apiVersion": catalog_source.get("apiVersion"), "kind": catalog_source.get("kind"), "name": meta.get("name"), "uid": meta.get("uid")}


def _meta(name, namespace, object_labels, owner):
    meta = {"name": name, "namespace": namespace, "labels": object_labels}
    if owner:
        meta["ownerReferences"] = [owner]
    return meta


def config_map_names(catalog, digest, count):
    return [f"{catalog}-{short_digest(digest)}-{index + 1}" for index in range(count)]


def config_maps(catalog, namespace, digest, chunks, owner=None):
    """Immutable ConfigMaps holding the catalog files (one key each), labelled with the catalog and its digest."""
    names = config_map_names(catalog, digest, len(chunks))
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(name, namespace, labels(catalog, digest), owner),
            "immutable": True,
            "data": {CONFIGMAP_KEY: chunk},
        }
        for name, chunk in zip(names, chunks)
    ]


def registry_pod_name(catalog, pod_spec):
    """``<catalog>-<hash>``: the hash covers the whole pod spec (image, security context, and through the
    ConfigMap names the catalog digest), so any change makes a new pod rather than a stale one kept by name."""
    text = json.dumps(pod_spec, sort_keys=True, separators=(",", ":"))
    return f"{catalog}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:DIGEST_LENGTH]}"


def security_contexts(config):
    """``(pod, container)`` security contexts for ``security_context_config`` (operator-sdk's flag).

    ``restricted`` passes Pod Security ``restricted``: non-root (the opm image runs as UID 1001; no fixed UID, so
    OpenShift can assign one from the namespace's range), RuntimeDefault seccomp, no privilege escalation, no
    capabilities, and a read-only root filesystem (opm writes only its cache, to the ``/tmp`` emptyDir).
    ``legacy`` sets none, for clusters older than Kubernetes 1.19 / OpenShift 4.11, as operator-sdk does.
    """
    if config == SECURITY_LEGACY:
        return None, None
    if config != SECURITY_RESTRICTED:
        raise BundleRunError(f"security_context_config must be {SECURITY_RESTRICTED} or {SECURITY_LEGACY}, not {excerpt(config)!r}")
    pod = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    container = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "privileged": False,
        "readOnlyRootFilesystem": True,
    }
    return pod, container


def registry_pod(
    catalog, namespace, digest, cm_names, image=DEFAULT_OPM_IMAGE, pull_policy="IfNotPresent", security=SECURITY_RESTRICTED, owner=None, pull_secret=None
):
    """The registry pod: ``opm serve /configs`` over the ConfigMaps, mounted as files through one projected volume.

    The volume is mounted with a ``subPath``, so opm sees plain files instead of the ``..data`` symlinks of a
    ConfigMap volume. Readiness is opm's gRPC health service (``grpc_health_probe``, as OLM's own registry pods).
    """
    pod_sc, container_sc = security_contexts(security)
    sources = [{"configMap": {"name": name, "items": [{"key": CONFIGMAP_KEY, "path": f"catalog/{name}.json"}]}} for name in cm_names]
    container = {
        "name": "registry-grpc",
        "image": image,
        "imagePullPolicy": pull_policy,
        "command": ["/bin/opm"],
        "args": ["serve", CATALOG_DIR, f"--port={GRPC_PORT}"],
        "ports": [{"name": "grpc", "containerPort": GRPC_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "exec": {"command": ["/bin/grpc_health_probe", f"-addr=:{GRPC_PORT}"]},
            "initialDelaySeconds": 1,
            "periodSeconds": 2,
            "timeoutSeconds": 5,
            "failureThreshold": 30,
        },
        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [
            {"name": "catalog", "mountPath": CATALOG_DIR, "subPath": "catalog", "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    if container_sc:
        container["securityContext"] = container_sc
    spec = {
        "containers": [container],
        "volumes": [{"name": "catalog", "projected": {"sources": sources}}, {"name": "tmp", "emptyDir": {}}],
        # opm serve needs no API access.
        "automountServiceAccountToken": False,
        "nodeSelector": {"kubernetes.io/os": "linux"},
    }
    if pod_sc:
        spec["securityContext"] = pod_sc
    if pull_secret:
        spec["imagePullSecrets"] = [{"name": pull_secret}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(registry_pod_name(catalog, spec), namespace, labels(catalog, digest), owner), "spec": spec}


def pod_address(pod, port=GRPC_PORT):
    """``<podIP>:<port>`` (``[<ip>]:<port>`` for IPv6), or None before the pod has an IP."""
    ip = status(pod).get("podIP")
    if not ip:
        return None
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


# opm serves within seconds of starting: a registry container that has run this long without passing its readiness
# probe (opm's gRPC health service, through grpc_health_probe) will not pass it - an opm_image without
# /bin/grpc_health_probe, an opm that does not serve on the port probed, ...
NOT_READY_GRACE_SECONDS = 60


def _running_unready_seconds(st, now):
    """How long the longest-running container that is not ready has run (seconds), or None."""
    longest = None
    for container in st.get("containerStatuses") or []:
        started = parse_time(((container.get("state") or {}).get("running") or {}).get("startedAt"))
        if started is not None and not container.get("ready"):
            longest = max(longest or 0, now - started)
    return longest


def registry_pod_verdict(pod, now=None, unhealthy=None):
    """``(ready|waiting|failed, message)`` for the registry pod (a dict, or None when it is gone). With ``now``
    (epoch), a container that has run NOT_READY_GRACE_SECONDS without passing its readiness probe fails it;
    ``unhealthy``: the kubelet's last probe failure message, added to that failure."""
    if pod is None:
        return VERDICT_FAILED, "the registry pod was deleted"
    name = name_of(pod)
    st = status(pod)
    phase = st.get("phase") or "Pending"
    if phase in ("Failed", "Succeeded"):
        detail = ""
        for container in st.get("containerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if terminated:
                reason = terminated.get("reason") or "terminated"
                detail = f": container {container.get('name')} {reason} (exit code {terminated.get('exitCode')}) {terminated.get('message') or ''}"
        return VERDICT_FAILED, f"registry pod {name} stopped (phase {phase}){detail}".rstrip()
    problem = first_problem(POD_FAILURES, pod)
    if problem:
        return VERDICT_FAILED, f"registry {problem.message}"
    if condition_true(pod, "Ready") and pod_address(pod):
        return VERDICT_READY, f"registry pod {name} is Ready at {pod_address(pod)}"
    unready = _running_unready_seconds(st, now) if now is not None else None
    if unready is not None and unready >= NOT_READY_GRACE_SECONDS:
        probe = f": {unhealthy}" if unhealthy else ""
        return VERDICT_FAILED, (
            f"registry pod {name} has run {int(unready)} s without passing its readiness probe (opm's gRPC health service on port {GRPC_PORT}, "
            f"checked with /bin/grpc_health_probe: the opm_image must have both){probe}"
        )
    scheduled = condition(pod, "PodScheduled") or {}
    if scheduled.get("status") == "False":
        return VERDICT_WAITING, f"registry pod {name} is not scheduled ({scheduled.get('reason')}): {scheduled.get('message') or ''}".rstrip(": ")
    ready = condition(pod, "Ready") or {}
    detail = f"; Ready={ready.get('status')} ({ready.get('reason') or ''})" if ready else ""
    return VERDICT_WAITING, f"registry pod {name} phase {phase}{detail}"


def catalog_source(name, namespace, package, address, annotations):
    """The CatalogSource (``sourceType: grpc``, ``spec.address``) with our label and operator-sdk's annotations.

    ``address`` may be None only for a server-side dry run before the registry pod exists (check mode).
    """
    if address:
        definition = catalog_source_definition(name, namespace, address=address, display_name=package, publisher=PUBLISHER)
    else:
        definition = {
            "apiVersion": CATALOG_SOURCE_API_VERSION,
            "kind": CATALOG_SOURCE_KIND,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"sourceType": "grpc", "displayName": package, "publisher": PUBLISHER},
        }
    definition["metadata"]["labels"] = {CREATED_BY_LABEL: CREATED_BY}
    definition["metadata"]["annotations"] = dict(annotations)
    return definition


def stale_objects(objects, keep=()):
    """Names of our registry objects (ConfigMaps or pods) other than the ``keep`` names, sorted."""
    keep = set(keep)
    return sorted(name_of(obj) for obj in objects if is_ours(obj) and name_of(obj) not in keep)


# ------------------------------------------------------------------------------------------------ one run, decided

# What ``present`` reads before its first write: whether the namespace exists, the module's CatalogSource, the
# Subscription of the bundle's package in the namespace and the CSV it installed (each None when absent).
Observed = namedtuple("Observed", ["namespace_exists", "catalog_source", "subscription", "installed_csv"])

# ``present``'s decisions: ``kind`` (INSTALL, SAME or UPGRADE), ``catalog`` (the CatalogSource's name),
# ``installed_name`` (the CSV installed now, or None), ``needs_index``
# (the index image is pulled: nothing is served yet), ``predict`` (check mode with nothing of the module's on the
# cluster: the install is predicted, not dry-run) and ``subscription`` (the parameters of olm_cluster.operator.install).
RunPlan = namedtuple("RunPlan", ["kind", "catalog", "installed_name", "needs_index", "predict", "subscription"])


# How the catalog is served (the ``serve`` option).
SERVE_POD = "pod"
SERVE_ADDRESS = "address"


def check_params(params):
    """Refuse option combinations the argument spec cannot express, before anything is read."""
    if params["serve"] == SERVE_POD and params.get("catalog_address"):
        raise BundleRunError("catalog_address is only used with serve=address")


def from_catalog(subscription, catalog, namespace):
    """The Subscription subscribes from CatalogSource ``namespace/catalog``."""
    return (spec(subscription).get("source"), spec(subscription).get("sourceNamespace")) == (catalog, namespace)


def plan_run(params, bundle, observed, check_mode):
    """Decide one ``present`` run from ``observed`` (``Observed``) before its first write; refuse what OLM or
    operator-sdk would refuse, each with the way out: a CatalogSource of the same name the module did not create, the
    package subscribed from another catalog, a newer version installed, an upgrade without ``wait`` (the module
    approves the upgrade's InstallPlan while it waits). Returns a ``RunPlan``."""
    namespace, catalog, source, sub = params["namespace"], catalog_name(bundle.package), observed.catalog_source, observed.subscription
    if source is not None and not is_ours(source):
        raise BundleRunError(
            f"CatalogSource {namespace}/{catalog} exists and was not created by this module (label {CREATED_BY_LABEL}); "
            "remove it (operator-sdk cleanup) or install into another namespace"
        )
    if sub is not None and not from_catalog(sub, catalog, namespace):
        raise BundleRunError(
            f"package {bundle.package} is subscribed in {namespace} from CatalogSource {spec(sub).get('sourceNamespace')}/{spec(sub).get('source')} "
            f"(Subscription {name_of(sub)}), not from this module's {catalog}; remove that installation first",
            result={"reason": "InstalledFromAnotherCatalog"},
        )
    installed = observed.installed_csv
    kind = relation(csv_version(installed) if installed else None, bundle)
    if kind == UPGRADE and not params["wait"] and not check_mode:
        # refused before anything is served: olm_operator's rule (the upgrade is an InstallPlan approved while waiting)
        raise BundleRunError(
            f"an upgrade of {name_of(installed)} to {bundle.name} happens only by approving its InstallPlan, which the module does while waiting: "
            "with wait=false nothing would change; set wait=true"
        )
    subscription = {
        "namespace": namespace,
        "package": bundle.package,
        "channel": bundle.channel,
        "catalog": catalog,
        "catalog_namespace": namespace,
        "subscription_name": name_of(sub) if sub else bundle.package,
        "version": bundle.version,
        "approval": MANUAL,
        "starting_csv": bundle.name,
        "install_modes": bundle.install_modes,
        "target_namespaces": params.get("target_namespaces"),
        "approve_dependencies": True,
    }
    predict = check_mode and source is None and sub is None
    return RunPlan(kind, catalog, name_of(installed) if installed else None, kind == INSTALL or source is None, predict, subscription)


# The registry of one catalog: its ConfigMaps, pod and the CatalogSource annotations that name them.
RegistryPlan = namedtuple("RegistryPlan", ["config_maps", "pod", "annotations", "digest"])


def plan_registry(params, bundle, run, existing, previous_annotations, owner=None, index=None):
    """The registry that serves ``bundle`` for ``run`` (``RunPlan``): ``existing`` is the catalog served now (None on a
    first install), ``previous_annotations`` the CatalogSource's (``{}`` on a first install), ``owner`` an owner
    reference to it, ``index`` the ``(ref, cfg)`` of an index image pulled for a first install. A catalog built on an
    index image lists as injected only the bundles this module added, as operator-sdk does."""
    namespace = params["namespace"]
    cfg = plan_catalog(existing, bundle, run.kind, run.installed_name, index.cfg if index is not None else None)
    index_ref = index.ref if index is not None else previous_annotations.get(ANNOTATION_INDEX_IMAGE)
    if index_ref in (None, params["opm_image"]):
        index_ref, injected = None, injected_bundles(cfg)
    else:
        listed = json.loads(previous_annotations.get(ANNOTATION_INJECTED_BUNDLES) or "[]")
        names = {item.get("name") for item in listed if isinstance(item, dict)}
        injected = injected_bundles(cfg, only=names | {bundle.name})
    documents = fbc_documents(cfg)
    digest = catalog_digest(documents)
    cms = config_maps(run.catalog, namespace, digest, chunk_documents(documents), owner)
    pod = registry_pod(
        run.catalog,
        namespace,
        digest,
        [name_of(cm) for cm in cms],
        params["opm_image"],
        params["image_pull_policy"],
        params["security_context_config"],
        owner,
        params.get("pull_secret"),
    )
    annotations = {
        ANNOTATION_INDEX_IMAGE: index_ref or params["opm_image"],
        ANNOTATION_INJECTED_BUNDLES: injected,
        ANNOTATION_REGISTRY_POD: name_of(pod),
        ANNOTATION_DIGEST: digest,
    }
    return RegistryPlan(cms, pod, annotations, digest)
