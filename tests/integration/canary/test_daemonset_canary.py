"""daemonset_canary against the testbed's real DaemonSet controller on 20 KWOK nodes: a full rollout and its
idempotence, check mode, a crash-looping canary halted on one node, rollback, one step per run (wait=false),
resuming after the module process was killed mid-rollout, and options changed mid-rollout."""

import os
import signal
import subprocess
import time

import pytest
from kubernetes import client
from lib.canary_objects import CRASHLOOP, NODES, PREFIX, V1, V2, canary_annotations, create_daemonset, pods_by_image, wait_settled
from lib.polling import poll_until
from lib.runners import start_module_subprocess

pytestmark = pytest.mark.testbed


def step_until(run_module, args, phase, runs):
    """Run the module (one step per run, wait=false) until it reports ``phase``, at most ``runs`` times; the phases
    it reported, in order (every run must succeed)."""
    phases = []
    for _run in range(runs):
        step = run_module("daemonset_canary", args)
        assert not step.get("failed"), step
        phases.append(step["phase"])
        if step["phase"] == phase:
            break
        time.sleep(0.5)
    return phases


def test_rollout_check_mode_and_idempotence(run_module, kubeconfig, namespace, api):
    apps = client.AppsV1Api(api)
    before = create_daemonset(api, namespace, "agent")
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}, "batch": "50%"}

    predicted = run_module("daemonset_canary", args, check_mode=True, diff=True)
    assert not predicted.get("failed"), predicted
    assert predicted["changed"] is True and predicted["phase"] == "canary", predicted
    assert predicted["diff"]["after"]["template"]["spec"]["containers"][0]["image"] == V2
    # as the API server stores the canary strategy (maxSurge defaulted, kept by the real run)
    assert predicted["diff"]["after"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    unchanged = apps.read_namespaced_daemon_set("agent", namespace)
    assert unchanged.metadata.generation == before.metadata.generation and not canary_annotations(unchanged)

    # the step check mode predicted, for real (wait=false: one step): the same phase, DaemonSet and canary nodes
    step = run_module("daemonset_canary", dict(args, wait=False), diff=True)
    assert not step.get("failed"), step
    for key in ("changed", "phase", "canary_nodes", "diff"):
        assert predicted[key] == step[key], (key, predicted[key], step[key])

    done = run_module("daemonset_canary", args, diff=True)
    assert not done.get("failed"), done
    assert done["changed"] is True and done["phase"] == "done", done
    assert [e["reason"] for e in done["events"]] == ["CanaryPassed", "CanaryCompleted"], done["events"]
    ds = wait_settled(apps, namespace, "agent")
    assert ds.status.desired_number_scheduled >= NODES
    images = pods_by_image(api, namespace, "agent")
    assert set(images) == {V2} and len(images[V2]) == ds.status.desired_number_scheduled, images
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3
    assert not canary_annotations(ds)
    recorded = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector="involvedObject.name=agent,source=kubeforge.operators").items
    assert {"CanaryStarted", "CanaryPassed", "CanaryCompleted"} <= {e.reason for e in recorded}

    again = run_module("daemonset_canary", args)
    assert again["changed"] is False and again["phase"] == "done" and again["events"] == [], again
    assert apps.read_namespaced_daemon_set("agent", namespace).metadata.generation == ds.metadata.generation


def test_crashloop_halts_on_one_node(run_module, kubeconfig, namespace, api):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent")
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": CRASHLOOP}, "canary_timeout": 60}

    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "halted", failed
    assert "CrashLoopBackOff" in failed["msg"] and failed["failure"], failed
    time.sleep(2)  # the controller must not replace any other pod meanwhile
    ds = apps.read_namespaced_daemon_set("agent", namespace)
    images = pods_by_image(api, namespace, "agent")
    assert len(images.get(CRASHLOOP, ())) == 1, images
    assert len(images[V1]) == ds.status.desired_number_scheduled - 1, images
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1
    assert ds.metadata.annotations[PREFIX + "phase"] == "halted"

    again = run_module("daemonset_canary", args)
    assert again.get("failed") and again["phase"] == "halted" and again["changed"] is False, again

    # The documented way out: undo, which ends green with the DaemonSet as before the rollout.
    undo = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "undo": True}
    undone = run_module("daemonset_canary", undo)
    assert not undone.get("failed") and undone["changed"] is True and undone["phase"] == "done", undone
    assert [e["reason"] for e in undone["events"]] == ["CanaryUndo", "CanaryUndone"], undone["events"]
    assert "rolled back to the previous revision on request" in undone["message"], undone["message"]
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V1}
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3 and not canary_annotations(ds)
    assert run_module("daemonset_canary", undo)["changed"] is False
    assert run_module("daemonset_canary", dict(undo, undo=False, images={"agent": V1}))["changed"] is False


def test_rollback_restores_the_old_template(run_module, kubeconfig, namespace, api):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent")
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": CRASHLOOP}, "on_failure": "rollback"}

    failed = run_module("daemonset_canary", args)
    assert failed.get("failed") and failed["phase"] == "rolledback", failed
    assert [e["reason"] for e in failed["events"]] == ["CanaryStarted", "CanaryRollingBack", "CanaryRolledBack"], failed["events"]
    ds = wait_settled(apps, namespace, "agent")
    images = pods_by_image(api, namespace, "agent")
    assert set(images) == {V1} and len(images[V1]) == ds.status.desired_number_scheduled, images
    assert ds.spec.template.spec.containers[0].image == V1
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3
    assert ds.metadata.annotations[PREFIX + "phase"] == "rolledback"

    # The restored template is in place: no change, while the failed one stays refused until undo clears the record.
    restored = run_module("daemonset_canary", dict(args, images={"agent": V1}))
    assert not restored.get("failed") and restored["changed"] is False and restored["phase"] == "done", restored
    refused = run_module("daemonset_canary", args)
    assert refused.get("failed") and refused["phase"] == "rolledback" and refused["changed"] is False, refused
    cleared = run_module("daemonset_canary", {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "undo": True})
    assert not cleared.get("failed") and cleared["changed"] is True, cleared
    assert not canary_annotations(apps.read_namespaced_daemon_set("agent", namespace))


