"""meta/runtime.yml: one `module_defaults` group, `group/kubeforge.operators.operators`, gives the auth options to
this collection's modules and to kubernetes.core's `k8s` group (extend_group), in a real ansible-playbook run with
no other way to find the cluster (no KUBECONFIG, K8S_AUTH_* or ~/.kube/config) - also inside the roles that have
cluster variables of their own (olm_operator, canary_rollout, fleet_rollout, cluster_setup, scc_relax), on their
success paths and their failure reports, with a role variable that is set winning over the play's value key by key."""

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


# The roles' own cluster variables, empty, must leave the play's group defaults in force (a `group/...` key of a
# role's module_defaults replaces the play's whole entry for that group, and an omitted value hides the play's value:
# ansible-core merges module_defaults key by key, outermost first). Each role runs its cheapest real path, in check
# mode, against the testbed, with nothing but the play's module_defaults naming the cluster.
ROLE_PLAY = """
- hosts: localhost
  gather_facts: false
  check_mode: true
  module_defaults:
    group/kubeforge.operators.operators:
      kubeconfig: "{{ testbed_kubeconfig }}"
  tasks:
    - name: The role, with the play's module_defaults only
      ansible.builtin.include_role:
        name: kubeforge.operators.%(role)s
        tasks_from: %(tasks_from)s
    - name: Keep the role's result
      ansible.builtin.copy:
        content: "{{ %(result)s | to_json }}"
        dest: "{{ result_file }}"
        mode: "0600"
      check_mode: false
"""

V2 = "example.invalid/kubeforge/agent:v2"


def role_run(run_playbook, kubeconfig, tmp_path, role, variables, result, tasks_from="main"):
    """Run one role under ROLE_PLAY; returns (returncode, output, the result variable or None)."""
    result_file = tmp_path / "role_result.json"
    play = ROLE_PLAY % {"role": role, "tasks_from": tasks_from, "result": result}
    extra = dict(variables, testbed_kubeconfig=kubeconfig, result_file=str(result_file))
    code, output = run_playbook(play, extra, env=no_cluster_env(tmp_path))
    return code, output, json.loads(result_file.read_text()) if result_file.exists() else None


def olm_operator_absent(namespace, api, tmp_path):
    return {"olm_operator_state": "absent", "olm_operator_package": "kube-demo", "olm_operator_namespace": namespace}, "olm_operator_result"


def cluster_setup_namespace(namespace, api, tmp_path):
    variables = {"cluster_setup_install_olm": False, "cluster_setup_namespaces": [{"name": namespace, "pod_security": {"warn": "baseline"}}]}
    return variables, "cluster_setup_result"


def scc_relax_present(namespace, api, tmp_path):
    return {"scc_relax_pod_security": [{"namespace": namespace, "warn": "baseline"}]}, "scc_relax_result"


def scc_relax_absent(namespace, api, tmp_path):
    # state=absent reads the namespaces with kubernetes.core.k8s_info first
    return {"scc_relax_state": "absent", "scc_relax_pod_security": [{"namespace": namespace, "warn": "baseline"}]}, "scc_relax_result"


def agent_daemonset(api, namespace):
    """DaemonSet agent on the KWOK nodes the testbed has now (never scaled here: other tests count them), settled."""
    from kubernetes import client
    from lib.canary_objects import daemonset
    from lib.polling import poll_until

    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set(namespace, daemonset("agent"))

    def settled(ds):
        st = ds.status
        return (
            (st.observed_generation or 0) >= ds.metadata.generation
            and st.desired_number_scheduled
            and st.updated_number_scheduled == st.desired_number_scheduled == st.number_available
        )

    poll_until(lambda: apps.read_namespaced_daemon_set("agent", namespace), 60, 0.5, "DaemonSet agent to settle", until=settled, show=lambda ds: ds.status)


def canary_rollout_images(namespace, api, tmp_path):
    agent_daemonset(api, namespace)
    variables = {"canary_rollout_name": "agent", "canary_rollout_namespace": namespace, "canary_rollout_images": {"agent": V2}}
    return variables, "canary_rollout_result"


def fleet_rollout_plan(namespace, api, tmp_path):
    agent_daemonset(api, namespace)
    variables = {
        "fleet_rollout_kind": "daemonset",
        "fleet_rollout_name": "agent",
        "fleet_rollout_namespace": namespace,
        "fleet_rollout_images": {"agent": V2},
        "fleet_rollout_report_dir": str(tmp_path / "fleet-report"),
    }
    return variables, "__fleet_rollout_plan"


def upgrade_readiness_nothing_installed(namespace, api, tmp_path):
    variables = {
        "upgrade_readiness_openshift_version": "4.22",
        "upgrade_readiness_packages": ["no-such-package"],
        "upgrade_readiness_report_dir": str(tmp_path / "readiness"),
    }
    return variables, "upgrade_readiness_plan"


