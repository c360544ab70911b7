"""daemonset_canary on the testbed's 20 KWOK nodes with the canary nodes chosen by a label selector, and with the
OperatorCondition ``Upgradeable`` of an operator kept in step with the rollout (OLM's real OperatorCondition
controller copies it into ``status.conditions``, which is what OLM reads before it upgrades an operator); the
canary_rollout role passing both through. Node labels set here are removed at the end of each test."""

import functools
import json
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.canary_objects import CRASHLOOP, NODES, PREFIX, V1, V2, canary_annotations, create_daemonset, daemonset, pods_by_image, wait_settled
from lib.polling import poll_until

pytestmark = pytest.mark.testbed

NODES_ANNOTATION = PREFIX + "nodes"
OC_GROUP, OC_VERSION, OC_PLURAL = "operators.coreos.com", "v2", "operatorconditions"
OTHER_CONDITION = {
    "type": "Degraded",
    "status": "False",
    "reason": "AsExpected",
    "message": "set by the operator",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


@pytest.fixture
def node_labels(api):
    """``label(node, key, value)`` on real Node objects; every label set is removed at the end of the test."""
    core = client.CoreV1Api(api)
    labelled = []

    def label(node, key, value):
        core.patch_node(node, {"metadata": {"labels": {key: value}}})
        labelled.append((node, key))

    yield label
    for node, key in labelled:
        try:
            core.patch_node(node, {"metadata": {"labels": {key: None}}})
        except client.exceptions.ApiException as exc:
            if exc.status != 404:
                raise


def label_key():
    """A label key of this test alone (other tests share the nodes)."""
    return f"selective.kubeforge.io/c-{uuid.uuid4().hex[:12]}"


def node_names(api, namespace, name):
    return sorted({p.spec.node_name for p in client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"app={name}").items if p.spec.node_name})


def test_node_selector_canary_updates_exactly_the_selected_nodes_first(run_module, kubeconfig, namespace, api, node_labels):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent")
    hosts = node_names(api, namespace, "agent")
    assert len(hosts) >= NODES
    chosen = [hosts[2], hosts[11]]
    key = label_key()
    for host in chosen:
        node_labels(host, key, "canary")
    # a set-based requirement and an equality one, evaluated by the API server
    selector = f"{key} in (canary, yes),type=kwok"
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}, "batch": "25%", "canary_node_selector": selector}

    predicted = run_module("daemonset_canary", dict(args, pause_after_canary=True), check_mode=True)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True and predicted["phase"] == "canary" and predicted["canary_nodes"] == chosen, predicted
    assert not canary_annotations(apps.read_namespaced_daemon_set("agent", namespace))

    paused = run_module("daemonset_canary", dict(args, pause_after_canary=True))
    assert not paused.get("failed"), paused
    assert paused["changed"] is True and paused["phase"] == "paused" and paused["canary_nodes"] == chosen, paused
    assert [e["reason"] for e in paused["events"]] == ["CanaryStarted", "CanaryPaused"], paused["events"]
    time.sleep(1)  # OnDelete: nothing else may be replaced meanwhile
    ds = apps.read_namespaced_daemon_set("agent", namespace)
    images = pods_by_image(api, namespace, "agent")
    assert images[V2] == set(chosen), images
    assert len(images[V1]) == ds.status.desired_number_scheduled - len(chosen), images
    assert ds.spec.update_strategy.type == "OnDelete"
    assert canary_annotations(ds)[NODES_ANNOTATION] == '["' + '","'.join(chosen) + '"]'

    # A node labelled now does not join the running rollout: its nodes are the recorded ones.
    late = hosts[5]
    node_labels(late, key, "yes")
    step = run_module("daemonset_canary", dict(args, wait=False))
    assert not step.get("failed"), step
    assert step["phase"] == "fast" and step["canary_nodes"] == chosen, step
    assert canary_annotations(apps.read_namespaced_daemon_set("agent", namespace))[NODES_ANNOTATION] == '["' + '","'.join(chosen) + '"]'

    done = run_module("daemonset_canary", args)
    assert not done.get("failed"), done
    assert done["changed"] is True and done["phase"] == "done", done
    assert "CanaryStarted" not in [e["reason"] for e in done["events"]], done["events"]
    ds = wait_settled(apps, namespace, "agent")
    images = pods_by_image(api, namespace, "agent")
    assert set(images) == {V2} and len(images[V2]) == ds.status.desired_number_scheduled, images
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3 and not canary_annotations(ds)

    again = run_module("daemonset_canary", args)
    assert again.get("changed") is False and again["phase"] == "done" and again["events"] == [], again


