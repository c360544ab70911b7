# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Moving an operator installed by OLM v0 (v0.46.0) to OLM v1 (operator-controller v1.5.1) in place: what makes it
ineligible, and the plan of the move (``olm_migrate``'s pure core).

operator-controller v1.5.1 installs a registry+v1 bundle as a Helm release named after the ClusterExtension, in its
``spec.namespace``, as the ClusterExtension's ServiceAccount. Helm adopts an object that already exists only when it
carries the label ``app.kubernetes.io/managed-by: Helm`` and the annotations ``meta.helm.sh/release-name: <extension>``
and ``meta.helm.sh/release-namespace: <namespace>`` (helm v3.18.6 ``pkg/action/validate.go``
``existingResourceConflict``, run before the dry-run bail-out of ``install.go``); operator-controller never sets
``TakeOwnership``. It then puts a ``controller: true`` ownerReference to the ClusterExtension and the
``olm.operatorframework.io/owner-kind``/``owner-name`` labels on every object (helm-operator-plugins v0.8.0
post-renderer). OLM v0's ownerReferences are ``controller: false``, so both owners coexist while v1 takes over, and
removing the CSV then only removes its reference (the garbage collector's "solid owner" case). Everything here
follows the research notes of issue #34 (section 5: the order of the steps; section 6: the rules E1-E14).

- ``Observed``: what the cluster glue reads for one operator (one read; nothing here does I/O).
- ``release_objects(manifests, namespace)``: the objects the v1 release of the bundle holds, ``(kind, namespace,
  name)`` keyed like ``Observed.live``; the glue reads each of them.
- ``eligibility(observed, extension_name=None) -> [Refusal]``: every reason the move cannot start, each naming the
  object and the fix. Rules that need what ``Observed`` does not hold are judged partly: E11 (CRD upgrade safety)
  checks scope, served and stored versions only, not crdify's per-property rules (operator-controller's own
  preflight still runs them when the ClusterExtension is created, and fails before Helm writes anything); E9 trusts
  the glue to pass only a bundle a *serving* ClusterCatalog serves.
- ``plan(observed, extension_name, service_account_name, ...) -> dict``: the dry run: objects to adopt with their
  exact label/annotation changes, the ClusterExtension and installer RBAC to create, what is deleted from OLM v0,
  what OLM v0 or the garbage collector removes, what stays, and the ordered steps with their writes.
- ``backup_copy(obj)``: an object as the backup keeps it; a Secret keeps its metadata and a SHA-256 of each value.

No Ansible or kubernetes imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import copy
import hashlib
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.installmode import ALL_NAMESPACES, mode_for_targets, operator_group_targets
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import csv_succeeded, csv_version, metadata, name_of, spec, status
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import installer_rbac as ir
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.cluster_catalog import NAME_LABEL as CATALOG_NAME_LABEL

# Helm's ownership metadata (helm v3.18.6 pkg/action/validate.go).
HELM_MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
HELM_MANAGED_BY = "Helm"
HELM_RELEASE_NAME = "meta.helm.sh/release-name"
HELM_RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"

# OLM v0's marks (operator-lifecycle-manager v0.46.0 pkg/lib/ownerutil/util.go, install/certresources.go,
# install/deployment.go, operators/decorators/operator.go, internal/alongside/alongside.go).
OLM_OWNER_LABELS = ("olm.owner", "olm.owner.namespace", "olm.owner.kind")
OLM_MANAGED_LABEL = "olm.managed"
OLM_SPEC_HASH_LABEL = "olm.deployment-spec-hash"
COMPONENT_LABEL_PREFIX = "operators.coreos.com/"
ALONGSIDE_PREFIX = "operatorframework.io/installed-alongside-"
GENERATED_BY_ANNOTATION = "olm.generated-by"
TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces"

OPERATOR_API_VERSION = "operators.coreos.com/v1"
SUBSCRIPTION_API_VERSION = "operators.coreos.com/v1alpha1"
CSV_API_VERSION = "operators.coreos.com/v1alpha1"

# Ours: the ClusterExtension names the Subscription it replaced; the record is a ConfigMap nothing owns.
MIGRATED_FROM_ANNOTATION = "operators.kubeforge.io/migrated-from-subscription"
RECORD_PREFIX = "olm-migrate-"
RECORD_LABEL = "operators.kubeforge.io/olm-migrate"
NAME_MAX = 253

PROPAGATION_BACKGROUND = "Background"

# Subscription states and InstallPlan phases that mean OLM v0 is not at rest.
AT_LATEST_KNOWN = "AtLatestKnown"
INSTALLPLAN_DONE = ("Complete", "Failed")

# Strategic-merge keys of the Deployment lists a bundle sets (k8s.io/api core/v1 patchMergeKey): Helm's adoption
# patch (CreateThreeWayMergePatch) matches these items by key, so extra items on the live object stay.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
}

STEP_NAMES = (
    "check",
    "record",
    "freeze_v0",
    "stamp_helm_ownership",
    "create_installer",
    "create_extension",
    "wait_installed",
    "delete_subscription",
    "strip_csv_owner_labels",
    "delete_csv",
    "strip_v0_marks",
    "delete_operator_group",
    "done",
)

Refusal = namedtuple("Refusal", ["rule", "subject", "reason"])
ReleaseObject = namedtuple("ReleaseObject", ["kind", "api_version", "namespace", "name", "origin"])

