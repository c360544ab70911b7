"""olm_cluster/diagnose.py: the support tarball's files (secret-named environment values masked, managedFields
dropped) written atomically through the file-output service, and nothing written in check mode."""

import json
import tarfile

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import diagnose as glue

CSV = {
    "metadata": {"name": "kube-demo.v0.0.1", "managedFields": [{"manager": "olm"}]},
    "spec": {
        "install": {
            "spec": {
                "deployments": [
                    {
                        "name": "d",
                        "spec": {
                            "template": {
                                "spec": {
                                    "containers": [{"name": "m", "env": [{"name": "DB_PASSWORD", "value": "hunter2"}, {"name": "LOG_LEVEL", "value": "debug"}]}]
                                }
                            }
                        },
                    }
                ]
            }
        }
    },
}


PLAN = {
    "metadata": {"name": "install-1", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"spec": "hunter2"}', "team": "a"}},
    "status": {"plan": [{"resource": {"kind": "Secret", "name": "creds", "manifest": '{"data": {"password": "hunter2"}}'}}]},
}


def files():
    snapshot = {
        "namespace": "demo",
        "csvs": [CSV],
        "installplans": [PLAN],
        "subscriptions": [],
        "packageserver": {"metadata": {"name": "v1.packages.operators.coreos.com"}},
    }
    findings = core.diagnose(snapshot)
    return glue.tarball_files(snapshot, ["Event not read: forbidden"], {"op-1/manager": "panic: no CRD\n"}, findings, core.summary(findings, "demo"))