def test_a_selector_without_canary_pods_fails_and_changes_nothing(run_module, kubeconfig, namespace, api, node_labels):
    apps = client.AppsV1Api(api)
    body = daemonset("agent")
    hosts = sorted(f"kwok-node-{i}" for i in range(NODES))
    excluded = hosts[4]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [excluded]}]}]
            }
        }
    }
    body["spec"]["template"]["spec"]["affinity"] = affinity
    apps.create_namespaced_daemon_set(namespace, body)

    def settled(ds):
        st = ds.status
        return (st.observed_generation or 0) >= ds.metadata.generation and st.desired_number_scheduled == NODES - 1 == (st.number_available or 0)

    read = functools.partial(apps.read_namespaced_daemon_set, "agent", namespace)
    ds = poll_until(read, 60, 0.5, "DaemonSet agent to settle", until=settled, show=lambda ds: ds.status)
    assert excluded not in node_names(api, namespace, "agent")
    key = label_key()
    node_labels(excluded, key, "canary")
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}}

    without_pod = run_module("daemonset_canary", dict(args, canary_node_selector=f"{key}=canary"))
    assert without_pod.get("failed"), without_pod
    assert f"matches 1 node(s) ({excluded}), none of which runs a pod of DaemonSet {namespace}/agent" in without_pod["msg"], without_pod
    no_node = run_module("daemonset_canary", dict(args, canary_node_selector=f"{key}=nobody"))
    assert no_node.get("failed") and "matches no node" in no_node["msg"], no_node
    malformed = run_module("daemonset_canary", dict(args, canary_node_selector=f"{key} in (canary"))
    assert malformed.get("failed") and "unbalanced" in malformed["msg"], malformed

    after = apps.read_namespaced_daemon_set("agent", namespace)
    assert after.metadata.generation == ds.metadata.generation and not canary_annotations(after)
    assert set(pods_by_image(api, namespace, "agent")) == {V1}


# ------------------------------------------------------------------------------------------ OperatorCondition


def create_operator_condition(api, namespace, name):
    body = {
        "apiVersion": f"{OC_GROUP}/{OC_VERSION}",
        "kind": "OperatorCondition",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"deployments": [], "conditions": [OTHER_CONDITION]},
    }
    return client.CustomObjectsApi(api).create_namespaced_custom_object(OC_GROUP, OC_VERSION, namespace, OC_PLURAL, body)


def read_operator_condition(api, namespace, name):
    return client.CustomObjectsApi(api).get_namespaced_custom_object(OC_GROUP, OC_VERSION, namespace, OC_PLURAL, name)


def upgradeable(conditions):
    found = [c for c in conditions or [] if c.get("type") == "Upgradeable"]
    assert len(found) <= 1, conditions
    return found[0] if found else None


def spec_upgradeable(api, namespace, name):
    return upgradeable(read_operator_condition(api, namespace, name)["spec"].get("conditions"))


def wait_olm_status(api, namespace, name, status, timeout=60):
    """OLM's OperatorCondition controller copies spec.conditions to status.conditions (observedGeneration current)."""

    def copied(obj):
        found = upgradeable((obj.get("status") or {}).get("conditions"))
        return bool(found) and found["status"] == status and found.get("observedGeneration") == obj["metadata"]["generation"]

    read = functools.partial(read_operator_condition, api, namespace, name)
    return poll_until(read, timeout, 0.5, f"OLM to copy Upgradeable={status} into the status", until=copied, show=lambda obj: obj.get("status"))