_OBSERVED_FIELDS = (
    "subscription",  # the Subscription to migrate (dict)
    "subscriptions",  # every Subscription of its namespace (list, the one above included)
    "csv",  # its installed CSV (dict or None)
    "csvs",  # the namespace's CSVs that are not copies (list)
    "operator_groups",  # the namespace's OperatorGroups (list)
    "installplans",  # the namespace's InstallPlans (list)
    "operator_condition",  # the OperatorCondition named after the CSV (dict or None)
    "copied_csvs",  # [(namespace, name)] of the CSV's copies in other namespaces
    "bundle",  # the FBC bundle (olm.bundle dict) a serving ClusterCatalog has for the installed version, or None
    "catalog",  # the name of that ClusterCatalog, or None
    "manifests",  # the bundle's manifests (CSV + the other files of manifests/), or None when unread
    "live",  # {(kind, namespace or None, name): live object or None} for release_objects()
    "dependents",  # CSVs of other operators that require this one's APIs or package (list)
    "extension",  # the ClusterExtension of the chosen name (dict or None)
    "record",  # the migration record ConfigMap (dict or None)
)


class Observed(namedtuple("Observed", _OBSERVED_FIELDS)):
    """What the cluster glue reads for one operator; every field but ``subscription`` defaults to empty/None."""

    __slots__ = ()

    def __new__(cls, subscription, **fields):
        unknown = sorted(set(fields) - set(_OBSERVED_FIELDS))
        if unknown:
            raise MigrationError(f"Observed has no field(s) {', '.join(unknown)}")
        values = {"subscriptions": [subscription] if subscription else [], "csvs": [], "operator_groups": [], "installplans": []}
        values.update(copied_csvs=[], live={}, dependents=[])
        values.update(fields)
        return super().__new__(cls, subscription, **{f: values.get(f) for f in _OBSERVED_FIELDS[1:]})


class MigrationError(KubeforgeError):
    """A migration request that cannot be planned (invalid names, an unreadable bundle)."""


# ------------------------------------------------------------------------------------------------ small helpers


def _ref(kind, obj_or_namespace, name=None):
    """``Kind ns/name`` (or ``Kind name`` for cluster-scoped objects)."""
    if isinstance(obj_or_namespace, dict):
        namespace, name = metadata(obj_or_namespace).get("namespace"), name_of(obj_or_namespace)
    else:
        namespace = obj_or_namespace
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _labels(obj):
    return metadata(obj).get("labels") or {}


def _annotations(obj):
    return metadata(obj).get("annotations") or {}


def _package(subscription):
    return spec(subscription).get("name")


def _namespace(subscription):
    return metadata(subscription).get("namespace")


def component_label(package, namespace):
    """The label OLM v0's adoption controller puts on everything of operator ``<package>.<namespace>``."""
    return f"{COMPONENT_LABEL_PREFIX}{package}.{namespace}"


def record_name(subscription_name):
    """The ConfigMap holding the migration's state: ``olm-migrate-<subscription>`` (a hash where it had to be cut)."""
    base = f"{RECORD_PREFIX}{subscription_name}"
    if len(base) <= NAME_MAX:
        return base
    digest = hashlib.sha256(base.encode("utf-8")).hexdigest()[:10]
    return f"{base[: NAME_MAX - 11]}-{digest}"


def _installed_csv_name(observed):
    return status(observed.subscription).get("installedCSV") or name_of(observed.csv)


# ------------------------------------------------------------------------------------------------ the v1 release


def _namespaced(obj, resource_for):
    try:
        return ir.manifest_resource(obj, resource_for)[2]
    except ir.InstallerRBACError as exc:
        raise MigrationError(str(exc)) from None


def release_objects(manifests, namespace, resource_for=None):
    """The objects operator-controller v1.5.1 renders from ``manifests`` into the release for ``namespace``
    (AllNamespaces mode), in its generators' order: ServiceAccounts, ClusterRoles + ClusterRoleBindings, CRDs, the
    other manifests (namespaced ones in the install namespace), Deployments. ``[ReleaseObject(kind, api_version,
    namespace, name, origin)]``; ``(kind, namespace, name)`` is the key of ``Observed.live``. ``resource_for(api_version,
    kind) -> (resource, namespaced)`` covers kinds outside installer_rbac's table. Raises ``MigrationError``."""
    csv = ir.bundle_csv(manifests)
    if csv is None:
        raise MigrationError('the bundle has no ClusterServiceVersion in "manifests"')
    try:
        found = [ReleaseObject("ServiceAccount", "v1", namespace, sa, "permissions") for sa in ir.generated_service_accounts(csv)]
        found += [
            ReleaseObject(item.kind, ir.RBAC_API_VERSION, None, item.name, "generated RBAC")
            for item in ir.generated_rbac_names(csv)
            if item.kind in ("ClusterRole", "ClusterRoleBinding")
        ]
        deployments = ir.csv_deployment_names(csv)
    except ir.InstallerRBACError as exc:
        raise MigrationError(f"ClusterServiceVersion {excerpt(name_of(csv))}: {exc}") from None
    crds = [o for o in manifests if o.get("kind") == ir.CRD_KIND]
    found += [ReleaseObject(ir.CRD_KIND, "apiextensions.k8s.io/v1", None, name_of(o), "bundle CRD") for o in crds]
    for obj in manifests:
        if obj.get("kind") in (ir.CSV_KIND, ir.CRD_KIND):
            continue
        where = None
        if _namespaced(obj, resource_for):
            where = namespace
            if not ir.OLM_SUPPORTED_KINDS.get(obj["kind"], True):
                where = metadata(obj).get("namespace") or namespace
        found.append(ReleaseObject(obj["kind"], obj.get("apiVersion"), where, name_of(obj), "bundle manifest"))
    found += [ReleaseObject("Deployment", "apps/v1", namespace, name, "CSV deployment") for name in deployments]
    return found


def _key(item):
    return (item.kind, item.namespace, item.name)


# ------------------------------------------------------------------------------------------------ eligibility


