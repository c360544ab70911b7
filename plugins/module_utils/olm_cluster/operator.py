# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install, upgrade and uninstall one operator through OLM v0 on a cluster (the I/O around ``olm.operator``).

``install(client, request, ...)`` makes the Subscription (and an OperatorGroup when the namespace has none), then
watches the Subscription, InstallPlans, CSVs, ReplicaSets and pods of the namespace and acts on what
``olm.operator.next_step`` decides. ``uninstall`` removes what an install made, in operator-sdk's order. The
already-installed case costs two GETs (Subscription, CSV) and no watch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import cluster as k8s_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import ensure_namespace
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
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time, seconds_since
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator as olm
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
CREATED_BY_LABEL = "operators.kubeforge.io/created-by"
CREATED_BY = "kubeforge.operators.olm_operator"

# How long a CSV may stay Failed/UnsupportedOperatorGroup after the module fixed the group it created.
RETARGET_GRACE_SECONDS = 30
# Decisions that depend on time (a Failed CSV OLM retries) are re-checked this often without new events.
RECHECK_SECONDS = 5


class OperatorError(KubeforgeError):
    """OLM reported a failure (or refused a step) while installing, upgrading or removing an operator."""


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


def label_namespace(cluster, namespace, labels):
    """Set ``labels`` on an existing namespace (other labels kept); returns ``(the labels it changed, their values
    before)`` (``{}`` when none, or when the namespace does not exist yet: it is then created with them)."""
    current = cluster.get("Namespace", namespace, None, "v1")
    if current is None or not labels:
        return {}, {}
    have = metadata(current).get("labels") or {}
    changes = {key: value for key, value in labels.items() if have.get(key) != value}
    if changes:
        patch_object(cluster.client, cluster.resource("Namespace", "v1"), namespace, {"metadata": {"labels": changes}})
    return changes, {key: have.get(key) for key in changes}


def ensure_operator_group(cluster, namespace, install_modes, target_namespaces, name, extra_spec=None):
    """Use the namespace's one OperatorGroup or create one (with ``extra_spec``: upgradeStrategy, serviceAccountName,
    selector); returns ``(created, operator_group)``."""
    groups = cluster.list("OperatorGroup", namespace, V1)
    if len(groups) > 1:
        names = ", ".join(sorted(name_of(g) for g in groups))
        raise OperatorError(
            f"namespace {namespace} has {len(groups)} OperatorGroups ({names}); OLM installs nothing there (TooManyOperatorGroups). Remove all but one",
            result={"reason": "TooManyOperatorGroups"},
        )
    if groups:
        refuse_differing_group(groups[0], namespace, extra_spec)
        if not (extra_spec or {}).get("selector"):
            installmode.check_operator_group(groups[0], install_modes, namespace, target_namespaces)
        return False, groups[0]
    definition = new_operator_group(namespace, name, install_modes, target_namespaces, extra_spec)
    result = create_object(cluster.client, cluster.resource("OperatorGroup", V1), definition)
    return True, result.after or definition


def refuse_differing_group(group, namespace, extra_spec):
    """Raise ``OperatorError`` when the namespace's OperatorGroup differs from the fields ``extra_spec`` asks for."""
    differences = installmode.operator_group_spec_differences(group, extra_spec)
    if differences:
        raise OperatorError(
            f"OperatorGroup {name_of(group)} in {namespace} has {'; '.join(differences)}; it is shared by every operator in "
            "its namespace, so change it explicitly or install into another namespace",
            result={"reason": "OperatorGroupDiffers"},
        )


def new_operator_group(namespace, name, install_modes, target_namespaces, extra_spec=None):
    """The OperatorGroup the module creates: targets from the install modes (or a ``selector`` in ``extra_spec``)."""
    targets = None if (extra_spec or {}).get("selector") else installmode.choose_targets(install_modes, namespace, target_namespaces)
    return operator_group_definition(namespace, name, targets, extra_spec)


def operator_group_definition(namespace, name, targets, extra_spec=None):
    """An OperatorGroup: ``targets`` as its targetNamespaces (none: AllNamespaces, or what a selector picks)."""
    group_spec = dict(extra_spec or {})
    if targets:
        group_spec["targetNamespaces"] = targets
    return {
        "apiVersion": V1,
        "kind": "OperatorGroup",
        "metadata": {"name": name, "namespace": namespace, "labels": {CREATED_BY_LABEL: CREATED_BY}},
        "spec": group_spec,
    }


def ensure_subscription(cluster, namespace, name, wanted_spec, existing):
    """Create the Subscription or merge-patch the fields that differ; returns ``(changed, before, after)``."""
    if existing is None:
        definition = {
            "apiVersion": V1ALPHA1,
            "kind": "Subscription",
            "metadata": {"name": name, "namespace": namespace, "labels": {CREATED_BY_LABEL: CREATED_BY}},
            "spec": {k: v for k, v in wanted_spec.items() if v != {}},
        }
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
                state["retargeted"] = time.monotonic()
            if time.monotonic() - state.get("retargeted", 0) < RETARGET_GRACE_SECONDS:
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