def test_operator_condition_blocks_upgrades_during_the_rollout(run_module, kubeconfig, namespace, api):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent", max_unavailable=1)
    create_operator_condition(api, namespace, "kubeforge-op.v1")
    args = {
        "kubeconfig": kubeconfig,
        "namespace": namespace,
        "name": "agent",
        "images": {"agent": V2},
        "batch": "50%",
        "wait": False,
        "operator_condition": "kubeforge-op.v1",
        "operator_condition_namespace": namespace,
    }
    prefix = f"DaemonSet {namespace}/agent: canary rollout"

    predicted = run_module("daemonset_canary", args, check_mode=True)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True and predicted["operator_condition"]["changed"] is True, predicted
    assert predicted["operator_condition"]["upgradeable"]["status"] == "False"
    assert spec_upgradeable(api, namespace, "kubeforge-op.v1") is None  # a dry run

    seen = []
    for _run in range(60):
        step = run_module("daemonset_canary", args)
        assert not step.get("failed"), step
        condition = spec_upgradeable(api, namespace, "kubeforge-op.v1")
        seen.append((step["phase"], condition["status"], condition["reason"]))
        assert step["operator_condition"]["upgradeable"] == {k: condition[k] for k in ("status", "reason", "message", "lastTransitionTime")}
        if step["phase"] == "done":
            break
        assert condition["message"] == f"{prefix} in phase {step['phase']}", condition
        if len(seen) == 1:
            wait_olm_status(api, namespace, "kubeforge-op.v1", "False")
        time.sleep(0.5)
    phases = [phase for phase, _status, _reason in seen]
    assert phases[-1] == "done" and "canary" in phases and "fast" in phases, seen
    assert all(status == "False" and reason == "CanaryRolloutInProgress" for phase, status, reason in seen if phase != "done"), seen
    assert seen[-1][1:] == ("True", "CanaryRolloutCompleted"), seen
    obj = wait_olm_status(api, namespace, "kubeforge-op.v1", "True")
    assert obj["spec"]["conditions"][0] == OTHER_CONDITION and len(obj["spec"]["conditions"]) == 2
    assert set(pods_by_image(api, namespace, "agent")) == {V2}

    again = run_module("daemonset_canary", args)
    assert again.get("changed") is False and again["operator_condition"]["changed"] is False, again
    generation = read_operator_condition(api, namespace, "kubeforge-op.v1")["metadata"]["generation"]

    # A halted rollout keeps the operator from being upgraded; rolling it back releases it.
    halted = run_module("daemonset_canary", dict(args, images={"agent": CRASHLOOP}, wait=True, canary_timeout=60))
    assert halted.get("failed") and halted["phase"] == "halted", halted
    condition = spec_upgradeable(api, namespace, "kubeforge-op.v1")
    assert (condition["status"], condition["reason"]) == ("False", "CanaryRolloutInProgress"), condition
    assert condition["message"].startswith(f"{prefix} in phase halted: ") and "CrashLoopBackOff" in condition["message"], condition
    assert halted["operator_condition"]["upgradeable"]["status"] == "False"
    assert read_operator_condition(api, namespace, "kubeforge-op.v1")["metadata"]["generation"] > generation
    wait_olm_status(api, namespace, "kubeforge-op.v1", "False")

    rolled_back = run_module("daemonset_canary", dict(args, images={"agent": CRASHLOOP}, wait=True, on_failure="rollback"))
    assert rolled_back.get("failed") and rolled_back["phase"] == "rolledback", rolled_back
    condition = spec_upgradeable(api, namespace, "kubeforge-op.v1")
    assert (condition["status"], condition["reason"]) == ("True", "CanaryRolledBack"), condition
    wait_olm_status(api, namespace, "kubeforge-op.v1", "True")
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V2} and ds.spec.update_strategy.rolling_update.max_unavailable == 1