def _operator_group_refusals(observed, csv):
    namespace = _namespace(observed.subscription)
    groups = observed.operator_groups or []
    if not groups:
        return [
            Refusal(
                "E1",
                f"Namespace {namespace}",
                f"namespace {namespace} has no OperatorGroup, so OLM v0 resolves nothing there and the install mode of "
                f"{_ref('ClusterServiceVersion', csv) if csv else 'the operator'} cannot be told: create the OperatorGroup the operator was "
                "installed with (all namespaces) and wait for its CSV to be Succeeded again",
            )
        ]
    if len(groups) > 1:
        names = ", ".join(sorted(name_of(g) for g in groups))
        return [
            Refusal(
                "E1",
                f"Namespace {namespace}",
                f"namespace {namespace} has {len(groups)} OperatorGroups ({names}): OLM v0 fails every CSV there (TooManyOperatorGroups); "
                "delete all but one first",
            )
        ]
    group = groups[0]
    targets = operator_group_targets(group)
    resolved = status(group).get("namespaces")
    if resolved is not None and [n for n in resolved if n]:
        targets = [n for n in resolved if n]
    mode = mode_for_targets(targets, namespace)
    if mode == ALL_NAMESPACES:
        return []
    return [
        Refusal(
            "E1",
            _ref("OperatorGroup", group),
            f"OperatorGroup {name_of(group)} in {namespace} targets {', '.join(targets)} ({mode} mode), but operator-controller v1.5.1 "
            "installs registry+v1 bundles in AllNamespaces mode only (OwnNamespace and SingleNamespace need its alpha feature gate "
            "SingleOwnNamespaceInstallSupport): keep the operator on OLM v0, or make the OperatorGroup target all namespaces first "
            "if the operator supports it",
        )
    ]


def _subscription_refusals(observed):
    sub = observed.subscription
    subject = _ref("Subscription", sub)
    namespace, package = _namespace(sub), _package(sub)
    found = []
    same = sorted(name_of(s) for s in observed.subscriptions or [] if _package(s) == package)
    if len(same) > 1:
        found.append(
            Refusal(
                "E6",
                subject,
                f"namespace {namespace} has {len(same)} Subscriptions of package {package} ({', '.join(same)}): OLM v0 cannot tell which one "
                "owns the operator; delete the extra ones first",
            )
        )
    if _annotations(sub).get(GENERATED_BY_ANNOTATION):
        found.append(
            Refusal(
                "E6",
                subject,
                f"Subscription {name_of(sub)} was created by OLM v0 to satisfy another operator's dependency (annotation "
                f"{GENERATED_BY_ANNOTATION}: {excerpt(_annotations(sub)[GENERATED_BY_ANNOTATION], 80)}); OLM v1 resolves no dependencies: "
                "migrate or remove the operator that needs it first",
            )
        )
    st = status(sub)
    installed, current = st.get("installedCSV"), st.get("currentCSV")
    if not installed:
        found.append(Refusal("E6", subject, f"Subscription {name_of(sub)} has no installed CSV (status.installedCSV): nothing to migrate yet"))
    elif current and current != installed:
        found.append(
            Refusal(
                "E6",
                subject,
                f"Subscription {name_of(sub)} is moving from {installed} to {current} (status.currentCSV): let OLM v0 finish that upgrade "
                "(approve its InstallPlan) or delete the InstallPlan, and migrate once currentCSV equals installedCSV",
            )
        )
    state = st.get("state")
    if installed and state != AT_LATEST_KNOWN and not (current and current != installed):
        found.append(
            Refusal(
                "E6",
                subject,
                f"Subscription {name_of(sub)} is in state {state or 'unknown'}, not {AT_LATEST_KNOWN}: wait until OLM v0 is at rest "
                "(a pending upgrade approved or its InstallPlan deleted)",
            )
        )
    ours = {name_of(sub)}
    csv_names = {n for n in (installed, current) if n}
    plan_ref = (st.get("installPlanRef") or {}).get("name")
    for plan in sorted(observed.installplans or [], key=name_of):
        phase = status(plan).get("phase")
        if phase in INSTALLPLAN_DONE:
            continue
        owned = any(r.get("kind") == "Subscription" and r.get("name") in ours for r in metadata(plan).get("ownerReferences") or [])
        carries = csv_names & set(spec(plan).get("clusterServiceVersionNames") or [])
        if owned or carries or name_of(plan) == plan_ref:
            found.append(
                Refusal(
                    "E6",
                    _ref("InstallPlan", plan),
                    f"InstallPlan {name_of(plan)} of Subscription {name_of(sub)} is {phase or 'not planned yet'} "
                    f"(CSVs: {', '.join(spec(plan).get('clusterServiceVersionNames') or []) or 'none'}): approve it and let it complete, or "
                    "delete it, before migrating",
                )
            )
    return found


def _csv_refusals(observed):
    csv = observed.csv
    sub = observed.subscription
    if csv is None:
        installed = status(sub).get("installedCSV")
        if not installed:
            return []  # E6 says so
        return [
            Refusal(
                "E7",
                _ref("ClusterServiceVersion", _namespace(sub), installed),
                f"the installed CSV {installed} of Subscription {name_of(sub)} does not exist in namespace {_namespace(sub)} (deleted, or OLM "
                "v0 is reinstalling it): wait until OLM v0 has it Succeeded again",
            )
        ]
    if csv_succeeded(csv):
        return []
    st = status(csv)
    detail = f" ({st.get('reason')}: {excerpt(st.get('message') or '', 160)})" if st.get("reason") else ""
    return [
        Refusal(
            "E7",
            _ref("ClusterServiceVersion", csv),
            f"CSV {name_of(csv)} is in phase {st.get('phase') or 'unknown'}{detail}, not Succeeded: OLM v0 is still installing or "
            "repairing it; fix that first (olm_diagnose names the cause) and migrate a Succeeded operator",
        )
    ]


def _operator_condition_refusals(observed):
    cond = observed.operator_condition
    if not cond:
        return []
    used = [f for f, value in (("spec.conditions", spec(cond).get("conditions")), ("spec.overrides", spec(cond).get("overrides"))) if value]
    if status(cond).get("conditions"):
        used.append("status.conditions")
    if not used:
        return []
    return [
        Refusal(
            "E5",
            _ref("OperatorCondition", cond),
            f"OperatorCondition {name_of(cond)} holds {', '.join(used)}: the operator talks to OLM v0 through it (Upgradeable and others), "
            "and OLM v1 has no OperatorCondition, so it would vanish with the CSV; keep the operator on OLM v0 or clear them if they "
            "are stale",
        )
    ]


