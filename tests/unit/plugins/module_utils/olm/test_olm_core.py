"""The pure OLM v0 core: status tables, InstallPlan content, install modes and the install state machine.

Objects are literal dicts shaped like what OLM v0.46 writes (see tests/integration/olm for the same flows on the
real OLM of the testbed).
"""

import json
import time

import pytest
from lib.samples import real_kubelet_crash_loop_pod

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installplan as ipl
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator as olm
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import status as st

NS = "demo"


def cond(kind, value="True", reason=None, message=None):
    return {"type": kind, "status": value, "reason": reason, "message": message}


def sub(installed=None, current=None, plan=None, conditions=(), state=None, name="kube-demo", config=None, source=None):
    status = {"conditions": list(conditions)}
    if installed:
        status["installedCSV"] = installed
    if current:
        status["currentCSV"] = current
    if plan:
        status["installPlanRef"] = {"name": plan, "namespace": NS}
    if state:
        status["state"] = state
    spec = {"name": "kube-demo", "channel": "stable"}
    if source:
        spec.update(source=source, sourceNamespace=NS)
    if config:
        spec["config"] = config
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec, "status": status}


def csv(name, version, phase="Succeeded", reason=None, message=None, deployments=("kube-demo-controller-manager",)):
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"version": version, "install": {"spec": {"deployments": [{"name": d} for d in deployments]}}},
        "status": {"phase": phase, "reason": reason, "message": message},
    }


def step(kind, name, resolving, status="Unknown", version=None, source=None):
    resource = {"kind": kind, "name": name}
    if source:
        resource.update(sourceName=source, sourceNamespace=NS)
    if version:
        resource["manifest"] = json.dumps({"kind": kind, "metadata": {"name": name}, "spec": {"version": version}})
    return {"resolving": resolving, "resource": resource, "status": status}


def plan(name, csvs, phase="RequiresApproval", approved=False, steps=None, conditions=()):
    if steps is None:
        steps = [step("ClusterServiceVersion", c, c, "Unknown", c.split(".v", 1)[1]) for c in csvs]
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {"clusterServiceVersionNames": list(csvs), "approved": approved, "approval": "Manual"},
        "status": {"phase": phase, "plan": steps, "conditions": list(conditions)},
    }


def observed(subscription, plans=(), csvs=(), replicasets=(), pods=(), catalog_problem=None, now=None):
    return olm.Observed(
        subscription=subscription,
        installplans={p["metadata"]["name"]: p for p in plans},
        csvs={c["metadata"]["name"]: c for c in csvs},
        replicasets=list(replicasets),
        pods=list(pods),
        catalog_problem=catalog_problem,
        now=now,
    )


def rs(name, deployment, failure=None, revision=None, failing_since=None):
    conditions = [dict(cond("ReplicaFailure", "True", "FailedCreate", failure), lastTransitionTime=failing_since)] if failure else []
    meta = {"name": name, "ownerReferences": [{"kind": "Deployment", "name": deployment}]}
    if revision is not None:
        meta["annotations"] = {"deployment.kubernetes.io/revision": str(revision)}
    return {"metadata": meta, "status": {"conditions": conditions}}


