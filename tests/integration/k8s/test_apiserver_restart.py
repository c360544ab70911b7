"""Every module that waits rides out a kube-apiserver restart in the middle of its wait.

One restart (it costs the whole testbed half a minute) under a waiter of each family, each started as a process of
its own and caught where it waits when kube-apiserver is killed; DOWNTIME seconds later it is started again (same
flags, same etcd), and every waiter must still end as it would have without the restart:

- catalog source: ``olm_catalog_source`` waits for READY (OLM's catalog operator is frozen until after the restart);
- operator install: ``olm_operator`` waits for its Subscription to be resolved (same freeze);
- OLM v1 catalog and extension: ``olm_cluster_catalog`` and ``olm_cluster_extension`` wait for their deletion (a
  finalizer of the test's holds it until after the restart);
- OLM install: ``olm_install`` waits for a Deployment of its manifests (paused until after the restart);
- canary: ``daemonset_canary`` waits in the fast phase, and in the canary phase where its widening falls due while
  the server is down (that patch fails and must be made again afterwards);
- status/reconcile: ``resource_status`` starts while the server is down and writes once it is back.
"""

import functools
import json
import os
import threading
import time

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.canary_objects import (
    NODES as CANARY_NODES,
)
from lib.canary_objects import (
    PREFIX,
    V2,
    assert_rolled_out,
    create_daemonset,
)
from lib.olm_catalog import CATALOG, make_catalog
from lib.polling import poll_until
from lib.runners import start_module_subprocess
from testbed.cluster import ADDON_CLIENTS, CONTROL_PLANE_CLIENTS

pytestmark = [pytest.mark.testbed, pytest.mark.exclusive]
NODES = CANARY_NODES  # the KWOK nodes of the canary rollouts (the nodes fixture reads it)

# Seconds kube-apiserver stays down (killed, then started again; starting takes a few seconds more): longer than
# a few quick retries, shorter than k8s.observe.TRANSIENT_SECONDS.
DOWNTIME = 20
# daemonset_canary re-decides this often without events (canary_cluster.rollout.RECHECK_SECONDS).
RECHECK_SECONDS = 2
PHASE = PREFIX + "phase"
# A finalizer of the test's: the API server keeps a deleted object until the test removes it.
HOLD = "kubeforge.io/test-hold"
OLMV1 = ("olm.operatorframework.io", "v1")
V0 = ("operators.coreos.com", "v1alpha1")

# Two rollouts, each waited on in its own phase when the API server goes: (name, phase, minReadySeconds, batch).
# minReadySeconds makes the phases last a few seconds, so the restart lands where it should.
RESTARTED_ROLLOUTS = (("fast-agent", "fast", 4, "3"), ("canary-agent", "canary", 5, "10"))


def new_pod_ready(api, namespace, name):
    """A pod of the new image is Ready (not yet available while minReadySeconds run)."""
    for pod in client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"app={name}").items:
        ready = any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])
        if ready and pod.spec.containers[0].image == V2 and pod.metadata.deletion_timestamp is None:
            return True
    return False


def held(custom, plural, name, spec):
    """An OLM v1 object (cluster-scoped) with the test's finalizer."""
    body = {"apiVersion": "/".join(OLMV1), "kind": {"clustercatalogs": "ClusterCatalog", "clusterextensions": "ClusterExtension"}[plural]}
    body.update(metadata={"name": name, "finalizers": [HOLD]}, spec=spec)
    custom.create_cluster_custom_object(*OLMV1, plural, body)


def let_go(custom, plural, name):
    """Remove the test's finalizer (others stay); nothing to do when the object is gone."""
    try:
        obj = custom.get_cluster_custom_object(*OLMV1, plural, name)
    except ApiException as exc:
        if exc.status == 404:
            return
        raise
    finalizers = [f for f in obj["metadata"].get("finalizers") or [] if f != HOLD]
    patch = {"metadata": {"finalizers": finalizers, "resourceVersion": obj["metadata"]["resourceVersion"]}}
    custom.patch_cluster_custom_object(*OLMV1, plural, name, patch)


def install_manifests(root, sfx):
    """crds.yaml and olm.yaml as olm_install reads them: a CRD, a namespace and a paused Deployment (no pod until
    the test resumes it)."""
    group, ns = f"r{sfx}.kubeforge.io", f"restart-olm-{sfx}"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
            "scope": "Cluster",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
    }
    labels = {"app": "olm-operator"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "olm-operator", "namespace": ns},
        "spec": {
            "replicas": 1,
            "paused": True,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "olm", "image": "example.invalid/kubeforge/olm:v1"}]}},
        },
    }
    directory = root / "manifests"
    directory.mkdir()
    (directory / "crds.yaml").write_text(yaml.safe_dump(crd))
    (directory / "olm.yaml").write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, deployment]))
    return {"dir": str(directory), "namespace": ns, "crd": crd["metadata"]["name"]}


