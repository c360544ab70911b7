# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How to read OLM v0 objects: tables of pure predicates over plain dicts.

Each table row is ``(name, predicate(obj) -> bool, describe(obj) -> message)``; ``first_problem(table, obj)``
returns the first row that matches as a ``Problem``. The rows encode OLM's own semantics (olm.md section 2):
Subscription conditions have abnormal-true polarity, a CSV is ready only in phase ``Succeeded``, and a
ReplicaSet's ``FailedCreate`` (e.g. Pod Security admission) is visible long before OLM fails the CSV (OLM v0.46.0:
``InstallCheckFailed`` after 5 minutes in phase Installing, pkg/controller/operators/olm/operator.go, or at a
Deployment's ``ProgressDeadlineExceeded``, pkg/controller/install/status_viewer.go).
No Ansible or kubernetes imports: everything here is testable with literal objects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time

Problem = namedtuple("Problem", ["name", "reason", "message"])

# The label OLM puts on CSVs it copies into target namespaces; copies are not installations.
COPIED_LABEL = "olm.copiedFrom"


def status(obj):
    return (obj or {}).get("status") or {}


def spec(obj):
    return (obj or {}).get("spec") or {}


def metadata(obj):
    return (obj or {}).get("metadata") or {}


def name_of(obj):
    return metadata(obj).get("name")


def condition(obj, cond_type):
    """The condition of ``cond_type`` in ``status.conditions`` (a dict), or None."""
    for cond in status(obj).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == cond_type:
            return cond
    return None


def condition_true(obj, cond_type, reasons=None):
    cond = condition(obj, cond_type)
    if not cond or cond.get("status") != "True":
        return False
    return reasons is None or cond.get("reason") in reasons


def condition_current(cond, obj):
    """Whether a condition (dict or None) of ``obj`` describes its current generation (``observedGeneration``)."""
    return cond is not None and cond.get("observedGeneration") == metadata(obj).get("generation")


def describe_conditions(obj, cond_types):
    """One line with the conditions ``cond_types`` of ``obj`` (type=status/reason: message), or ``no status yet``."""
    parts = []
    for cond_type in cond_types:
        cond = condition(obj, cond_type)
        if cond:
            text = f"{cond_type}={cond.get('status')}/{cond.get('reason')}"
            if cond.get("message"):
                text += f": {excerpt(cond['message'])}"
            parts.append(text)
    return "; ".join(parts) or "no status yet"


def _condition_message(cond_type):
    def describe(obj):
        cond = condition(obj, cond_type) or {}
        return cond.get("reason"), cond.get("message") or cond_type

    return describe


# ------------------------------------------------------------------------------------------- Subscription
# Terminal resolution and unpack failures: OLM does not retry ConstraintsNotSatisfiable (it needs a human), and a
# failed InstallPlan never completes. ErrorPreventedResolution is requeued by OLM, so it is only reported.
SUBSCRIPTION_FAILURES = (
    ("ResolutionFailed", lambda s: condition_true(s, "ResolutionFailed", {"ConstraintsNotSatisfiable"}), _condition_message("ResolutionFailed")),
    ("BundleUnpackFailed", lambda s: condition_true(s, "BundleUnpackFailed"), _condition_message("BundleUnpackFailed")),
    ("InstallPlanFailed", lambda s: condition_true(s, "InstallPlanFailed"), _condition_message("InstallPlanFailed")),
)

# Conditions worth reporting while waiting (not failures by themselves).
SUBSCRIPTION_NOTICES = (
    ("ResolutionFailed", lambda s: condition_true(s, "ResolutionFailed"), _condition_message("ResolutionFailed")),
    ("CatalogSourcesUnhealthy", lambda s: condition_true(s, "CatalogSourcesUnhealthy"), _condition_message("CatalogSourcesUnhealthy")),
    ("BundleUnpacking", lambda s: condition_true(s, "BundleUnpacking"), _condition_message("BundleUnpacking")),
)

# ---------------------------------------------------------------------------------------------- InstallPlan


def _installplan_failure(ip):
    cond = condition(ip, "Installed") or {}
    return cond.get("reason"), cond.get("message") or status(ip).get("message") or "InstallPlan failed"


INSTALLPLAN_FAILURES = (("InstallPlanFailed", lambda ip: status(ip).get("phase") == "Failed", _installplan_failure),)

