# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM v1 ClusterExtensions (``olm.operatorframework.io/v1``, cluster-scoped): the object we apply, whether this
cluster's API still requires ``spec.serviceAccount``, operator-controller's verdict, and the catalog bundles a
version constraint allows (pure).

operator-controller (``internal/operator-controller/controllers/common_controller.go``) writes, with
``observedGeneration``:

- ``Installed``: ``True/Succeeded`` once a bundle is installed (``status.install.bundle``), else ``False/Failed``
  or ``Unknown``;
- ``Progressing``: ``True/Succeeded`` ("desired state reached"), ``True/Retrying`` with the error of the last
  reconcile, ``False/Blocked`` (or ``InvalidConfiguration``, ``ProgressDeadlineExceeded`` in later releases) on a
  terminal error.

Most failures a user can only fix by changing the request are reported as ``Retrying`` (operator-controller
retries with back-off forever): resolution errors ("no bundles found for package ..."), a bundle without the
AllNamespaces install mode, a missing ServiceAccount, missing permissions. ``PERMANENT_MESSAGES`` lists them, so
the module fails with operator-controller's message instead of waiting out its timeout. A resolution error is only
final once every ClusterCatalog it could use is serving: a catalog still unpacking also yields "no bundles found".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import PROPERTY_BUNDLE_OBJECT, package_property
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import (
    condition,
    condition_current,
    describe_conditions,
    metadata,
    status,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.installer_rbac import DNS1123_LABEL, DNS1123_SUBDOMAIN

API_VERSION = "olm.operatorframework.io/v1"
KIND = "ClusterExtension"
CRD_NAME = "clusterextensions.olm.operatorframework.io"

UPGRADE_POLICIES = ("CatalogProvided", "SelfCertified")
CRD_UPGRADE_SAFETY = ("Strict", "None")

VERDICT_READY = "ready"
VERDICT_WAITING = "waiting"
VERDICT_FAILED = "failed"

# Field limits of the v1 API (api/v1/clusterextension_types.go).
_CHANNEL = re.compile(r"^[a-z0-9]+([\.-][a-z0-9]+)*$")
VERSION_MAX_LENGTH = 64

# Retrying messages that no retry will fix: (pattern, what, needs serving catalogs to be final).
PERMANENT_MESSAGES = (
    (re.compile(r"no bundles found for package|found bundles for package .* in multiple catalogs"), "resolution", True),
    (re.compile(r"error upgrading from currently installed version"), "resolution", True),
    (re.compile(r"desired (version range|catalog selector) .* is invalid"), "invalid request", False),
    (re.compile(r"do not support (targeting all namespaces|targeting own namespace|target namespaces)"), "install mode", False),
    (re.compile(r"validating bundle|bundle contains (unsupported resource|webhook definitions)"), "bundle", False),
    (re.compile(r"missing ServiceAccount"), "service account", False),
    (re.compile(r"pre-authorization failed|is forbidden: User \"system:serviceaccount:"), "permissions", False),
    (re.compile(r"already exists in namespace .* and cannot be managed by operator-controller"), "ownership conflict", False),
    (re.compile(r"unsupported bundle:"), "bundle", False),
    (re.compile(r"validating upgrade for CRD"), "CRD upgrade safety (crd_upgrade_safety=None skips it)", False),
    (
        re.compile(r"error for resolved bundle .*(manifest unknown|name unknown|unauthorized|authentication required|access to the resource is denied|x509: )"),
        "bundle image pull",
        False,
    ),
)
# operator-controller v1.5.1 stops resolving at the first selected catalog that is not served
# (catalogmetadata/client): final when catalogd cannot serve that catalog either.
NOT_SERVED = re.compile(r'catalog "([^"]+)" is not being served')

# operator-controller labels what it installs (internal/operator-controller/labels).
OWNER_KIND_LABEL = "olm.operatorframework.io/owner-kind"
OWNER_NAME_LABEL = "olm.operatorframework.io/owner-name"


class ClusterExtensionError(KubeforgeError):
    """A ClusterExtension request the API server or operator-controller would reject."""


def _check_name(label, value, pattern, limit):
    if not isinstance(value, str) or not pattern.fullmatch(value) or len(value) > limit:
        raise ClusterExtensionError(f"{label} {excerpt(value)!r} is not valid (lower-case alphanumerics, '-' and '.', at most {limit} characters)")


def cluster_extension_definition(
    name,
    namespace,
    package,
    version=None,
    channels=None,
    selector=None,
    upgrade_constraint_policy=None,
    crd_upgrade_safety=None,
    config=None,
    service_account=None,
    check_version=None,
):
    """The ClusterExtension to apply (only the fields set). ``service_account`` is the name sent as
    ``spec.serviceAccount.name`` (None: the field is left out, as operator-controller v1.11+ expects).
    ``check_version``: a callable validating the version constraint (raises ValueError with the library's text).
    Raises ``ClusterExtensionError``."""
    _check_name("name", name, DNS1123_SUBDOMAIN, 253)
    _check_name("namespace", namespace, DNS1123_LABEL, 63)
    _check_name("package", package, DNS1123_SUBDOMAIN, 253)
    catalog = {"packageName": package}
    if version:
        if len(version) > VERSION_MAX_LENGTH:
            raise ClusterExtensionError(f"version {excerpt(version)!r} is longer than {VERSION_MAX_LENGTH} characters")
        if check_version is not None:
            try:
                check_version(version)
            except ValueError as exc:
                raise ClusterExtensionError(f"version {version!r} is not a valid version constraint: {exc}") from None
        catalog["version"] = version
    if channels:
        for channel in channels:
            _check_name("channel", channel, _CHANNEL, 253)
        catalog["channels"] = list(channels)
    if selector:
        selector_string(selector)
        catalog["selector"] = selector
    if upgrade_constraint_policy:
        if upgrade_constraint_policy not in UPGRADE_POLICIES:
            raise ClusterExtensionError(f"upgrade_constraint_policy must be one of {', '.join(UPGRADE_POLICIES)}")
        catalog["upgradeConstraintPolicy"] = upgrade_constraint_policy
    spec = {"namespace": namespace, "source": {"sourceType": "Catalog", "catalog": catalog}}
    if service_account:
        _check_name("service account", service_account, DNS1123_SUBDOMAIN, 253)
        spec["serviceAccount"] = {"name": service_account}
    if crd_upgrade_safety:
        if crd_upgrade_safety not in CRD_UPGRADE_SAFETY:
            raise ClusterExtensionError(f"crd_upgrade_safety must be one of {', '.join(CRD_UPGRADE_SAFETY)}")
        spec["install"] = {"preflight": {"crdUpgradeSafety": {"enforcement": crd_upgrade_safety}}}
    if config:
        if not isinstance(config, dict):
            raise ClusterExtensionError("config must be a dictionary (the inline configuration of the bundle)")
        spec["config"] = {"configType": "Inline", "inline": config}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}


_SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin"}


def selector_string(selector):
    """The label-selector string (``a=b,c in (d,e),!f``) of a LabelSelector dict, for LIST requests; raises
    ``ClusterExtensionError`` on anything operator-controller would call an invalid selector."""
    if not isinstance(selector, dict) or not set(selector) <= {"matchLabels", "matchExpressions"}:
        raise ClusterExtensionError("catalog_selector must be a label selector with matchLabels and/or matchExpressions")
    parts = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or ():
        key, op, values = (expr or {}).get("key"), (expr or {}).get("operator"), (expr or {}).get("values") or []
        if not key or op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ClusterExtensionError(f"catalog_selector: matchExpressions entry {excerpt(expr)!r} needs a key and an operator In, NotIn, Exists "
                                        "or DoesNotExist")
        if op in _SELECTOR_OPERATORS:
            if not values:
                raise ClusterExtensionError(f"catalog_selector: operator {op} of key {key} needs values")
            parts.append(f"{key} {_SELECTOR_OPERATORS[op]} ({','.join(values)})")
        elif values:
            raise ClusterExtensionError(f"catalog_selector: operator {op} of key {key} takes no values")
        else:
            parts.append(key if op == "Exists" else f"!{key}")
    return ",".join(parts)


def service_account_required(crd):
    """Whether the installed ClusterExtension CRD requires ``spec.serviceAccount`` (operator-controller up to
    v1.10 does; v1.11 ignores it and warns when it is set). ``crd``: the CRD dict, or None (no OLM v1)."""
    for version in ((crd or {}).get("spec") or {}).get("versions") or ():
        if version.get("storage") or version.get("name") == "v1":
            spec = (((version.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {}).get("spec") or {}
            return "serviceAccount" in (spec.get("required") or ())
    return False


def unknown_spec_fields(crd, definition):
    """Top-level ``spec`` fields of ``definition`` that the cluster's ClusterExtension CRD does not know (the API
    server would drop them silently), e.g. ``config`` on operator-controller v1.5. Empty when the CRD is unknown."""
    for version in ((crd or {}).get("spec") or {}).get("versions") or ():
        if version.get("storage") or version.get("name") == "v1":
            spec = (((version.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {}).get("spec") or {}
            known = spec.get("properties") or {}
            return sorted(f"spec.{key}" for key in (definition.get("spec") or {}) if known and key not in known)
    return []


# Helm's ownership metadata (helm v3.18.6 pkg/action/validate.go): an object carrying it for the extension's release
# is adopted by operator-controller (what olm_migrate stamps before creating the ClusterExtension).
HELM_MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
HELM_RELEASE_NAME = "meta.helm.sh/release-name"


def foreign_owner(obj, extension):
    """Who manages an existing object the extension ``extension`` would install, when it is not that extension
    (Helm refuses to adopt it): a description, or None when the object is the extension's own - labelled by
    operator-controller for it, or carrying Helm's ownership keys for its release (an operator olm_migrate is
    moving from OLM v0 keeps OLM v0's labels until the move ends)."""
    labels = metadata(obj).get("labels") or {}
    if labels.get(OWNER_KIND_LABEL) == KIND:
        other = labels.get(OWNER_NAME_LABEL)
        return None if other == extension else f"ClusterExtension {other}"
    if labels.get(HELM_MANAGED_BY_LABEL) == "Helm" and (metadata(obj).get("annotations") or {}).get(HELM_RELEASE_NAME) == extension:
        return None
    v0 = sorted(key.split("/", 1)[1] for key in labels if key.startswith("operators.coreos.com/"))
    if v0 or labels.get("olm.managed") == "true":
        return "OLM v0" + (f" (operator {', '.join(v0)})" if v0 else "")
    return "something other than OLM v1"


CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
FOREGROUND_FINALIZER = "foregroundDeletion"
SHOWN_LEFTOVERS = 3


def deletion_blockers(extension, crds, leftovers):
    """Why a ClusterExtension being deleted is still there, in words (empty when nothing is known): its own
    finalizers, and the CRDs it installed that are not gone yet with the custom resources that hold them
    (``leftovers``: ``{CRD name: [custom resources still there]}``)."""
    parts = []
    finalizers = [f for f in (((extension or {}).get("metadata") or {}).get("finalizers") or []) if f != FOREGROUND_FINALIZER]
    if finalizers:
        parts.append(f"its finalizers {', '.join(finalizers)} remain (operator-controller removes them: is it running?)")
    for crd in crds:
        name = (crd.get("metadata") or {}).get("name")
        items = leftovers.get(name) or []
        if not items:
            parts.append(f"CustomResourceDefinition {name} is not deleted yet")
            continue
        shown = []
        for item in items[:SHOWN_LEFTOVERS]:
            meta = item.get("metadata") or {}
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            shown.append(f"{where} (finalizers: {', '.join(meta.get('finalizers') or []) or 'none'})")
        more = f" and {len(items) - SHOWN_LEFTOVERS} more" if len(items) > SHOWN_LEFTOVERS else ""
        parts.append(
            f"CustomResourceDefinition {name} waits for {len(items)} of its objects to be deleted - {', '.join(shown)}{more}: "
            "their finalizers were the uninstalled operator's to remove; remove them yourself once nothing needs that cleanup"
        )
    return "; ".join(parts)


def installed_bundle(obj):
    """``status.install.bundle`` (``{"name", "version"}``) or None."""
    return (status(obj).get("install") or {}).get("bundle") or None


def describe(obj):
    """One line with operator-controller's conditions (type=status/reason: message), or ``no status yet``."""
    return describe_conditions(obj, ("Installed", "Progressing"))


def permanent_problem(message):
    """``(what, needs_serving_catalogs)`` when a ``Retrying`` message is one no retry fixes, else None."""
    for pattern, what, needs_catalogs in PERMANENT_MESSAGES:
        if pattern.search(message or ""):
            return what, needs_catalogs
    return None


def unserved_catalog(message):
    """The ClusterCatalog a ``Retrying`` message says operator-controller cannot read, or None."""
    found = NOT_SERVED.search(message or "")
    return found.group(1) if found else None


def cluster_extension_verdict(obj, catalogs_serving=True, failed_catalogs=None):
    """``(verdict, message)``.

    ``ready``: the current generation is observed, ``Installed=True`` and ``Progressing=True/Succeeded``.
    ``failed``: ``Progressing=False`` (Blocked, InvalidConfiguration, ProgressDeadlineExceeded), or a ``Retrying``
    message in ``PERMANENT_MESSAGES`` (resolution errors only when ``catalogs_serving``: every ClusterCatalog the
    extension may use is serving), or a catalog operator-controller cannot read that catalogd cannot serve either
    (``failed_catalogs``: name -> catalogd's message). ``waiting`` otherwise; the message then carries a ``Retrying``
    error, if any.
    """
    if obj is None:
        return VERDICT_WAITING, "the ClusterExtension does not exist"
    progressing = condition(obj, "Progressing")
    installed = condition(obj, "Installed")
    if not condition_current(progressing, obj):
        return VERDICT_WAITING, describe(obj)
    if progressing.get("status") == "False":
        return VERDICT_FAILED, progressing.get("message") or describe(obj)
    reason = progressing.get("reason")
    if reason == "Succeeded" and condition_current(installed, obj) and installed.get("status") == "True":
        return VERDICT_READY, describe(obj)
    if reason == "Retrying":
        problem = permanent_problem(progressing.get("message"))
        if problem and (catalogs_serving or not problem[1]):
            return VERDICT_FAILED, progressing.get("message")
        blocked = unserved_catalog(progressing.get("message"))
        if blocked in (failed_catalogs or {}):
            return VERDICT_FAILED, (
                f"ClusterCatalog {blocked} cannot be served ({failed_catalogs[blocked]}), and operator-controller resolves nothing while "
                f"a catalog the extension may use is not served: fix that catalog, delete it, or set its availabilityMode to Unavailable "
                f"(operator-controller: {progressing.get('message')})"
            )
    return VERDICT_WAITING, describe(obj)


def retrying_message(obj):
    """The current ``Progressing=True/Retrying`` message, or None."""
    cond = condition(obj, "Progressing")
    if condition_current(cond, obj) and cond.get("reason") == "Retrying":
        return cond.get("message") or None
    return None


# --- bundles a request may install (for the installer ServiceAccount's permissions) -------------------------------


def bundle_version(bundle):
    """The ``olm.package`` property's version of an FBC bundle, or None."""
    value = package_property(bundle)
    return value.get("version") if value else None


def candidate_bundles(cfg, package, channels=None, matches=None):
    """The FBC bundles (dicts) of ``package`` that are in one of ``channels`` (any channel when empty) and whose
    version satisfies ``matches(version) -> bool`` (all when None), in catalog order. ``cfg``: a DeclarativeConfig."""
    allowed = None
    if channels:
        allowed = set()
        for channel in cfg.channels:
            if channel.get("package") == package and channel.get("name") in channels:
                allowed.update(entry.get("name") for entry in channel.get("entries") or ())
    found = []
    for bundle in cfg.bundles:
        if bundle.get("package") != package or (allowed is not None and bundle.get("name") not in allowed):
            continue
        version = bundle_version(bundle)
        if matches is not None and (version is None or not matches(version)):
            continue
        found.append(bundle)
    return found


def embedded_objects(bundle):
    """The manifests embedded in an FBC bundle as ``olm.bundle.object`` properties (what ``opm render`` writes for
    bundle images without ``olm.csv.metadata`` migration), or None when the bundle has no CSV among them (then the
    bundle image itself has to be read)."""
    objects = []
    for prop in bundle.get("properties") or ():
        if prop.get("type") != PROPERTY_BUNDLE_OBJECT:
            continue
        data = (prop.get("value") or {}).get("data")
        try:
            objects.append(json.loads(base64.b64decode(data)))
        except (TypeError, ValueError) as exc:
            raise ClusterExtensionError(f"bundle {bundle.get('name')!r}: an olm.bundle.object property is not base64 JSON ({exc})") from None
    if not any(isinstance(o, dict) and o.get("kind") == "ClusterServiceVersion" for o in objects):
        return None
    return objects


# --- reporting (olm_operator_info) ----------------------------------------------------------------------------


def _condition_summary(obj, cond_type):
    cond = condition(obj, cond_type)
    if not cond:
        return None
    return {"status": cond.get("status"), "reason": cond.get("reason"), "message": cond.get("message"), "current": condition_current(cond, obj)}


def extension_summary(obj):
    """What ``olm_operator_info`` reports about one ClusterExtension."""
    catalog = ((obj.get("spec") or {}).get("source") or {}).get("catalog") or {}
    bundle = installed_bundle(obj)
    return {
        "name": metadata(obj).get("name"),
        "package": catalog.get("packageName"),
        "namespace": (obj.get("spec") or {}).get("namespace"),
        "version_constraint": catalog.get("version"),
        "channels": catalog.get("channels") or [],
        "upgrade_constraint_policy": catalog.get("upgradeConstraintPolicy") or "CatalogProvided",
        "installed_bundle": (bundle or {}).get("name"),
        "installed_version": (bundle or {}).get("version"),
        "installed": cluster_extension_verdict(obj)[0] == VERDICT_READY,
        "conditions": dict((t, _condition_summary(obj, t)) for t in ("Installed", "Progressing") if condition(obj, t)),
    }


def extensions_in(objects, namespace, package=None):
    """Summaries of the ClusterExtensions installing into ``namespace`` (any when None) and ``package``, by name."""
    found = [extension_summary(o) for o in objects if namespace is None or (o.get("spec") or {}).get("namespace") == namespace]
    return sorted((s for s in found if package is None or s["package"] == package), key=lambda s: s["name"] or "")