def status_probe(api, namespace, sfx):
    """A CRD with a status subresource and one object of it, for resource_status."""
    group = f"s{sfx}.kubeforge.io"
    ext = client.ApiextensionsV1Api(api)
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    ext.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"probes.{group}"},
            "spec": {
                "group": group,
                "names": {"kind": "Probe", "plural": "probes", "singular": "probe", "listKind": "ProbeList"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}],
            },
        }
    )

    def established():
        crd = ext.read_custom_resource_definition(f"probes.{group}")
        return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])

    poll_until(established, 30, 0.2, "the Probe CRD to be established")
    body = {"apiVersion": f"{group}/v1", "kind": "Probe", "metadata": {"name": "probe"}, "spec": {}}
    client.CustomObjectsApi(api).create_namespaced_custom_object(group, "v1", namespace, "probes", body)
    return group


def result_of(name, proc, output):
    out, err = output
    try:
        return json.loads(out)
    except ValueError:
        raise AssertionError(f"the module of {name} printed no JSON (exit {proc.returncode}):\n{out}\n{err}") from None


def test_every_waiting_module_survives_an_apiserver_restart(testbed, nodes, olmv1, kubeconfig, namespace, api, tmp_path):
    custom, apps = client.CustomObjectsApi(api), client.AppsV1Api(api)
    sfx = os.urandom(3).hex()
    v1_catalog, v1_extension, catalog_source = f"kf-restart-{sfx}", f"kf-restart-{sfx}", f"kf-restart-{sfx}"
    procs, started_at = {}, {}

    def start(key, module, args):
        started_at[key] = time.time()
        procs[key] = start_module_subprocess(tmp_path, module, dict(args, kubeconfig=kubeconfig))

    def alive(key):
        assert procs[key].poll() is None, f"the module of {key} ended before the restart: {procs[key].communicate()}"
        return True

    probe_group = status_probe(api, namespace, sfx)
    make_catalog(custom, namespace, testbed.catalog_address)
    held(custom, "clustercatalogs", v1_catalog, {"source": {"type": "Image", "image": {"ref": f"{olmv1['registry']}/kubeforge/restart-{sfx}:v1"}}})
    held(
        custom,
        "clusterextensions",
        v1_extension,
        {"namespace": namespace, "serviceAccount": {"name": "nobody"}, "source": {"sourceType": "Catalog", "catalog": {"packageName": f"kf-restart-{sfx}"}}},
    )
    manifests = install_manifests(tmp_path, sfx)
    for name, _phase, min_ready_seconds, _batch in RESTARTED_ROLLOUTS:
        create_daemonset(api, namespace, name, max_unavailable=3, min_ready_seconds=min_ready_seconds)
    try:
        with testbed.hung("catalog"):  # OLM v0's catalog operator: no CatalogSource READY, no Subscription resolved
            source_args = {"name": catalog_source, "namespace": namespace, "address": testbed.catalog_address, "wait": True, "wait_timeout": 600}
            start("catalog source", "olm_catalog_source", source_args)
            operator_args = {"namespace": namespace, "package": "kube-demo", "catalog": CATALOG, "channel": "stable", "wait_timeout": 600}
            start("operator install", "olm_operator", operator_args)
            start("OLM v1 catalog", "olm_cluster_catalog", {"name": v1_catalog, "state": "absent", "wait": True, "wait_timeout": 600})
            start(
                "OLM v1 extension",
                "olm_cluster_extension",
                {"name": v1_extension, "state": "absent", "delete_crds_and_data": True, "wait": True, "wait_timeout": 600},
            )
            start("OLM install", "olm_install", {"manifests_dir": manifests["dir"], "catalog_source": False, "wait": True, "wait_timeout": 600})

            # each is in its wait once what it writes first is there
            waiting = {
                "catalog source": lambda: alive("catalog source")
                and catalog_source in [c["metadata"]["name"] for c in custom.list_namespaced_custom_object(*V0, namespace, "catalogsources")["items"]],
                "operator install": lambda: alive("operator install") and custom.list_namespaced_custom_object(*V0, namespace, "subscriptions")["items"],
                "OLM v1 catalog": lambda: alive("OLM v1 catalog")
                and custom.get_cluster_custom_object(*OLMV1, "clustercatalogs", v1_catalog)["metadata"].get("deletionTimestamp"),
                "OLM v1 extension": lambda: alive("OLM v1 extension")
                and custom.get_cluster_custom_object(*OLMV1, "clusterextensions", v1_extension)["metadata"].get("deletionTimestamp"),
                "OLM install": lambda: alive("OLM install") and apps.list_namespaced_deployment(manifests["namespace"]).items,
            }
            for key, check in waiting.items():
                poll_until(check, 120, 0.2, f"{key} to wait")

            # The fast rollout first (three nodes at a time, it stays in its phase for about half a minute), then the
            # canary one into its short phase: the restart comes a few seconds after the fast phase began.
            for name, phase, _min_ready, batch in RESTARTED_ROLLOUTS:
                start(name, "daemonset_canary", {"namespace": namespace, "name": name, "images": {"agent": V2}, "batch": batch, "wait_timeout": 600})

                def in_phase(ds, name=name, phase=phase):
                    current = (ds.metadata.annotations or {}).get(PHASE)
                    return alive(name) and current == phase and (phase != "canary" or new_pod_ready(api, namespace, name))

                read = functools.partial(apps.read_namespaced_daemon_set, name, namespace)
                poll_until(read, 60, 0.05, f"{name} to reach phase {phase}", until=in_phase, show=lambda ds: ds.metadata.annotations)
            for name, phase, _min_ready, _batch in RESTARTED_ROLLOUTS:
                ds = apps.read_namespaced_daemon_set(name, namespace)
                assert (ds.metadata.annotations or {}).get(PHASE) == phase, (name, ds.metadata.annotations)
                st = ds.status
                assert (st.updated_number_scheduled or 0) < st.desired_number_scheduled or (st.observed_generation or 0) < ds.metadata.generation, st

            # resource_status starts a moment after the kill: its first requests are refused
            resource = {"api_version": f"{probe_group}/v1", "kind": "Probe", "name": "probe", "namespace": namespace}
            ready = {"type": "Ready", "status": "True", "reason": "Restarted", "message": "written after the restart"}
            status_args = {"resource": resource, "conditions": [ready]}
            late_start = threading.Timer(2.0, start, ("status", "resource_status", status_args))
            started, killed = time.monotonic(), time.time()
            late_start.start()
            testbed.restart("kube-apiserver", grace=0, downtime=DOWNTIME)
            outage = time.monotonic() - started
            late_start.join()
            for key in procs:
                if key != "status":
                    alive(key)
        # The testbed's controllers may have backed off for minutes after 403s from the new API server (see
        # testbed.cluster.API_CLIENTS): restart them (the frozen catalog operator too). The modules, which got no
        # such answer, are left as they are.
        testbed.restart_api_clients(CONTROL_PLANE_CLIENTS + ADDON_CLIENTS)
        let_go(custom, "clustercatalogs", v1_catalog)
        let_go(custom, "clusterextensions", v1_extension)
        apps.patch_namespaced_deployment("olm-operator", manifests["namespace"], {"spec": {"paused": False}})
        outputs = {key: proc.communicate(timeout=600) for key, proc in procs.items()}
        # read before the cleanup below deletes the probe's CRD and OLM's namespace (both go away asynchronously)
        probe = custom.get_namespaced_custom_object(probe_group, "v1", namespace, "probes", "probe")
        olm_operator = apps.read_namespaced_deployment("olm-operator", manifests["namespace"])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for plural, name in (("clustercatalogs", v1_catalog), ("clusterextensions", v1_extension)):
            let_go(custom, plural, name)
        client.CoreV1Api(api).delete_namespace(manifests["namespace"])
        ext = client.ApiextensionsV1Api(api)
        for crd in (manifests["crd"], f"probes.{probe_group}"):
            ext.delete_custom_resource_definition(crd)

    results = {key: result_of(key, procs[key], output) for key, output in outputs.items()}
    for key, result in results.items():
        assert not result.get("failed"), (key, result.get("msg"), result)  # the message first: pytest cuts long reprs
        assert started_at[key] < killed + DOWNTIME, key  # every module ran while the server was away
    assert results["status"]["changed"] is True and started_at["status"] > killed, results["status"]
    conditions = probe["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [("Ready", "True", "Restarted")]

    assert results["catalog source"]["state"] == "READY" and results["catalog source"]["duration"] > outage, results["catalog source"]
    assert results["operator install"]["installed_csv"].startswith("kube-demo."), results["operator install"]
    assert results["operator install"]["duration"] > outage, results["operator install"]
    for key in ("OLM v1 catalog", "OLM v1 extension"):
        assert results[key]["changed"] is True and results[key]["duration"] > outage, (key, results[key])
    for plural, name in (("clustercatalogs", v1_catalog), ("clusterextensions", v1_extension)):
        with pytest.raises(ApiException) as gone:
            custom.get_cluster_custom_object(*OLMV1, plural, name)
        assert gone.value.status == 404
    assert results["OLM install"]["changed"] is True and results["OLM install"]["duration"] > outage, results["OLM install"]
    assert olm_operator.status.available_replicas == 1, olm_operator.status

    for name, phase, min_ready_seconds, _batch in RESTARTED_ROLLOUTS:
        result = results[name]
        assert result["changed"] is True and result["phase"] == "done", result
        assert [e["reason"] for e in result["events"]] == ["CanaryStarted", "CanaryPassed", "CanaryCompleted"], result["events"]
        assert not result.get("warnings"), result["warnings"]  # every Event was written, if need be after the restart
        assert result["duration"] > outage
        ds = assert_rolled_out(api, namespace, name, 3)
        assert ds.spec.min_ready_seconds == min_ready_seconds
        if phase == "canary":
            # The widening was due (minReadySeconds and at most one recheck tick after the canary got Ready) while the
            # server was down, and was carried out by the new one (started DOWNTIME seconds after the kill).
            assert DOWNTIME > min_ready_seconds + RECHECK_SECONDS
            events = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector=f"involvedObject.name={name},reason=CanaryPassed").items
            assert len(events) == 1 and events[0].first_timestamp.timestamp() >= int(killed + DOWNTIME) - 1, (killed, events)
