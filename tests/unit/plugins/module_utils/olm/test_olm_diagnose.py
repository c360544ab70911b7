"""olm/diagnose.py: OLM's ConstraintsNotSatisfiable messages decoded clause by clause, and one table of namespace
snapshots, each with the causes it must name (and a healthy one that names none)."""

import pytest
from lib.samples import real_kubelet_crash_loop_pod

from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as dg

NS = "demo"

# Messages as OLM v0.32+ writes them (operator-framework/operator-lifecycle-manager#2408 and
# openshift/local-storage-operator#503 show the same shapes; ids here are the testbed's).
ORPHAN_UPGRADE = (
    "constraints not satisfiable: clusterserviceversion kube-demo.v0.0.1 exists and is not referenced by a subscription, "
    "@existing/demo//kube-demo.v0.0.1 and testbed-catalog/demo/stable/kube-demo.v0.0.1 originate from package kube-demo, "
    "subscription kube-demo requires testbed-catalog/demo/stable/kube-demo.v0.0.1, subscription kube-demo exists"
)
TWO_PROVIDERS = (
    "constraints not satisfiable: subscription kube-demo requires testbed-catalog/demo/stable/kube-demo.v0.0.2, subscription kube-demo exists, "
    "@existing/demo//kube-demo.v0.0.1 and testbed-catalog/demo/stable/kube-demo.v0.0.2 provide KubeDemo (demo.kubeforge.io/v1alpha1)"
)
MISSING_API = (
    "constraints not satisfiable: bundle kube-demo-addon.v0.1.0 requires an operator providing an API with group: demo.kubeforge.io, "
    "version: v1alpha1, kind: KubeDemo, subscription kube-demo-addon requires at least one of testbed-catalog/demo/stable/kube-demo-addon.v0.1.0, "
    "other/demo/stable/kube-demo-addon.v0.1.0 or @existing/demo//kube-demo-addon.v0.0.9, subscription kube-demo-addon exists"
)
WRONG_CHANNEL = (
    "constraints not satisfiable: no operators found in channel nightly of package kube-demo in the catalog referenced by subscription kube-demo, "
    "subscription kube-demo exists"
)
NO_PACKAGE = "constraints not satisfiable: no operators found in package nope in the catalog referenced by subscription nope, subscription nope exists"


@pytest.mark.parametrize(
    "message, clauses, words",
    [
        (
            ORPHAN_UPGRADE,
            4,
            [
                "CSV kube-demo.v0.0.1 is installed but no Subscription references it",
                "only one operator of package kube-demo may be installed, and both installed kube-demo.v0.0.1 and "
                "kube-demo.v0.0.1 (catalog demo/testbed-catalog, channel stable) would be",
            ],
        ),
        (TWO_PROVIDERS, 3, ["all provide KubeDemo (demo.kubeforge.io/v1alpha1), and only one operator may provide an API"]),
        (
            MISSING_API,
            3,
            [
                "bundle kube-demo-addon.v0.1.0 needs an operator that provides KubeDemo (demo.kubeforge.io/v1alpha1)",
                "can only be met by kube-demo-addon.v0.1.0 (catalog demo/testbed-catalog, channel stable), kube-demo-addon.v0.1.0 "
                "(catalog demo/other, channel stable) or installed kube-demo-addon.v0.0.9",
            ],
        ),
        (NO_PACKAGE, 2, ["the catalog of Subscription nope has no package nope"]),
        (
            "constraints not satisfiable: bundle x.v1 is deprecated, c/ns/a/a.v1, c/ns/a/b.v2, c/ns/a/c.v3 and c/ns/b/d.v4 provide Foo (example.com/v1)",
            2,
            [
                "a.v1 (catalog ns/c, channel a), b.v2 (catalog ns/c, channel a), c.v3 (catalog ns/c, channel a) "
                "and d.v4 (catalog ns/c, channel b) all provide Foo"
            ],
        ),
        ("constraints not satisfiable", 0, []),
        ("constraints not satisfiable: something new, subscription x exists", 2, ["something new"]),
    ],
)
def test_decode_constraints(message, clauses, words):
    decoded = dg.decode_constraints(message)
    assert len(decoded) == clauses, decoded
    plain = " | ".join(p for p, _f, _c in decoded)
    for text in words:
        assert text in plain, plain
    assert [c for _p, _f, c in decoded] == dg.split_clauses(message)