def pod(name, replicaset, waiting=None, restarts=0, pod_spec=None):
    statuses = [{"name": "manager", "restartCount": restarts, "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}]
    return {
        "metadata": {"name": name, "ownerReferences": [{"kind": "ReplicaSet", "name": replicaset}]},
        "spec": pod_spec or {"containers": [{"name": "manager"}]},
        "status": {"containerStatuses": statuses},
    }


def unpack_pod(reason, message="failed to pull 127.0.0.1:5000/kube-demo-bundle-missing:v0.0.1: not found"):
    """An unpack Job's pod as a real kubelet shows it: its `pull` init container cannot get the bundle image."""
    return {
        "metadata": {"name": "539e265c-abcde", "labels": {"operatorframework.io/bundle-unpack-ref": "539e265c", "job-name": "539e265c"}},
        "spec": {},
        "status": {
            "initContainerStatuses": [
                {"name": "util", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                {"name": "pull", "restartCount": 0, "state": {"waiting": {"reason": reason, "message": message}}},
            ],
            "containerStatuses": [{"name": "extract", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}],
        },
    }


# The API server's words when it cannot reach an admission webhook (a real ReplicaSet's condition, testbed).
WEBHOOK_DOWN = (
    'Internal error occurred: failed calling webhook "pods.scc.security.openshift.io": failed to call webhook: Post '
    '"https://127.0.0.1:14966/mutate-pods?timeout=10s": dial tcp 127.0.0.1:14966: connect: connection refused'
)
MANUAL_V1 = olm.Desired("kube-demo", NS, "kube-demo", "0.0.1", olm.MANUAL)
MANUAL_V2 = olm.Desired("kube-demo", NS, "kube-demo", "0.0.2", olm.MANUAL)
MANUAL_ANY = olm.Desired("kube-demo", NS, "kube-demo", None, olm.MANUAL)
AUTOMATIC = olm.Desired("kube-demo", NS, "kube-demo", None, olm.AUTOMATIC)
NO_DEPS = olm.Desired("kube-demo", NS, "kube-demo", None, olm.MANUAL, False)

V1 = "kube-demo.v0.0.1"
V2 = "kube-demo.v0.0.2"
V3 = "kube-demo.v0.0.3"
ADDON = "kube-demo-addon.v0.1.0"
OTHER = "other.v1.0.0"

NEXT_STEP_CASES = [
    (
        "a stale failure condition does not undo a succeeded install",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1, conditions=[cond("InstallPlanFailed", "True", "InstallComponentFailed", "old")]),
            csvs=[csv(V1, "0.0.1")],
            catalog_problem="TRANSIENT_FAILURE",
        ),
        olm.DONE,
        None,
        V1,
    ),
    (
        "version from the catalog when the plan has no manifest",
        olm.Desired("kube-demo", NS, "kube-demo", "0.0.2", olm.MANUAL, True, {"kube-demo.v0.0.2-custom": "0.0.2"}),
        observed(
            sub(installed=V1, current="kube-demo.v0.0.2-custom", plan="ip-2"),
            plans=[plan("ip-2", ["kube-demo.v0.0.2-custom"], steps=[])],
            csvs=[csv(V1, "0.0.1")],
        ),
        olm.APPROVE,
        "ip-2",
        "approve",
    ),
    (
        "version from the conventional name",
        MANUAL_V2,
        observed(sub(installed=V1, current=V2, plan="ip-2"), plans=[plan("ip-2", [V2], steps=[])], csvs=[csv(V1, "0.0.1")]),
        olm.APPROVE,
        "ip-2",
        "approve",
    ),
    (
        "first crash of an operator is not a crash loop yet",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
            pods=[pod("p1", "kube-demo-controller-manager-abc", "CrashLoopBackOff", 1)],
        ),
        olm.WAIT,
        None,
        "Installing",
    ),
    (
        "the current csv counts before OLM names it installed",
        MANUAL_V2,
        observed(
            sub(installed=V1, current=V2, plan="ip-2"),
            plans=[plan("ip-2", [V2], phase="Complete", approved=True)],
            csvs=[csv(V1, "0.0.1", "Replacing"), csv(V2, "0.0.2")],
        ),
        olm.DONE,
        None,
        V2,
    ),
    # (id, desired, observed, expected kind, expected reason or target, text in message)
    ("no subscription yet", MANUAL_V1, observed(None), olm.WAIT, None, "to appear"),
    (
        "catalog unhealthy",
        MANUAL_V1,
        observed(sub(), catalog_problem="CatalogSource olm/x is unhealthy: TRANSIENT_FAILURE"),
        olm.FAIL,
        "CatalogSourceUnhealthy",
        "TRANSIENT_FAILURE",
    ),
    (
        "constraints not satisfiable is terminal",
        MANUAL_V1,
        observed(sub(conditions=[cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable", "no operators found in package nope")])),
        olm.FAIL,
        "ConstraintsNotSatisfiable",
        "no operators found in package nope",
    ),
    (
        "the next upgrade's plan while the requested version is still installing",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V2, plan="ip-2", state="UpgradePending"),
            plans=[plan("ip-2", [V2])],
            csvs=[csv(V1, "0.0.1", "Installing")],
        ),
        olm.WAIT,
        None,
        "stays unapproved",
    ),
    (
        "the requested version failed while the next upgrade's plan waits",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V2, plan="ip-2", state="UpgradePending"),
            plans=[plan("ip-2", [V2])],
            csvs=[csv(V1, "0.0.1", "Failed", "InstallCheckFailed", "install timeout")],
        ),
        olm.FAIL,
        "InstallCheckFailed",
        "install timeout",
    ),
    (
        "a resolution failing while our approved plan installs is waited on",
        olm.Desired("kube-demo-addon", NS, "kube-demo-addon", None, olm.MANUAL),
        observed(
            sub(
                current=ADDON,
                plan="ip-2",
                name="kube-demo-addon",
                conditions=[cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable", "constraints not satisfiable: @existing/demo//kube-demo.v0.0.2")],
            ),
            plans=[plan("ip-2", [ADDON, V2], phase="Installing", approved=True)],
            csvs=[csv(V2, "0.0.2", "Installing")],
        ),
        olm.WAIT,
        None,
        "",
    ),
    (
        "a resolution failing before our plan is approved is terminal",
        olm.Desired("kube-demo-addon", NS, "kube-demo-addon", None, olm.MANUAL),
        observed(
            sub(
                current=ADDON,
                plan="ip-2",
                name="kube-demo-addon",
                conditions=[cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable", "constraints not satisfiable: x")],
            ),
            plans=[plan("ip-2", [ADDON, V2])],
        ),
        olm.FAIL,
        "ConstraintsNotSatisfiable",
        "constraints not satisfiable: x",
    ),
    (
        "error prevented resolution is only waited on",
        MANUAL_V1,
        observed(sub(conditions=[cond("ResolutionFailed", "True", "ErrorPreventedResolution", "catalog unreachable")])),
        olm.WAIT,
        None,
        "catalog unreachable",
    ),
    (
        "bundle unpack failed",
        MANUAL_V1,
        observed(sub(conditions=[cond("BundleUnpackFailed", "True", "ErrorPreventedUnpacking", "pull failed")])),
        olm.FAIL,
        "ErrorPreventedUnpacking",
        "pull failed",
    ),
    ("plan pending approval with our csv only", MANUAL_V1, observed(sub(current=V1, plan="ip-1"), plans=[plan("ip-1", [V1])]), olm.APPROVE, "ip-1", "approve"),
    (
        "plan from the Subscription's catalog",
        MANUAL_V1,
        observed(sub(current=V1, plan="ip-1", source="mirror"), plans=[plan("ip-1", [V1], steps=[step("ClusterServiceVersion", V1, V1, source="mirror")])]),
        olm.APPROVE,
        "ip-1",
        "approve",
    ),
    (
        "plan resolved from the catalog the Subscription left is refused",
        MANUAL_V1,
        observed(sub(current=V1, plan="ip-1", source="mirror"), plans=[plan("ip-1", [V1], steps=[step("ClusterServiceVersion", V1, V1, source="upstream")])]),
        olm.FAIL,
        "InstallPlanFromAnotherCatalog",
        f"takes {V1} from CatalogSource {NS}/upstream, but Subscription kube-demo now names {NS}/mirror; not approved. Delete InstallPlan ip-1",
    ),
    (
        "plan without our csv is refused",
        MANUAL_V1,
        observed(sub(current=V1, plan="ip-2"), plans=[plan("ip-2", [OTHER])]),
        olm.FAIL,
        "UnexpectedInstallPlan",
        "does not contain",
    ),
    (
        "foreign csvs in the plan",
        olm.Desired("kube-demo-addon", NS, "kube-demo-addon", None, olm.MANUAL),
        observed(sub(current=ADDON, plan="ip-2", name="kube-demo-addon"), plans=[plan("ip-2", [ADDON, V2])]),
        olm.FAIL,
        "ForeignCSVsInInstallPlan",
        V2,
    ),
    (
        "a dependency with a new subscription is approved",
        olm.Desired("kube-demo-addon", NS, "kube-demo-addon", None, olm.MANUAL),
        observed(
            sub(current=ADDON, plan="ip-3", name="kube-demo-addon"),
            plans=[
                plan(
                    "ip-3",
                    [ADDON, V2],
                    steps=[
                        step("ClusterServiceVersion", ADDON, ADDON),
                        step("ClusterServiceVersion", V2, V2),
                        step("Subscription", "kube-demo-stable", V2, "NotPresent"),
                    ],
                )
            ],
        ),
        olm.APPROVE,
        "ip-3",
        ADDON,
    ),
    (
        "dependencies refused when not allowed",
        olm.Desired("kube-demo-addon", NS, "kube-demo-addon", None, olm.MANUAL, False),
        observed(
            sub(current=ADDON, plan="ip-3", name="kube-demo-addon"),
            plans=[plan("ip-3", [ADDON, V2], steps=[step("ClusterServiceVersion", ADDON, ADDON), step("Subscription", "kube-demo-stable", V2, "NotPresent")])],
        ),
        olm.FAIL,
        "DependenciesNotApproved",
        V2,
    ),
    (
        "installed at the pinned version",
        MANUAL_V1,
        observed(sub(installed=V1, current=V2, plan="ip-2"), plans=[plan("ip-2", [V2])], csvs=[csv(V1, "0.0.1")]),
        olm.DONE,
        None,
        V1,
    ),
    (
        "upgrade step to the target is approved",
        MANUAL_V2,
        observed(sub(installed=V1, current=V2, plan="ip-2"), plans=[plan("ip-2", [V2])], csvs=[csv(V1, "0.0.1")]),
        olm.APPROVE,
        "ip-2",
        V2,
    ),
    (
        "upgrade step past the target is refused",
        MANUAL_V2,
        observed(sub(installed=V1, current=V3, plan="ip-2"), plans=[plan("ip-2", [V3])], csvs=[csv(V1, "0.0.1")]),
        olm.FAIL,
        "VersionNotOnUpgradePath",
        "past the requested version",
    ),
    (
        "newer installed than requested",
        MANUAL_V1,
        observed(sub(installed=V2, current=V2), csvs=[csv(V2, "0.0.2")]),
        olm.FAIL,
        "NewerVersionInstalled",
        "does not downgrade",
    ),
    (
        "manual without version keeps what is installed",
        MANUAL_ANY,
        observed(sub(installed=V1, current=V2, plan="ip-2"), plans=[plan("ip-2", [V2])], csvs=[csv(V1, "0.0.1")]),
        olm.DONE,
        None,
        V1,
    ),
    (
        "automatic waits for the current csv",
        AUTOMATIC,
        observed(sub(installed=V1, current=V2), csvs=[csv(V1, "0.0.1"), csv(V2, "0.0.2", "Installing")]),
        olm.WAIT,
        None,
        "Installing",
    ),
    ("automatic done at the current csv", AUTOMATIC, observed(sub(installed=V2, current=V2), csvs=[csv(V2, "0.0.2")]), olm.DONE, None, V2),
    (
        "at latest known but csv installing is not done",
        MANUAL_V1,
        observed(sub(installed=V1, current=V1, state="AtLatestKnown"), csvs=[csv(V1, "0.0.1", "Installing")]),
        olm.WAIT,
        None,
        "Installing",
    ),
    (
        "csv failed carries OLM's reason",
        MANUAL_V1,
        observed(sub(current=V1), csvs=[csv(V1, "0.0.1", "Failed", "InstallCheckFailed", "install timeout")]),
        olm.FAIL,
        "InstallCheckFailed",
        "install timeout",
    ),
    (
        "no operator group",
        MANUAL_V1,
        observed(sub(current=V1), csvs=[csv(V1, "0.0.1", "Failed", "NoOperatorGroup", "csv in namespace with no operatorgroups")]),
        olm.FAIL,
        "NoOperatorGroup",
        "no operatorgroups",
    ),
    (
        "pods forbidden by admission",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[
                rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager", 'pods "x" is forbidden: violates PodSecurity "restricted:latest"')
            ],
        ),
        olm.FAIL,
        "FailedCreate",
        "violates PodSecurity",
    ),
    (
        "an admission webhook the API server could not call, for a moment: the ReplicaSet controller retries",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager", WEBHOOK_DOWN, failing_since="2026-11-29T10:04:44Z")],
            now=parse_time("2026-11-29T10:04:54Z"),
        ),
        olm.WAIT,
        None,
        "",
    ),
    (
        "an admission webhook the API server could not call for longer than its grace period",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager", WEBHOOK_DOWN, failing_since="2026-11-29T10:04:44Z")],
            now=parse_time("2026-11-29T10:05:15Z"),
        ),
        olm.FAIL,
        "FailedCreate",
        "failed calling webhook",
    ),
    (
        "crash-looping pod",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
            pods=[pod("p1", "kube-demo-controller-manager-abc", "CrashLoopBackOff", 5)],
        ),
        olm.FAIL,
        "CrashLoopBackOff",
        "restarts: 5",
    ),
    (
        # Seen on the testbed: OLM creates the Deployment before installedCSV is set, without the config, and never
        # applies it to a Deployment that does not become available.
        "a crash loop of a pod without the Subscription's config fails with the way out",
        MANUAL_V1,
        observed(
            sub(current=V1, config={"nodeSelector": {"disk": "ssd"}}),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
            pods=[pod("p1", "kube-demo-controller-manager-abc", "CrashLoopBackOff", 5)],
        ),
        olm.FAIL,
        "CrashLoopBackOff",
        "delete Deployment kube-demo-controller-manager and OLM recreates it with the config",
    ),
    (
        "a crash loop of a pod with the Subscription's config fails",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1, config={"nodeSelector": {"disk": "ssd"}}),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
            pods=[
                pod("p0", "kube-demo-controller-manager-abc", "CrashLoopBackOff", 5, {"nodeSelector": {"disk": "hdd"}}),
                pod("p1", "kube-demo-controller-manager-abc", "CrashLoopBackOff", 5, {"nodeSelector": {"disk": "ssd", "os": "linux"}}),
            ],
        ),
        olm.FAIL,
        "CrashLoopBackOff",
        "pod p1 container",
    ),
    (
        # CI ci9: the CSV Succeeded on a KWOK pod before OLM applied the config, and the module said done
        "Succeeded on a pod without the Subscription's config waits for OLM to roll the config out",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1, config={"nodeSelector": {"disk": "ssd"}}),
            csvs=[csv(V1, "0.0.1")],
            replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager", revision=1)],
            pods=[pod("p0", "kube-demo-controller-manager-abc", pod_spec={"nodeSelector": {"disk": "hdd"}})],
        ),
        olm.WAIT,
        None,
        "OLM to roll the Subscription's config out (pods without it: p0)",
    ),
    (
        "the config's pod that cannot pull its image fails while the old pod still serves",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1, config={"nodeSelector": {"disk": "ssd"}}),
            csvs=[csv(V1, "0.0.1")],
            replicasets=[
                rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager", revision=1),
                rs("kube-demo-controller-manager-def", "kube-demo-controller-manager", revision=2),
            ],
            pods=[
                pod("p0", "kube-demo-controller-manager-abc", pod_spec={"nodeSelector": {"disk": "hdd"}}),
                pod("p1", "kube-demo-controller-manager-def", "ImagePullBackOff", 0, {"nodeSelector": {"disk": "ssd"}}),
            ],
        ),
        olm.FAIL,
        "ImagePullBackOff",
        "pod p1 container",
    ),
    (
        "Succeeded with the config on every pod is done",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1, config={"nodeSelector": {"disk": "ssd"}}),
            csvs=[csv(V1, "0.0.1")],
            replicasets=[rs("kube-demo-controller-manager-def", "kube-demo-controller-manager", revision=2)],
            pods=[pod("p1", "kube-demo-controller-manager-def", pod_spec={"nodeSelector": {"disk": "ssd"}})],
        ),
        olm.DONE,
        None,
        "is Succeeded",
    ),
    (
        "the pods of a Deployment's older revision are being replaced",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[
                rs("kube-demo-controller-manager-old", "kube-demo-controller-manager", revision=1),
                rs("kube-demo-controller-manager-new", "kube-demo-controller-manager", revision=2),
            ],
            pods=[pod("p1", "kube-demo-controller-manager-old", "CrashLoopBackOff", 5), pod("p2", "kube-demo-controller-manager-new")],
        ),
        olm.WAIT,
        None,
        "Installing",
    ),
    (
        "the newest revision's crash loop fails",
        MANUAL_V1,
        observed(
            sub(installed=V1, current=V1),
            csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting for deployment")],
            replicasets=[
                rs("kube-demo-controller-manager-old", "kube-demo-controller-manager", revision=1),
                rs("kube-demo-controller-manager-new", "kube-demo-controller-manager", revision=2),
            ],
            pods=[pod("p1", "kube-demo-controller-manager-old"), pod("p2", "kube-demo-controller-manager-new", "CrashLoopBackOff", 4)],
        ),
        olm.FAIL,
        "CrashLoopBackOff",
        "p2",
    ),
    (
        "a bundle image that cannot be pulled fails while OLM still unpacks",
        MANUAL_V1,
        observed(sub(conditions=[cond("BundleUnpacking", "True", "JobIncomplete", "unpack job not completed")]), pods=[unpack_pod("ImagePullBackOff")]),
        olm.FAIL,
        "ImagePullBackOff",
        "bundle unpack pod 539e265c-abcde container pull is ImagePullBackOff (restarts: 0): failed to pull",
    ),
    (
        "an unpack pod still pulling is waited on",
        MANUAL_V1,
        observed(sub(conditions=[cond("BundleUnpacking", "True", "JobIncomplete", "unpack job not completed")]), pods=[unpack_pod("ErrImagePull")]),
        olm.WAIT,
        None,
        "",
    ),
    (
        "OLM's BundleUnpackFailed carries the unpack pod's cause",
        MANUAL_V1,
        observed(sub(conditions=[cond("BundleUnpackFailed", "True", "BundleUnpackFailed", "DeadlineExceeded")]), pods=[unpack_pod("ImagePullBackOff")]),
        olm.FAIL,
        "BundleUnpackFailed",
        "DeadlineExceeded; bundle unpack pod 539e265c-abcde container pull is ImagePullBackOff",
    ),
    (
        "other deployments' pods are not ours",
        MANUAL_V1,
        observed(
            sub(current=V1),
            csvs=[csv(V1, "0.0.1", "Installing")],
            replicasets=[rs("unrelated-abc", "unrelated", "forbidden")],
            pods=[pod("p2", "unrelated-abc", "CrashLoopBackOff", 3)],
        ),
        olm.WAIT,
        None,
        "Installing",
    ),
    (
        "failed install plan",
        MANUAL_V1,
        observed(
            sub(current=V1, plan="ip-1"),
            plans=[plan("ip-1", [V1], phase="Failed", approved=True, conditions=[cond("Installed", "False", "InstallComponentFailed", "rbac error")])],
        ),
        olm.FAIL,
        "InstallComponentFailed",
        "rbac error",
    ),
    (
        "approved plan installing",
        MANUAL_V1,
        observed(sub(current=V1, plan="ip-1"), plans=[plan("ip-1", [V1], phase="Installing", approved=True)]),
        olm.WAIT,
        None,
        "Installing",
    ),
    (
        "blocked csv is explained",
        MANUAL_V2,
        observed(sub(installed=V1, current=V2), csvs=[csv(V1, "0.0.1"), csv(V2, "0.0.2", "Pending", "OperatorConditionNotUpgradeable", "upgrading")]),
        olm.WAIT,
        None,
        "blocked: OperatorConditionNotUpgradeable",
    ),
    (
        "version unknown everywhere is refused",
        MANUAL_V2,
        observed(sub(installed=V1, current="odd-name", plan="ip-2"), plans=[plan("ip-2", ["odd-name"], steps=[])], csvs=[csv(V1, "0.0.1")]),
        olm.FAIL,
        "UnknownVersion",
        "cannot tell the version of odd-name",
    ),
]