def test_someone_elses_upgradeable_false_is_left_alone(run_module, kubeconfig, namespace, api):
    create_daemonset(api, namespace, "agent")
    theirs = {
        "type": "Upgradeable",
        "status": "False",
        "reason": "Initializing",
        "message": "the operator is starting",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    create_operator_condition(api, namespace, "kubeforge-op.v1")
    client.CustomObjectsApi(api).patch_namespaced_custom_object(
        OC_GROUP, OC_VERSION, namespace, OC_PLURAL, "kubeforge-op.v1", {"spec": {"conditions": [OTHER_CONDITION, theirs]}}
    )
    args = {
        "kubeconfig": kubeconfig,
        "namespace": namespace,
        "name": "agent",
        "images": {"agent": V2},
        "batch": "50%",
        "operator_condition": "kubeforge-op.v1",
        "operator_condition_namespace": namespace,
    }
    done = run_module("daemonset_canary", args)
    assert not done.get("failed"), done
    assert done["phase"] == "done" and done["operator_condition"]["changed"] is False, done
    assert spec_upgradeable(api, namespace, "kubeforge-op.v1") == theirs

    missing = run_module("daemonset_canary", dict(args, images={"agent": V1}, operator_condition="absent.v1"))
    assert missing.get("failed") and f"OperatorCondition {namespace}/absent.v1 not found" in missing["msg"], missing
    ds = client.AppsV1Api(api).read_namespaced_daemon_set("agent", namespace)
    assert ds.spec.template.spec.containers[0].image == V2 and not canary_annotations(ds)


ROLE_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  roles:
    - role: kubeforge.operators.canary_rollout
  post_tasks:
    - name: Keep the result
      ansible.builtin.copy:
        content: "{{ canary_rollout_result | to_json }}"
        dest: "{{ result_file }}"
        mode: "0600"
"""


def run_role(run_playbook, tmp_path, extra):
    result_file = tmp_path / "canary_rollout_result.json"
    result_file.unlink(missing_ok=True)
    returncode, output = run_playbook(ROLE_PLAYBOOK, dict(extra, result_file=str(result_file)))
    assert returncode == 0, output
    return json.loads(result_file.read_text())


def test_the_role_passes_the_selector_and_the_operator_condition(run_playbook, kubeconfig, namespace, api, node_labels, tmp_path):
    create_daemonset(api, namespace, "agent")
    create_operator_condition(api, namespace, "kubeforge-op.v1")
    hosts = node_names(api, namespace, "agent")
    key = label_key()
    node_labels(hosts[6], key, "canary")
    extra = {
        "canary_rollout_kubeconfig": kubeconfig,
        "canary_rollout_name": "agent",
        "canary_rollout_namespace": namespace,
        "canary_rollout_images": {"agent": V2},
        "canary_rollout_batch": "50%",
        "canary_rollout_canary_node_selector": f"{key}=canary",
        "canary_rollout_pause_after_canary": True,
        "canary_rollout_operator_condition": "kubeforge-op.v1",
        "canary_rollout_operator_condition_namespace": namespace,
    }
    paused = run_role(run_playbook, tmp_path, extra)
    assert paused["phase"] == "paused" and paused["canary_nodes"] == [hosts[6]], paused
    assert paused["operator_condition"]["upgradeable"]["status"] == "False"
    assert spec_upgradeable(api, namespace, "kubeforge-op.v1")["message"] == f"DaemonSet {namespace}/agent: canary rollout in phase paused"

    done = run_role(run_playbook, tmp_path, dict(extra, canary_rollout_pause_after_canary=False))
    assert done["phase"] == "done" and done["operator_condition"]["upgradeable"]["reason"] == "CanaryRolloutCompleted", done
    assert spec_upgradeable(api, namespace, "kubeforge-op.v1")["status"] == "True"
    assert set(pods_by_image(api, namespace, "agent")) == {V2}


READ_DAEMONSETS_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the DaemonSets (fills the discovery cache)
      kubernetes.core.k8s_info:
        kubeconfig: "{{ kubeconfig }}"
        kind: DaemonSet
        namespace: "{{ namespace }}"
"""


def test_the_role_reports_a_rejected_token_in_a_few_lines(run_playbook, kubeconfig, namespace, tmp_path):
    """An expired or wrong token: the rollout and every read of the role's diagnosis fail; the message keeps the API
    server's reason instead of the client's headers, body and traceback. kubernetes.core keeps its discovery cache
    in the temp dir: with an empty one the token is rejected while the client is created, with a filled one at the
    first request."""
    config = yaml.safe_load(Path(kubeconfig).read_text())
    config["users"] = [{"name": "rejected", "user": {"token": "not-a-token-the-api-server-knows"}}]
    for context in config["contexts"]:
        context["context"]["user"] = "rejected"
    rejected = tmp_path / "rejected.kubeconfig"
    rejected.write_text(yaml.safe_dump(config))
    extra = {
        "canary_rollout_kubeconfig": str(rejected),
        "canary_rollout_name": "agent",
        "canary_rollout_namespace": namespace,
        "canary_rollout_images": {"agent": V2},
        "result_file": str(tmp_path / "unused.json"),
    }
    env = {"TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()

    def fails_readably(expected):
        returncode, output = run_playbook(ROLE_PLAYBOOK, extra, env=env)
        assert returncode != 0, output
        assert f"canary_rollout: rollout of DaemonSet {namespace}/agent failed, phase -: {expected}" in output, output
        assert "DaemonSet: could not be read" in output and "DaemonSet: not found" not in output, output
        assert "Traceback" not in output and "traceback" not in output and "HTTP response headers" not in output, output
        assert "not-a-token-the-api-server-knows" not in output, output
        return output

    fails_readably("Could not create API client: the API server answered 401: Unauthorized")

    returncode, output = run_playbook(READ_DAEMONSETS_PLAYBOOK, {"kubeconfig": kubeconfig, "namespace": namespace}, env=env)
    assert returncode == 0, output
    assert "DaemonSet: could not be read: Unauthorized\n" in fails_readably("Failed to get DaemonSet agent: Unauthorized")