# role, tasks_from, the variables (and objects) of its cheapest path, what its result shows (read from the cluster)
ROLES = [
    ("olm_operator", "main", olm_operator_absent, lambda r, ns: r["changed"] is False and r["removed"] == {}),
    ("cluster_setup", "main", cluster_setup_namespace, lambda r, ns: r["namespaces"] == [ns] and r["olm"] == {}),
    (
        "scc_relax",
        "main",
        scc_relax_present,
        lambda r, ns: [(p["namespace"], p["changed"], p["labels"]) for p in r["pod_security"]] == [(ns, True, {"pod-security.kubernetes.io/warn": "baseline"})],
    ),
    ("scc_relax", "main", scc_relax_absent, lambda r, ns: [(p["namespace"], p["changed"]) for p in r["pod_security"]] == [(ns, False)]),
    (
        "canary_rollout",
        "main",
        canary_rollout_images,
        lambda r, ns: r["phase"] == "canary" and r["daemonset"]["namespace"] == ns and r["desired_number_scheduled"] >= 1 and r["revision_hash"],
    ),
    (
        "fleet_rollout",
        "plan",
        fleet_rollout_plan,
        lambda r, ns: r["reachable"] is True and r["plan"]["action"] == "start" and r["from_version"] == "agent=example.invalid/kubeforge/agent:v1",
    ),
    (
        "upgrade_readiness",
        "main",
        upgrade_readiness_nothing_installed,
        lambda r, ns: not r.get("failed") and (r["target"], r["operators"], r["verdict"]) == ("4.22", [], "ready"),
    ),
]


@pytest.mark.parametrize(("role", "tasks_from", "setup", "shows"), ROLES, ids=[f"{r[0]}-{r[2].__name__}" for r in ROLES])
def test_a_role_keeps_the_plays_group_defaults(run_playbook, kubeconfig, namespace, api, tmp_path, role, tasks_from, setup, shows):
    variables, result = setup(namespace, api, tmp_path)
    code, output, shown = role_run(run_playbook, kubeconfig, tmp_path, role, variables, result, tasks_from)
    assert code == 0, output
    assert "Invalid kube-config" not in output and "): unreachable - " not in output, output
    assert shows(shown, namespace), shown


def test_the_roles_variables_that_are_set_win_key_by_key(run_playbook, kubeconfig, namespace, tmp_path):
    """The play names a context its kubeconfig lacks: the role fails on it when the role sets none, and succeeds when
    the role sets the right one - with the play's kubeconfig, which the role does not set."""
    play = ROLE_PLAY.replace('kubeconfig: "{{ testbed_kubeconfig }}"', 'kubeconfig: "{{ testbed_kubeconfig }}"\n      context: no-such-context')
    variables = {"scc_relax_pod_security": [{"namespace": namespace, "warn": "baseline"}]}
    result_file = tmp_path / "role_result.json"
    extra = dict(variables, testbed_kubeconfig=kubeconfig, result_file=str(result_file))
    play %= {"role": "scc_relax", "tasks_from": "main", "result": "scc_relax_result"}
    env = no_cluster_env(tmp_path)
    code, output = run_playbook(play, extra, env=env)
    assert code != 0 and "no-such-context" in output, output

    code, output = run_playbook(play, dict(extra, scc_relax_context="testbed"), env=env)
    assert code == 0, output
    assert [p["namespace"] for p in json.loads(result_file.read_text())["pod_security"]] == [namespace]


def canary_rollout_missing(namespace, testbed, api):
    variables = {"canary_rollout_name": "no-such-daemonset", "canary_rollout_namespace": namespace, "canary_rollout_images": {"agent": V2}}
    return variables, ["DaemonSet: not found"]


def olm_operator_missing_catalog(namespace, testbed, api):
    """Not in check mode (which only warns): olm_operator refuses before subscribing, the rescue reads the namespace."""
    variables = {"olm_operator_package": "kube-demo", "olm_operator_namespace": namespace, "olm_operator_catalog": "no-such-catalog"}
    return variables, ["no-such-catalog", "does not exist", "nothing was changed: olm_operator refused before its first write", "Subscription:"]


def cluster_setup_foreign_olm(namespace, testbed, api):
    """The testbed runs OLM as processes, not Deployments: olm_install refuses to take it over."""
    from pathlib import Path

    variables = json.loads((Path(testbed.run_dir) / "ansible-vars.json").read_text())
    return {"cluster_setup_olm_manifests_dir": variables["testbed_olm_manifests_dir"]}, ["Deployment olm/olm-operator", "force=true"]


# role, the variables of a path that fails on what the cluster holds (and the words of that failure), check mode
FAILURES = [
    ("canary_rollout", canary_rollout_missing, True),
    ("olm_operator", olm_operator_missing_catalog, False),
    ("cluster_setup", cluster_setup_foreign_olm, True),
]


@pytest.mark.parametrize(("role", "setup", "check"), FAILURES, ids=[f"{r[0]}-{r[1].__name__}" for r in FAILURES])
def test_a_roles_failure_and_its_report_read_the_cluster_of_the_plays_group_defaults(
    run_playbook, kubeconfig, namespace, testbed, api, tmp_path, role, setup, check
):
    """The failure paths (and the rescue's reads of the cluster) get the play's cluster too: the message names what
    the cluster holds, not a missing kubeconfig."""
    variables, words = setup(namespace, testbed, api)
    play = ROLE_PLAY[: ROLE_PLAY.index("    - name: Keep the role's result")] % {"role": role, "tasks_from": "main"}
    if not check:
        play = play.replace("  check_mode: true\n", "", 1)
    code, output = run_playbook(play, dict(variables, testbed_kubeconfig=kubeconfig), env=no_cluster_env(tmp_path))
    assert code != 0, output
    assert "Invalid kube-config" not in output and "could not be read" not in output and "could not read" not in output, output
    assert all(word in output for word in words), output