@pytest.mark.parametrize("desired, seen, kind, reason_or_target, text", [c[1:] for c in NEXT_STEP_CASES], ids=[c[0] for c in NEXT_STEP_CASES])
def test_next_step(desired, seen, kind, reason_or_target, text):
    action = olm.next_step(desired, seen)
    assert action.kind == kind, action
    if kind == olm.DONE:
        assert action.target in seen.csvs
    if kind == olm.APPROVE:
        assert action.target == reason_or_target
    elif reason_or_target is not None:
        assert action.reason == reason_or_target
    assert text in action.message


def test_waiting_message_has_subscription_plan_and_csv():
    seen = observed(
        sub(current=V1, plan="ip-1", state="UpgradePending"),
        plans=[plan("ip-1", [V1], phase="Installing", approved=True)],
        csvs=[csv(V1, "0.0.1", "Installing", "InstallWaiting", "waiting")],
    )
    message = olm.waiting_for(MANUAL_V1, seen)
    assert "UpgradePending" in message and "InstallPlan ip-1 phase Installing" in message and "InstallWaiting" in message
    summary = olm.summary(seen)
    assert summary["install_plan_phase"] == "Installing" and summary["csv_phase"] == "Installing" and summary["current_csv"] == V1


PLAN_CASES = [
    ("only ours", [V1], [step("ClusterServiceVersion", V1, V1)], V1, ([V1], [], [])),
    (
        "ours and a dependency",
        [ADDON, V1],
        [step("ClusterServiceVersion", ADDON, ADDON), step("Subscription", "kube-demo-stable", V1, "NotPresent")],
        ADDON,
        ([ADDON], [V1], []),
    ),
    (
        "ours and an upgrade of another subscription",
        [ADDON, V2],
        [step("ClusterServiceVersion", ADDON, ADDON), step("Subscription", "kube-demo", V2, "Present")],
        ADDON,
        ([ADDON], [], [V2]),
    ),
    ("not ours at all", [OTHER], [], V1, ([], [], [OTHER])),
]