# ------------------------------------------------------------------------------------ ClusterServiceVersion


def _csv_reason(csv):
    st = status(csv)
    return st.get("reason"), st.get("message") or ""


# OLM moves some Failed CSVs back to Pending once the cause is fixed (e.g. an OperatorGroup added), but none of
# them fixes itself while a module waits: each needs a change by someone, so the module reports it at once.
CSV_FAILURES = (("CSVFailed", lambda csv: status(csv).get("phase") == "Failed", _csv_reason),)

# Failed reasons OLM itself retries (transitionCSVState requeues them): seen during upgrades, e.g. RequirementsNotMet
# "requirements no longer met" while the new CSV's RBAC and CRDs are replaced. Only a Failed that outlasts
# CSV_RETRY_GRACE_SECONDS with one of these reasons counts.
CSV_RETRIED_REASONS = frozenset(
    (
        "RequirementsNotMet",
        "ComponentUnhealthy",
        "NeedsReinstall",
        "InstallComponentFailed",
        "APIServiceResourceIssue",
        "APIServiceResourcesNeedReinstall",
        "DetectedClusterChange",
        "NeedsCertRotation",
    )
)
CSV_RETRY_GRACE_SECONDS = 30


def csv_failure_is_retried(csv, now):
    """True while a Failed CSV has a reason OLM retries and failed less than the grace period ago (``now``: epoch)."""
    st = status(csv)
    if st.get("reason") not in CSV_RETRIED_REASONS:
        return False
    since = parse_time(st.get("lastTransitionTime"))
    return now is None or since is None or now - since < CSV_RETRY_GRACE_SECONDS


# Pending reasons that mean "blocked until something else changes": reported if the wait times out.
CSV_BLOCKED_REASONS = frozenset(("RequirementsNotMet", "OperatorConditionNotUpgradeable"))


def csv_succeeded(csv):
    return status(csv).get("phase") == "Succeeded"


def csv_version(csv):
    return spec(csv).get("version")


def is_copied_csv(csv):
    return COPIED_LABEL in (metadata(csv).get("labels") or {})


def csv_deployment_names(csv):
    """Names of the Deployments a CSV's install strategy creates."""
    install = spec(csv).get("install") or {}
    deployments = (install.get("spec") or {}).get("deployments") or []
    return [d.get("name") for d in deployments if isinstance(d, dict) and d.get("name")]


def csv_requirements_unmet(csv, now):
    """A message when a CSV has stayed Pending with RequirementsNotMet for CSV_RETRY_GRACE_SECONDS: OLM checks the
    requirements again and again, but an API no one serves (``nativeAPIs``), a required CRD no install brings, or a
    missing permission does not appear by itself; the message names each requirement that is not present."""
    st = status(csv)
    if st.get("phase") != "Pending" or st.get("reason") != "RequirementsNotMet":
        return None
    since = parse_time(st.get("lastTransitionTime"))
    if now is None or since is None or now - since < CSV_RETRY_GRACE_SECONDS:
        return None
    unmet = [
        " ".join(str(part) for part in (r.get("kind"), r.get("name"), f"({r.get('group') or 'core'}/{r.get('version')})", r.get("status")) if part)
        + (f": {r['message']}" if r.get("message") else "")
        for r in st.get("requirementStatus") or []
        if isinstance(r, dict) and r.get("status") not in ("Present", "PresentNotSatisfied")
    ]
    return "requirements not met: " + ("; ".join(unmet) if unmet else st.get("message") or "see the CSV's status.requirementStatus")


def csv_blocked(csv):
    """A message when a Pending CSV waits on something outside OLM's install (requirements, Upgradeable=False)."""
    st = status(csv)
    if st.get("phase") == "Pending" and st.get("reason") in CSV_BLOCKED_REASONS:
        return f"{st.get('reason')}: {st.get('message') or ''}".rstrip(": ")
    return None


# ------------------------------------------------------------------------------------- workloads of a CSV


def _replicaset_failure(rs):
    cond = condition(rs, "ReplicaFailure") or {}
    return cond.get("reason"), cond.get("message") or "ReplicaSet cannot create pods"


# A ReplicaSet that cannot create pods (admission rejected them, quota, ...) never gets its Deployment available.
REPLICASET_FAILURES = (("ReplicaFailure", lambda rs: condition_true(rs, "ReplicaFailure"), _replicaset_failure),)