def test_tarball_files_mask_secret_env_values_and_drop_managed_fields():
    out = files()
    (stored,) = json.loads(out["objects/csvs.json"])["items"]
    env = stored["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "DB_PASSWORD", "value": glue.MASKED}, {"name": "LOG_LEVEL", "value": "debug"}]
    assert "managedFields" not in stored["metadata"] and b"hunter2" not in b"".join(out.values())
    (plan,) = json.loads(out["objects/installplans.json"])["items"]
    assert plan["status"]["plan"][0]["resource"] == {"kind": "Secret", "name": "creds", "manifest": glue.MASKED}
    assert plan["metadata"]["annotations"]["team"] == "a"
    assert out["logs/op-1_manager.log"] == b"panic: no CRD\n"
    assert b"OrphanedCSV" in out["findings.json"] and b"note: Event not read: forbidden" in out["summary.txt"]
    assert CSV["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "hunter2"


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_tarball_is_written_atomically_or_not_at_all(tmp_path, check_mode):
    dest = tmp_path / "sub" / "support.tar.gz"
    dest.parent.mkdir()
    dest.write_bytes(b"an older tarball")
    dest.chmod(0o644)
    changed = glue.write_tarball(str(dest), "olm-diagnose-demo-x", files(), check_mode)
    assert changed is True
    if check_mode:
        assert dest.read_bytes() == b"an older tarball"
        return
    assert oct(dest.stat().st_mode & 0o777) == "0o600"
    with tarfile.open(dest) as tar:
        names = tar.getnames()
    assert "olm-diagnose-demo-x/summary.txt" in names and "olm-diagnose-demo-x/objects/csvs.json" in names
    assert [p.name for p in dest.parent.iterdir()] == ["support.tar.gz"]  # no temporary file left


class LogError(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.body = json.dumps({"kind": "Status", "message": message})


class LogResource:
    """A Pod resource's ``log`` sub-resource answering from a script: one answer (text or error message) per call."""

    def __init__(self, answers):
        self.answers, self.asked = list(answers), []
        self.log = self

    def get(self, name, namespace, serialize, query_params):
        self.asked.append(query_params.get("previous") == "true")
        answer = self.answers.pop(0)
        if answer.startswith("!"):
            raise LogError(answer[1:])
        return type("Response", (), {"data": answer.encode()})()


GONE = "!unable to retrieve container logs for containerd://5d82b87d"
WAITING = {"restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"exitCode": 1}}}
EXITED = {"restartCount": 4, "state": {"terminated": {"exitCode": 1}}}


@pytest.mark.parametrize(
    "container, answers, asked, text, pauses",
    [
        # A container in back-off said its last words in its previous run; one that has exited, in its current one.
        (WAITING, ["crashes on purpose"], [True], "crashes on purpose", 0),
        (EXITED, ["crashes on purpose"], [False], "crashes on purpose", 0),
        # A restart in between: the other run is asked.
        (WAITING, ["!previous terminated container not found", "crashes on purpose"], [True, False], "crashes on purpose", 0),
        # Never ran (its image cannot be pulled): the kubelet has nothing to serve, and is not asked.
        ({"restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}, [], [], "(no log: the container has not run yet)", 0),
        # The kubelet's status still names a container its garbage collection removed: asked again after a pause.
        (WAITING, [GONE, GONE, "crashes on purpose"], [True, False, True], "crashes on purpose", 1),
        # ... a bounded number of times.
        (
            WAITING,
            [GONE] * 2 * glue.LOG_ROUNDS,
            [True, False] * glue.LOG_ROUNDS,
            "(no log: unable to retrieve container logs for containerd://5d82b87d)",
            glue.LOG_ROUNDS - 1,
        ),
        # A node that serves no logs at all is not asked again.
        (WAITING, ["!no logs on a simulated node"] * 2, [True, False], "(no log: no logs on a simulated node)", 0),
    ],
)
def test_pod_logs_ask_the_run_that_spoke_and_outlast_the_kubelets_garbage_collection(monkeypatch, container, answers, asked, text, pauses):
    resource = LogResource(answers)
    pod = {"metadata": {"name": "op-1"}, "status": {"containerStatuses": [dict(container, name="manager", ready=False)]}}
    slept = []
    logs = glue.pod_logs(Cluster(None, resources={("Pod", "v1"): resource}), "demo", [pod], 20, sleep=slept.append)
    assert logs == {"op-1/manager": text}
    assert resource.asked == asked and slept == [glue.LOG_ROUND_PAUSE_SECONDS] * pauses
    assert resource.answers == []


CRASHING_POD = {
    "metadata": {"name": "op-1", "ownerReferences": [{"kind": "ReplicaSet", "name": "d-abc"}]},
    "spec": {"containers": [{"name": "manager", "image": "quay.example/op:v1"}]},
    "status": {"containerStatuses": [dict(WAITING, name="manager", ready=False)]},
}
CRASH_SNAPSHOT = {
    "namespace": "demo",
    "package": "kube-demo",
    "subscriptions": [{"metadata": {"name": "kube-demo"}, "spec": {"name": "kube-demo"}, "status": {"currentCSV": "kube-demo.v0.0.1"}}],
    "csvs": [dict(CSV, status={"phase": "Installing"})],
    "operatorgroups": [{"metadata": {"name": "og"}}],
    "replicasets": [{"metadata": {"name": "d-abc", "ownerReferences": [{"kind": "Deployment", "name": "d"}]}}],
    "pods": [CRASHING_POD],
}
LOG = "".join(f"line {n}\n" for n in range(1, 101))


@pytest.mark.parametrize(
    "params, asked_lines, tarball_log",
    [
        ({}, core.FINDING_LOG_LINES, None),  # no tarball: only what the finding quotes
        ({"dest": "x.tar.gz", "log_lines": 50}, 50, "".join(f"line {n}\n" for n in range(51, 101))),
        ({"dest": "x.tar.gz", "log_lines": 2}, core.FINDING_LOG_LINES, "line 99\nline 100\n"),
        ({"dest": "x.tar.gz", "log_lines": 0}, core.FINDING_LOG_LINES, None),
    ],
    ids=["no tarball", "tarball", "fewer lines in the tarball", "no logs in the tarball"],
)
def test_the_logs_are_read_once_for_the_finding_and_the_tarball(monkeypatch, params, asked_lines, tarball_log):
    calls, written = [], {}

    def pod_logs(cluster, namespace, pods, lines, now=None):
        calls.append((namespace, [p["metadata"]["name"] for p in pods], lines))
        return {"op-1/manager": "".join(LOG.splitlines(True)[-lines:])}

    def write_tarball(path, top, files, check_mode):
        written.update(files)
        return True

    monkeypatch.setattr(glue, "read_snapshot", lambda cluster, namespace, package, events: (json.loads(json.dumps(CRASH_SNAPSHOT)), []))
    monkeypatch.setattr(glue, "pod_logs", pod_logs)
    monkeypatch.setattr(glue, "write_tarball", write_tarball)
    module = type("Module", (), {"client": None, "cluster": None, "check_mode": False})()
    module.params = dict({"namespace": "demo", "package": "kube-demo", "cluster_extension": None, "dest": None, "events": 50, "log_lines": 50}, **params)
    result = glue.execute(module)
    assert calls == [("demo", ["op-1"], asked_lines)]
    # the same read shows the namespace in brief (the olm_operator role's failure report)
    assert [s["name"] for s in result["overview"]["subscriptions"]] == ["kube-demo"] and result["overview"]["csvs"][0]["phase"] == "Installing"
    (finding,) = result["findings"]
    assert finding["cause"] == "CrashLoop" and "last log lines: line 96 | line 97 | line 98 | line 99 | line 100" in finding["message"], finding
    assert "image quay.example/op:v1" in finding["message"] and "last exit code 1 (Error)" in finding["message"]
    if params.get("dest"):
        assert written.get("logs/op-1_manager.log", b"").decode() == (tarball_log or "")
        assert ("the support tarball holds its last lines" in finding["fix"]) is bool(tarball_log)
    else:
        assert not written and "olm_diagnose with dest writes its last lines into a support tarball" in finding["fix"]
