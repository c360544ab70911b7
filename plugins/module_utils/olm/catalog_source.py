# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM v0 CatalogSources (``operators.coreos.com/v1alpha1``): the object we apply and how to read its health (pure).

``catalog_source_definition`` builds the CatalogSource a user asks for (``sourceType: grpc`` with either
``spec.address`` or ``spec.image``) and rejects combinations OLM would ignore. ``catalog_source_verdict`` reads
OLM's status the way the catalog operator writes it (``syncCatalogSources`` in operator-lifecycle-manager
``pkg/controller/operators/catalog/operator.go``):

- ``status.connectionState`` (``address``, ``lastObservedState``, ``lastConnect``) is the gRPC connectivity state
  of OLM's client: ``IDLE``, ``CONNECTING``, ``READY``, ``TRANSIENT_FAILURE`` or ``SHUTDOWN``. ``READY`` is healthy.
  ``TRANSIENT_FAILURE`` is what OLM reports a few seconds after connecting to an address where nothing listens.
- ``status.reason`` / ``status.message`` carry OLM's sync errors (``SpecInvalidError``, ``ConfigMapError``,
  ``RegistryServerError``, ``InvalidIntervalError``); ``SetError`` clears them on the next good sync.

No Ansible or kubernetes imports: everything here is testable with literal objects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import POD_FAILURES, first_problem

API_VERSION = "operators.coreos.com/v1alpha1"
KIND = "CatalogSource"

READY = "READY"
TRANSIENT_FAILURE = "TRANSIENT_FAILURE"

# Verdicts of catalog_source_verdict().
VERDICT_READY = "ready"
VERDICT_WAITING = "waiting"
VERDICT_FAILED = "failed"

# status.reason values (operator-framework/api pkg/operators/v1alpha1/catalogsource_types.go).
SPEC_INVALID = "SpecInvalidError"
CONFIGMAP_ERROR = "ConfigMapError"
REGISTRY_SERVER_ERROR = "RegistryServerError"
INTERVAL_INVALID = "InvalidIntervalError"

# Reasons that need a change of the CatalogSource (or its ConfigMap) before OLM can succeed.
PERMANENT_REASONS = frozenset((SPEC_INVALID, CONFIGMAP_ERROR, INTERVAL_INVALID))

# Go's time.ParseDuration grammar (what OLM's registryPoll.interval is parsed with), without the sign.
_GO_DURATION = re.compile(r"^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_GO_DURATION_SECONDS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_HOST_PORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:\[\]/]+):(?P<port>[0-9]{1,5})$")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class CatalogSourceError(KubeforgeError):
    """A CatalogSource request that OLM would reject or silently ignore."""


def parse_go_duration(text):
    """Seconds of a Go duration string such as ``10m`` or ``1h30m`` (``time.ParseDuration``); ValueError if invalid.

    A zero or negative duration is rejected as well: OLM cannot poll with it.
    """
    if not isinstance(text, str) or not text:
        raise InvalidInputError("empty duration")
    rest, total = text, 0.0
    while rest:
        match = _GO_DURATION.match(rest)
        if not match:
            raise InvalidInputError(f"invalid duration {text!r}")
        token = match.group(0)
        unit = token.lstrip("0123456789.")
        number = token[: len(token) - len(unit)]
        total += float(number) * _GO_DURATION_SECONDS[unit]
        rest = rest[len(token) :]
    if total <= 0:
        raise InvalidInputError(f"duration {text!r} is not positive")
    return total


def check_address(address):
    """Validate a gRPC registry address: ``host:port`` (``[v6]:port``) or a gRPC target URI (``dns:///host:port``)."""
    if not isinstance(address, str) or not address.strip():
        raise CatalogSourceError("address must not be empty")
    if address != address.strip() or any(ch.isspace() for ch in address):
        raise CatalogSourceError(f"address {excerpt(address)!r} must not contain whitespace")
    if "://" in address or address.startswith(("unix:", "dns:")):
        return address
    match = _HOST_PORT.match(address)
    if not match or not 0 < int(match.group("port")) < 65536:
        raise CatalogSourceError(f"address {excerpt(address)!r} is not of the form host:port (for example 127.0.0.1:50051)")
    return address