# The API server could not call an admission webhook at all (it was restarting, say), which it words "failed calling
# webhook"; a webhook that answered and refused says "denied the request" instead and fails at once. The ReplicaSet
# controller retries the create and drops ReplicaFailure when one succeeds (keeping its lastTransitionTime while the
# failure lasts), so an unreachable webhook counts once it has lasted this long (CI met a restarting one, warm ci4).
WEBHOOK_UNREACHABLE_GRACE_SECONDS = 30


def webhook_unreachable_for_now(rs, now):
    """True while ``rs``'s ReplicaFailure says an admission webhook could not be called and has said so for less
    than WEBHOOK_UNREACHABLE_GRACE_SECONDS (``now``: epoch; None: never)."""
    cond = condition(rs, "ReplicaFailure") or {}
    since = parse_time(cond.get("lastTransitionTime"))
    if now is None or since is None or "failed calling webhook" not in (cond.get("message") or ""):
        return False
    return now - since < WEBHOOK_UNREACHABLE_GRACE_SECONDS


# Operators often crash once or twice at start (waiting for certificates or CRDs): a crash loop counts from this
# many restarts on. Which container waiting reasons are stuck at all is the one table of podstatus.py.
CRASH_LOOP_MIN_RESTARTS = 3


# The kubelet resets a container's restart back-off once it has run this long without exiting: until then a
# container that crashed and runs again is still in its crash loop.
CRASH_LOOP_RESET_SECONDS = 600


def running_between_crashes(container, done_on_exit_0, now):
    """The waiting state a crash loop stands for while ``container`` runs again between two of its crashes, or {}:
    it has restarted, its last run failed, and it has run for less than the kubelet's back-off reset (``now``: epoch
    seconds). A real kubelet shows such a container ``running`` for as long as each run lasts."""
    running = ((container or {}).get("state") or {}).get("running") or {}
    last = ((container or {}).get("lastState") or {}).get("terminated") or {}
    started = parse_time(running.get("startedAt"))
    if not running or not last or started is None or now is None or not container.get("restartCount"):
        return {}
    if done_on_exit_0 and last.get("exitCode") in (None, 0):
        return {}
    if now - started >= CRASH_LOOP_RESET_SECONDS:
        return {}
    return {"reason": "CrashLoopBackOff", "message": f"running again for {int(now - started)}s after it {podstatus.describe_exit(last)}"}


def stuck_container(pod, wait_for_backoff=True, now=None):
    """``(container status, waiting state)`` of the first container of ``pod`` that is stuck (podstatus.stuck, crash
    loops from CRASH_LOOP_MIN_RESTARTS restarts), init containers first; ``(None, None)`` when none is.
    ``wait_for_backoff``: a failed pull counts once the kubelet backs off (the waiting modules: POD_FAILURES); False
    for a diagnosis, which reads once and counts both of the kubelet's alternating reasons. ``now`` (epoch seconds;
    a diagnosis): a crash-looping container found running between two crashes counts too, so the verdict does not
    depend on the moment of the read."""
    st = status(pod)
    runs_for_good = spec(pod).get("restartPolicy", "Always") == "Always"  # a Job's pod: OnFailure or Never
    containers = [(c, True) for c in st.get("initContainerStatuses") or []] + [(c, not runs_for_good) for c in st.get("containerStatuses") or []]
    for container, done_on_exit_0 in containers:
        waiting = podstatus.container_waiting(container, done_on_exit_0) or running_between_crashes(container, done_on_exit_0, now)
        if podstatus.stuck(waiting.get("reason"), container.get("restartCount"), CRASH_LOOP_MIN_RESTARTS, wait_for_backoff):
            return container, waiting
    return None, None


def _pod_failure(pod):
    container, waiting = stuck_container(pod)
    restarts = container.get("restartCount", 0)
    detail = f": {waiting['message']}" if waiting.get("message") else ""
    return waiting.get("reason"), f"pod {name_of(pod)} container {container.get('name')} is {waiting.get('reason')} (restarts: {restarts}){detail}"


POD_FAILURES = (("PodStuck", lambda pod: stuck_container(pod)[0] is not None, _pod_failure),)