@pytest.mark.parametrize("names, steps, own, expected", [c[1:] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES])
def test_classify_plan(names, steps, own, expected):
    content = ipl.classify_plan(plan("ip", names, steps=steps), own)
    assert (content.own, content.dependencies, content.foreign) == expected


def test_plan_versions_come_from_step_manifests():
    ip = plan(
        "ip",
        [V1, ADDON],
        steps=[
            step("ClusterServiceVersion", V1, V1, version="0.0.1"),
            step("ClusterServiceVersion", ADDON, ADDON),
            step("CustomResourceDefinition", "x", V1, version="9"),
        ],
    )
    assert ipl.plan_csv_versions(ip) == {V1: "0.0.1"}
    assert ipl.requires_approval(ip)
    assert not ipl.requires_approval(plan("ip", [V1], approved=True))


MODES_ALL = [{"type": t, "supported": True} for t in installmode.INSTALL_MODES]
MODES_OWN_SINGLE = [{"type": "OwnNamespace", "supported": True}, {"type": "SingleNamespace", "supported": True}, {"type": "AllNamespaces", "supported": False}]
MODES_ALL_ONLY = [{"type": "AllNamespaces", "supported": True}, {"type": "OwnNamespace", "supported": False}]
MODES_SINGLE_ONLY = [{"type": "SingleNamespace", "supported": True}]