_BUNDLE_RULES = (
    ("has a dependency declared via property", "E2"),
    ("apiServiceDefintions", "E3"),
    ("webhookDefinitions", "E4"),
    ("do not support targeting all namespaces", "E1"),
)


def _bundle_refusals(observed, csv):
    bundle, manifests = observed.bundle, observed.manifests
    package = _package(observed.subscription)
    version = csv_version(csv) if csv else None
    subject = f"package {package}"
    if bundle is None:
        return [
            Refusal(
                "E9",
                subject,
                f"no serving ClusterCatalog has package {package} at the installed version {version or '?'}, so the ClusterExtension would end "
                "Installed=False (no bundle installed): add a ClusterCatalog with that version (catalogd must serve it) and migrate then",
            )
        ]
    served = ce.bundle_version(bundle)
    if version and served != version:
        return [
            Refusal(
                "E9",
                subject,
                f"ClusterCatalog {observed.catalog or '?'} has bundle {bundle.get('name')} at version {served}, not the installed version "
                f"{version}: pass the catalog's bundle of the installed version",
            )
        ]
    if manifests is None:
        return [Refusal("E9", subject, f"the manifests of bundle {bundle.get('name')} could not be read, so nothing about it can be judged")]
    found = []
    for problem in ir.check_installable(manifests, properties=bundle.get("properties"), name=bundle.get("name")):
        rule = next((r for text, r in _BUNDLE_RULES if text in problem), "E14")
        found.append(Refusal(rule, f"bundle {bundle.get('name')}", f"operator-controller v1.5.1 refuses the bundle: {problem}"))
    bundle_csv = ir.bundle_csv(manifests)
    required = ((spec(bundle_csv).get("customresourcedefinitions") or {}).get("required")) or []
    if required and not any(r.rule == "E2" for r in found):
        names = ", ".join(sorted(str((r or {}).get("name")) for r in required))
        found.append(
            Refusal(
                "E2",
                f"bundle {bundle.get('name')}",
                f"CSV {name_of(bundle_csv)} requires the CRDs {names} of another operator (spec.customresourcedefinitions.required), and "
                "operator-controller v1.5.1 resolves no dependencies: keep the operator on OLM v0",
            )
        )
    return found


def _dependent_refusals(observed):
    found = []
    package = _package(observed.subscription)
    for dependent in sorted(observed.dependents or [], key=lambda c: (metadata(c).get("namespace") or "", name_of(c) or "")):
        found.append(
            Refusal(
                "E13",
                _ref("ClusterServiceVersion", dependent),
                f"CSV {name_of(dependent)} in {metadata(dependent).get('namespace')} requires an API or the package of {package}: once the CSV "
                "is gone OLM v0 would try to resolve another provider for it; migrate or remove that operator first",
            )
        )
    return found