def install(cluster, params, check_mode, wait, timeout):
    """Make ``params`` (the module's options) true on the cluster; returns the module result."""
    ns, package = params["namespace"], params["package"]
    sub_name = params.get("subscription_name") or package
    catalog, catalog_ns = params["catalog"], params.get("catalog_namespace") or ns
    version = params.get("version")
    approval = params.get("approval") or olm.AUTOMATIC
    by_csv_name = params.get("starting_csv") if not version else None
    refuse_ineffective_options(params)
    group_spec = params.get("operator_group_spec") or {}
    try:
        installmode.check_operator_group_spec(group_spec, params.get("target_namespaces"))
    except installmode.InstallModeError as exc:
        raise OperatorError(str(exc)) from exc
    ns_labels = params.get("namespace_labels") or {}
    desired = olm.Desired(package, ns, sub_name, version, approval, params.get("approve_dependencies", True))
    started = time.monotonic()

    existing = cluster.get("Subscription", sub_name, ns)
    if existing is not None and spec(existing).get("name") != package:
        raise OperatorError(f"Subscription {ns}/{sub_name} subscribes to package {spec(existing).get('name')}, not {package}")
    wanted = olm.subscription_spec(dict(params, catalog=catalog, catalog_namespace=catalog_ns, approval=approval))
    installed = installed_csv(cluster, existing)
    if existing is not None and (group_spec or params.get("target_namespaces") is not None):
        # the targets and extra spec asked for are checked on every run, not only when the Subscription is created
        for group in cluster.list("OperatorGroup", ns, V1)[:1]:
            refuse_differing_group(group, ns, group_spec)
            try:
                installmode.check_operator_group(group, None, ns, params.get("target_namespaces"))
            except installmode.InstallModeError as exc:
                raise OperatorError(str(exc), result={"reason": "OperatorGroupDiffers"}) from exc
    labelled, labels_before = label_namespace(cluster, ns, ns_labels)
    settled = olm.reached(desired, existing, installed) and (not by_csv_name or name_of(installed) == by_csv_name)
    if existing is not None and not olm.subscription_changes(existing, wanted) and settled:
        return _result(bool(labelled), existing, installed, [], {}, started, before=existing, labelled=labelled, labels_before=labels_before)

    # A caller that read the bundle itself (olm_bundle_run) passes starting_csv and install_modes: no catalog lookup.
    known_modes = params.get("install_modes")
    manifest, warnings = None, []
    if (existing is None or version or by_csv_name) and not (params.get("starting_csv") and known_modes is not None):
        reader = CatalogReader(cluster.client, ns)
        manifest = reader.package_manifest(package, catalog, catalog_ns)
        warnings = reader.warnings
    channel = params.get("channel") or spec(existing).get("channel")
    desired = desired._replace(versions=olm.channel_versions(manifest, channel))
    if by_csv_name:
        version = _version_of_csv(desired.versions, by_csv_name, package, channel, manifest, warnings)
        desired = desired._replace(version=version)
    if version and existing is None:
        try:
            wanted["startingCSV"] = params.get("starting_csv") or olm.csv_for_version(manifest, params.get("channel"), package, version)
        except ValueError as exc:
            raise OperatorError(str(exc)) from exc
    install_modes = known_modes if known_modes is not None else olm.install_modes_of(manifest, params.get("channel"))
    if not wait and not check_mode and installed is not None and (version or by_csv_name) and approval != olm.AUTOMATIC and not settled:
        # a pinned move of an installed operator happens only by approving its InstallPlan, which needs the wait
        raise OperatorError(
            f"{'version' if version else 'starting_csv'} moves the installed {name_of(installed)} only by approving an InstallPlan, "
            "which the module does while waiting: with wait=false nothing would change; set wait=true"
        )

    if existing is None:
        source = cluster.get("CatalogSource", catalog, catalog_ns)
        if source is None and check_mode:
            # Check mode of a play that creates the catalog first: that step was only a dry run.
            warnings.append(f"CatalogSource {catalog_ns}/{catalog} does not exist (yet): the install is predicted, not checked against OLM")
            created = {"subscription": sub_name}
            return _result(True, None, None, [], created, started, warnings=warnings)
        if source is None:
            raise OperatorError(f"CatalogSource {catalog_ns}/{catalog} does not exist")
        verdict, message = catalog_source_verdict(source)
        if verdict == "failed":
            raise OperatorError(f"CatalogSource {catalog_ns}/{catalog} is unhealthy: {message}", result={"reason": "CatalogSourceUnhealthy"})

    created, new_group = {}, None
    if existing is None:
        if ensure_namespace(cluster, ns, ns_labels):
            created["namespace"] = ns
            labelled = dict(ns_labels)
            if check_mode:
                # Nothing can be dry-run inside a namespace that does not exist yet: predict the rest.
                new_group = new_operator_group(ns, params.get("operator_group_name") or ns, install_modes, params.get("target_namespaces"), group_spec)
                created.update(operator_group=name_of(new_group), subscription=sub_name)
                predicted = {"apiVersion": V1ALPHA1, "kind": "Subscription", "metadata": {"name": sub_name, "namespace": ns}, "spec": wanted}
                return _result(True, predicted, None, [], created, started, new_group=new_group, labelled=labelled)
        og_created, group = ensure_operator_group(
            cluster, ns, install_modes, params.get("target_namespaces"), params.get("operator_group_name") or ns, group_spec
        )
        if og_created:
            created["operator_group"] = name_of(group)
            new_group = group
    changed, before, after = ensure_subscription(cluster, ns, sub_name, wanted, existing)
    if existing is None:
        created["subscription"] = sub_name

    if check_mode or not wait:
        # Without waiting, installing or upgrading is still a change the cluster will make.
        upgrade = not olm.reached(desired, after, installed)
        return _result(
            changed or upgrade or bool(created) or bool(labelled),
            after,
            installed,
            [],
            created,
            started,
            before=before,
            warnings=warnings,
            new_group=new_group,
            labelled=labelled,
            labels_before=labels_before,
        )

    # A group created without knowing the install modes may be retargeted once the CSV shows them.
    retargetable = created.get("operator_group") if params.get("target_namespaces") is None and not group_spec.get("selector") else None
    observed, done_csv, approved = wait_installed(cluster, desired, catalog, catalog_ns, timeout, created_group=retargetable, notes=warnings)
    sub = observed.subscription
    installed = observed.csvs.get(done_csv)
    return _result(
        bool(changed or approved or created or labelled),
        sub,
        installed,
        approved,
        created,
        started,
        before=before,
        observed=observed,
        warnings=warnings,
        new_group=new_group,
        labelled=labelled,
        labels_before=labels_before,
    )


