"""playbooks/upgrade_readiness.yml (kubeforge.operators.upgrade_readiness) through ansible-playbook against the
testbed's real API server and OLM v0: a fleet of three inventory hosts - two contexts of the testbed (`east`, `west`)
and one whose kubeconfig does not exist (`broken`) - each planned by olm_upgrade_plan, then one report.

A CSV of the test's own namespace declares `olm.maxOpenShiftVersion` 4.30 in the properties annotation OLM reads (a
value above the target, so that no other test's view of what blocks changes): both clusters' rows show it, not
blocking; the broken cluster is listed with its error, first, makes the fleet's verdict `unknown`, and fails the run
after the report is written. (Whether a rerun changes the files depends on what other tests install meanwhile; the
unit tests prove the same plans give the same bytes.)
"""

import json
import os
import subprocess
import sys

import pytest
import yaml
from kubernetes import client
from lib.runners import ansible_env

pytestmark = pytest.mark.testbed

CSV_NAME = "kube-readiness.v1.0.0"


def _csv(namespace):
    properties = {
        "properties": [
            {"type": "olm.package", "value": {"packageName": "kube-readiness", "version": "1.0.0"}},
            {"type": "olm.maxOpenShiftVersion", "value": "4.30"},
        ]
    }
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": CSV_NAME, "namespace": namespace, "annotations": {"operatorframework.io/properties": json.dumps(properties)}},
        "spec": {
            "displayName": "kube-readiness",
            "version": "1.0.0",
            "install": {"strategy": "deployment", "spec": {"deployments": []}},
            "installModes": [{"type": "AllNamespaces", "supported": True}],
        },
    }


def _playbook(tmp_path, kubeconfig):
    inventory = {
        "clusters": {
            "hosts": {
                "east": {"kubeconfig": kubeconfig},
                "west": {"kubeconfig": kubeconfig},
                "broken": {"kubeconfig": str(tmp_path / "missing-kubeconfig")},
            },
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        }
    }
    (tmp_path / "fleet.yml").write_text(yaml.safe_dump(inventory))
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "fleet.yml",
        "-e",
        '{"upgrade_readiness_openshift_version": "4.21.3", "upgrade_readiness_report_dir": "out"}',
        "kubeforge.operators.upgrade_readiness",
    ]
    env = dict(ansible_env(tmp_path), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=600, check=False)  # noqa: S603


def test_fleet_report(api, kubeconfig, namespace, tmp_path):
    client.CustomObjectsApi(api).create_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", _csv(namespace))
    proc = _playbook(tmp_path, kubeconfig)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "broken: no plan" in output, output[-6000:]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert doc["target"] == "4.21.3" and doc["verdict"] == "unknown", doc
    assert [c["cluster"] for c in doc["clusters"]][0] == "broken" and doc["clusters"][0]["verdict"] == "error"
    assert "Invalid kube-config file" in doc["clusters"][0]["error"], doc["clusters"][0]
    assert sorted(c["cluster"] for c in doc["clusters"][1:]) == ["east", "west"]
    assert all(c["verdict"] in ("ready", "needs_action", "blocked") and c["error"] is None for c in doc["clusters"][1:])
    for cluster in ("east", "west"):
        rows = [r for r in doc["operators"] if r["cluster"] == cluster and r["namespace"] == namespace]
        assert len(rows) == 1, doc["operators"]
        row = rows[0]
        assert (row["name"], row["generation"], row["installed_version"], row["max_openshift_version"], row["blocks_upgrade"]) == (
            CSV_NAME,
            "v0",
            "1.0.0",
            "4.30",
            False,
        ), row
        assert f"| {cluster} | {namespace}/{CSV_NAME} | " in markdown
    assert markdown.splitlines()[0].startswith("# Upgrade readiness for OpenShift 4.21.3: unknown (1 error, ")
    # blockers first: no non-blocking row comes before a blocking one
    blocks = [r["blocks_upgrade"] for r in doc["operators"]]
    assert blocks == sorted(blocks, reverse=True)