# A pod the scheduler has not placed for this long (no node matches its selector, affinity or tolerations, or none
# has room) waits for a change in the cluster or in the Subscription's config. A cluster autoscaler may still add a
# node after the module has failed: the install goes on in the cluster, and running the module again waits for it.
UNSCHEDULABLE_GRACE_SECONDS = 30


def pod_unschedulable(pod, now):
    """A ``Problem`` when ``pod`` has been Unschedulable for UNSCHEDULABLE_GRACE_SECONDS, with the scheduler's
    message; None otherwise."""
    cond = condition(pod, "PodScheduled") or {}
    if cond.get("status") != "False" or cond.get("reason") != "Unschedulable":
        return None
    since = parse_time(cond.get("lastTransitionTime"))
    if now is None or since is None or now - since < UNSCHEDULABLE_GRACE_SECONDS:
        return None
    waited = int(now - since)
    return Problem(
        "PodUnschedulable",
        "Unschedulable",
        f"pod {name_of(pod)} has not been scheduled for {waited} s: {cond.get('message') or 'no node fits'} (if a cluster autoscaler is adding "
        "a node, run again to wait for it; otherwise change the Subscription's config or the nodes)",
    )


# The label OLM puts on a bundle unpack Job and its pod (the value names the bundle's ConfigMap).
UNPACK_REF_LABEL = "operatorframework.io/bundle-unpack-ref"


def unpack_problem(pods):
    """The first stuck container (an image that cannot be pulled, a crash loop) of OLM's bundle unpack pods among
    ``pods``, as a ``Problem`` whose message names the pod; None if none is stuck."""
    for pod in pods:
        if UNPACK_REF_LABEL in (metadata(pod).get("labels") or {}):
            problem = first_problem(POD_FAILURES, pod)
            if problem:
                return Problem(problem.name, problem.reason, f"bundle unpack {problem.message}")
    return None


def first_problem(table, obj):
    """The first row of ``table`` whose predicate holds for ``obj``, as a ``Problem``; None if none does."""
    if obj is None:
        return None
    for name, predicate, describe in table:
        if predicate(obj):
            reason, message = describe(obj)
            return Problem(name, reason, message)
    return None


def owned_by(obj, kind, names):
    """True if one of ``obj``'s owner references is a ``kind`` named in ``names``."""
    for ref in metadata(obj).get("ownerReferences") or []:
        if ref.get("kind") == kind and ref.get("name") in names:
            return True
    return False


REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


def _revision(rs):
    try:
        return int((metadata(rs).get("annotations") or {}).get(REVISION_ANNOTATION, 0))
    except ValueError:
        return 0


def newest_replicasets(replicasets, deployments):
    """The ReplicaSets of the newest revision of each Deployment in ``deployments``: an older one's pods are being
    replaced (OLM rewrites a CSV's Deployment, with the Subscription's config for one)."""
    newest = {}
    for rs in replicasets:
        for ref in metadata(rs).get("ownerReferences") or []:
            if ref.get("kind") == "Deployment" and ref.get("name") in deployments:
                newest.setdefault(ref["name"], []).append(rs)
    result = []
    for sets in newest.values():
        top = max(_revision(rs) for rs in sets)
        result.extend(rs for rs in sets if _revision(rs) == top)
    return result


def _contains(have, want):
    return all(have.get(key) == value for key, value in want.items())


def carries_config(pod, config):
    """Whether ``pod`` runs with the Subscription's ``config`` as OLM injects it into a CSV's Deployments (its node
    selector, tolerations, env and volumes by name, annotations). OLM does so only once the Subscription's
    installedCSV names the CSV (overrides/config.go); a Deployment created before that gets it only once it is
    available (install/deployment.go checks readiness before the spec hash), so a pod that needs its config to start
    stays without it."""
    pod_spec = spec(pod)
    if not _contains(pod_spec.get("nodeSelector") or {}, config.get("nodeSelector") or {}):
        return False
    tolerations = pod_spec.get("tolerations") or []
    if not all(any(_contains(have, want) for have in tolerations) for want in config.get("tolerations") or []):
        return False
    env = {e.get("name") for e in config.get("env") or []}
    if env and not all(env <= {e.get("name") for e in c.get("env") or []} for c in pod_spec.get("containers") or []):
        return False
    volumes = {v.get("name") for v in config.get("volumes") or []}
    if not volumes <= {v.get("name") for v in pod_spec.get("volumes") or []}:
        return False
    return _contains(metadata(pod).get("annotations") or {}, config.get("annotations") or {})


