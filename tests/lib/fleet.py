"""The fleet tests' operators, inventory and runs: kube-fleet (testbed/fleet_catalog.py, served to every cluster of the
testbed), kube-fleetv1 (the same bundles under other names, for OLM v1: operator-controller cannot take over the CRD
OLM v0 installed), a kubeforge.operators.clusters inventory of the testbed's clusters, and ansible-playbook runs of
playbooks/fleet_rollout.yml over it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from testbed.fleet_catalog import BAD, PACKAGE, VERSIONS, write_bundles

from lib.runners import ansible_env

V1_PACKAGE = "kube-fleetv1"
V1_RENAMES = {
    "demo.kubeforge.io": "fleetv1.kubeforge.io",
    "kubedemos": "kubefleetv1s",
    "singular: kubedemo\n": "singular: kubefleetv1\n",
    "KubeDemo": "KubeFleetV1",
    "kube-demo": "kube-fleetv1",
}
REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "playbooks" / "fleet_rollout.yml"


def inventory(path, kubeconfigs, canary=None, extra=None):
    """A ``kubeforge.operators.clusters`` inventory source over the testbed's fleet kubeconfig directory; the
    ``canary`` context also joins group ``canary``. Returns the path."""
    source = {"plugin": "kubeforge.operators.clusters", "kubeconfigs": [str(kubeconfigs)]}
    if canary:
        source["groups"] = {"canary": f"context == {canary!r}"}
    source.update(extra or {})
    Path(path).write_text(yaml.safe_dump(source, sort_keys=False))
    return Path(path)


def playbook_env(tmp_path):
    return dict(ansible_env(tmp_path), ANSIBLE_CALLBACK_RESULT_FORMAT="yaml", ANSIBLE_FORKS="10")


def run_rollout(tmp_path, inventory_path, extra_vars, check=False, timeout=900, popen=False, playbook=PLAYBOOK):
    """``ansible-playbook playbooks/fleet_rollout.yml`` over the inventory: ``(returncode, output)``, or with ``popen``
    the running process (its output in ``tmp_path/playbook.log``)."""
    vars_file = tmp_path / f"fleet-vars-{os.urandom(3).hex()}.json"
    vars_file.write_text(json.dumps(extra_vars))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory_path), "-e", "@" + str(vars_file)]
    argv += (["--check"] if check else []) + [str(playbook)]
    if popen:
        log = open(tmp_path / "playbook.log", "w")  # noqa: SIM115 - the process writes it until it ends
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=playbook_env(tmp_path), text=True)
    proc = subprocess.run(argv, capture_output=True, text=True, env=playbook_env(tmp_path), timeout=timeout, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def report(report_dir):
    """The fleet report's JSON document, and its rows by cluster."""
    doc = json.loads((Path(report_dir) / "report.json").read_text())
    return doc, {row["cluster"]: row for row in doc["clusters"]}


__all__ = ["BAD", "PACKAGE", "V1_PACKAGE", "V1_RENAMES", "VERSIONS", "inventory", "playbook_env", "report", "run_rollout", "write_bundles"]
