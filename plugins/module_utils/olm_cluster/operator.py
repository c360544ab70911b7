# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install, upgrade and uninstall one operator through OLM v0 on a cluster (the I/O around ``olm.operator``).

``install(cluster, params, ...)`` reads one snapshot (``observe_install``), lets ``olm.operator_plan.plan_install``
decide the writes (namespace, OperatorGroup when the namespace has none, Subscription), executes them
(``apply_writes``; check mode returns the plan instead), then watches the Subscription, InstallPlans, CSVs,
ReplicaSets and pods of the namespace and acts on what ``olm.operator.next_step`` decides. ``uninstall`` removes
what an install made, in operator-sdk's order. The already-installed case costs three GETs (Subscription, CSV,
Namespace) and no watch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import cluster as k8s_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import (
    create_object,
    delete_object,
    get_object,
    normalize,
    patch_object,
    public,
    to_dict,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installplan as ipl
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator as olm
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator_plan as plan
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import (
    REGISTRY_POD_LABEL,
    VERDICT_READY,
    catalog_source_verdict,
    registry_pod_problem,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.info import csv_summary
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import (
    UNPACK_REF_LABEL,
    csv_deployment_names,
    csv_succeeded,
    csv_version,
    is_copied_csv,
    metadata,
    name_of,
    spec,
    status,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import CatalogReader

V1ALPHA1 = "operators.coreos.com/v1alpha1"
V1 = "operators.coreos.com/v1"

# Marks objects the module created, so that uninstall removes those and nothing else.
CREATED_BY_LABEL = plan.CREATED_BY_LABEL
CREATED_BY = plan.CREATED_BY

# How long a CSV may stay Failed/UnsupportedOperatorGroup after the module fixed the group it created.
RETARGET_GRACE_SECONDS = 30
# Decisions that depend on time (a Failed CSV OLM retries) are re-checked this often without new events.
RECHECK_SECONDS = 5


# OLM reported a failure (or refused a step); defined beside the plan, which raises it before any write.
OperatorError = plan.OperatorError


class Cluster(k8s_cluster.Cluster):
    """The cluster facade, with OLM v0's API version for kinds named without one."""

    default_api_version = V1ALPHA1


# --------------------------------------------------------------------------------------------------- install


def installed_csv(cluster, sub):
    """The Subscription's installed CSV: its current CSV once that is Succeeded (OLM names it installedCSV up to
    seconds later), else its installedCSV; None when neither exists."""
    st = status(sub)
    current = cluster.get("ClusterServiceVersion", st["currentCSV"], metadata(sub).get("namespace")) if st.get("currentCSV") else None
    if current is not None and csv_succeeded(current):
        return current
    name = st.get("installedCSV")
    if not name or name == st.get("currentCSV"):
        return current if name else None
    return cluster.get("ClusterServiceVersion", name, metadata(sub).get("namespace"))


def ensure_operator_group(cluster, namespace, install_modes, target_namespaces, name, extra_spec=None):
    """Use the namespace's one OperatorGroup or create one (with ``extra_spec``: upgradeStrategy, serviceAccountName,
    selector); returns ``(created, operator_group)``."""
    groups = cluster.list("OperatorGroup", namespace, V1)
    definition = plan.operator_group_to_create(groups, namespace, install_modes, target_namespaces, name, extra_spec)
    if definition is None:
        return False, groups[0]
    result = create_object(cluster.client, cluster.resource("OperatorGroup", V1), definition)
    return True, result.after or definition


def ensure_subscription(cluster, namespace, name, wanted_spec, existing):
    """Create the Subscription or merge-patch the fields that differ; returns ``(changed, before, after)``."""
    if existing is None:
        definition = plan.new_subscription(namespace, name, wanted_spec)
        result = create_object(cluster.client, cluster.resource("Subscription"), definition)
        return True, None, result.after or definition
    changes = olm.subscription_changes(existing, wanted_spec)
    if not changes:
        return False, existing, existing
    result = patch_object(cluster.client, cluster.resource("Subscription"), name, {"spec": changes}, namespace)
    return True, existing, result.after


def observed_from(snapshot, subscription_name, catalog_problem=None, ready_since=0.0):
    subs = snapshot.get("subscription") or {}
    csvs = {n: c for n, c in (snapshot.get("csvs") or {}).items() if not is_copied_csv(c)}
    return olm.Observed(
        subscription=subs.get(subscription_name),
        installplans=snapshot.get("installplans") or {},
        csvs=csvs,
        replicasets=list((snapshot.get("replicasets") or {}).values()),
        pods=list((snapshot.get("pods") or {}).values()) + list((snapshot.get("unpack_pods") or {}).values()),
        catalog_problem=catalog_problem,
        now=time.time(),
        catalog_ready_since=ready_since,
    )


def _catalog_problem(snapshot, catalog, catalog_namespace):
    if snapshot.get("catalog") is None:
        return None  # not allowed to watch it: OLM's own conditions still report an unhealthy catalog
    source = snapshot["catalog"].get(catalog)
    if source is None:
        return f"CatalogSource {catalog_namespace}/{catalog} does not exist"
    verdict, message = catalog_source_verdict(source)
    if verdict == "failed":
        return f"CatalogSource {catalog_namespace}/{catalog} is unhealthy: {message}"
    # an image catalog whose registry pod cannot start is not READY, and OLM only keeps recreating the pod
    pod_problem = registry_pod_problem((snapshot.get("catalog_pods") or {}).values()) if verdict != VERDICT_READY else None
    if pod_problem is not None:
        return f"CatalogSource {catalog_namespace}/{catalog} is unhealthy: its registry pod is {pod_problem[0]}: {pod_problem[1]}"
    return None


def catalog_ready_since(snapshot, catalog, seen):
    """Since when the CatalogSource is READY, None while it is not, 0.0 when not readable.

    Its ``lastConnect`` can be older than READY (OLM stamps the connection attempt, and on a busy OLM the attempt
    took half a minute here), so once this run has seen the catalog not READY, READY counts from when this run saw
    it (``seen`` keeps that across snapshots)."""
    if snapshot.get("catalog") is None:
        return 0.0
    source = snapshot["catalog"].get(catalog)
    verdict, _message = catalog_source_verdict(source)
    if verdict != VERDICT_READY:
        seen["not_ready"] = True
        return None
    since = parse_time(((source.get("status") or {}).get("connectionState") or {}).get("lastConnect")) or 0.0
    if seen.get("not_ready"):
        since = max(since, seen.setdefault("ready_at", time.time()))
    return since


def retarget_operator_group(cluster, namespace, group_name, action, observed):
    """Fix the install mode of an OperatorGroup this run created when the CSV turns out not to support it.

    Without the PackageManifest API (or before it lists a new catalog) the install modes are unknown when the
    OperatorGroup is made; OLM then fails the CSV with UnsupportedOperatorGroup, and moves it back to Pending once
    the group fits. Returns True when the group was changed.
    """
    if action.reason != "UnsupportedOperatorGroup":
        return False
    csv = observed.csvs.get(status(observed.subscription).get("currentCSV"))
    try:
        targets = installmode.choose_targets(spec(csv).get("installModes"), namespace)
    except installmode.InstallModeError:
        return False
    patch = {"spec": {"targetNamespaces": targets or None}}
    patch_object(cluster.client, cluster.resource("OperatorGroup", V1), group_name, patch, namespace)
    return True


def wait_installed(cluster, desired, catalog, catalog_namespace, timeout, progress=None, created_group=None, notes=None):
    """Watch until ``desired`` is installed, approving the InstallPlans ``next_step`` allows.

    Returns ``(observed, name of the CSV that is done, approved plan names)``; raises ``OperatorError`` with OLM's reason, or
    ``ResourceTimeoutError`` with the partial state.
    """
    ns = desired.namespace
    sources = [
        Source("subscription", V1ALPHA1, "Subscription", ns, desired.subscription),
        Source("installplans", V1ALPHA1, "InstallPlan", ns),
        Source("csvs", V1ALPHA1, "ClusterServiceVersion", ns),
        # Diagnostics only: a user who may not list these still gets the install, with a warning.
        Source("replicasets", "apps/v1", "ReplicaSet", ns, optional=True),
        Source("pods", "v1", "Pod", ns, optional=True),
        Source("catalog", V1ALPHA1, "CatalogSource", catalog_namespace, catalog, optional=True),
        Source("catalog_pods", "v1", "Pod", catalog_namespace, label_selector=f"{REGISTRY_POD_LABEL}={catalog}", optional=True),
    ]
    if catalog_namespace != ns:
        # OLM unpacks bundles with Jobs in the CatalogSource's namespace
        sources.append(Source("unpack_pods", "v1", "Pod", catalog_namespace, label_selector=UNPACK_REF_LABEL, optional=True))
    approved = []
    state = {}
    catalog_seen = {}

    def on_change(snapshot):
        observed = observed_from(
            snapshot, desired.subscription, _catalog_problem(snapshot, catalog, catalog_namespace), catalog_ready_since(snapshot, catalog, catalog_seen)
        )
        state["observed"] = observed
        action = olm.next_step(desired, observed)
        if progress is not None:
            progress(action)
        if action.kind == olm.DONE:
            return observed, action.target
        if action.kind == olm.FAIL and created_group and action.reason == "UnsupportedOperatorGroup":
            if "retargeted" not in state and retarget_operator_group(cluster, ns, created_group, action, observed):
                state["retargeted"] = Deadline(RETARGET_GRACE_SECONDS)
            grace = state.get("retargeted")
            if grace is not None and not grace.expired():
                return None  # OLM moves the CSV back to Pending once it sees the fixed group
        if action.kind == olm.FAIL:
            result = olm.summary(observed)
            result.update({"reason": action.reason, "approved_install_plans": approved})
            raise OperatorError(action.message, result=result)
        if action.kind == olm.APPROVE and action.target not in approved:
            patch_object(cluster.client, cluster.resource("InstallPlan"), action.target, {"spec": {"approved": True}}, ns)
            approved.append(action.target)
        state["waiting"] = olm.waiting_for(desired, observed)
        return None

    def on_timeout(snapshot):
        observed = state.get("observed") or observed_from(snapshot, desired.subscription)
        result = olm.summary(observed)
        result.update({"waiting_for": state.get("waiting") or olm.waiting_for(desired, observed), "approved_install_plans": approved})
        return result

    try:
        observed, done_csv = observe(cluster.client, sources, on_change, timeout, on_timeout=on_timeout, tick=RECHECK_SECONDS, notes=notes)
    except ResourceTimeoutError as exc:
        waiting = (exc.result or {}).get("waiting_for")
        exc.msg = f"Timed out after {timeout}s waiting for the operator {desired.package} in {ns}: {waiting}"
        exc.args = (exc.msg,)
        raise
    return observed, done_csv, approved


def refuse_ineffective_options(params):
    """Raise ``OperatorError`` for option combinations OLM would silently ignore (before any request)."""
    if params.get("state", "present") != "present" or (params.get("approval") or olm.AUTOMATIC) != olm.AUTOMATIC:
        return
    if params.get("version") or params.get("starting_csv"):
        pin = "version" if params.get("version") else "starting_csv"
        raise OperatorError(f"{pin} pins the operator, which needs approval=Manual: with Automatic approval OLM upgrades to the head of the channel")
    if not params.get("approve_dependencies", True):
        raise OperatorError(
            "approve_dependencies=false needs approval=Manual: with Automatic approval OLM approves every InstallPlan itself, dependencies included"
        )


def observe_install(cluster, params):
    """The one snapshot ``operator_plan.plan_install`` decides from: the Subscription and its installed CSV, the
    namespace and (when needed) its OperatorGroups, the CatalogSource and the package's PackageManifest (a new
    Subscription, or a version to resolve), and for a Manual upgrade that is not done the InstallPlans and CSVs."""
    ns, package = params["namespace"], params["package"]
    sub_name = params.get("subscription_name") or package
    catalog, catalog_ns = params["catalog"], params.get("catalog_namespace") or ns
    existing = cluster.get("Subscription", sub_name, ns)
    if existing is not None and spec(existing).get("name") != package:
        return plan.Observation(subscription=existing)  # refused by the plan: nothing else to read
    installed = installed_csv(cluster, existing)
    namespace = cluster.get("Namespace", ns, None, "v1")
    groups = None
    if namespace is not None and (existing is None or plan.needs_group_check(params, existing)):
        groups = cluster.list("OperatorGroup", ns, V1)
    if plan.is_settled(params, existing, installed):
        return plan.Observation(existing, installed, namespace, groups)
    source = cluster.get("CatalogSource", catalog, catalog_ns) if existing is None else None
    manifest, packages, warnings = None, None, []
    if plan.needs_catalog(params, existing):
        reader = CatalogReader(cluster.client, ns)
        manifest = reader.package_manifest(package, catalog, catalog_ns)
        if manifest is None and existing is None and source is not None:
            # is the catalog serving, and without this package? (not serving yet: the install is predicted)
            packages = reader.package_names(catalog, catalog_ns)
        warnings = reader.warnings
    plans = csvs = None
    if existing is not None and (params.get("approval") or olm.AUTOMATIC) != olm.AUTOMATIC:
        plans = {name_of(p): p for p in cluster.list("InstallPlan", ns)}
        csvs = {name_of(c): c for c in cluster.list("ClusterServiceVersion", ns) if not is_copied_csv(c)}
    return plan.Observation(existing, installed, namespace, groups, source, manifest, packages, plans, csvs, warnings, time.time())


def apply_writes(cluster, planning):
    """Execute the plan's writes in order; returns ``(created, new OperatorGroup, Subscription after)``."""
    created, new_group, after = dict(planning.created), planning.new_group, planning.subscription_after
    for write in planning.writes:
        resource = cluster.resource(write.kind, write.api_version)
        if write.verb == "patch":
            result = patch_object(cluster.client, resource, write.name, write.body, write.namespace)
            if write.kind == "Subscription":
                after = result.after
            continue
        result = create_object(cluster.client, resource, write.body)
        if write.kind == "Namespace" and not result.changed:
            created.pop("namespace", None)  # made by someone else meanwhile
        elif write.kind == "OperatorGroup":
            new_group = result.after or write.body
        elif write.kind == "Subscription":
            after = result.after or write.body
    return created, new_group, after


def install(cluster, params, check_mode, wait, timeout):
    """Make ``params`` (the module's options) true on the cluster; returns the module result.

    Reads one snapshot (``observe_install``), decides the writes (``operator_plan.plan_install``, pure), executes them
    (not in check mode, which reports the plan), then waits for OLM, approving the InstallPlans ``next_step`` allows.
    """
    params = dict(params, approval=params.get("approval") or olm.AUTOMATIC)
    timer = Deadline()
    try:
        refuse_ineffective_options(params)
        plan.validate(params)
        observation = observe_install(cluster, params)
        planning = plan.plan_install(params, observation, check_mode, wait)
    except OperatorError as exc:
        # decided before any write: a role's report says nothing was changed instead of reading the namespace for why
        exc.result["refused"] = True
        raise
    existing, installed = observation.subscription, observation.installed
    labels = {"labelled": planning.labelled, "labels_before": planning.labels_before}
    if planning.settled:
        if not check_mode:
            apply_writes(cluster, planning)
        return _result(bool(planning.labelled), existing, installed, [], {}, timer, before=existing, **labels)

    if check_mode:
        created, new_group, after = planning.created, planning.new_group, planning.subscription_after
    else:
        created, new_group, after = apply_writes(cluster, planning)
    common = {"before": existing, "warnings": planning.warnings, "new_group": new_group, "namespace": _created_namespace(planning, created)}
    if check_mode or not wait:
        # Without waiting, installing or upgrading is still a change the cluster will make.
        upgrade = not olm.reached(planning.desired, after, installed)
        approval = planning.approval if check_mode else None
        return _result(bool(planning.writes) or upgrade, after, installed, [], created, timer, approval=approval, **common, **labels)

    # A group created without knowing the install modes may be retargeted once the CSV shows them.
    group_spec = params.get("operator_group_spec") or {}
    retargetable = created.get("operator_group") if params.get("target_namespaces") is None and not group_spec.get("selector") else None
    catalog, catalog_ns = params["catalog"], params.get("catalog_namespace") or params["namespace"]
    observed, done_csv, approved = wait_installed(cluster, planning.desired, catalog, catalog_ns, timeout, created_group=retargetable, notes=planning.warnings)
    return _result(
        bool(planning.writes or approved),
        observed.subscription,
        observed.csvs.get(done_csv),
        approved,
        created,
        timer,
        observed=observed,
        **common,
        **labels,
    )


def _created_namespace(planning, created):
    """The Namespace the plan creates (its definition), when it was (or, in check mode, would be) created."""
    if "namespace" not in created:
        return None
    return next((w.body for w in planning.writes if w.verb == "create" and w.kind == "Namespace"), None)


def diff_side(obj):
    """An object as a diff shows it: kind, metadata without server bookkeeping, and spec (no status: OLM's noise)."""
    if not obj:
        return {}
    side = {key: obj[key] for key in ("apiVersion", "kind") if key in obj}
    side["metadata"] = (normalize({"metadata": metadata(obj)}) or {}).get("metadata") or {}
    if "spec" in obj:
        side["spec"] = obj["spec"]
    return side


def _install_plan_diff(csvs_by_plan):
    """``{name: {"approved": ..., "csvs": [...]}}`` before and after approving the InstallPlans (``{name: CSVs}``)."""
    before = {n: {"approved": False, "csvs": list(csvs)} for n, csvs in csvs_by_plan.items()}
    after = {n: dict(v, approved=True) for n, v in before.items()}
    return before, after


def _result(changed, sub, csv, approved, created, timer, **extra):
    """The module result; ``extra``: before (the Subscription before), observed (after a wait), warnings, new_group
    and namespace (created, or would be), labelled / labels_before (namespace labels), approval (check mode: the
    InstallPlan the wait would approve first)."""
    st = status(sub)
    result = {
        "changed": changed,
        "subscription": public(sub),
        "csv": csv_summary(csv),
        "installed_csv": name_of(csv) if csv else st.get("installedCSV"),
        "current_csv": st.get("currentCSV"),
        "version": csv_version(csv) if csv else None,
        "phase": status(csv).get("phase") if csv else None,
        "approved_install_plans": list(approved),
        "created": created,
        "duration": timer.elapsed(),
    }
    labelled, observed, approval = extra.get("labelled"), extra.get("observed"), extra.get("approval")
    if labelled:
        result["namespace_labels"] = dict(labelled)
    if observed is not None:
        result["state"] = olm.summary(observed)
    before = {"subscription": diff_side(extra["before"])} if extra.get("before") else {}
    after = {"subscription": diff_side(sub)}
    if extra.get("namespace") is not None:
        after["namespace"] = extra["namespace"]
    if extra.get("new_group") is not None:
        # The OperatorGroup fixes the install mode (its targetNamespaces): a diff without it hides that.
        after["operator_group"] = diff_side(extra["new_group"])
    if labelled:  # the namespace's labels the run set, and what they were (None: not set)
        before["namespace_labels"] = dict(extra.get("labels_before") or {})
        after["namespace_labels"] = dict(labelled)
    if approval is not None:
        result["would_approve"] = approval
        before["install_plans"], after["install_plans"] = _install_plan_diff({approval["install_plan"]: approval["csvs"]})
    elif approved and observed is not None:
        plans = observed.installplans or {}
        before["install_plans"], after["install_plans"] = _install_plan_diff({n: ipl.plan_csvs(plans.get(n) or {}) for n in approved})
    result["diff"] = {"before": before, "after": after}
    if extra.get("warnings"):
        result["warnings"] = list(extra["warnings"])
    return result


# ------------------------------------------------------------------------------------------------- uninstall


def uninstall(cluster, params, check_mode, wait, timeout):
    """Remove the operator in operator-sdk's order: Subscription, optionally operands and owned CRDs (while the
    operator still runs their finalizers), the installed and current CSVs, then our OperatorGroup.

    One deadline (``timeout``) bounds every wait together.
    """
    ns, package = params["namespace"], params["package"]
    sub_name = params.get("subscription_name") or package
    deadline = Deadline(timeout)
    wait = wait and not check_mode
    removed = {}
    sub = cluster.get("Subscription", sub_name, ns)
    if sub is not None and spec(sub).get("name") != package:
        raise OperatorError(f"Subscription {ns}/{sub_name} subscribes to package {spec(sub).get('name')}, not {package}; nothing removed")
    csv_names = [n for n in (status(sub).get("installedCSV"), status(sub).get("currentCSV")) if n] if sub else []
    if sub is None:
        others = [name_of(s) for s in cluster.list("Subscription", ns) if spec(s).get("name") == package]
        if others:
            raise OperatorError(
                f"package {package} in {ns} is subscribed by {', '.join(sorted(others))}, not by {sub_name}: set subscription_name; nothing removed"
            )
        # No Subscription at all: the CSVs are found by the label OLM's Operator API sets (<package>.<namespace>, cut
        # to 63 characters). A package name that cannot be a label name was never installed by OLM: nothing to find
        # (and the selector would be refused).
        key = olm.component_label_key(package, ns)
        labelled = cluster.list("ClusterServiceVersion", ns, label_selector=key) if key and LABEL_NAME.match(key[len(olm.COMPONENT_LABEL_PREFIX) :]) else []
        csv_names = [name_of(c) for c in labelled if not is_copied_csv(c)]
    csvs = [c for c in (cluster.get("ClusterServiceVersion", n, ns) for n in dict.fromkeys(csv_names)) if c is not None]

    if sub is not None:
        delete_object(cluster.client, cluster.resource("Subscription"), sub_name, ns)
        removed["subscription"] = sub_name
        # The garbage collector would remove them later; a plan still executing could re-create the CSV meanwhile.
        for plan in olm.plans_of_subscription_only(cluster.list("InstallPlan", ns), sub):
            delete_object(cluster.client, cluster.resource("InstallPlan"), name_of(plan), ns)
    if params.get("delete_crds_and_data") and csvs:
        removed.update(_remove_operands_and_crds(cluster, csvs[0], wait, deadline))
    for csv in csvs:
        delete_object(cluster.client, cluster.resource("ClusterServiceVersion"), name_of(csv), ns)
    if csvs:
        removed["csv"] = name_of(csvs[0]) if len(csvs) == 1 else [name_of(c) for c in csvs]
    if wait:
        for csv in csvs:
            _wait_gone(cluster, "ClusterServiceVersion", V1ALPHA1, name_of(csv), ns, deadline, cluster.resource("ClusterServiceVersion"))
        if params.get("delete_crds_and_data"):
            leftovers = _remove_cluster_leftovers(cluster, [name_of(c) for c in csvs])
            if leftovers:
                removed["cluster_objects"] = leftovers
    group = _removable_operator_group(cluster, ns, sub_name, [name_of(c) for c in csvs])
    if group is not None:
        delete_object(cluster.client, cluster.resource("OperatorGroup", V1), name_of(group), ns)
        removed["operator_group"] = name_of(group)
    result = {"changed": bool(removed), "removed": removed, "diff": {"before": removed, "after": {}}}
    if params.get("delete_crds_and_data") and not csvs:
        # the CSV names the CRDs: without one, nothing tells which CRDs were the operator's
        result["warnings"] = [f"delete_crds_and_data: no CSV of {package} is left in {ns} to name its CRDs; no CRD was deleted"]
    return result


# The name part of a label key (k8s.io/apimachinery validation.IsQualifiedName).
LABEL_NAME = re.compile(r"^(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")

# OLM v0 leaves the cluster-scoped objects of a bundle (e.g. a ClusterRole shipped in manifests/) behind when the CSV
# goes; they carry these labels.
OLM_OWNER_LABEL = "olm.owner"
LEFTOVER_KINDS = (("ClusterRoleBinding", "rbac.authorization.k8s.io/v1"), ("ClusterRole", "rbac.authorization.k8s.io/v1"))


def _remove_cluster_leftovers(cluster, csv_names):
    """Delete the ClusterRoles and ClusterRoleBindings OLM labelled ``olm.owner=<csv>`` for CSVs no namespace runs
    any more (a copied CSV does not count); returns ``["Kind/name", ...]``."""
    removed = []
    for csv_name in csv_names:
        still = [c for c in cluster.list("ClusterServiceVersion", None, field_selector=f"metadata.name={csv_name}") if not is_copied_csv(c)]
        if still:
            continue
        for kind, api_version in LEFTOVER_KINDS:
            for obj in cluster.list(kind, None, api_version, label_selector=f"olm.managed=true,{OLM_OWNER_LABEL}={csv_name}"):
                if delete_object(cluster.client, cluster.resource(kind, api_version), name_of(obj))[0]:
                    removed.append(f"{kind}/{name_of(obj)}")
    return removed


def _wait_gone(cluster, kind, api_version, name, namespace, deadline, resource):
    watch_until(cluster.client, api_version, kind, name, namespace, absent, deadline.remaining(), resource=resource)


def _removable_operator_group(cluster, ns, sub_name, csv_names):
    """Our OperatorGroup, when no other Subscription or CSV in the namespace still needs it."""
    groups = [g for g in cluster.list("OperatorGroup", ns, V1) if (g["metadata"].get("labels") or {}).get(CREATED_BY_LABEL) == CREATED_BY]
    if len(groups) != 1:
        return None
    others = [s for s in cluster.list("Subscription", ns) if name_of(s) != sub_name]
    csvs = [c for c in cluster.list("ClusterServiceVersion", ns) if name_of(c) not in csv_names and not is_copied_csv(c)]
    return None if others or csvs else groups[0]


def _still_there(cluster, pending):
    """``[(kind, namespace/name, finalizers)]`` of the operands of ``pending`` that are not deleted yet."""
    out = []
    for kind, _api_version, name, namespace, resource in pending:
        obj = get_object(cluster.client, resource, name, namespace)
        if obj is not None:
            out.append((kind, f"{namespace}/{name}" if namespace else name, (obj.get("metadata") or {}).get("finalizers") or []))
    return out


def _remove_operands_and_crds(cluster, csv, wait, deadline):
    """Delete every custom resource of the CSV's owned CRDs (while the operator runs its finalizers), wait until
    they are gone, then delete the CRDs."""
    removed = {"operands": [], "crds": []}
    crd_resource = cluster.resource("CustomResourceDefinition", "apiextensions.k8s.io/v1")
    owned = (spec(csv).get("customresourcedefinitions") or {}).get("owned") or []
    crds = [c for c in (get_object(cluster.client, crd_resource, o.get("name")) for o in owned) if c]
    pending = []
    for crd in crds:
        group, kind = spec(crd).get("group"), (spec(crd).get("names") or {}).get("kind")
        served = [v.get("name") for v in spec(crd).get("versions") or [] if v.get("served")]
        if not served:
            continue
        api_version = f"{group}/{served[0]}"
        resource = cluster.resource(kind, api_version)
        for item in to_dict(resource.get()).get("items") or []:
            meta = item.get("metadata") or {}
            delete_object(cluster.client, resource, meta.get("name"), meta.get("namespace"))
            removed["operands"].append(f"{kind}/{meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta.get('name')}")
            pending.append((kind, api_version, meta.get("name"), meta.get("namespace"), resource))
    if wait:
        for kind, api_version, name, namespace, resource in pending:
            try:
                _wait_gone(cluster, kind, api_version, name, namespace, deadline, resource)
            except ResourceTimeoutError as exc:
                held = [f"{k}/{where}" + (f" (finalizers: {', '.join(f)})" if f else "") for k, where, f in _still_there(cluster, pending)]
                raise OperatorError(
                    f"Timed out waiting for the operands of {name_of(csv)} to be deleted: {'; '.join(held) or kind + '/' + name} "
                    f"still there. Their finalizers are the operator's to remove (Deployment {', '.join(csv_deployment_names(csv)) or '-'} "
                    "must run); remove them yourself once nothing needs that cleanup, then run again",
                    result={"removed": removed},
                ) from exc
    for crd in crds:
        delete_object(cluster.client, crd_resource, name_of(crd))
        removed["crds"].append(name_of(crd))
    return removed


def execute(module):
    """The olm_operator module's entry point (``KubeforgeModule.run``)."""
    params = dict(module.params)
    if not params.get("approval"):
        params["approval"] = "Manual" if params.get("version") or params.get("starting_csv") else "Automatic"
    refuse_ineffective_options(params)
    cluster = Cluster(module.client)  # the OLM-flavoured facade: kinds without an apiVersion are operators.coreos.com/v1alpha1
    timer = Deadline()
    try:
        if params["state"] == "absent":
            return uninstall(cluster, params, module.check_mode, params["wait"], params["wait_timeout"])
        return install(cluster, params, module.check_mode, params["wait"], params["wait_timeout"])
    except KubeforgeError as exc:
        # how long the run took until it failed (a role's report says it, and what it adds to that)
        exc.result.setdefault("duration", timer.elapsed())
        raise
