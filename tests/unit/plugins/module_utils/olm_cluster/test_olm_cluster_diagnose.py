"""olm_cluster/diagnose.py: the support tarball's files (secret-named environment values masked, managedFields
dropped) written atomically through the file-output service, and nothing written in check mode."""

import json
import tarfile

import pytest

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
    return glue.bundle_files(snapshot, ["Event not read: forbidden"], {"op-1/manager": "panic: no CRD\n"}, findings, core.summary(findings, "demo"))


def test_bundle_files_mask_secret_env_values_and_drop_managed_fields():
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
    dest = tmp_path / "sub" / "bundle.tar.gz"
    dest.parent.mkdir()
    dest.write_bytes(b"an older bundle")
    dest.chmod(0o644)
    changed = glue.write_tarball(str(dest), "olm-diagnose-demo-x", files(), check_mode)
    assert changed is True
    if check_mode:
        assert dest.read_bytes() == b"an older bundle"
        return
    assert oct(dest.stat().st_mode & 0o777) == "0o600"
    with tarfile.open(dest) as tar:
        names = tar.getnames()
    assert "olm-diagnose-demo-x/summary.txt" in names and "olm-diagnose-demo-x/objects/csvs.json" in names
    assert [p.name for p in dest.parent.iterdir()] == ["bundle.tar.gz"]  # no temporary file left


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
        # Never restarted: only the current run exists.
        ({"restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}, ["!container is waiting to start"], [False],
         "(no log: container is waiting to start)", 0),
        # The kubelet's status still names a container its garbage collection removed: asked again after a pause.
        (WAITING, [GONE, GONE, "crashes on purpose"], [True, False, True], "crashes on purpose", 1),
        # ... a bounded number of times.
        (WAITING, [GONE] * 6, [True, False] * 3, "(no log: unable to retrieve container logs for containerd://5d82b87d)", 2),
        # A node that serves no logs at all is not asked again.
        (WAITING, ["!no logs on a simulated node"] * 2, [True, False], "(no log: no logs on a simulated node)", 0),
    ],
)
def test_pod_logs_ask_the_run_that_spoke_and_outlast_the_kubelets_garbage_collection(monkeypatch, container, answers, asked, text, pauses):
    resource = LogResource(answers)
    monkeypatch.setattr(glue, "find_resource", lambda client, kind, api_version: resource)
    pod = {"metadata": {"name": "op-1"}, "status": {"containerStatuses": [dict(container, name="manager", ready=False)]}}
    slept = []
    logs = glue.pod_logs(None, "demo", [pod], 20, sleep=slept.append)
    assert logs == {"op-1/manager": text}
    assert resource.asked == asked and slept == [glue.LOG_ROUND_PAUSE_SECONDS] * pauses
    assert resource.answers == []