def catalog_source_definition(
    name,
    namespace,
    address=None,
    image=None,
    display_name=None,
    publisher=None,
    update_interval=None,
    grpc_pod_config=None,
    priority=None,
    pull_secrets=None,
):
    """The CatalogSource to apply (a dict with only the fields the user set; ``sourceType`` is always ``grpc``).

    Exactly one of ``address`` (OLM connects to an existing registry server) and ``image`` (OLM runs a registry pod
    from the image) must be given. ``update_interval`` and ``grpc_pod_config`` configure that pod, so they need
    ``image``: OLM ignores them for an address, like ``pull_secrets`` (``spec.secrets``: OLM gives them to the
    registry pod as image pull secrets). Raises ``CatalogSourceError``.
    """
    for label, value in (("name", name), ("namespace", namespace)):
        if not isinstance(value, str) or not _NAME.match(value) or len(value) > 253:
            raise CatalogSourceError(f"{label} {excerpt(value)!r} is not a valid Kubernetes object name")
    if bool(address) == bool(image):
        raise CatalogSourceError("exactly one of address and image is required")
    spec = {"sourceType": "grpc"}
    if address:
        spec["address"] = check_address(address)
        for label, value in (("update_interval", update_interval), ("grpc_pod_config", grpc_pod_config), ("pull_secrets", pull_secrets)):
            if value not in (None, {}, ""):
                raise CatalogSourceError(f"{label} is only valid with image: OLM runs no registry pod for an address")
    else:
        if not isinstance(image, str) or any(ch.isspace() for ch in image):
            raise CatalogSourceError(f"image {excerpt(image)!r} must not contain whitespace")
        spec["image"] = image
        if update_interval:
            try:
                parse_go_duration(update_interval)
            except ValueError as exc:
                raise CatalogSourceError(f"update_interval: {exc} (use a Go duration such as 10m or 1h30m)") from None
            spec["updateStrategy"] = {"registryPoll": {"interval": update_interval}}
        if grpc_pod_config:
            if not isinstance(grpc_pod_config, dict):
                raise CatalogSourceError("grpc_pod_config must be a dictionary")
            spec["grpcPodConfig"] = grpc_pod_config
        if pull_secrets:
            for secret in pull_secrets:
                if not isinstance(secret, str) or not _NAME.match(secret):
                    raise CatalogSourceError(f"pull_secrets: {excerpt(secret)!r} is not a valid Secret name")
            spec["secrets"] = list(pull_secrets)
    if display_name:
        spec["displayName"] = display_name
    if publisher:
        spec["publisher"] = publisher
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise CatalogSourceError("priority must be an integer")
        spec["priority"] = priority
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pruned_fields(requested, stored, prefix="spec"):
    """Dotted paths of keys in ``requested`` that are missing from ``stored`` (pure).

    The API server silently drops (prunes) fields its CRD schema does not know, for example ``grpcPodConfig`` on a
    cluster with an old CatalogSource CRD, or a misspelled key inside ``grpc_pod_config``.
    """
    missing = []
    if not isinstance(requested, dict):
        return missing
    stored = stored if isinstance(stored, dict) else {}
    for key, value in requested.items():
        path = f"{prefix}.{key}"
        if key not in stored:
            missing.append(path)
        elif isinstance(value, dict):
            missing.extend(pruned_fields(value, stored[key], path))
    return missing


def _status(obj):
    return (obj or {}).get("status") or {}


def connection_state(obj):
    """``status.connectionState.lastObservedState`` (``READY``, ``TRANSIENT_FAILURE``, ...) or None."""
    state = _status(obj).get("connectionState") or {}
    return state.get("lastObservedState") or None


def _describe(obj):
    """One line with what OLM last reported: state, address, reason and message."""
    st = _status(obj)
    conn = st.get("connectionState") or {}
    parts = []
    if conn.get("lastObservedState"):
        parts.append(f"lastObservedState {conn['lastObservedState']}")
    if conn.get("address"):
        parts.append(f"address {conn['address']}")
    if conn.get("lastConnect"):
        parts.append(f"lastConnect {conn['lastConnect']}")
    if st.get("reason"):
        parts.append(f"reason {st['reason']}")
    if st.get("message"):
        parts.append(f"message: {excerpt(st['message'])}")
    return "; ".join(parts) if parts else "no status yet"


