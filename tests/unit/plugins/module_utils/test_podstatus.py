"""podstatus.py: the one table of container failure reasons, and every module that judges pods reading it the same way -
olm_operator (olm/status.py), olm_diagnose (olm/diagnose.py) and daemonset_canary (canary/observe.py, canary/rollout.py)
- whatever moment of the kubelet's alternating reasons it looks at."""

import ast
from pathlib import Path

import pytest
from lib.samples import real_kubelet_crash_loop_pod

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import observe as canary_observe
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as canary_rollout
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as dg
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import status as st

PLUGINS = Path(podstatus.__file__).resolve().parents[1]
IMAGE = "quay.example/team/operator:v1"


def test_the_table_names_each_reason_once_with_its_kind():
    reasons = [row.reason for row in podstatus.CONTAINER_FAILURES]
    assert len(reasons) == len(set(reasons))
    assert podstatus.IMAGE_PULL_REASONS == {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError"}
    assert {row.reason for row in podstatus.CONTAINER_FAILURES if row.before_backoff} == {"ErrImagePull"}
    assert podstatus.kind_of("CrashLoopBackOff") == podstatus.CRASH_LOOP and podstatus.kind_of("ContainerCreating") is None


@pytest.mark.parametrize(
    "reason, restarts, crash_restarts, wait_for_backoff, expected",
    [
        ("ErrImagePull", 0, 3, False, True),  # a diagnosis (and the canary) counts the failed attempt
        ("ErrImagePull", 0, 3, True, False),  # a watching module waits the moment until the kubelet backs off
        ("ImagePullBackOff", 0, 3, True, True),
        ("ImagePullBackOff", 0, 3, False, True),
        ("InvalidImageName", 0, 3, True, True),
        ("CrashLoopBackOff", 2, 3, False, False),  # operators crash once or twice at start: the caller's threshold
        ("CrashLoopBackOff", 3, 3, False, True),
        ("CrashLoopBackOff", 1, 1, True, True),
        ("CreateContainerConfigError", 0, 3, True, True),
        ("ContainerCreating", 0, 3, False, False),
        ("PodInitializing", 9, 1, False, False),
        (None, 9, 1, False, False),
    ],
)
def test_stuck(reason, restarts, crash_restarts, wait_for_backoff, expected):
    assert podstatus.stuck(reason, restarts, crash_restarts, wait_for_backoff) is expected


@pytest.mark.parametrize(
    "container, done_on_exit_0, reason",
    [
        ({"state": {"waiting": {"reason": "ImagePullBackOff"}}}, False, "ImagePullBackOff"),
        # a real kubelet between the restarts of a crash loop: terminated, never waiting/CrashLoopBackOff
        (real_kubelet_crash_loop_pod()["status"]["containerStatuses"][0], False, "CrashLoopBackOff"),
        ({"restartCount": 2, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}, False, "CrashLoopBackOff"),
        ({"restartCount": 2, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}, True, None),  # an init container's success
        ({"restartCount": 0, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}, False, None),  # a first exit is not a loop yet
        ({"state": {"running": {}}}, False, None),
    ],
)
def test_container_waiting(container, done_on_exit_0, reason):
    assert podstatus.container_waiting(container, done_on_exit_0).get("reason") == reason


@pytest.mark.parametrize(
    "container, words",
    [
        ({"state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}, "exit code 137 (OOMKilled)"),
        ({"state": {"waiting": {}}, "lastState": {"terminated": {"exitCode": 1}}}, "exit code 1 (Error)"),
        ({"state": {"waiting": {"reason": "ErrImagePull"}}}, ""),
    ],
)
def test_last_termination(container, words):
    assert podstatus.describe_exit(podstatus.last_termination(container)) == words


def operator_pod(waiting=None, restarts=0, terminated=None):
    state = {"waiting": waiting} if waiting else {"terminated": terminated}
    status = {"name": "manager", "image": IMAGE, "restartCount": restarts, "state": state}
    return {
        "metadata": {"name": "op-1", "ownerReferences": [{"kind": "ReplicaSet", "name": "kube-demo-controller-manager-abc", "controller": True}]},
        "spec": {"nodeName": "n1", "restartPolicy": "Always", "containers": [{"name": "manager", "image": IMAGE}]},
        "status": {"phase": "Pending", "containerStatuses": [status]},
    }


def diagnosis(pod):
    snap = {
        "namespace": "demo",
        "csvs": [{"metadata": {"name": "kube-demo.v0.0.1"}, "spec": {"install": {"spec": {"deployments": [{"name": "kube-demo-controller-manager"}]}}}}],
        "subscriptions": [{"metadata": {"name": "kube-demo"}, "spec": {"name": "kube-demo"}, "status": {"currentCSV": "kube-demo.v0.0.1"}}],
        "replicasets": [
            {"metadata": {"name": "kube-demo-controller-manager-abc", "ownerReferences": [{"kind": "Deployment", "name": "kube-demo-controller-manager"}]}}
        ],
        "operatorgroups": [{"metadata": {"name": "og"}}],
        "pods": [pod],
    }
    return dg.diagnose(snap)


ROWS = list(podstatus.CONTAINER_FAILURES)


@pytest.mark.parametrize("row", ROWS, ids=[row.reason for row in ROWS])
def test_every_module_that_judges_pods_reads_the_one_table(row):
    """Each reason of the table, in a pod past every crash threshold: the canary halts on it, the diagnosis names it
    (by its kind: an image pull failure is ImagePullFailed whichever reason the kubelet shows), and olm_operator fails
    on it unless it is a failed attempt the kubelet is about to back off from (it fails a moment later)."""
    pod = operator_pod({"reason": row.reason, "message": "m"}, restarts=5)
    assert canary_rollout.crashing(canary_observe.pod_state(pod), crash_restarts=3) == row.reason
    (finding,) = diagnosis(pod)
    expected = {podstatus.IMAGE_PULL: "ImagePullFailed", podstatus.CRASH_LOOP: "CrashLoop"}.get(row.kind, row.reason)
    assert finding.cause == expected and IMAGE in finding.message, finding
    problem = st.first_problem(st.POD_FAILURES, pod)
    assert (problem is None) is row.before_backoff, problem


def test_the_diagnosis_of_a_failing_pull_does_not_depend_on_the_moment():
    """The kubelet alternates ErrImagePull (an attempt failed) and ImagePullBackOff (waiting to try again): either
    read gives the same finding, naming the image."""
    failed = diagnosis(operator_pod({"reason": "ErrImagePull", "message": "dial tcp 127.0.0.1:1: connect: connection refused"}))
    backing_off = diagnosis(operator_pod({"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{IMAGE}"'}))
    assert [f.cause for f in failed] == [f.cause for f in backing_off] == ["ImagePullFailed"]
    assert f"cannot pull image {IMAGE} (ErrImagePull: dial tcp 127.0.0.1:1" in failed[0].message
    assert f"cannot pull image {IMAGE} (ImagePullBackOff" in backing_off[0].message
    assert failed[0].fix == backing_off[0].fix and IMAGE in failed[0].fix


def test_a_restart_below_the_threshold_is_no_crash_loop_anywhere():
    pod = operator_pod({"reason": "CrashLoopBackOff"}, restarts=2)
    assert diagnosis(pod) == [] and st.first_problem(st.POD_FAILURES, pod) is None
    assert canary_rollout.crashing(canary_observe.pod_state(pod), crash_restarts=3) is None


def imports(path):
    tree = ast.parse(path.read_text())
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module} | {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }


def test_the_table_is_pure_and_the_only_one():
    """podstatus imports nothing (the pure cores under olm/ and canary/ import it, never the other way round), and no
    module of plugins/ keeps a table of waiting reasons of its own."""
    assert imports(Path(podstatus.__file__)) <= {"__future__", "collections"}
    for path in PLUGINS.rglob("*.py"):
        if path.name == "podstatus.py":
            continue
        text = path.read_text()
        assert '"ErrImagePull"' not in text and '"ImageInspectError"' not in text, f"{path} keeps container failure reasons of its own"
