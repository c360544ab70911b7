"""The mirror_select filter on what a real cluster runs: kube-demo 0.0.1 installed by OLM v0 (olm_operator, pinned,
from a CatalogSource of the test's own namespace at the testbed's `opm serve`), read back with olm_operator_info,
turned into a select, and applied by catalog_render to the catalog that `opm serve` serves - the selection a
catalog_mirror of that catalog makes. The result keeps kube-demo alone, with its stable channel from the installed
0.0.1 up to the head 0.0.2, so the cluster can upgrade from the mirror."""

import os
import subprocess
import sys

import pytest
import yaml
from lib.olm_catalog import CATALOG
from lib.runners import ansible_env

pytestmark = pytest.mark.testbed

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: What the cluster runs (the test's namespace)
      kubeforge.operators.olm_operator_info:
        kubeconfig: "{{ kubeconfig }}"
        namespace: "{{ operator_namespace }}"
      register: installed

    - name: The catalog a mirror would push, kept to what the cluster runs
      kubeforge.operators.catalog_render:
        source: "{{ catalog_dir }}"
        select: "{{ [installed] | kubeforge.operators.mirror_select(sources=[catalog_name]) }}"
        dest: "{{ out }}"
        format: yaml
"""


def test_the_select_of_a_running_cluster(run_module, catalog_ns, testbed, kubeconfig, tmp_path):
    installed = run_module(
        "olm_operator",
        {
            "kubeconfig": kubeconfig,
            "package": "kube-demo",
            "namespace": catalog_ns,
            "channel": "stable",
            "version": "0.0.1",
            "catalog": CATALOG,
            "catalog_namespace": catalog_ns,
            "target_namespaces": [catalog_ns],
        },
    )
    assert not installed.get("failed"), installed
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    extra = {
        "kubeconfig": kubeconfig,
        "operator_namespace": catalog_ns,
        "catalog_dir": str(testbed.run_dir / "catalog"),
        "catalog_name": CATALOG,
        "out": str(tmp_path / "selected.yaml"),
    }
    (tmp_path / "vars.yml").write_text(yaml.safe_dump(extra))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@vars.yml", "play.yml"]
    env = dict(ansible_env(tmp_path), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300, check=False)  # noqa: S603
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    docs = [d for d in yaml.safe_load_all((tmp_path / "selected.yaml").read_text()) if d]
    assert sorted({d.get("package") or d.get("name") for d in docs if d["schema"] == "olm.package"}) == ["kube-demo"]
    channels = {d["name"]: [e["name"] for e in d["entries"]] for d in docs if d["schema"] == "olm.channel"}
    assert channels["stable"] == ["kube-demo.v0.0.1", "kube-demo.v0.0.2"], channels
    bundles = sorted(d["name"] for d in docs if d["schema"] == "olm.bundle")
    assert "kube-demo.v0.0.1" in bundles and "kube-demo.v0.0.2" in bundles, bundles
