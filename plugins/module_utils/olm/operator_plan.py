# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``olm_operator`` (state=present) would write, decided from one observed snapshot (pure).

``plan_install(params, observation, check_mode, wait) -> InstallPlanning`` takes the module's options and what the
cluster showed (the Subscription, its installed CSV, the namespace, its OperatorGroups, the CatalogSource, the
package's PackageManifest and, for a pending upgrade, the InstallPlans and CSVs) and returns the writes in order
(namespace create or label, OperatorGroup create, Subscription create or patch) and the InstallPlan it expects to
approve. The cluster layer (``olm_cluster.operator``) reads the snapshot, executes the writes, then waits; check
mode returns the plan without executing it, so both report the same objects.

Every refusal is raised here, before any write: ``OperatorError`` (or ``installmode.InstallModeError``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.mergepatch import merge_patch
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installplan as ipl
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator as olm
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import catalog_source_verdict
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import metadata, name_of, spec

V1ALPHA1 = "operators.coreos.com/v1alpha1"
V1 = "operators.coreos.com/v1"

# Marks objects the module created, so that uninstall removes those and nothing else.
CREATED_BY_LABEL = "operators.kubeforge.io/created-by"
CREATED_BY = "kubeforge.operators.olm_operator"

# How many of a catalog's packages an error names.
LISTED_PACKAGES = 10


class OperatorError(KubeforgeError):
    """OLM reported a failure (or refused a step) while installing, upgrading or removing an operator."""


# What the cluster showed, read once before deciding:
# subscription / installed: the existing Subscription and its installed CSV (None: none);
# namespace: the Namespace object (None: it does not exist);
# operator_groups: the namespace's OperatorGroups (None: not read - not needed, or the namespace does not exist);
# catalog_source: the CatalogSource (None: it does not exist; only read for a new Subscription);
# manifest: the package's PackageManifest from that catalog (None: not asked, not listed, or not readable);
# catalog_packages: the names of the packages the catalog's PackageManifests list (None: not asked or not
#   readable; empty: the catalog is not serving yet);
# installplans / csvs: the namespace's ``{name: object}`` when a pending upgrade was looked at (else None);
# warnings: what reading could not tell; now: the wall clock (epoch seconds) of the snapshot.
Observation = namedtuple(
    "Observation",
    ["subscription", "installed", "namespace", "operator_groups", "catalog_source", "manifest", "catalog_packages", "installplans", "csvs", "warnings", "now"],
)
Observation.__new__.__defaults__ = (None,) * 11

# One write: verb "create" (body: the object) or "patch" (body: a merge patch), of kind/name in namespace.
Write = namedtuple("Write", ["verb", "kind", "api_version", "name", "namespace", "body"])

# The decision: writes in order; desired (olm.Desired, with the version resolved); created {namespace,
# operator_group, subscription: name} the writes make; labelled / labels_before: the namespace labels set and
# their values before; subscription_before / subscription_after: the Subscription now and as the writes leave it;
# new_group: the OperatorGroup created (or None); approval: {"install_plan", "csvs", "message"} of the InstallPlan
# the wait would approve first (None: none pending that it would approve); settled: already installed as asked
# (no wait needed); predicted: check mode without the CatalogSource (nothing checked against OLM); warnings.
InstallPlanning = namedtuple(
    "InstallPlanning",
    [
        "writes",
        "desired",
        "created",
        "labelled",
        "labels_before",
        "subscription_before",
        "subscription_after",
        "new_group",
        "approval",
        "settled",
        "predicted",
        "warnings",
    ],
)


def desired_of(params):
    """The ``olm.Desired`` of the module's options (before the version of a ``starting_csv`` is known)."""
    version = params.get("version")
    approval = params.get("approval") or olm.AUTOMATIC
    sub_name = params.get("subscription_name") or params["package"]
    return olm.Desired(params["package"], params["namespace"], sub_name, version, approval, params.get("approve_dependencies", True))


def wanted_spec(params):
    """The Subscription spec the options ask for (``startingCSV`` of a version is added by the plan)."""
    catalog_ns = params.get("catalog_namespace") or params["namespace"]
    return olm.subscription_spec(dict(params, catalog_namespace=catalog_ns, approval=params.get("approval") or olm.AUTOMATIC))


def is_settled(params, existing, installed):
    """True when the existing Subscription needs no change and its installed CSV is what the options ask for."""
    if existing is None:
        return False
    desired = desired_of(params)
    by_csv_name = params.get("starting_csv") if not desired.version else None
    settled = olm.reached(desired, existing, installed) and (not by_csv_name or name_of(installed) == by_csv_name)
    return settled and not olm.subscription_changes(existing, wanted_spec(params))


def needs_catalog(params, existing):
    """True when the plan needs the package's PackageManifest (a new Subscription, or a version to resolve); a caller
    that read the bundle itself (olm_bundle_run: ``starting_csv`` and ``install_modes``) never does."""
    pinned = params.get("version") or params.get("starting_csv")
    return bool(existing is None or pinned) and not (params.get("starting_csv") and params.get("install_modes") is not None)


def needs_group_check(params, existing):
    """True when an existing Subscription's OperatorGroup is checked against the targets and spec asked for."""
    return existing is not None and bool(params.get("operator_group_spec") or params.get("target_namespaces") is not None)


def validate(params):
    """Refuse options that contradict each other (before any request)."""
    try:
        installmode.check_operator_group_spec(params.get("operator_group_spec") or {}, params.get("target_namespaces"))
    except installmode.InstallModeError as exc:
        raise OperatorError(str(exc)) from exc


def plan_install(params, observation, check_mode=False, wait=True):
    """The ``InstallPlanning`` for ``params`` (the module's options, ``approval`` defaulted) given ``observation``."""
    obs = observation
    ns, package = params["namespace"], params["package"]
    catalog, catalog_ns = params["catalog"], params.get("catalog_namespace") or ns
    group_spec = params.get("operator_group_spec") or {}
    targets = params.get("target_namespaces")
    ns_labels = params.get("namespace_labels") or {}
    validate(params)
    desired = desired_of(params)
    version, approval, sub_name = desired.version, desired.approval, desired.subscription
    by_csv_name = params.get("starting_csv") if not version else None
    existing, installed = obs.subscription, obs.installed
    reached = is_reached(desired, existing, installed, by_csv_name)
    warnings = list(obs.warnings or ())

    if existing is not None and spec(existing).get("name") != package:
        raise OperatorError(f"Subscription {ns}/{sub_name} subscribes to package {spec(existing).get('name')}, not {package}")
    wanted = wanted_spec(params)
    if needs_group_check(params, existing):
        # the targets and extra spec asked for are checked on every run, not only when the Subscription is created
        for group in (obs.operator_groups or [])[:1]:
            refuse_differing_group(group, ns, group_spec)
            try:
                installmode.check_operator_group(group, None, ns, targets)
            except installmode.InstallModeError as exc:
                raise OperatorError(str(exc), result={"reason": "OperatorGroupDiffers"}) from exc

    writes = []
    labelled, labels_before = namespace_label_changes(obs.namespace, ns_labels)
    if labelled:
        writes.append(Write("patch", "Namespace", "v1", ns, None, {"metadata": {"labels": labelled}}))
    planning = InstallPlanning(writes, desired, {}, labelled, labels_before, existing, existing, None, None, False, False, warnings)
    if is_settled(params, existing, installed):
        return planning._replace(settled=True)

    manifest = obs.manifest
    if existing is None and manifest is None and obs.catalog_packages and package not in obs.catalog_packages:
        # the catalog serves its packages, and not this one: said before any write, under the reason OLM would give
        # (ConstraintsNotSatisfiable) after resolving
        listed = sorted(obs.catalog_packages)
        more = f", and {len(listed) - LISTED_PACKAGES} more" if len(listed) > LISTED_PACKAGES else ""
        raise OperatorError(
            f"package {package} is not in CatalogSource {catalog_ns}/{catalog} (its packages: {', '.join(listed[:LISTED_PACKAGES])}{more}); "
            "OLM would fail to resolve the Subscription (ConstraintsNotSatisfiable)",
            result={"reason": "ConstraintsNotSatisfiable"},
        )
    if check_mode and existing is None and manifest is None and obs.catalog_packages == []:
        warnings.append(f"CatalogSource {catalog_ns}/{catalog} serves no package (yet): the install is predicted, not checked against the catalog")
    channel = params.get("channel") or spec(existing).get("channel")
    desired = desired._replace(versions=olm.channel_versions(manifest, channel))
    if by_csv_name:
        version = version_of_csv(desired.versions, by_csv_name, package, channel, manifest, warnings)
        desired = desired._replace(version=version)
    if version and existing is None:
        try:
            wanted["startingCSV"] = params.get("starting_csv") or olm.csv_for_version(manifest, params.get("channel"), package, version)
        except ValueError as exc:
            raise OperatorError(str(exc)) from exc
    known_modes = params.get("install_modes")
    install_modes = known_modes if known_modes is not None else olm.install_modes_of(manifest, params.get("channel"))
    if not wait and not check_mode and installed is not None and (version or by_csv_name) and approval != olm.AUTOMATIC and not reached:
        # a pinned move of an installed operator happens only by approving its InstallPlan, which needs the wait
        raise OperatorError(
            f"{'version' if version else 'starting_csv'} moves the installed {name_of(installed)} only by approving an InstallPlan, "
            "which the module does while waiting: with wait=false nothing would change; set wait=true"
        )

    predicted = False
    if existing is None:
        source = obs.catalog_source
        if source is None and check_mode:
            # Check mode of a play that creates the catalog first: that step was only a dry run.
            warnings.append(f"CatalogSource {catalog_ns}/{catalog} does not exist (yet): the install is predicted, not checked against OLM")
            predicted = True
        elif source is None:
            raise OperatorError(f"CatalogSource {catalog_ns}/{catalog} does not exist")
        else:
            verdict, message = catalog_source_verdict(source)
            if verdict == "failed":
                raise OperatorError(f"CatalogSource {catalog_ns}/{catalog} is unhealthy: {message}", result={"reason": "CatalogSourceUnhealthy"})

    created, new_group, patched = {}, None, False
    if existing is None:
        if obs.namespace is None:
            meta = {"name": ns, "labels": dict(ns_labels)} if ns_labels else {"name": ns}
            writes.append(Write("create", "Namespace", "v1", ns, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}))
            created["namespace"] = ns
            labelled = dict(ns_labels)
        new_group = operator_group_to_create(obs.operator_groups or [], ns, install_modes, targets, params.get("operator_group_name") or ns, group_spec)
        if new_group is not None:
            writes.append(Write("create", "OperatorGroup", V1, name_of(new_group), ns, new_group))
            created["operator_group"] = name_of(new_group)
        after = new_subscription(ns, sub_name, wanted)
        writes.append(Write("create", "Subscription", V1ALPHA1, sub_name, ns, after))
        created["subscription"] = sub_name
    else:
        changes = olm.subscription_changes(existing, wanted)
        after = existing
        patched = bool(changes)
        if changes:
            writes.append(Write("patch", "Subscription", V1ALPHA1, sub_name, ns, {"spec": changes}))
            after = merge_patch(existing, {"spec": changes})
    return planning._replace(
        desired=desired,
        created=created,
        labelled=labelled,
        subscription_after=after,
        new_group=new_group,
        approval=expected_approval(desired, existing, obs, patched),
        predicted=predicted,
    )


def is_reached(desired, existing, installed, by_csv_name):
    """True when the installed CSV is what ``desired`` asks for (``by_csv_name``: that CSV)."""
    return olm.reached(desired, existing, installed) and (not by_csv_name or name_of(installed) == by_csv_name)


def namespace_label_changes(namespace, labels):
    """``(labels to set, their values before)`` on an existing namespace (``{}, {}`` when none, or when it does not
    exist: it is then created with them)."""
    if namespace is None or not labels:
        return {}, {}
    have = metadata(namespace).get("labels") or {}
    changes = {key: value for key, value in labels.items() if have.get(key) != value}
    return changes, {key: have.get(key) for key in changes}


def refuse_differing_group(group, namespace, extra_spec):
    """Raise ``OperatorError`` when the namespace's OperatorGroup differs from the fields ``extra_spec`` asks for."""
    differences = installmode.operator_group_spec_differences(group, extra_spec)
    if differences:
        raise OperatorError(
            f"OperatorGroup {name_of(group)} in {namespace} has {'; '.join(differences)}; it is shared by every operator in "
            "its namespace, so change it explicitly or install into another namespace",
            result={"reason": "OperatorGroupDiffers"},
        )


def operator_group_to_create(groups, namespace, install_modes, target_namespaces, name, extra_spec=None):
    """The OperatorGroup to create when the namespace has none (None when it has one that fits); raises when it has
    several, or one that differs or does not support the install mode."""
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
        return None
    return new_operator_group(namespace, name, install_modes, target_namespaces, extra_spec)


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


def new_subscription(namespace, name, wanted):
    """The Subscription the module creates (an empty ``config`` left out)."""
    return {
        "apiVersion": V1ALPHA1,
        "kind": "Subscription",
        "metadata": {"name": name, "namespace": namespace, "labels": {CREATED_BY_LABEL: CREATED_BY}},
        "spec": {k: v for k, v in wanted.items() if v != {}},
    }


def expected_approval(desired, existing, obs, subscription_patched):
    """The InstallPlan the wait would approve first, as ``olm.next_step`` decides on the snapshot: ``{"install_plan",
    "csvs", "message"}``, or None (no Subscription yet, one the writes change - OLM resolves again -, or no plan
    pending that the wait would approve)."""
    if existing is None or subscription_patched or obs.installplans is None:
        return None
    observed = olm.Observed(subscription=existing, installplans=obs.installplans, csvs=obs.csvs or {}, now=obs.now)
    action = olm.next_step(desired, observed)
    if action.kind != olm.APPROVE:
        return None
    csvs = ipl.plan_csvs(obs.installplans.get(action.target) or {})
    return {"install_plan": action.target, "csvs": csvs, "message": f"would approve InstallPlan {action.target} (CSV {', '.join(csvs)})"}


def version_of_csv(versions, csv_name, package, channel, manifest, warnings):
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