CHOOSE_CASES = [
    ("prefers the own namespace", MODES_ALL, None, [NS]),
    ("own namespace when all is unsupported", MODES_OWN_SINGLE, None, [NS]),
    ("all-only", MODES_ALL_ONLY, None, []),
    ("unknown modes default to own namespace", None, None, [NS]),
    ("explicit single", MODES_OWN_SINGLE, ["other"], ["other"]),
    ("explicit all", MODES_ALL_ONLY, [], []),
    ("explicit targets taken as given without modes", None, ["a", "b"], ["a", "b"]),
]


@pytest.mark.parametrize("modes, targets, expected", [c[1:] for c in CHOOSE_CASES], ids=[c[0] for c in CHOOSE_CASES])
def test_choose_targets(modes, targets, expected):
    assert installmode.choose_targets(modes, NS, targets) == expected


REFUSE_CASES = [
    ("explicit own on all-only", MODES_ALL_ONLY, [NS], "OwnNamespace"),
    ("explicit multi unsupported", MODES_OWN_SINGLE, ["a", "b"], "MultiNamespace"),
    ("single-only needs targets", MODES_SINGLE_ONLY, None, "set target_namespaces"),
]


@pytest.mark.parametrize("modes, targets, text", [c[1:] for c in REFUSE_CASES], ids=[c[0] for c in REFUSE_CASES])
def test_choose_targets_refuses(modes, targets, text):
    with pytest.raises(installmode.InstallModeError, match=text):
        installmode.choose_targets(modes, NS, targets)


def og(targets=None, selector=None, resolved=None):
    spec = {}
    if targets is not None:
        spec["targetNamespaces"] = targets
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": "og"}, "spec": spec, "status": {"namespaces": resolved or []}}


def test_existing_operator_group_checks():
    installmode.check_operator_group(og([NS]), MODES_OWN_SINGLE, NS)
    installmode.check_operator_group(og([NS]), MODES_ALL, NS)
    installmode.check_operator_group(og(), MODES_ALL_ONLY, NS)
    with pytest.raises(installmode.InstallModeError, match="means AllNamespaces"):
        installmode.check_operator_group(og(), MODES_OWN_SINGLE, NS)
    with pytest.raises(installmode.InstallModeError, match="not the requested"):
        installmode.check_operator_group(og([NS]), MODES_ALL, NS, ["a"])
    assert installmode.operator_group_targets(og(selector={"matchLabels": {"x": "y"}}, resolved=["a", "b"])) == ["a", "b"]


def test_subscription_spec_and_changes():
    wanted = olm.subscription_spec(
        {"package": "kube-demo", "channel": "stable", "catalog": "c", "catalog_namespace": "olm", "approval": "Manual", "starting_csv": V1, "config": {}}
    )
    assert wanted == {
        "name": "kube-demo",
        "channel": "stable",
        "source": "c",
        "sourceNamespace": "olm",
        "installPlanApproval": "Manual",
        "startingCSV": V1,
        "config": {},  # kept: it clears a config set before
    }
    existing = {"spec": dict(wanted, startingCSV=V1, config=None), "status": {"installedCSV": V1}}
    assert olm.subscription_changes(existing, dict(wanted, startingCSV=V2)) == {}
    assert olm.subscription_changes(existing, dict(wanted, channel="alpha")) == {"channel": "alpha"}
    assert olm.subscription_changes({"spec": {}, "status": {}}, {"startingCSV": V1}) == {"startingCSV": V1}


CONFIG = {"nodeSelector": {"zone": "a", "disk": "ssd"}, "env": [{"name": "A", "value": "1"}], "annotations": {"x": "y"}}


@pytest.mark.parametrize(
    "current, wanted, patch",
    [
        # a key left out is removed (a merge patch would keep it), nested keys likewise; lists are replaced whole
        (CONFIG, {"nodeSelector": {"zone": "a"}, "env": [{"name": "A", "value": "1"}]}, {"config": {"nodeSelector": {"disk": None}, "annotations": None}}),
        (CONFIG, dict(CONFIG, env=[]), {"config": {"env": []}}),
        (CONFIG, {}, {"config": None}),  # config: {} removes it whole
        (None, {}, {}),  # nothing to remove
        (CONFIG, CONFIG, {}),  # idempotent
        (None, {"nodeSelector": {"zone": "a"}}, {"config": {"nodeSelector": {"zone": "a"}}}),
    ],
)
def test_config_is_made_equal_to_the_one_wanted(current, wanted, patch):
    existing = {"spec": {"name": "kube-demo", "config": current}, "status": {}}
    assert olm.subscription_changes(existing, {"name": "kube-demo", "config": wanted}) == patch