# A container that restarted counts as running steadily only after this long (a Deployment's pod is Ready, and so
# OLM's CSV Succeeded, the moment its container starts, also between the restarts of a crash loop).
STEADY_SECONDS = 10


def _restarting_container(pod, now):
    """The first container of ``pod`` that ran and is not running steadily now (exited, back-off, or started again
    less than STEADY_SECONDS ago), with what it does; (None, None) if there is none. A container still being
    created or a pod not scheduled yet is not restarting (a CSV that succeeded with fewer pods stays done)."""
    for container in status(pod).get("containerStatuses") or []:
        state = container.get("state") or {}
        restarts = container.get("restartCount") or 0
        terminated = state.get("terminated")
        if terminated:
            return container, f"exited with code {terminated.get('exitCode')} ({terminated.get('reason') or 'Error'})"
        if restarts and state.get("waiting"):
            return container, f"is {state['waiting'].get('reason') or 'waiting'}"
        started = parse_time((state.get("running") or {}).get("startedAt"))
        # A node clock ahead of ours gives a negative age: count that as steady rather than wait for the skew.
        if restarts and now is not None and started is not None and 0 <= now - started < STEADY_SECONDS:
            return container, f"restarted {int(now - started)} s ago"
    return None, None


def pods_without_config(csv, replicasets, pods, config):
    """Names of the live pods of ``csv``'s Deployments (of any revision) that do not carry the Subscription's
    ``config`` (carries_config): while there are some, OLM has not rolled the config out - it applies it to a
    Deployment created before the Subscription named the CSV only once that Deployment is available."""
    deployments = set(csv_deployment_names(csv))
    sets = {name_of(rs) for rs in replicasets if owned_by(rs, "Deployment", deployments)}
    return sorted(name_of(pod) for pod in pods if owned_by(pod, "ReplicaSet", sets) and live_pod(pod) and not carries_config(pod, config))


def live_pod(pod):
    """False for a pod that is being deleted or is over (an evicted or shut-down pod stays until collected)."""
    return not metadata(pod).get("deletionTimestamp") and status(pod).get("phase") not in ("Succeeded", "Failed")


def workload_restarting(csv, replicasets, pods, now):
    """A message naming the first pod of ``csv``'s Deployments (their newest revision) whose container is restarting
    (see _restarting_container); None if each one runs steadily."""
    set_names = {name_of(rs) for rs in newest_replicasets(replicasets, set(csv_deployment_names(csv)))}
    for pod in pods:
        if owned_by(pod, "ReplicaSet", set_names) and live_pod(pod):
            container, doing = _restarting_container(pod, now)
            if container is not None:
                return f"pod {name_of(pod)} container {container.get('name')} {doing} (restarts: {container.get('restartCount') or 0})"
    return None


def workload_problem(csv, replicasets, pods, config=None, now=None):
    """The first ReplicaSet or pod problem among the workloads of ``csv``'s Deployments (their newest revision), as a
    ``Problem``; with a Subscription ``config``, only among the pods that carry it (see carries_config). With
    ``now`` (epoch), a pod Unschedulable for longer than its grace period counts too, and a webhook the API server
    could not call counts only after its grace period."""
    deployments = set(csv_deployment_names(csv))
    if not deployments:
        return None
    own_sets = newest_replicasets(replicasets, deployments)
    for rs in own_sets:
        problem = first_problem(REPLICASET_FAILURES, rs)
        if problem and not webhook_unreachable_for_now(rs, now):
            return problem
    set_names = {name_of(rs) for rs in own_sets}
    for pod in pods:
        if owned_by(pod, "ReplicaSet", set_names) and live_pod(pod) and (not config or carries_config(pod, config)):
            problem = first_problem(POD_FAILURES, pod) or pod_unschedulable(pod, now)
            if problem:
                return problem
    return None


def notices(table, obj):
    """Messages of every row of ``table`` that holds for ``obj`` (for progress reports)."""
    found = []
    for name, predicate, describe in table:
        if obj is not None and predicate(obj):
            reason, message = describe(obj)
            found.append(f"{name} ({reason}): {message}" if reason else f"{name}: {message}")
    return found