def _controller(obj):
    for ref in metadata(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _ownership_refusals(observed, items, extension_name):
    namespace = _namespace(observed.subscription)
    csv_name = _installed_csv_name(observed)
    found = []
    for item in items:
        live = (observed.live or {}).get(_key(item))
        if live is None:
            continue
        subject = _ref(item.kind, item.namespace, item.name)
        controller = _controller(live)
        if controller and not (controller.get("kind") == ce.KIND and controller.get("name") == extension_name):
            found.append(
                Refusal(
                    "E10",
                    subject,
                    f"{subject} is controlled by {controller.get('kind')} {controller.get('name')} (ownerReference with controller: true); an "
                    "object has at most one controller, so operator-controller cannot take it over: remove that reference if nothing "
                    "manages the object through it, or keep the operator on OLM v0",
                )
            )
        release = _annotations(live).get(HELM_RELEASE_NAME)
        release_ns = _annotations(live).get(HELM_RELEASE_NAMESPACE)
        if (release and release != extension_name) or (release_ns and release_ns != namespace):
            found.append(
                Refusal(
                    "E10",
                    subject,
                    f"{subject} belongs to Helm release {release_ns or '?'}/{release or '?'} ({HELM_RELEASE_NAME}); Helm would refuse to "
                    f"import it into release {namespace}/{extension_name}: remove it from that release first",
                )
            )
        owner = _labels(live).get(ce.OWNER_NAME_LABEL)
        if _labels(live).get(ce.OWNER_KIND_LABEL) == ce.KIND and owner != extension_name:
            found.append(Refusal("E10", subject, f"{subject} is installed by ClusterExtension {owner}: two extensions cannot own one object"))
        if item.kind == ir.CRD_KIND:
            others = _other_installations(live, namespace, csv_name, observed.csvs)
            if others:
                found.append(
                    Refusal(
                        "E10",
                        subject,
                        f"{subject} was also installed alongside {', '.join(others)} (annotations {ALONGSIDE_PREFIX}*): another OLM v0 operator "
                        "provides it too, and OLM v1 would take it from that operator; remove the other installation first (or the "
                        "annotation, if that CSV is gone)",
                    )
                )
    return found


def _other_installations(crd, namespace, csv_name, csvs):
    """The ``<namespace>/<csv>`` installations besides ours that a CRD's installed-alongside annotations name. In our
    namespace only live CSVs count (an earlier version of this operator leaves its name behind); other namespaces'
    CSVs are not observed, so they count."""
    live = {name_of(c) for c in csvs or []}
    found = set()
    for key, value in _annotations(crd).items():
        if not key.startswith(ALONGSIDE_PREFIX) or value == f"{namespace}/{csv_name}":
            continue
        where, _slash, name = str(value).partition("/")
        if where == namespace and name not in live:
            continue
        found.add(value)
    return sorted(found)


def _extension_refusals(observed, extension_name):
    ext = observed.extension
    if ext is None:
        return []
    sub = observed.subscription
    ours = f"{_namespace(sub)}/{name_of(sub)}"
    if _annotations(ext).get(MIGRATED_FROM_ANNOTATION) == ours and observed.record is not None:
        return []
    return [
        Refusal(
            "E10",
            _ref(ce.KIND, None, extension_name),
            f"ClusterExtension {extension_name} already exists and is not this migration's (package "
            f"{((spec(ext).get('source') or {}).get('catalog') or {}).get('packageName')}, namespace {spec(ext).get('namespace')}): "
            "choose another extension_name",
        )
    ]


def _crd_versions(crd):
    return {v.get("name"): v for v in spec(crd).get("versions") or [] if isinstance(v, dict)}


def _crd_refusals(observed, manifests):
    found = []
    for bundle_crd in [o for o in manifests or [] if o.get("kind") == ir.CRD_KIND]:
        live = (observed.live or {}).get((ir.CRD_KIND, None, name_of(bundle_crd)))
        if live is None:
            continue
        subject = _ref(ir.CRD_KIND, None, name_of(bundle_crd))
        problems = []
        if spec(live).get("scope") != spec(bundle_crd).get("scope"):
            problems.append(f"scope {spec(live).get('scope')} -> {spec(bundle_crd).get('scope')}")
        new = _crd_versions(bundle_crd)
        for stored in status(live).get("storedVersions") or []:
            if stored not in new:
                problems.append(f"stored version {stored} removed")
        for name, version in sorted(_crd_versions(live).items()):
            if name not in new and name not in (status(live).get("storedVersions") or []):
                problems.append(f"version {name} removed")
            elif name in new and version.get("served") and not new[name].get("served"):
                problems.append(f"version {name} no longer served")
        if problems:
            found.append(
                Refusal(
                    "E11",
                    subject,
                    f"{subject} on the cluster differs from the bundle's in a way operator-controller's CRD upgrade-safety preflight "
                    f"refuses ({'; '.join(problems)}): the cluster has a newer CRD than the installed version ships; upgrade through OLM v0 "
                    "to a version whose CRD matches, then migrate",
                )
            )
    return found


def _walk_drift(want, have, path, out):
    """Paths where ``have`` (live) differs from ``want`` (a value the bundle sets); fields only ``have`` has are
    fine (Helm's adoption patch keeps them)."""
    if isinstance(want, dict):
        if not isinstance(have, dict):
            out.append(path)
            return
        for key, value in want.items():
            _walk_drift(value, have.get(key), f"{path}.{key}", out)
        return
    merge_key = MERGE_KEYS.get(path.rsplit(".", 1)[-1])
    if isinstance(want, list) and merge_key and all(isinstance(i, dict) and merge_key in i for i in want):
        by_key = {i.get(merge_key): i for i in have or [] if isinstance(i, dict)} if isinstance(have, list) else {}
        for item in want:
            _walk_drift(item, by_key.get(item[merge_key]), f"{path}[{merge_key}={item[merge_key]}]", out)
        return
    if want != have:
        out.append(path)


def rendered_deployment_spec(csv, deployment):
    """The spec v1.5.1 renders for one of the CSV's Deployments (``deployment``: an entry of
    ``spec.install.spec.deployments``), in AllNamespaces mode: the CSV's spec with the pod template annotations
    being the CSV's annotations, the template's, and ``olm.targetNamespaces: ""``. ``revisionHistoryLimit: 1``,
    also set by v1, is left out: it rolls nothing."""
    rendered = copy.deepcopy(deployment.get("spec") or {})
    template = rendered.setdefault("template", {})
    template_meta = template.setdefault("metadata", {})
    annotations = dict(_annotations(csv))
    annotations.update(template_meta.get("annotations") or {})
    annotations[TARGET_NAMESPACES_ANNOTATION] = ""
    template_meta["annotations"] = annotations
    return rendered


def manifest_drift(manifest, live):
    """The fields of a bundle manifest (besides ``metadata``) whose live value differs: Helm's adoption patch
    overwrites them with the bundle's."""
    out = []
    for key, value in sorted(manifest.items()):
        if key not in ("apiVersion", "kind", "metadata", "status"):
            _walk_drift(value, (live or {}).get(key), key, out)
    return out


def deployment_drift(csv, deployment, live):
    """The fields (``spec.template.spec.containers[name=manager].resources``) whose live value differs from the one
    the bundle sets: Helm's adoption patch would overwrite them (a rollout, and lost tuning)."""
    out = []
    _walk_drift(rendered_deployment_spec(csv, deployment), (live or {}).get("spec"), "spec", out)
    return out


def _drift_refusals(observed, manifests):
    csv = ir.bundle_csv(manifests)
    namespace = _namespace(observed.subscription)
    found = []
    for entry in ir.install_spec(csv).get("deployments") or []:
        live = (observed.live or {}).get(("Deployment", namespace, entry.get("name")))
        if live is None:
            continue
        drift = deployment_drift(csv, entry, live)
        if drift:
            subject = _ref("Deployment", namespace, entry.get("name"))
            shown = ", ".join(drift[:5]) + (f" and {len(drift) - 5} more" if len(drift) > 5 else "")
            found.append(
                Refusal(
                    "E12",
                    subject,
                    f"{subject} differs from the bundle's Deployment in {shown} (a Subscription spec.config, a scale or an edit): adopting it "
                    "would overwrite those values and roll the pods, and operator-controller v1.5.1 has no spec.config to keep them; "
                    "remove the difference (Subscription spec.config, the edit) and let OLM v0 roll it out first",
                )
            )
    return found


def eligibility(observed, extension_name=None, resource_for=None):
    """Every reason the operator cannot move to OLM v1 now, as ``[Refusal(rule, subject, reason)]`` (empty: eligible),
    rules in order E1-E14. ``extension_name``: the ClusterExtension to create (default: the package's name), for
    the ownership rules; ``resource_for`` as for ``release_objects``. Refusals need a migration that has not started; a started one (a record) is resumed by the
    glue from its record."""
    sub = observed.subscription
    if not sub:
        raise MigrationError("no Subscription to migrate")
    extension_name = extension_name or _package(sub)
    csv = observed.csv
    found = _operator_group_refusals(observed, csv)
    found += _bundle_refusals(observed, csv)
    found += _operator_condition_refusals(observed)
    found += _subscription_refusals(observed)
    found += _csv_refusals(observed)
    found += _extension_refusals(observed, extension_name)
    if observed.manifests is not None and ir.bundle_csv(observed.manifests) is not None:
        try:
            items = release_objects(observed.manifests, _namespace(sub), resource_for)
        except MigrationError as exc:
            items = []
            found.append(Refusal("E14", f"package {_package(sub)}", f"the bundle's objects cannot be rendered: {exc}"))
        found += _ownership_refusals(observed, items, extension_name)
        found += _crd_refusals(observed, observed.manifests)
        found += _drift_refusals(observed, observed.manifests)
    found += _dependent_refusals(observed)
    return sorted(found, key=lambda r: int(r.rule[1:]))


# ------------------------------------------------------------------------------------------------ the plan


def _present(keys, mapping):
    return sorted(k for k in keys if k in mapping)


def _adoption(item, live, extension_name, namespace, package):
    """One object to adopt: the metadata Helm needs now, what v1 adds, what OLM v0 marks go later."""
    labels, annotations = _labels(live), _annotations(live)
    add_labels = {HELM_MANAGED_BY_LABEL: HELM_MANAGED_BY}
    add_annotations = {HELM_RELEASE_NAME: extension_name, HELM_RELEASE_NAMESPACE: namespace}
    owner_labels = _present(OLM_OWNER_LABELS, labels)
    before_csv = owner_labels if item.namespace is None else []
    later = [k for k in owner_labels if k not in before_csv]
    later += _present((OLM_MANAGED_LABEL, OLM_SPEC_HASH_LABEL, component_label(package, namespace)), labels)
    return {
        "kind": item.kind,
        "apiVersion": item.api_version,
        "namespace": item.namespace,
        "name": item.name,
        "origin": item.origin,
        "labels": {k: v for k, v in add_labels.items() if labels.get(k) != v},
        "annotations": {k: v for k, v in add_annotations.items() if annotations.get(k) != v},
        "replaced_labels": {k: labels[k] for k in add_labels if k in labels and labels[k] != add_labels[k]},
        "v1_adds": {
            "labels": {ce.OWNER_KIND_LABEL: ce.KIND, ce.OWNER_NAME_LABEL: extension_name},
            "ownerReference": {"apiVersion": ce.API_VERSION, "kind": ce.KIND, "name": extension_name, "controller": True, "blockOwnerDeletion": True},
        },
        "csv_reference_removed": any(r.get("kind") == ir.CSV_KIND for r in metadata(live).get("ownerReferences") or []),
        "remove_labels_before_csv_delete": before_csv,
        "remove_labels": sorted(later),
        "remove_annotations": sorted(k for k in annotations if k.startswith(ALONGSIDE_PREFIX)),
    }


OPERATOR_CONDITION_ENV = "OPERATOR_CONDITION_NAME"  # injected by OLM v0 (install/deployment.go)


def _has_env(deployment, variable):
    containers = (((spec(deployment).get("template") or {}).get("spec")) or {}).get("containers") or []
    return any(isinstance(e, dict) and e.get("name") == variable for c in containers if isinstance(c, dict) for e in c.get("env") or [])


def _write(verb, kind, api_version, namespace, name, **details):
    out = {"verb": verb, "kind": kind, "apiVersion": api_version, "namespace": namespace, "name": name}
    out.update(details)
    return out


def _obj_write(verb, obj, **details):
    return _write(verb, obj["kind"], obj["apiVersion"], metadata(obj).get("namespace"), name_of(obj), **details)


def _installplans(observed):
    """``(deleted with the Subscription, kept)``: InstallPlans the Subscription alone owns go with it."""
    sub_name = name_of(observed.subscription)
    gone, kept = [], []
    for plan in sorted(observed.installplans or [], key=name_of):
        owners = [r for r in metadata(plan).get("ownerReferences") or [] if r.get("kind") == "Subscription"]
        if any(r.get("name") == sub_name for r in owners):
            (gone if all(r.get("name") == sub_name for r in owners) else kept).append(plan)
    return gone, kept


def _operator_group_users(observed):
    sub, csv_name = observed.subscription, _installed_csv_name(observed)
    users = [_ref("Subscription", s) for s in observed.subscriptions or [] if name_of(s) != name_of(sub)]
    users += [_ref("ClusterServiceVersion", c) for c in observed.csvs or [] if name_of(c) != csv_name]
    return sorted(users)


def _extension(observed, extension_name, service_account_name, version):
    sub = observed.subscription
    channel = spec(sub).get("channel")
    try:
        definition = ce.cluster_extension_definition(
            extension_name,
            _namespace(sub),
            _package(sub),
            version=version,
            channels=[channel] if channel else None,
            selector={"matchLabels": {CATALOG_NAME_LABEL: observed.catalog}} if observed.catalog else None,
            service_account=service_account_name,
        )
    except ce.ClusterExtensionError as exc:
        raise MigrationError(f"the ClusterExtension cannot be built: {exc}") from None
    definition["metadata"]["annotations"] = {MIGRATED_FROM_ANNOTATION: f"{_namespace(sub)}/{name_of(sub)}"}
    return definition


def plan(observed, extension_name, service_account_name, delete_operator_group=False, resource_for=None):
    """The dry run of a migration (check mode shows it; the move follows its steps), as a dict:

    ``eligible``, ``refusals`` (``eligibility``, as dicts), ``notes``; ``package``, ``namespace``, ``subscription``,
    ``csv``, ``version``, ``channel``, ``catalog``; ``record`` (the state ConfigMap: ``namespace``, ``name``,
    ``exists``); ``extension`` (the ClusterExtension to create, pinned to the installed version); ``installer``
    (``service_account``, ``objects``: its least-privilege RBAC, which holds get/patch on every adopted object);
    ``adopt`` (pre-existing objects of the release, each with the ``labels``/``annotations`` to set now,
    ``replaced_labels``, what v1 adds (``v1_adds``), whether the CSV's ownerReference goes, and the OLM v0 marks to
    remove before the CSV is deleted and after); ``create`` (release objects v1 creates); ``delete`` (what is deleted
    from OLM v0, ``by`` us or the garbage collector, ``propagation``); ``removed_by_olm`` (what OLM v0 or the garbage
    collector removes once the CSV is gone); ``kept`` (what stays, with why); ``steps`` (``[{name, writes}]`` in
    ``STEP_NAMES`` order). Objects are only planned when the bundle can be rendered; an ineligible operator still
    gets what can be told. Raises ``MigrationError`` on invalid names."""
    refusals = eligibility(observed, extension_name, resource_for)
    sub, csv = observed.subscription, observed.csv
    namespace, package = _namespace(sub), _package(sub)
    csv_name = _installed_csv_name(observed)
    version = csv_version(csv) if csv else None
    notes = []
    adopt, create, installer_objects = [], [], []
    manifests = observed.manifests
    items = []
    if manifests is not None and ir.bundle_csv(manifests) is not None and not ir.check_installable(manifests):
        try:
            items = release_objects(manifests, namespace, resource_for)
        except MigrationError:
            items = []  # an E14 refusal says why
    if items:
        for item in items:
            live = (observed.live or {}).get(_key(item))
            if live is None:
                create.append({"kind": item.kind, "apiVersion": item.api_version, "namespace": item.namespace, "name": item.name, "origin": item.origin})
            else:
                adopt.append(_adoption(item, live, extension_name, namespace, package))
        try:
            installer_objects = ir.installer_rbac(extension_name, namespace, service_account_name, [manifests], resource_for=resource_for)
        except ir.InstallerRBACError as exc:
            raise MigrationError(f"the installer's RBAC cannot be derived: {exc}") from None
    bundle_objects = {(o.get("kind"), name_of(o)): o for o in manifests or [] if o.get("kind") not in (ir.CSV_KIND, "Deployment")}
    for item in adopt:
        manifest = bundle_objects.get((item["kind"], item["name"]))
        drift = manifest_drift(manifest, observed.live[(item["kind"], item["namespace"], item["name"])]) if manifest else []
        if drift:
            notes.append(f"{_ref(item['kind'], item['namespace'], item['name'])}: adoption overwrites {', '.join(drift[:5])} with the bundle's values")
        if item["replaced_labels"]:
            notes.append(
                f"{_ref(item['kind'], item['namespace'], item['name'])}: label {HELM_MANAGED_BY_LABEL} "
                f"{item['replaced_labels'][HELM_MANAGED_BY_LABEL]!r} becomes {HELM_MANAGED_BY!r} (Helm requires it)"
            )
        if item["kind"] == "Deployment":
            notes.append(f"{_ref('Deployment', namespace, item['name'])}: operator-controller sets revisionHistoryLimit 1 (no rollout)")
            if _has_env(observed.live[("Deployment", namespace, item["name"])], OPERATOR_CONDITION_ENV):
                notes.append(
                    f"{_ref('Deployment', namespace, item['name'])}: keeps OLM v0's {OPERATOR_CONDITION_ENV} variable (adoption removes "
                    "nothing), while its OperatorCondition goes with the CSV"
                )
    if observed.copied_csvs:
        shown = ", ".join(f"{ns}/{name}" for ns, name in sorted(observed.copied_csvs)[:5])
        more = f" and {len(observed.copied_csvs) - 5} more" if len(observed.copied_csvs) > 5 else ""
        notes.append(f"{len(observed.copied_csvs)} copied CSV(s) of {csv_name} ({shown}{more}): OLM v0 deletes them after the CSV")
    approval = spec(sub).get("installPlanApproval") or "Automatic"

    extension = _extension(observed, extension_name, service_account_name, version) if version else None
    record = {"namespace": namespace, "name": record_name(name_of(sub)), "exists": observed.record is not None}
    gone_plans, kept_plans = _installplans(observed)
    delete = [_write("delete", "Subscription", SUBSCRIPTION_API_VERSION, namespace, name_of(sub), by="kubeforge", propagation=PROPAGATION_BACKGROUND)]
    delete += [
        _write("delete", "InstallPlan", SUBSCRIPTION_API_VERSION, namespace, name_of(p), by="garbage collector (owner: the Subscription)") for p in gone_plans
    ]
    if csv_name:
        delete.append(_write("delete", ir.CSV_KIND, CSV_API_VERSION, namespace, csv_name, by="kubeforge", propagation=PROPAGATION_BACKGROUND))
    operator_name = f"{package}.{namespace}"
    delete.append(_write("delete", "Operator", OPERATOR_API_VERSION, None, operator_name, by="kubeforge"))
    kept = [{"what": "custom resources of the operator's CRDs", "why": "the CRDs are adopted by OLM v1, never deleted"}]
    kept += [{"what": _ref("InstallPlan", p), "why": "other Subscriptions own it too"} for p in kept_plans]
    kept.append({"what": "objects the operator created at runtime (not in the bundle)", "why": "neither OLM owns them; untouched"})
    groups = observed.operator_groups or []
    if len(groups) == 1:
        group = groups[0]
        users = _operator_group_users(observed)
        if delete_operator_group and not users:
            delete.append(_obj_write("delete", dict(group, kind="OperatorGroup", apiVersion=OPERATOR_API_VERSION), by="kubeforge"))
            notes.append(f"OperatorGroup {name_of(group)}: its ClusterRoles olm.og.{name_of(group)}.* (admin, edit, view) go with it")
        elif delete_operator_group:
            kept.append({"what": _ref("OperatorGroup", group), "why": f"still used by {', '.join(users)}"})
        else:
            kept.append({"what": _ref("OperatorGroup", group), "why": "not asked to delete it"})
    removed = []
    if csv_name:
        removed.append(
            {
                "what": f"OLM v0's RBAC of {csv_name} (Roles/RoleBindings it owns, ClusterRoles/ClusterRoleBindings labelled olm.owner={csv_name})",
                "by": "garbage collector and the CSV's finalizer",
            }
        )
    if observed.operator_condition:
        removed.append({"what": _ref("OperatorCondition", observed.operator_condition), "by": "garbage collector (controller: the CSV)"})
    removed += [{"what": _ref(ir.CSV_KIND, ns, name), "by": "OLM v0 (copied CSV)"} for ns, name in sorted(observed.copied_csvs or [])]

    steps = _steps(observed, record, approval, adopt, installer_objects, extension, delete)
    return {
        "eligible": not refusals,
        "refusals": [r._asdict() for r in refusals],
        "notes": notes,
        "package": package,
        "namespace": namespace,
        "subscription": name_of(sub),
        "csv": csv_name,
        "version": version,
        "channel": spec(sub).get("channel"),
        "catalog": observed.catalog,
        "install_plan_approval": approval,
        "record": record,
        "extension": extension,
        "installer": {"service_account": service_account_name, "objects": installer_objects},
        "adopt": adopt,
        "create": create,
        "delete": delete,
        "removed_by_olm": removed,
        "kept": kept,
        "steps": steps,
    }


def move_diff(plan, back=False):
    """The ``diff`` of the move ``plan`` describes (``back``: of its way back): who manages the operator before and
    after - OLM v0's Subscription and CSV, or the ClusterExtension and its installer - and the objects that change
    hands, so ``--diff`` shows the move in a few lines where the plan lists every write."""
    adopted = sorted(_ref(item["kind"], item["namespace"], item["name"]) for item in plan.get("adopt") or [])
    extension = plan.get("extension") or {}
    v0 = {
        "managed_by": "OLM v0",
        "subscription": _ref("Subscription", plan["namespace"], plan["subscription"]),
        "csv": plan.get("csv"),
        "version": plan.get("version"),
        "install_plan_approval": plan.get("install_plan_approval"),
        "objects": adopted,
    }
    v1 = {
        "managed_by": "OLM v1",
        "cluster_extension": extension,
        "installer": sorted(_ref(o.get("kind"), o) for o in (plan.get("installer") or {}).get("objects") or []),
        "objects": adopted,
        "version": plan.get("version"),
    }
    before, after = (v1, v0) if back else (v0, v1)
    return {"before": {"operator": before}, "after": {"operator": after}}


def _steps(observed, record, approval, adopt, installer_objects, extension, delete):
    sub = observed.subscription
    namespace = _namespace(sub)
    by_name = {name: [] for name in STEP_NAMES}
    by_name["record"].append(_write("create", "ConfigMap", "v1", record["namespace"], record["name"], phase="record"))
    if approval != "Manual":
        by_name["freeze_v0"].append(
            _write(
                "patch", "Subscription", SUBSCRIPTION_API_VERSION, namespace, name_of(sub), field="spec.installPlanApproval", before=approval, after="Manual"
            )
        )
    for item in adopt:
        if item["labels"] or item["annotations"]:
            by_name["stamp_helm_ownership"].append(
                _write("patch", item["kind"], item["apiVersion"], item["namespace"], item["name"], labels=item["labels"], annotations=item["annotations"])
            )
        if item["remove_labels_before_csv_delete"]:
            by_name["strip_csv_owner_labels"].append(
                _write("patch", item["kind"], item["apiVersion"], item["namespace"], item["name"], remove_labels=item["remove_labels_before_csv_delete"])
            )
        if item["remove_labels"] or item["remove_annotations"]:
            by_name["strip_v0_marks"].append(
                _write(
                    "patch",
                    item["kind"],
                    item["apiVersion"],
                    item["namespace"],
                    item["name"],
                    remove_labels=item["remove_labels"],
                    remove_annotations=item["remove_annotations"],
                )
            )
    by_name["create_installer"] = [_obj_write("create", obj) for obj in installer_objects]
    if extension:
        by_name["create_extension"].append(_obj_write("create", extension))
    for write in delete:
        if write["by"] != "kubeforge":
            continue
        step = {"Subscription": "delete_subscription", ir.CSV_KIND: "delete_csv", "Operator": "strip_v0_marks", "OperatorGroup": "delete_operator_group"}
        by_name[step[write["kind"]]].append(write)
    by_name["done"].append(_write("patch", "ConfigMap", "v1", record["namespace"], record["name"], phase="done"))
    return [{"name": name, "writes": by_name[name]} for name in STEP_NAMES]


# ------------------------------------------------------------------------------------------------ backups


def _sha256(value):
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raw = str(value).encode("utf-8")
    return hashlib.sha256(raw).hexdigest()


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def backup_copy(obj):
    """``obj`` as the backup keeps it: everything, except that a Secret keeps its metadata (without kubectl's
    last-applied annotation, which holds the data), its type and ``data_sha256`` (a SHA-256 of each decoded value):
    no secret ever reaches the backup, the record or the output. The migration never deletes a Secret."""
    if obj is None or obj.get("kind") != "Secret":
        return copy.deepcopy(obj)
    meta = copy.deepcopy(metadata(obj))
    meta.pop("managedFields", None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    values = dict(obj.get("data") or {})
    hashed = {key: _sha256(value) for key, value in values.items()}
    hashed.update({key: hashlib.sha256(str(value).encode("utf-8")).hexdigest() for key, value in (obj.get("stringData") or {}).items()})
    return {"apiVersion": obj.get("apiVersion"), "kind": "Secret", "metadata": meta, "type": obj.get("type"), "data_sha256": hashed}