@pytest.mark.parametrize(
    "a, b, same, newer", [("0.0.1", "v0.0.1", True, False), ("0.0.2", "0.0.1", False, True), ("1.0.0-rc.1", "1.0.0", False, False), ("x", "x", True, False)]
)
def test_versions(a, b, same, newer):
    assert olm.same_version(a, b) is same
    assert olm.version_after(a, b) is newer


def test_status_tables():
    assert st.first_problem(st.CSV_FAILURES, None) is None
    assert st.csv_blocked(csv(V1, "0.0.1", "Pending", "RequirementsNotMet", "missing")) == "RequirementsNotMet: missing"
    assert st.csv_blocked(csv(V1, "0.0.1", "Pending", "RequirementsUnknown")) is None
    assert st.is_copied_csv({"metadata": {"labels": {"olm.copiedFrom": "demo"}}})
    image_pull = pod("p", "r", "ImagePullBackOff")
    assert st.first_problem(st.POD_FAILURES, image_pull).reason == "ImagePullBackOff"
    assert st.first_problem(st.POD_FAILURES, pod("p", "r")) is None


PACKAGE_MANIFEST = {
    "status": {
        "defaultChannel": "stable",
        "channels": [
            {"name": "alpha", "entries": [{"name": "kube-demo.v0.0.1", "version": "0.0.1"}], "currentCSVDesc": {"installModes": MODES_ALL_ONLY}},
            {
                "name": "stable",
                "entries": [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}, {"name": "kube-demo.v0.0.1", "version": "0.0.1"}],
                "currentCSVDesc": {"installModes": MODES_OWN_SINGLE},
            },
        ],
    }
}


@pytest.mark.parametrize(
    "manifest, channel, version, expected",
    [
        (PACKAGE_MANIFEST, None, "0.0.1", "kube-demo.v0.0.1"),
        (PACKAGE_MANIFEST, "stable", "v0.0.2", "kube-demo.v0.0.2"),
        (None, "stable", "v1.2.3", "kube-demo.v1.2.3"),
        (PACKAGE_MANIFEST, "unknown-channel", "1.0.0", "kube-demo.v1.0.0"),
    ],
)
def test_csv_for_version(manifest, channel, version, expected):
    assert olm.csv_for_version(manifest, channel, "kube-demo", version) == expected


def test_csv_for_version_outside_the_channel():
    with pytest.raises(ValueError, match=r"version 0\.0\.9 is not in channel stable of package kube-demo \(versions: 0\.0\.2, 0\.0\.1\)"):
        olm.csv_for_version(PACKAGE_MANIFEST, "stable", "kube-demo", "0.0.9")


def test_install_modes_of_the_channel_head():
    assert olm.install_modes_of(PACKAGE_MANIFEST, None) == MODES_OWN_SINGLE
    assert olm.install_modes_of(PACKAGE_MANIFEST, "alpha") == MODES_ALL_ONLY
    assert olm.install_modes_of(PACKAGE_MANIFEST, "beta") is None
    assert olm.install_modes_of(None, "alpha") is None


def failed_at(reason, when):
    item = csv(V2, "0.0.2", "Failed", reason, "requirements no longer met")
    item["status"]["lastTransitionTime"] = when
    return item


@pytest.mark.parametrize(
    "reason, now, kind",
    [
        ("RequirementsNotMet", None, olm.WAIT),
        ("RequirementsNotMet", st.parse_time("2026-11-23T15:33:20Z"), olm.WAIT),
        ("RequirementsNotMet", st.parse_time("2026-11-23T15:34:10Z"), olm.FAIL),
        ("InstallCheckFailed", st.parse_time("2026-11-23T15:33:11Z"), olm.FAIL),
    ],
)
def test_failures_olm_retries_get_a_grace_period(reason, now, kind):
    seen = observed(sub(installed=V1, current=V2), csvs=[csv(V1, "0.0.1", "Replacing"), failed_at(reason, "2026-11-23T15:33:10Z")])
    seen = seen._replace(now=now)
    assert olm.next_step(MANUAL_V2, seen).kind == kind


def test_parse_time_from_the_shared_helper():
    assert st.parse_time("1970-01-01T00:01:00Z") == 60
    assert st.parse_time("1970-01-01T00:01:00.123456Z") == 60
    assert st.parse_time("yesterday") is None and st.parse_time(None) is None


def test_plans_of_subscription_only():
    mine = {"metadata": {"name": "kube-demo", "uid": "u1"}}
    only_mine = {"metadata": {"name": "a", "ownerReferences": [{"kind": "Subscription", "uid": "u1"}]}}
    shared = {"metadata": {"name": "b", "ownerReferences": [{"kind": "Subscription", "uid": "u1"}, {"kind": "Subscription", "uid": "u2"}]}}
    orphan = {"metadata": {"name": "c"}}
    assert olm.plans_of_subscription_only([only_mine, shared, orphan], mine) == [only_mine]


def test_done_waits_for_the_approved_plan_to_complete():
    seen = observed(sub(installed=V1, current=V1, plan="ip-1"), plans=[plan("ip-1", [V1], phase="Installing", approved=True)], csvs=[csv(V1, "0.0.1")])
    action = olm.next_step(MANUAL_V1, seen)
    assert action.kind == olm.WAIT and "InstallPlan ip-1 (Installing)" in action.message
    done = seen._replace(installplans={"ip-1": plan("ip-1", [V1], phase="Complete", approved=True)})
    assert olm.next_step(MANUAL_V1, done).kind == olm.DONE


# A Subscription made together with its CatalogSource is resolved before OLM has connected to the catalog.
NOT_FOUND = "no operators found in package kube-allns in the catalog referenced by subscription kube-allns"


