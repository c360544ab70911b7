"""meta/runtime.yml: one `module_defaults` group, `group/kubeforge.operators.operators`, gives the auth options to
this collection's modules and to kubernetes.core's `k8s` group (extend_group), in a real ansible-playbook run with
no other way to find the cluster (no KUBECONFIG, K8S_AUTH_* or ~/.kube/config)."""

import json

import pytest

pytestmark = pytest.mark.testbed

PLAY = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubeforge.operators.operators:
      kubeconfig: "{{ testbed_kubeconfig }}"
  tasks:
    - name: kubernetes.core's module, through the extended group
      kubernetes.core.k8s_info:
        kind: Namespace
        name: default
      register: core
    - name: this collection's module
      kubeforge.operators.olm_operator_info:
        namespace: default
      register: ours
    - name: keep both results
      ansible.builtin.copy:
        content: "{{ {'namespace': core.resources[0].metadata.name, 'operators': ours.operators} | to_json }}"
        dest: "{{ result_file }}"
        mode: "0600"
"""

ONLY_CORE_GROUP = PLAY.replace("group/kubeforge.operators.operators", "group/kubernetes.core.k8s")


def no_cluster_env(tmp_path):
    """Nothing but module_defaults can name the cluster."""
    env = {"HOME": str(tmp_path / "home"), "KUBECONFIG": str(tmp_path / "absent"), "K8S_AUTH_KUBECONFIG": str(tmp_path / "absent")}
    (tmp_path / "home").mkdir()
    return env


def test_one_group_reaches_both_collections(run_playbook, kubeconfig, tmp_path):
    result_file = tmp_path / "result.json"
    code, output = run_playbook(PLAY, {"testbed_kubeconfig": kubeconfig, "result_file": str(result_file)}, env=no_cluster_env(tmp_path))
    assert code == 0, output
    shown = json.loads(result_file.read_text())
    assert shown["namespace"] == "default" and isinstance(shown["operators"], list), output


def test_the_kubernetes_core_group_alone_does_not_reach_ours(run_playbook, kubeconfig, tmp_path):
    """Why the docs say to set our group: a group cannot be extended from outside."""
    variables = {"testbed_kubeconfig": kubeconfig, "result_file": str(tmp_path / "result.json")}
    code, output = run_playbook(ONLY_CORE_GROUP, variables, env=no_cluster_env(tmp_path))
    assert code != 0, output
    assert "ok: [localhost]" in output and "this collection's module" in output, output