def cond(kind, value="True", reason=None, message=None):
    return {"type": kind, "status": value, "reason": reason, "message": message}


def sub(name, package=None, installed=None, conditions=(), plan=None):
    st = {"conditions": list(conditions)}
    if installed:
        st["installedCSV"] = st["currentCSV"] = installed
    if plan:
        st["installPlanRef"] = {"name": plan}
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"name": package or name, "source": "cat", "sourceNamespace": NS}, "status": st}


def csv(name, phase="Succeeded", reason=None, modes=("OwnNamespace",), deployments=("kube-demo-controller-manager",)):
    return {
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "installModes": [{"type": m, "supported": True} for m in modes],
            "install": {"strategy": "deployment", "spec": {"deployments": [{"name": d} for d in deployments]}},
        },
        "status": {"phase": phase, "reason": reason, "message": f"{reason} text" if reason else None},
    }


def rs(name, deployment="kube-demo-controller-manager", failure=None):
    conditions = [cond("ReplicaFailure", reason="FailedCreate", message=failure)] if failure else []
    return {
        "metadata": {"name": name, "annotations": {"deployment.kubernetes.io/revision": "1"}, "ownerReferences": [{"kind": "Deployment", "name": deployment}]},
        "status": {"conditions": conditions},
    }


def pull_pod():
    return {
        "metadata": {"name": "op-1", "ownerReferences": [{"kind": "ReplicaSet", "name": "kube-demo-controller-manager-abc"}]},
        "spec": {"containers": [{"name": "manager", "image": "quay.example/missing:v1"}]},
        "status": {"containerStatuses": [{"name": "manager", "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]},
    }


def stuck_pod(reason):
    item = pull_pod()
    item["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": reason, "message": 'secret "creds" not found'}}
    return item


def catalog(state="READY"):
    return {"metadata": {"name": "cat", "namespace": NS}, "spec": {"image": "r.example/cat:v1"}, "status": {"connectionState": {"lastObservedState": state}}}


def apiservice(available="True"):
    return {
        "metadata": {"name": "v1.packages.operators.coreos.com"},
        "status": {"conditions": [cond("Available", available, "Ok" if available == "True" else "MissingEndpoints")]},
    }


HEALTHY = {
    "namespace": NS,
    "package": "kube-demo",
    "subscriptions": [sub("kube-demo", installed="kube-demo.v0.0.1")],
    "csvs": [csv("kube-demo.v0.0.1")],
    "operatorgroups": [{"metadata": {"name": NS}, "spec": {"targetNamespaces": [NS]}, "status": {"namespaces": [NS]}}],
    "catalogsources": [catalog()],
    "replicasets": [rs("kube-demo-controller-manager-abc")],
    "packageserver": apiservice(),
}


def broken(**changes):
    snap = dict(HEALTHY)
    snap.update(changes)
    return snap


PLAN = {
    "metadata": {"name": "install-x"},
    "spec": {"clusterServiceVersionNames": ["kube-demo.v0.0.2", "kube-other.v1.0.0"], "approved": False},
    "status": {"phase": "RequiresApproval", "plan": []},
}
PSA = 'pods "kube-demo-controller-manager-abc-x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
SCC_EVENT = {
    "involvedObject": {"kind": "ReplicaSet", "name": "kube-demo-controller-manager-abc"},
    "message": 'Error creating: pods "x" is forbidden: unable to validate against any security context constraint: [...]',
}

UNPACK_FAILED = cond("BundleUnpackFailed", "True", "BundleUnpackFailed", "bundle unpacking failed: DeadlineExceeded")

SNAPSHOTS = [
    ("healthy", HEALTHY, []),
    ("orphaned CSV", broken(subscriptions=[], csvs=[csv("kube-demo.v0.0.1")]), ["OrphanedCSV"]),
    ("no Subscription of the package (a wrong namespace or name)", broken(subscriptions=[sub("other")], csvs=[]), ["NoSubscription"]),
    (
        "unsatisfiable resolution, written onto every Subscription of the namespace",
        broken(
            subscriptions=[
                sub("kube-demo", installed="kube-demo.v0.0.1", conditions=[cond("ResolutionFailed", reason="ConstraintsNotSatisfiable", message=NO_PACKAGE)]),
                sub("nope", conditions=[cond("ResolutionFailed", reason="ConstraintsNotSatisfiable", message=NO_PACKAGE)]),
            ]
        ),
        ["ConstraintsNotSatisfiable", "UnresolvableSubscriptionInNamespace"],
    ),
    (
        "install mode the OperatorGroup does not allow",
        broken(csvs=[csv("kube-demo.v0.0.1", "Failed", "UnsupportedOperatorGroup", modes=("AllNamespaces",))]),
        ["InstallModeMismatch"],
    ),
    (
        "our own Subscription fails: its healthy neighbour, which OLM marks too, does not block",
        broken(
            subscriptions=[
                sub("kube-demo", conditions=[cond("ResolutionFailed", reason="ConstraintsNotSatisfiable", message=WRONG_CHANNEL)]),
                sub("neighbour", installed="neighbour.v1", conditions=[cond("ResolutionFailed", reason="ConstraintsNotSatisfiable", message=WRONG_CHANNEL)]),
            ],
            csvs=[csv("neighbour.v1")],
        ),
        ["ConstraintsNotSatisfiable"],
    ),
    (
        "the CSV an upgrade replaces is no orphan",
        broken(
            subscriptions=[sub("kube-demo", installed="kube-demo.v0.0.2")],
            csvs=[csv("kube-demo.v0.0.1", "Replacing"), dict(csv("kube-demo.v0.0.2", "Installing"), spec=dict(csv("x")["spec"], replaces="kube-demo.v0.0.1"))],
        ),
        [],
    ),
    ("a plan that carries another operator", broken(installplans=[PLAN]), ["InstallPlanCarriesOtherOperators"]),
    ("no OperatorGroup: OLM resolves nothing", broken(operatorgroups=[], subscriptions=[sub("kube-demo")], csvs=[]), ["NoOperatorGroup"]),
    (
        "Pod Security rejects the pods",
        broken(csvs=[csv("kube-demo.v0.0.1", "Installing")], replicasets=[rs("kube-demo-controller-manager-abc", failure=PSA)]),
        ["PodSecurityRejected"],
    ),
    ("an SCC rejects the pods", broken(events=[SCC_EVENT]), ["SCCRejected"]),
    ("a crash loop on a real kubelet", broken(pods=[real_kubelet_crash_loop_pod()]), ["CrashLoop"]),
    ("an image that cannot be pulled", broken(pods=[pull_pod()]), ["ImagePullFailed"]),
    ("a catalog that is not serving", broken(catalogsources=[catalog("TRANSIENT_FAILURE")]), ["CatalogNotServing"]),
    ("the packageserver is down", broken(packageserver=apiservice("False")), ["PackageServerUnavailable"]),
    ("another failed CSV", broken(csvs=[csv("kube-demo.v0.0.1", "Failed", "InstallCheckFailed")]), ["CSVFailed"]),
    (
        "OLM gave up unpacking the bundle",
        broken(subscriptions=[sub("kube-demo", installed="kube-demo.v0.0.1", conditions=[UNPACK_FAILED])]),
        ["BundleUnpackFailed"],
    ),
    ("a pod stuck for another reason (a missing Secret)", broken(pods=[stuck_pod("CreateContainerConfigError")]), ["CreateContainerConfigError"]),
]


@pytest.mark.parametrize("snapshot, causes", [c[1:] for c in SNAPSHOTS], ids=[c[0] for c in SNAPSHOTS])
def test_diagnose_names_each_cause(snapshot, causes):
    findings = dg.diagnose(snapshot)
    assert [f.cause for f in findings] == causes, findings
    for finding in findings:
        assert finding.message and finding.objects, finding
    lines = dg.summary(findings, NS, "kube-demo")
    assert lines[0].startswith("package kube-demo in namespace demo: ")
    assert len(lines) == 1 + sum(2 if f.fix else 1 for f in findings)


def test_the_decoded_resolution_names_the_fix_and_each_subscription_once():
    snapshot = broken(
        subscriptions=[
            sub("kube-demo", conditions=[cond("ResolutionFailed", reason="ConstraintsNotSatisfiable", message=ORPHAN_UPGRADE)]),
        ]
    )
    (finding,) = [f for f in dg.diagnose(snapshot) if f.cause == "ConstraintsNotSatisfiable"]
    assert "CSV kube-demo.v0.0.1 is installed but no Subscription references it" in finding.message
    assert "is part of the resolution" not in finding.message
    assert finding.fix.startswith("delete the orphaned CSV kube-demo.v0.0.1") and finding.objects == ["Subscription/kube-demo"]


def crash_pod(terminated=None):
    item = real_kubelet_crash_loop_pod()
    item["spec"]["containers"] = [{"name": "main", "image": "quay.example/team/op:v2"}]
    if terminated:
        item["status"]["containerStatuses"][0]["state"] = {"terminated": terminated}
    return item


REFUSED = "dial tcp 127.0.0.1:10250: connect: connection refused"
LONG_LOG = "".join(f"line {n}\n" for n in range(1, 41)) + "panic: " + "x" * 500 + "\n"


@pytest.mark.parametrize(
    "logs, tarball, terminated, fragments, absent",
    [
        (
            {"crash/main": "starting\nthis container crashes on purpose\n"},
            False,
            None,
            [
                "pod crash container main (image quay.example/team/op:v2) is CrashLoopBackOff (restarts: 3)",
                "last exit code 1 (Error)",
                "last log lines: starting | this container crashes on purpose",
            ],
            [],
        ),
        # bounded: the last FINDING_LOG_LINES lines, each cut
        ({"crash/main": LONG_LOG}, True, None, ["last log lines: line 37 | line 38 | line 39 | line 40 | panic: xxx", "more characters)"], ["line 36"]),
        ({"crash/main": LONG_LOG}, True, {"exitCode": 137, "reason": "OOMKilled"}, ["last exit code 137 (OOMKilled)"], []),
        # the kubelet gave none (a node that serves no logs): said briefly
        ({"crash/main": "(no log: the server could not find the requested resource)"}, False, None, ["no log to be had (the server could not find"], []),
        (
            {"crash/main": '(no log: Get "https://127.0.0.1:10250/containerLogs/demo/crash/main?tailLines=5": ' + REFUSED + ")"},
            False,
            None,
            ["no log to be had (dial tcp 127.0.0.1:10250: connect: connection refused)"],
            ["containerLogs"],
        ),
        # not read at all (a snapshot without logs)
        (None, False, None, ["its log was not read"], ["last log lines"]),
    ],
    ids=["log lines", "bounded", "OOMKilled", "no log", "no node to ask", "not read"],
)
def test_the_crash_loop_finding_names_the_image_the_exit_and_the_last_log_lines(logs, tarball, terminated, fragments, absent):
    snapshot = broken(pods=[crash_pod(terminated)], tarball=tarball)
    if logs is not None:
        snapshot["logs"] = logs
    (finding,) = dg.diagnose(snapshot)
    assert finding.cause == "CrashLoop" and finding.objects == ["Pod/crash"]
    for fragment in fragments:
        assert fragment in finding.message, finding.message
    for fragment in absent:
        assert fragment not in finding.message, finding.message
    assert len(finding.message) < 1600
    # the support tarball is named for what it is, and only claimed where one is written
    assert "bundle" not in finding.fix and "kubectl logs --previous -n demo crash -c main" in finding.fix
    assert ("the support tarball holds its last lines" in finding.fix) is tarball
    assert ("olm_diagnose with dest writes its last lines into a support tarball" in finding.fix) is not tarball


def running_again(started_ago, restarts=4, exit_code=1):
    """The crash-looping pod as a real kubelet shows it while a restarted run lasts: running, the failed run before
    it in lastState."""
    item = crash_pod()
    status = item["status"]["containerStatuses"][0]
    status["state"] = {"running": {"startedAt": format_time(NOW - started_ago)}}
    status["lastState"] = {"terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}}
    status["restartCount"] = restarts
    return item


NOW = 1_800_000_000


@pytest.mark.parametrize(
    "pod, now, found",
    [
        (running_again(2), NOW, True),  # between two crashes: the same verdict as while it waits in back-off
        (running_again(599), NOW, True),
        (running_again(600), NOW, False),  # ran 10 minutes: the kubelet has reset its back-off, the loop is over
        (running_again(2, restarts=2), NOW, False),  # operators often crash at start: a loop from 3 restarts on
        (running_again(2), None, False),  # a reader without the read's time (the waiting modules) sees it running
    ],
    ids=["just restarted", "still in back-off", "recovered", "two restarts", "no time"],
)
def test_a_crash_loop_seen_between_two_crashes_is_still_a_crash_loop(pod, now, found):
    findings = [f for f in dg.diagnose(broken(pods=[pod], now=now)) if f.cause == "CrashLoop"]
    assert bool(findings) is found, findings
    if found:
        assert "is CrashLoopBackOff (restarts: 4): last exit code 1 (Error)" in findings[0].message, findings[0].message
    assert dg.pod_is_stuck(pod, now) is found


def test_an_image_pull_failure_names_the_container_and_its_image():
    (finding,) = dg.diagnose(broken(pods=[pull_pod()]))
    assert finding.message == "pod op-1 container manager cannot pull image quay.example/missing:v1 (ImagePullBackOff: not found)"
    assert "(quay.example/missing:v1)" in finding.fix


def test_the_overview_shows_the_namespace_from_the_same_read():
    copied = csv("kube-demo.v0.0.1")
    copied["metadata"]["labels"] = {"olm.copiedFrom": "elsewhere"}
    events = [
        {"involvedObject": {"kind": "Pod", "name": "b"}, "reason": "BackOff", "message": "later", "lastTimestamp": "2026-11-29T06:00:02Z", "count": 3},
        {"involvedObject": {"kind": "Pod", "name": "a"}, "reason": "Failed", "message": "first", "eventTime": "2026-11-29T06:00:01Z"},
    ]
    snapshot = broken(
        subscriptions=[sub("kube-demo", installed="kube-demo.v0.0.1", conditions=[cond("InstallPlanPending", reason="Installing")])],
        installplans=[PLAN],
        csvs=[csv("kube-demo.v0.0.1", "Installing", "InstallWaiting"), copied],
        events=events,
    )
    view = dg.overview(snapshot)
    (subscription,) = view["subscriptions"]
    assert subscription["name"] == "kube-demo" and subscription["installed_csv"] == "kube-demo.v0.0.1" and subscription["approval"] == "Automatic"
    assert [c["type"] for c in subscription["conditions"]] == ["InstallPlanPending"]
    assert view["install_plans"] == [
        {
            "name": "install-x",
            "phase": "RequiresApproval",
            "approved": False,
            "approval": None,
            "csvs": ["kube-demo.v0.0.2", "kube-other.v1.0.0"],
            "conditions": [],
        }
    ]
    assert view["csvs"] == [{"name": "kube-demo.v0.0.1", "phase": "Installing", "reason": "InstallWaiting", "message": "InstallWaiting text"}]
    assert view["catalog_sources"][0]["state"] == "READY" and view["catalog_sources"][0]["address"] == "r.example/cat:v1"
    assert [(e["name"], e["time"], e["count"]) for e in view["events"]] == [("a", "2026-11-29T06:00:01Z", 1), ("b", "2026-11-29T06:00:02Z", 3)]