def test_canary_nodes_pause_and_continue(run_module, kubeconfig, namespace, api):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent")
    canaries = ["kwok-node-3", "kwok-node-7"]
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}, "batch": "25%", "canary_nodes": canaries}

    paused = run_module("daemonset_canary", dict(args, pause_after_canary=True))
    assert not paused.get("failed"), paused
    assert paused["changed"] is True and paused["phase"] == "paused", paused
    time.sleep(1)  # OnDelete: nothing else may be replaced meanwhile
    ds = apps.read_namespaced_daemon_set("agent", namespace)
    images = pods_by_image(api, namespace, "agent")
    assert images[V2] == set(canaries) and len(images[V1]) == ds.status.desired_number_scheduled - 2, images
    assert ds.spec.update_strategy.type == "OnDelete"

    done = run_module("daemonset_canary", args)
    assert not done.get("failed"), done
    assert done["changed"] is True and done["phase"] == "done", done
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V2}
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3 and not canary_annotations(ds)


def test_one_step_per_run_and_resume_after_kill(run_module, kubeconfig, namespace, api, tmp_path):
    apps = client.AppsV1Api(api)
    create_daemonset(api, namespace, "agent", max_unavailable=1)
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}, "batch": "50%", "wait": False}

    phases = step_until(run_module, args, "done", 60)
    assert phases[-1] == "done" and "canary" in phases and "fast" in phases, phases
    assert len(phases) >= 3
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V2}
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1 and not canary_annotations(ds)

    # Kill a waiting run mid-rollout (SIGKILL: nothing is cleaned up), then run again: it resumes from the annotations.
    # The canary passes as soon as its pod is Ready (canary_ready_seconds 0), so the fast phase replaces all but one
    # of the nodes one at a time and lasts seconds: while the canary waited 5 s the controller, at maxUnavailable 1,
    # could replace nearly every pod, and the fast phase left was too short for the poll to see.
    proc = start_module_subprocess(
        tmp_path,
        "daemonset_canary",
        dict(args, images={"agent": V1}, batch="1", wait=True, canary_ready_seconds=0),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def phase():
        return canary_annotations(apps.read_namespaced_daemon_set("agent", namespace)).get(PREFIX + "phase")

    def fast(current):
        assert current == "fast" or proc.poll() is None, "the rollout did not reach the fast phase"
        return current == "fast"

    poll_until(phase, 30, 0.05, "the rollout to reach the fast phase", until=fast)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    interrupted = apps.read_namespaced_daemon_set("agent", namespace)
    assert canary_annotations(interrupted)[PREFIX + "phase"] == "fast"

    resumed = run_module("daemonset_canary", dict(args, images={"agent": V1}, batch="1", wait=True))
    assert not resumed.get("failed"), resumed
    assert resumed["changed"] is True and resumed["phase"] == "done", resumed
    assert "CanaryStarted" not in [e["reason"] for e in resumed["events"]], resumed["events"]
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V1}
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 1 and not canary_annotations(ds)


def test_a_changed_batch_pause_and_canary_nodes_mid_rollout(run_module, kubeconfig, namespace, api):
    """Options changed while a rollout runs: a new batch takes effect in the fast phase, pause_after_canary pauses the
    rollout where it stands, canary_nodes for a rollout that started without them is refused."""
    apps = client.AppsV1Api(api)
    # Every pod must be Ready 5 s before it counts: one node at a time, the fast phase lasts long enough to act in
    # it. Set at creation and waited for: the controller replaces every old pod younger than that at once (an
    # unavailable pod does not count against maxUnavailable), which a minReadySeconds added later made of pods
    # created a moment before.
    create_daemonset(api, namespace, "agent", min_ready_seconds=5)
    args = {"kubeconfig": kubeconfig, "namespace": namespace, "name": "agent", "images": {"agent": V2}, "batch": "1", "wait": False}

    phases = step_until(run_module, args, "fast", 80)
    assert phases[-1] == "fast", phases

    wider = run_module("daemonset_canary", dict(args, batch="2"))
    assert not wider.get("failed") and wider["changed"] is True, wider
    assert [e["reason"] for e in wider["events"]] == ["BatchChanged"], wider["events"]
    assert apps.read_namespaced_daemon_set("agent", namespace).spec.update_strategy.rolling_update.max_unavailable == 2

    refused = run_module("daemonset_canary", dict(args, batch="2", canary_nodes=["kwok-node-3"]))
    assert refused.get("failed") and "started without canary nodes" in refused["msg"] and "undo=true" in refused["msg"], refused

    paused = run_module("daemonset_canary", dict(args, batch="2", pause_after_canary=True))
    assert not paused.get("failed") and paused["phase"] == "paused", paused
    ds = apps.read_namespaced_daemon_set("agent", namespace)
    assert ds.spec.update_strategy.type == "OnDelete" and canary_annotations(ds)[PREFIX + "phase"] == "paused"

    done = run_module("daemonset_canary", dict(args, batch="100%", wait=True))
    assert not done.get("failed") and done["phase"] == "done", done
    ds = wait_settled(apps, namespace, "agent")
    assert set(pods_by_image(api, namespace, "agent")) == {V2}
    assert ds.spec.update_strategy.rolling_update.max_unavailable == 3 and not canary_annotations(ds)