def _version_of_csv(versions, csv_name, package, channel, manifest, warnings):
    """The version of ``csv_name`` in the channel's entries ({CSV name: version}); an error naming the entries when
    the channel does not list it. When the catalog cannot be asked (no PackageManifest yet, or none served), the
    version of a conventional name ``<package>.v<version>`` (OLM's resolution then checks it), else an error."""
    if manifest is None or not versions:
        prefix = f"{package}.v"
        if csv_name.startswith(prefix) and len(csv_name) > len(prefix):
            warnings.append(f"starting_csv {csv_name}: the catalog does not list the channel's versions; version taken from the name")
            return csv_name[len(prefix) :]
        raise OperatorError(
            f"starting_csv {csv_name}: the catalog does not list the versions of {package} and the name is not {prefix}<version>; set version instead"
        )
    if csv_name not in versions or not versions[csv_name]:
        listed = ", ".join(sorted(versions)) or "none"
        raise OperatorError(f"starting_csv {csv_name} is not in channel {channel or 'default'} of package {package} (CSVs: {listed})")
    return versions[csv_name]


def _result(changed, sub, csv, approved, created, started, before=None, observed=None, warnings=(), new_group=None, labelled=None, labels_before=None):
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
        "duration": seconds_since(started),
    }
    if labelled:
        result["namespace_labels"] = dict(labelled)
    if observed is not None:
        result["state"] = olm.summary(observed)
    after = {"subscription": normalize(sub)}
    if new_group is not None:
        # The OperatorGroup fixes the install mode (its targetNamespaces): a diff without it hides that.
        after["operator_group"] = normalize(new_group)
    result["diff"] = {"before": {"subscription": normalize(before)} if before else {}, "after": after}
    if labelled:  # the namespace's labels the run set, and what they were (None: not set)
        result["diff"]["before"]["namespace_labels"] = dict(labels_before or {})
        after["namespace_labels"] = dict(labelled)
    if warnings:
        result["warnings"] = list(warnings)
    return result


# ------------------------------------------------------------------------------------------------- uninstall


def uninstall(cluster, params, check_mode, wait, timeout):
    """Remove the operator in operator-sdk's order: Subscription, optionally operands and owned CRDs (while the
    operator still runs their finalizers), the installed and current CSVs, then our OperatorGroup.

    One deadline (``timeout``) bounds every wait together.
    """
    ns, package = params["namespace"], params["package"]
    sub_name = params.get("subscription_name") or package
    deadline = time.monotonic() + timeout
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
        labelled = cluster.list("ClusterServiceVersion", ns, label_selector=key) if key and LABEL_NAME.match(key[len(olm.COMPONENT_LABEL_PREFIX):]) else []
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
    watch_until(cluster.client, api_version, kind, name, namespace, absent, max(0.0, deadline - time.monotonic()), resource=resource)


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
    cluster = Cluster(module.client)
    started = time.monotonic()
    try:
        if params["state"] == "absent":
            return uninstall(cluster, params, module.check_mode, params["wait"], params["wait_timeout"])
        return install(cluster, params, module.check_mode, params["wait"], params["wait_timeout"])
    except KubeforgeError as exc:
        # how long the run took until it failed (a role's report says it, and what it adds to that)
        exc.result.setdefault("duration", seconds_since(started))
        raise