@pytest.mark.parametrize(
    ("failed_at", "ready_since", "now", "kind"),
    [
        ("2026-11-27T10:00:00Z", None, 1_795_773_610.0, olm.WAIT),  # the catalog is not READY yet
        ("2026-11-27T10:00:00Z", 1_795_773_605.0, 1_795_773_607.0, olm.WAIT),  # READY 2 s after the failure: OLM resolves again
        ("2026-11-27T10:00:00Z", 1_795_773_605.0, 1_795_773_611.0, olm.FAIL),  # still failing 6 s after READY
        ("2026-11-27T10:00:10Z", 1_795_773_605.0, 1_795_773_611.0, olm.FAIL),  # failed with the catalog READY: final at once
        ("2026-11-27T10:00:00Z", 0.0, 1_795_773_611.0, olm.FAIL),  # the catalog cannot be read: as before, final
    ],
)
def test_a_resolution_failure_before_the_catalog_is_ready_is_waited_on(failed_at, ready_since, now, kind):
    failed = dict(cond("ResolutionFailed", "True", "ConstraintsNotSatisfiable", "constraints not satisfiable: " + NOT_FOUND), lastTransitionTime=failed_at)
    seen = olm.Observed(sub(conditions=[failed], name="kube-allns"), {}, {}, (), (), None, now, ready_since)
    action = olm.next_step(olm.Desired("kube-allns", NS, "kube-allns", None, olm.AUTOMATIC), seen)
    assert action.kind == kind, action
    if kind == olm.FAIL:
        assert action.reason == "ConstraintsNotSatisfiable" and NOT_FOUND in action.message


def test_a_real_kubelets_crash_loop_is_stuck():
    """A real kubelet reports a crash loop as terminated/Error between restarts, not waiting/CrashLoopBackOff."""
    crash = real_kubelet_crash_loop_pod()
    problem = st.first_problem(st.POD_FAILURES, crash)
    assert problem.reason == "CrashLoopBackOff" and "exited with code 1 (Error)" in problem.message and "restarts: 3" in problem.message
    once = real_kubelet_crash_loop_pod()
    once["status"]["containerStatuses"][0]["restartCount"] = 1  # below CRASH_LOOP_MIN_RESTARTS: operators may crash at start
    assert st.first_problem(st.POD_FAILURES, once) is None
    never_restarted = real_kubelet_crash_loop_pod()
    never_restarted["status"]["containerStatuses"][0]["restartCount"] = 0
    assert podstatus.container_waiting(never_restarted["status"]["containerStatuses"][0]) == {}
    succeeded = {"restartCount": 4, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    assert podstatus.container_waiting(succeeded, done_on_exit_0=True) == {}  # a Job's container that succeeded after retries


CONFIG = {
    "nodeSelector": {"disk": "ssd"},
    "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
    "env": [{"name": "LOG_LEVEL", "value": "debug"}],
    "volumes": [{"name": "cache", "emptyDir": {}}],
    "annotations": {"team": "infra"},
}
WITH_CONFIG = {
    "metadata": {"annotations": {"team": "infra", "openshift.io/scc": "restricted-v2"}},
    "spec": {
        "nodeSelector": {"disk": "ssd", "kubernetes.io/os": "linux"},
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
        ],
        "volumes": [{"name": "kube-api-access"}, {"name": "cache"}],
        "containers": [{"name": "manager", "env": [{"name": "OPERATOR_CONDITION_NAME"}, {"name": "LOG_LEVEL", "value": "debug"}]}],
    },
}


def _without(path, key):
    pod = json.loads(json.dumps(WITH_CONFIG))
    target = pod
    for part in path:
        target = target[part]
    if isinstance(target, list):
        target[:] = [item for item in target if item.get("name", item.get("key")) != key]
    else:
        target.pop(key)
    return pod


@pytest.mark.parametrize(
    "pod_object, carries",
    [
        (WITH_CONFIG, True),
        (_without(("spec", "nodeSelector"), "disk"), False),
        (_without(("spec", "tolerations"), "dedicated"), False),
        (_without(("spec", "containers", 0, "env"), "LOG_LEVEL"), False),
        (_without(("spec", "volumes"), "cache"), False),
        (_without(("metadata", "annotations"), "team"), False),
    ],
    ids=["all of it", "no nodeSelector", "no toleration", "no env", "no volume", "no annotation"],
)
def test_a_pod_carries_the_subscription_config_as_olm_injects_it(pod_object, carries):
    assert st.carries_config(pod_object, CONFIG) is carries


def container_in(state, restarts):
    pod = real_kubelet_crash_loop_pod()
    pod["status"]["containerStatuses"][0].update({"restartCount": restarts, "state": state})
    return pod


NOW = 1_800_000_000.0
STARTED = {"running": {"startedAt": "2027-01-15T08:00:00Z"}}  # NOW - 0 s
EXITED = {"terminated": {"exitCode": 1, "reason": "Error"}}


STEADY_CASES = [
    ("first exit, never restarted", container_in(EXITED, 0), olm.WAIT, "exited with code 1 (Error) (restarts: 0)"),
    ("back-off after one restart", container_in({"waiting": {"reason": "CrashLoopBackOff"}}, 1), olm.WAIT, "is CrashLoopBackOff (restarts: 1)"),
    ("running again a moment after a restart", container_in(STARTED, 2), olm.WAIT, "restarted 0 s ago (restarts: 2)"),
    ("a crash loop", container_in(EXITED, 3), olm.FAIL, "exited with code 1 (Error), restarted with back-off"),
    ("running since the start", container_in(STARTED, 0), olm.DONE, V1),
    ("still being created", container_in({"waiting": {"reason": "ContainerCreating"}}, 0), olm.DONE, V1),
    ("a node clock ahead of ours", container_in({"running": {"startedAt": "2027-01-15T08:00:30Z"}}, 2), olm.DONE, V1),
    ("an evicted pod kept until collected", dict(container_in(EXITED, 4), status=dict(container_in(EXITED, 4)["status"], phase="Failed")), olm.DONE, V1),
]


@pytest.mark.parametrize("crash_pod, kind, text", [c[1:] for c in STEADY_CASES], ids=[c[0] for c in STEADY_CASES])
def test_a_succeeded_csv_is_done_only_while_its_pods_run_steadily(crash_pod, kind, text):
    """OLM says Succeeded as soon as the Deployment is available, which a crash-looping pod is between restarts."""
    seen = observed(
        sub(current=V1, installed=V1),
        csvs=[csv(V1, "0.0.1")],
        replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
        pods=[crash_pod],
    )
    action = olm.next_step(MANUAL_V1, seen._replace(now=NOW))
    assert action.kind == kind, action
    assert text in (action.target if kind == olm.DONE else action.message), action
    if kind == olm.FAIL:
        assert action.reason == "CrashLoopBackOff" and "ClusterServiceVersion kube-demo.v0.0.1 phase Succeeded" in action.message


@pytest.mark.parametrize(
    "wanted, targets, text",
    [
        ({"targetNamespaces": ["a"]}, None, r"not targetNamespaces \(use target_namespaces\)"),
        ({"upgradeStrategy": "Default", "staticProvidedAPIs": True}, None, "not staticProvidedAPIs"),
        ({"selector": {"matchLabels": {"team": "a"}}}, ["a"], "cannot be combined with target_namespaces"),
    ],
)
def test_operator_group_spec_is_refused_before_any_request(wanted, targets, text):
    with pytest.raises(installmode.InstallModeError, match=text):
        installmode.check_operator_group_spec(wanted, targets)