# OLM's message when the API server refuses the registry pod it creates (admission, validation).
POD_REFUSED = re.compile(r"error creating new pod.*(is forbidden|is invalid)", re.S)


def catalog_source_verdict(obj):
    """``(status, message)`` for a CatalogSource dict (or None): status is ``ready``, ``waiting`` or ``failed``.

    - ``failed``: OLM reports a permanent sync error (``SpecInvalidError``, ``ConfigMapError``,
      ``InvalidIntervalError``); or, for an ``address`` catalog, a ``RegistryServerError`` (the address cannot be
      dialled at all) or the gRPC state ``TRANSIENT_FAILURE`` for the current address (nothing answers there).
    - ``ready``: ``lastObservedState == READY`` for the current address.
      For an ``image`` catalog, a ``RegistryServerError`` whose registry pod the API server refuses to create
      (Pod Security, an invalid field: :data:`POD_REFUSED`) - no retry of OLM's makes it admissible.
    - ``waiting``: anything else, including a connection state that still names a previous ``spec.address`` and,
      for an ``image`` catalog, ``TRANSIENT_FAILURE`` and other ``RegistryServerError`` (OLM keeps recreating the
      registry pod and retrying; the module reads that pod itself: registry_pod_problem).
    """
    if obj is None:
        return VERDICT_WAITING, "the CatalogSource does not exist"
    spec = obj.get("spec") or {}
    st = _status(obj)
    address = spec.get("address") if not spec.get("image") else None
    reason = st.get("reason")
    description = _describe(obj)
    if reason in PERMANENT_REASONS or (reason == REGISTRY_SERVER_ERROR and (address or POD_REFUSED.search(st.get("message") or ""))):
        return VERDICT_FAILED, f"OLM reports {reason}: {description}"
    conn = st.get("connectionState") or {}
    state = conn.get("lastObservedState")
    if address and conn.get("address") not in (None, address):
        return VERDICT_WAITING, f"OLM has not connected to {address} yet (still reports {description})"
    if not state:
        return VERDICT_WAITING, f"OLM has not reported a connection state yet ({description})"
    if state == READY:
        return VERDICT_READY, f"READY ({description})"
    if state == TRANSIENT_FAILURE and address:
        return VERDICT_FAILED, f"OLM cannot reach the catalog at {address}: {description}"
    return VERDICT_WAITING, f"waiting for READY: {description}"


def settled(obj):
    """Watch predicate: the verdict is no longer ``waiting`` (pure)."""
    return catalog_source_verdict(obj)[0] != VERDICT_WAITING


# The label OLM puts on the registry pod of an image catalog (its value: the CatalogSource's name).
REGISTRY_POD_LABEL = "olm.catalogSource"
NO_ENTRYPOINT = "no command specified"


def _termination_message(container):
    """The last lines of the container's last termination message (OLM's registry pod falls back to its log)."""
    for state in ((container.get("state") or {}).get("terminated"), (container.get("lastState") or {}).get("terminated")):
        message = ((state or {}).get("message") or "").strip()
        if message:
            return message[-400:]
    return ""


def registry_pod_unscheduled(pods):
    """``"pod X is not scheduled: <the scheduler's message>"`` for the first registry pod the scheduler cannot place
    (a node may free up, so it is reported with a timeout, not failed on), or None (pure)."""
    for pod in pods:
        for cond in (pod.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                name = (pod.get("metadata") or {}).get("name")
                return f"registry pod {name} is not scheduled ({cond.get('reason')}): {excerpt(cond.get('message') or '')}"
    return None


def registry_pod_problem(pods):
    """``(reason, message)`` for the first registry pod of an image catalog that will not serve by itself (a crash
    loop, an image that cannot be pulled, a container that cannot be created), or None. The message carries the
    container's own last words and, for an image without an entrypoint, the fix (pure)."""
    for pod in pods:
        problem = first_problem(POD_FAILURES, pod)
        if problem is None:
            continue
        message = problem.message
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        last_words = next((_termination_message(c) for c in statuses if _termination_message(c)), "")
        if last_words:
            message += f"; its last output: {last_words}"
        if NO_ENTRYPOINT in message:
            message += (
                ". The image has no entrypoint (a catalog image on the scratch base): set grpc_pod_config.extractContent "
                "{catalogDir: /configs} so OLM serves its content with its own opm image"
            )
        return problem.reason, message
    return None
