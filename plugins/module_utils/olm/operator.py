# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installing and upgrading one operator through OLM v0, as a pure state machine.

``next_step(desired, observed) -> Action`` looks at what the cluster shows (Subscription, InstallPlans, CSVs,
the CSV's ReplicaSets and pods, the CatalogSource) and says what to do next: wait, approve one InstallPlan, stop
because the operator is installed, or fail with OLM's own reason. All I/O (watching, patching) happens in the
caller, which calls ``next_step`` again after every change it sees.

Rules (olm.md sections 2 and 3):

* ``AtLatestKnown`` is not "installed": done means the CSV is ``Succeeded`` (and, with a ``version``, is that
  version; with Automatic approval and no version, is the Subscription's ``currentCSV``).
* An InstallPlan is approved only when its CSVs are exactly ours plus dependencies OLM adds for us; a plan that
  also carries other Subscriptions' CSVs is reported and left alone.
* With a ``version``, upgrades step along the channel one InstallPlan at a time and never past that version.
* Terminal failures (ResolutionFailed/ConstraintsNotSatisfiable, failed unpack or InstallPlan, Failed CSV,
  pods the Deployment cannot create or that crash) stop the wait at once.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time
from ansible_collections.kubeforge.operators.plugins.module_utils.mergepatch import merge_patch
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installplan as ipl
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import (
    CSV_FAILURES,
    INSTALLPLAN_FAILURES,
    SUBSCRIPTION_FAILURES,
    SUBSCRIPTION_NOTICES,
    condition,
    condition_true,
    csv_blocked,
    csv_deployment_names,
    csv_failure_is_retried,
    csv_requirements_unmet,
    csv_succeeded,
    csv_version,
    first_problem,
    name_of,
    notices,
    pods_without_config,
    spec,
    status,
    unpack_problem,
    workload_problem,
    workload_restarting,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

AUTOMATIC = "Automatic"
MANUAL = "Manual"

WAIT = "wait"
APPROVE = "approve"
DONE = "done"
FAIL = "fail"

# versions: {CSV name: version} of the subscribed channel from the catalog (PackageManifest entries), used when an
# InstallPlan does not carry the CSV manifest (bundles unpacked from images reference a ConfigMap instead).
Desired = namedtuple("Desired", ["package", "namespace", "subscription", "version", "approval", "approve_dependencies", "versions"])

# Options of olm_operator and olm_bundle_run that only act in some combinations (runner.run_module refuses the rest).
UNINSTALL_UNUSED = (
    Unused(("delete_crds_and_data",), lambda p: p["state"] == "absent", "with state=present (it is part of the uninstall)"),
    Unused(
        ("delete_crds_and_data",),
        lambda p: p["state"] != "absent" or p["wait"],
        "with wait=false (the operator must process its custom resources' finalizers before it is removed, so the module waits)",
    ),
)
APPROVAL_UNUSED = Unused(
    ("approve_dependencies",), lambda p: p["state"] != "present" or p["wait"], "with wait=false (InstallPlans are approved only while waiting)"
)
Desired.__new__.__defaults__ = (None, AUTOMATIC, True, None)

# subscription: dict or None; installplans / csvs: {name: obj}; replicasets / pods: lists; catalog_problem: a
# message when the CatalogSource is known to be unhealthy (None otherwise).
# now: the wall clock (epoch seconds) when observed, for reasons OLM retries for a while (None: no time limit).
# catalog_ready_since: since when (epoch seconds) the Subscription's CatalogSource is READY; None while it is not;
# 0.0 (the default) when unknown (not readable), which counts as ready long ago.
Observed = namedtuple("Observed", ["subscription", "installplans", "csvs", "replicasets", "pods", "catalog_problem", "now", "catalog_ready_since"])
Observed.__new__.__defaults__ = ((), (), None, None, 0.0)

# OLM resolves again once a new CatalogSource is READY; a resolution that failed before that is stale until then.
RESOLUTION_AFTER_CATALOG_GRACE_SECONDS = 5
# How long after a CSV succeeded the module waits for the Subscription to record it (installedCSV, no
# InstallPlanPending): a result that reports success beside OLM's stale "UpgradePending" misleads.
SUBSCRIPTION_SETTLE_SECONDS = 10

Action = namedtuple("Action", ["kind", "message", "reason", "target"])
Action.__new__.__defaults__ = (None, None)


def same_version(a, b):
    """True when two versions are equal as semver (``0.0.1`` == ``v0.0.1``); plain comparison otherwise."""
    try:
        return semver.parse(str(a).lstrip("v")) == semver.parse(str(b).lstrip("v"))
    except ValueError:
        return str(a) == str(b)


def version_after(a, b):
    """True when version ``a`` is newer than ``b`` (semver); False when either cannot be parsed."""
    try:
        return semver.parse(str(a).lstrip("v")) > semver.parse(str(b).lstrip("v"))
    except ValueError:
        return False


COMPONENT_LABEL_PREFIX = "operators.coreos.com/"


def component_label_key(package, namespace):
    """The label OLM's Operator API puts on the CSV (and the other objects) of ``package`` in ``namespace``, as
    decorators.Operator.ComponentLabelKey makes it: ``<package>.<namespace>`` cut to 63 characters without trailing
    ``.``, ``_``, ``-``; None when nothing is left."""
    name = "%s.%s" % (package, namespace)
    if len(name) > 63:
        name = name[:63].rstrip("._-")
    return COMPONENT_LABEL_PREFIX + name if name else None


def conventional_csv_name(package, version):
    """``<package>.v<version>``: the CSV name operator-sdk generates, used when the catalog cannot be asked."""
    return f"{package}.v{str(version).lstrip('v')}"


def channel_versions(manifest, channel):
    """``{CSV name: version}`` of a PackageManifest channel's entries (empty when unknown)."""
    entry = channel_of(manifest, channel) if manifest else None
    return {item.get("name"): item.get("version") for item in (entry or {}).get("entries") or [] if item.get("name")}


def channel_of(manifest, channel):
    """The named channel (or the default one) of a PackageManifest, or None."""
    wanted = channel or status(manifest).get("defaultChannel")
    for entry in status(manifest).get("channels") or []:
        if entry.get("name") == wanted:
            return entry
    return None


def csv_for_version(manifest, channel, package, version):
    """The CSV name of ``version`` in the channel (PackageManifest entries), else OLM's ``<package>.v<version>``.

    Raises ``ValueError`` when the channel lists its versions and ``version`` is not among them.
    """
    entry = channel_of(manifest, channel) if manifest else None
    for item in (entry or {}).get("entries") or []:
        if same_version(item.get("version"), version):
            return item.get("name")
    if entry is not None and entry.get("entries"):
        versions = ", ".join(str(item.get("version")) for item in entry["entries"])
        raise InvalidInputError(f"version {version} is not in channel {entry.get('name')} of package {package} (versions: {versions})")
    return conventional_csv_name(package, version)


def install_modes_of(manifest, channel):
    """The install modes of the channel head (``currentCSVDesc``), or None when the catalog does not tell."""
    entry = channel_of(manifest, channel) if manifest else None
    if entry is None:
        return None
    return (entry.get("currentCSVDesc") or {}).get("installModes")


def plans_of_subscription_only(plans, subscription):
    """InstallPlans whose only owner is ``subscription`` (OLM's non-blocking owner references): removed with it."""
    uid = (subscription.get("metadata") or {}).get("uid")
    owned = []
    for plan in plans:
        owners = (plan.get("metadata") or {}).get("ownerReferences") or []
        if owners and all(ref.get("kind") == "Subscription" and ref.get("uid") == uid for ref in owners):
            owned.append(plan)
    return owned


def subscription_spec(desired_fields):
    """The Subscription ``spec`` for the module's parameters (pure); empty values are left out."""
    fields = {
        "name": desired_fields["package"],
        "channel": desired_fields.get("channel"),
        "source": desired_fields["catalog"],
        "sourceNamespace": desired_fields["catalog_namespace"],
        "installPlanApproval": desired_fields.get("approval") or AUTOMATIC,
        "startingCSV": desired_fields.get("starting_csv"),
        "config": desired_fields.get("config"),
    }
    # config: {} is kept: it clears a config set before (subscription_changes); a new Subscription leaves it out
    return {k: v for k, v in fields.items() if v not in (None, "") and (v != {} or k == "config")}


def subscription_changes(existing, wanted):
    """The fields of ``wanted`` (a spec) that differ in the existing Subscription, as a merge patch (pure).

    ``startingCSV`` only matters for the first install, so an installed Subscription keeps its own. ``config`` is
    made equal to the one wanted: keys left out of it are removed (``config: {}`` removes it whole).
    """
    current = spec(existing)
    patch = {}
    for key, value in wanted.items():
        if key == "startingCSV" and (status(existing).get("installedCSV") or current.get("startingCSV")):
            continue
        if key == "config" and value == {}:
            if current.get("config"):
                patch["config"] = None
        elif current.get(key) != value:
            patch[key] = merge_patch(current.get(key), value) if key == "config" else value
    return patch


def reached(desired, subscription, csv):
    """True when ``csv`` (the installed or the current CSV) is what ``desired`` asks for and has succeeded."""
    if csv is None or not csv_succeeded(csv):
        return False
    if desired.version:
        return same_version(csv_version(csv), desired.version)
    if desired.approval == AUTOMATIC:
        return name_of(csv) == status(subscription).get("currentCSV")
    return True


def next_step(desired, observed):
    """The next ``Action`` for ``desired`` given ``observed`` (pure)."""
    sub = observed.subscription
    if sub is None:
        if observed.catalog_problem:
            return Action(FAIL, observed.catalog_problem, "CatalogSourceUnhealthy")
        return Action(WAIT, f"Subscription {desired.subscription} to appear")

    st = status(sub)
    installed_name, current_name = st.get("installedCSV"), st.get("currentCSV")
    installed = observed.csvs.get(installed_name) if installed_name else None
    # Done comes first: a stale condition or a catalog hiccup does not undo a Succeeded install. The current CSV
    # counts as soon as it succeeds: OLM may name it installedCSV seconds later.
    for name in (current_name, installed_name):
        csv = observed.csvs.get(name) if name else None
        if reached(desired, sub, csv):
            # OLM says Succeeded as soon as each Deployment is available, also between the restarts of a crash loop.
            config = spec(sub).get("config")
            problem = workload_problem(csv, observed.replicasets, observed.pods, config)
            if problem and problem.reason == "CrashLoopBackOff":
                return Action(FAIL, _pod_cause_first(problem.message, name, csv), problem.reason or problem.name)
            unconfigured = pods_without_config(csv, observed.replicasets, observed.pods, config) if config else []
            if unconfigured:
                # Succeeded on pods without the config: the config's pods, once OLM applies it, must run too
                problem = workload_problem(csv, observed.replicasets, observed.pods, config, observed.now)
                if problem:
                    return Action(FAIL, _pod_cause_first(problem.message, name, csv), problem.reason or problem.name)
                return Action(WAIT, f"{name} is Succeeded; OLM to roll the Subscription's config out (pods without it: {', '.join(unconfigured)})")
            restarting = workload_restarting(csv, observed.replicasets, observed.pods, observed.now)
            if restarting:
                return Action(WAIT, f"{name} is Succeeded; {restarting}")
            unfinished = _unfinished_plan_csvs(observed, (st.get("installPlanRef") or {}).get("name"), name)
            if not unfinished and _subscription_settling(sub, name, csv, observed.now):
                return Action(WAIT, f"{name} is Succeeded; Subscription {desired.subscription} to record it")
            if not unfinished:
                return Action(DONE, f"{name} is Succeeded", target=name)
            return Action(WAIT, f"{name} is Succeeded; waiting for {', '.join(unfinished)}")

    if observed.catalog_problem:
        return Action(FAIL, observed.catalog_problem, "CatalogSourceUnhealthy")
    problem = first_problem(SUBSCRIPTION_FAILURES, sub)
    unpack = unpack_problem(observed.pods)
    if problem and not _resolved_plan_executes(observed, st, problem) and not _resolved_before_catalog_ready(observed, sub, problem):
        cause = f"; {unpack.message}" if unpack and problem.name == "BundleUnpackFailed" else ""
        return Action(FAIL, f"Subscription {desired.subscription}: {problem.name} ({problem.reason}): {problem.message}{cause}", problem.reason)
    if unpack and condition_true(sub, "BundleUnpacking"):
        # OLM waits for its unpack timeout (10 minutes by default) before it says BundleUnpackFailed, without the cause.
        return Action(FAIL, f"Subscription {desired.subscription}: the bundle cannot be unpacked: {unpack.message}", unpack.reason)
    if desired.version and installed is not None and csv_succeeded(installed) and version_after(csv_version(installed), desired.version):
        return Action(
            FAIL,
            f"{installed_name} (version {csv_version(installed)}) is installed, newer than the requested version {desired.version}; OLM does not downgrade",
            "NewerVersionInstalled",
        )

    current = observed.csvs.get(current_name) if current_name else None
    if current is not None:
        problem = first_problem(CSV_FAILURES, current)
        if problem and not csv_failure_is_retried(current, observed.now):
            return Action(FAIL, _csv_failure(current_name, current), status(current).get("reason"))
        unmet = csv_requirements_unmet(current, observed.now)
        if unmet:
            return Action(FAIL, f"ClusterServiceVersion {current_name} phase Pending: {unmet}", "RequirementsNotMet")
        if not csv_succeeded(current):
            config = spec(sub).get("config")
            problem = workload_problem(current, observed.replicasets, observed.pods, config, observed.now)
            if problem:
                return Action(FAIL, _pod_cause_first(problem.message, current_name, current), problem.reason or problem.name)
            stale = workload_problem(current, observed.replicasets, observed.pods) if config else None
            if stale:
                return Action(
                    FAIL, _pod_cause_first(f"{stale.message}; {_config_missing(current)}", current_name, current), stale.reason or stale.name
                )

    plan_name = (st.get("installPlanRef") or {}).get("name")
    plan = observed.installplans.get(plan_name) if plan_name else None
    if plan is not None:
        problem = first_problem(INSTALLPLAN_FAILURES, plan)
        if problem:
            return Action(FAIL, f"InstallPlan {plan_name} failed ({problem.reason}): {problem.message}", problem.reason)
        if ipl.requires_approval(plan):
            if installed is not None and not desired.version and csv_succeeded(installed):
                return Action(DONE, f"{installed_name} is Succeeded; InstallPlan {plan_name} waits for approval", target=installed_name)
            if installed is not None and desired.version and same_version(csv_version(installed), desired.version) and current_name != installed_name:
                # OLM makes the next upgrade's plan as soon as the requested CSV is installed, often before it has
                # succeeded: that plan is not ours to approve; the install is done when the requested CSV succeeds.
                problem = first_problem(CSV_FAILURES, installed)
                if problem and not csv_failure_is_retried(installed, observed.now):
                    return Action(FAIL, _csv_failure(installed_name, installed), status(installed).get("reason"))
                return Action(WAIT, f"{installed_name} (the requested version) to succeed; InstallPlan {plan_name} for {current_name} stays unapproved")
            return _approval(desired, plan_name, plan, current_name, sub)
    return Action(WAIT, waiting_for(desired, observed))


def _subscription_settling(sub, name, csv, now):
    """True for a few seconds after ``csv`` succeeded while the Subscription does not show it installed yet."""
    st = status(sub)
    behind = st.get("installedCSV") != name or (st.get("currentCSV") == name and condition_true(sub, "InstallPlanPending"))
    since = parse_time(status(csv).get("lastTransitionTime"))
    return behind and now is not None and since is not None and now - since < SUBSCRIPTION_SETTLE_SECONDS


def _config_missing(csv):
    """Why a CSV's stuck pod lacks the Subscription's config, and the way out (seen on the testbed with OLM v0.46)."""
    deployments = ", ".join(csv_deployment_names(csv))
    return (
        "the pod runs without the Subscription's spec.config: OLM created the Deployment before the Subscription's "
        "installedCSV named the CSV, and it applies the config only to a Deployment that becomes available; delete "
        f"Deployment {deployments} and OLM recreates it with the config"
    )


def _resolved_plan_executes(observed, st, problem):
    """Whether a ResolutionFailed comes after the resolution that made the Subscription's current, approved plan.

    OLM resolves the namespace again while that plan runs; with a dependency, the dependency's CSV can exist before
    its Subscription does, and that resolution reports "constraints not satisfiable: @existing/..." for a few seconds.
    The plan carries on regardless, so only a failed plan (INSTALLPLAN_FAILURES) or CSV ends the wait then."""
    if problem.name != "ResolutionFailed":
        return False
    plan_name = (st.get("installPlanRef") or {}).get("name")
    plan = observed.installplans.get(plan_name) if plan_name else None
    return (
        plan is not None
        and spec(plan).get("approved") is True
        and status(plan).get("phase") in ("Installing", "Complete")
        and st.get("currentCSV") in ipl.plan_csvs(plan)
    )


def _resolved_before_catalog_ready(observed, sub, problem):
    """Whether a ResolutionFailed may predate the catalog: a Subscription created with its CatalogSource is resolved
    before OLM has connected to the catalog ("no operators found in package ..."), and again once it is READY.

    Such a failure is waited on while the catalog is not READY, and for a short grace after, so that OLM's next
    resolution can replace it; a failure recorded after the catalog became READY is final at once."""
    if problem.name != "ResolutionFailed":
        return False
    ready_since = observed.catalog_ready_since
    if ready_since is None:
        return True
    failed_at = parse_time((condition(sub, "ResolutionFailed") or {}).get("lastTransitionTime"))
    if failed_at is None or failed_at >= ready_since or observed.now is None:
        return False
    return observed.now - ready_since < RESOLUTION_AFTER_CATALOG_GRACE_SECONDS


def _unfinished_plan_csvs(observed, plan_name, own_csv):
    """What of an approved plan is not finished: the plan itself, or CSVs installed together with ours
    (dependencies) that have not succeeded yet.

    OLM checks only that required APIs exist, so our CSV can succeed before a dependency's own CSV does.
    """
    plan = observed.installplans.get(plan_name) if plan_name else None
    if plan is None or not spec(plan).get("approved"):
        return []
    phase = status(plan).get("phase")
    if phase not in ("Complete", "Failed"):
        # OLM still executes the plan (and would re-create what an immediate uninstall deletes).
        return [f"InstallPlan {plan_name} ({phase or 'no phase'})"]
    pending = []
    for name in ipl.plan_csvs(plan):
        csv = observed.csvs.get(name)
        if name != own_csv and csv is not None and not csv_succeeded(csv):
            pending.append(f"{name} ({status(csv).get('phase') or 'no phase'})")
    return pending


def _approval(desired, plan_name, plan, own_csv, sub):
    content = ipl.classify_plan(plan, own_csv)
    listed = ", ".join(ipl.plan_csvs(plan))
    if not content.own:
        return Action(
            FAIL,
            f"InstallPlan {plan_name} ({listed}) does not contain {own_csv or 'a CSV of ' + desired.package}; not approved",
            "UnexpectedInstallPlan",
        )
    wanted = (spec(sub).get("source"), spec(sub).get("sourceNamespace"))
    sources = ipl.csv_catalogs(plan, own_csv)
    if sources and wanted[0] and wanted not in sources:
        # OLM keeps an unapproved plan resolved before the Subscription moved to another catalog (a mirror, say):
        # approving it would install from the catalog the user left.
        taken = ", ".join(sorted(f"{ns}/{name}" for name, ns in sources))
        return Action(
            FAIL,
            f"InstallPlan {plan_name} takes {own_csv} from CatalogSource {taken}, but Subscription {desired.subscription} now names "
            f"{wanted[1]}/{wanted[0]}; not approved. Delete InstallPlan {plan_name}: OLM then resolves again from {wanted[0]}",
            "InstallPlanFromAnotherCatalog",
        )
    if content.foreign:
        return Action(
            FAIL,
            f"InstallPlan {plan_name} also carries {', '.join(content.foreign)} of other Subscriptions in namespace "
            f"{desired.namespace} (OLM plans one namespace at a time, and approving the plan would install them too); "
            "not approved. Approve or remove the other pending upgrades first, or install into a namespace of its own",
            "ForeignCSVsInInstallPlan",
        )
    if content.dependencies and not desired.approve_dependencies:
        return Action(
            FAIL,
            f"InstallPlan {plan_name} would also install the dependencies {', '.join(content.dependencies)}; not approved "
            "because approve_dependencies is false",
            "DependenciesNotApproved",
        )
    if desired.version:
        version = ipl.plan_csv_versions(plan).get(own_csv) or (desired.versions or {}).get(own_csv)
        if version is None and own_csv == conventional_csv_name(desired.package, desired.version):
            version = desired.version
        if version is None:
            return Action(
                FAIL,
                f"cannot tell the version of {own_csv} in InstallPlan {plan_name}: the plan does not carry its manifest and "
                "the catalog's PackageManifest does not list it; not approved",
                "UnknownVersion",
            )
        if version_after(version, desired.version):
            return Action(
                FAIL,
                f"the next step of the upgrade graph is {own_csv} (version {version}), past the requested version "
                f"{desired.version}: the channel has no upgrade path through {desired.version}; not approved",
                "VersionNotOnUpgradePath",
            )
    return Action(APPROVE, f"approve InstallPlan {plan_name} ({listed})", target=plan_name)


def _csv_failure(name, csv):
    st = status(csv)
    return f"ClusterServiceVersion {name} phase Failed ({st.get('reason')}): {st.get('message') or ''}".rstrip(": ")


def _pod_cause_first(cause, name, csv):
    """A failure found in the operator's pods: the cause first (what the pod does), then what OLM shows for the CSV
    (its phase and message - often only "waiting for spec update of deployment ..." - are the consequence)."""
    return f"{cause}; OLM: {_csv_progress(name, csv)}"


def _csv_progress(name, csv):
    st = status(csv)
    return f"ClusterServiceVersion {name} phase {st.get('phase') or 'unknown'} ({st.get('reason') or ''}: {st.get('message') or ''})"


def waiting_for(desired, observed):
    """A one-line description of what the install waits for (progress and timeout messages)."""
    sub = observed.subscription
    if sub is None:
        return f"Subscription {desired.subscription} to appear"
    st = status(sub)
    parts = [f"Subscription state {st.get('state') or 'unknown'}"]
    current_name = st.get("currentCSV")
    current = observed.csvs.get(current_name) if current_name else None
    plan_name = (st.get("installPlanRef") or {}).get("name")
    plan = observed.installplans.get(plan_name) if plan_name else None
    if plan is not None:
        parts.append(f"InstallPlan {plan_name} phase {status(plan).get('phase') or 'unknown'}")
    if current is not None:
        parts.append(_csv_progress(current_name, current))
        blocked = csv_blocked(current)
        if blocked:
            parts.append(f"blocked: {blocked}")
    elif current_name:
        parts.append(f"ClusterServiceVersion {current_name} not created yet")
    parts.extend(notices(SUBSCRIPTION_NOTICES, sub))
    return "; ".join(parts)


def summary(observed):
    """Partial state for results and timeouts: Subscription state, InstallPlan phase, CSV phase and reason."""
    sub = observed.subscription
    st = status(sub)
    current_name = st.get("currentCSV")
    current = observed.csvs.get(current_name) if current_name else None
    plan_name = (st.get("installPlanRef") or {}).get("name")
    plan = observed.installplans.get(plan_name) if plan_name else None
    return {
        "subscription_state": st.get("state"),
        "subscription_conditions": [c for c in st.get("conditions") or [] if c.get("status") == "True"],
        "installed_csv": st.get("installedCSV"),
        "current_csv": current_name,
        "install_plan": plan_name,
        "install_plan_phase": status(plan).get("phase") if plan else None,
        "csv_phase": status(current).get("phase") if current else None,
        "csv_reason": status(current).get("reason") if current else None,
        "csv_message": status(current).get("message") if current else None,
    }