def test_operator_group_spec_differences_name_each_field():
    group = og(targets=[NS])
    group["spec"]["upgradeStrategy"] = "Default"
    wanted = {"upgradeStrategy": "TechPreviewUnsafeFailForward", "serviceAccountName": "og-sa"}
    assert installmode.operator_group_spec_differences(group, wanted) == [
        "serviceAccountName: None -> 'og-sa'",
        "upgradeStrategy: 'Default' -> 'TechPreviewUnsafeFailForward'",
    ]
    assert installmode.operator_group_spec_differences(group, {"upgradeStrategy": "Default"}) == []
    installmode.check_operator_group_spec({"upgradeStrategy": "Default", "selector": {"matchLabels": {"a": "b"}}})


def succeeded_at(seconds_before_now):
    """A Succeeded CSV for V1 whose phase changed ``seconds_before_now`` before NOW."""
    made = csv(V1, "0.0.1")
    made["status"]["lastTransitionTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW - seconds_before_now))
    return made


SETTLE_CASES = [
    ("installedCSV not set yet", sub(current=V1, state="UpgradePending"), 2, olm.WAIT),
    ("its plan still pending", sub(current=V1, installed=V1, conditions=[cond("InstallPlanPending", reason="Installing")]), 2, olm.WAIT),
    ("recorded", sub(current=V1, installed=V1, state="AtLatestKnown"), 2, olm.DONE),
    ("the Subscription never catches up", sub(current=V1, state="UpgradePending"), 11, olm.DONE),
    (
        "the next version's plan waits for approval",
        sub(current=V2, installed=V1, conditions=[cond("InstallPlanPending", reason="RequiresApproval")]),
        2,
        olm.DONE,
    ),
]


@pytest.mark.parametrize("subscription, seconds, kind", [c[1:] for c in SETTLE_CASES], ids=[c[0] for c in SETTLE_CASES])
def test_a_succeeded_csv_waits_briefly_for_the_subscription_to_record_it(subscription, seconds, kind):
    """A result that reports success beside OLM's stale UpgradePending/InstallPlanPending misleads; OLM records the
    install within a second or two, and a Subscription that never does is not waited on for long."""
    action = olm.next_step(MANUAL_V1, observed(subscription, csvs=[succeeded_at(seconds)])._replace(now=NOW))
    assert action.kind == kind, action
    if kind == olm.WAIT:
        assert "to record it" in action.message


def pending_unmet(when, requirements):
    item = csv(V1, "0.0.1", "Pending", "RequirementsNotMet", "one or more requirements couldn't be found")
    item["status"].update(lastTransitionTime=when, requirementStatus=requirements)
    return item


NATIVE_MISSING = {"group": "nowhere.kubeforge.io", "version": "v1", "kind": "Missing", "name": "", "status": "NotPresent"}
CRD_PRESENT = {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition", "name": "kubedemos.demo.kubeforge.io", "status": "Present"}


@pytest.mark.parametrize(
    "now, requirements, kind, text",
    [
        (None, [NATIVE_MISSING], olm.WAIT, None),  # no clock: never a failure
        ("2026-11-23T15:33:30Z", [NATIVE_MISSING], olm.WAIT, None),  # within the grace period: OLM checks again
        ("2026-11-23T15:33:41Z", [CRD_PRESENT, NATIVE_MISSING], olm.FAIL, "requirements not met: Missing (nowhere.kubeforge.io/v1) NotPresent"),
        ("2026-11-23T15:33:41Z", [], olm.FAIL, "one or more requirements couldn't be found"),
    ],
)
def test_requirements_not_met_fail_after_the_grace_period_naming_what_is_missing(now, requirements, kind, text):
    seen = observed(sub(current=V1), csvs=[pending_unmet("2026-11-23T15:33:10Z", requirements)])
    step_ = olm.next_step(MANUAL_V1, seen._replace(now=st.parse_time(now) if now else None))
    assert step_.kind == kind
    if text:
        assert text in step_.message and "kubedemos" not in step_.message, step_.message


def unschedulable_pod(since):
    item = pod("kube-demo-controller-manager-abc-1", "kube-demo-controller-manager-abc")
    item["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
                "lastTransitionTime": since,
            }
        ],
    }
    return item


@pytest.mark.parametrize(
    "now, kind",
    [(None, olm.WAIT), ("2026-11-23T15:33:30Z", olm.WAIT), ("2026-11-23T15:33:41Z", olm.FAIL)],
)
def test_an_operator_pod_the_scheduler_cannot_place_fails_after_the_grace_period(now, kind):
    seen = observed(
        sub(current=V1),
        csvs=[csv(V1, "0.0.1", "Pending", "InstallWaiting", "installing: waiting for deployment kube-demo-controller-manager")],
        replicasets=[rs("kube-demo-controller-manager-abc", "kube-demo-controller-manager")],
        pods=[unschedulable_pod("2026-11-23T15:33:10Z")],
    )
    step_ = olm.next_step(MANUAL_V1, seen._replace(now=st.parse_time(now) if now else None))
    assert step_.kind == kind
    if kind == olm.FAIL:
        assert step_.reason == "Unschedulable"
        assert "has not been scheduled for 31 s: 0/3 nodes are available" in step_.message, step_.message


def test_an_operator_container_that_exits_0_again_and_again_is_a_crash_loop():
    exited = {"name": "manager", "restartCount": 4, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    assert podstatus.container_waiting(exited)["reason"] == "CrashLoopBackOff"
    assert "exited with code 0 (Completed)" in podstatus.container_waiting(exited)["message"]
    assert podstatus.container_waiting(exited, done_on_exit_0=True) == {}  # an init container or a Job's: exit 0 is success
    assert podstatus.container_waiting(dict(exited, restartCount=0)) == {}
    job_pod = {"metadata": {"name": "unpack"}, "spec": {"restartPolicy": "OnFailure"}, "status": {"containerStatuses": [dict(exited, name="extract")]}}
    assert st.first_problem(st.POD_FAILURES, job_pod) is None
    operator_pod = dict(job_pod, spec={})  # restartPolicy Always (the default)
    assert st.first_problem(st.POD_FAILURES, operator_pod).reason == "CrashLoopBackOff"
