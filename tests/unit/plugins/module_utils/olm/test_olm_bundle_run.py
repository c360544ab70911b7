"""olm/bundle_run.py: the catalog of one or more bundle directories, ConfigMap chunking, the registry pod, names,
labels, annotations and cleanup sets; and the pod-serving sequence of olm_cluster/bundle_run.py.

The pod-serving sequence (ConfigMaps, registry pod, Ready, CatalogSource address, owner references, old pod removed
last) runs here against a recording fake, because the testbed must not run it for real: a KWOK pod has a fake IP
and OLM would dial it. tests/integration/olm/test_bundle_run.py sends the same objects as server-side dry runs
and runs serve=address end to end on the real OLM.
"""

import json
import shutil
from types import SimpleNamespace

import pytest
import yaml
from lib.bundle_run import catalog_for_bundle_dirs
from lib.fakes import FakeModule
from lib.testdata import DATA_DIR

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import cluster as k8s_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import Result
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import bundle_run as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import bundle_run as glue
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as cluster_operator

BUNDLES = DATA_DIR.parent / "testbed" / "fixtures" / "kube-demo" / "bundles"
V1, V2 = str(BUNDLES / "0.0.1"), str(BUNDLES / "0.0.2")
NS = "demo"
CATALOG = "kube-demo-catalog"


def digest_of(cfg):
    return core.catalog_digest(core.fbc_documents(cfg))


def bundle_copy(tmp_path, source=V1, **annotations):
    """A copy of a fixture bundle with its annotations changed (None removes one)."""
    target = tmp_path / "bundle"
    shutil.copytree(source, target)
    path = target / "metadata" / "annotations.yaml"
    doc = yaml.safe_load(path.read_text())
    for key, value in annotations.items():
        full = "operators.operatorframework.io.bundle." + key
        if value is None:
            doc["annotations"].pop(full, None)
        else:
            doc["annotations"][full] = value
    path.write_text(yaml.safe_dump(doc))
    return str(target)


# ------------------------------------------------------------------------------------------------ one run, decided

OURS = {"metadata": {"name": CATALOG, "labels": core.labels(CATALOG), "uid": "uid-cs"}, "spec": {}}


def sub(source=CATALOG, namespace=NS, name="kube-demo"):
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"name": "kube-demo", "source": source, "sourceNamespace": namespace}}


def csv(version):
    return {"metadata": {"name": f"kube-demo.v{version}"}, "spec": {"version": version}}


def installed(subscription=None, version="0.0.1"):
    """What the cluster has once the module installed kube-demo ``version``."""
    return core.Observed(True, OURS, subscription or sub(), csv(version))


def run_params(**params):
    return dict({"namespace": NS, "serve": "pod", "catalog_address": None, "wait": True, "target_namespaces": None}, **params)


@pytest.mark.parametrize(
    ("case", "bundle", "observed", "check_mode", "kind", "needs_index", "predict"),
    [
        ("nothing there", V1, core.Observed(False, None, None, None), False, core.INSTALL, True, False),
        ("nothing there, check mode", V1, core.Observed(False, None, None, None), True, core.INSTALL, True, True),
        ("installed, run again", V1, installed(), False, core.SAME, False, False),
        ("upgrade", V2, installed(), False, core.UPGRADE, False, False),
        ("upgrade in check mode, without wait", V2, installed(), True, core.UPGRADE, False, False),
        # the catalog was removed by hand: served again from the bundle (and the index image, when one is named)
        ("subscribed, catalog gone", V1, core.Observed(True, None, sub(), csv("0.0.1")), False, core.SAME, True, False),
        ("catalog left, nothing installed", V1, core.Observed(True, OURS, None, None), True, core.INSTALL, True, False),
    ],
)
def test_plan_run(case, bundle, observed, check_mode, kind, needs_index, predict):
    params = run_params(wait=not check_mode)
    run = core.plan_run(params, core.read_bundle(bundle), observed, check_mode)
    assert (run.kind, run.needs_index, run.predict) == (kind, needs_index, predict), case
    assert run.catalog == CATALOG and run.installed_name == (observed.installed_csv or {}).get("metadata", {}).get("name")
    assert run.subscription["subscription_name"] == "kube-demo" and run.subscription["starting_csv"] == core.read_bundle(bundle).name
    assert run.subscription["approval"] == "Manual" and run.subscription["catalog"] == CATALOG and run.subscription["catalog_namespace"] == NS


@pytest.mark.parametrize(
    ("case", "bundle", "observed", "wait", "match"),
    [
        ("a CatalogSource of the same name not ours", V1, core.Observed(True, {"metadata": {"name": CATALOG}}, None, None), True, "not created by this module"),
        ("subscribed from another catalog", V1, installed(sub(source="community")), True, "subscribed in demo from CatalogSource demo/community"),
        ("subscribed from our name elsewhere", V1, installed(sub(namespace="olm")), True, "from CatalogSource olm/kube-demo-catalog"),
        ("a newer version installed", V1, installed(version="0.0.2"), True, "OLM does not downgrade"),
        ("an upgrade without wait", V2, installed(), False, "set wait=true"),
    ],
)
def test_plan_run_refuses_before_any_write(case, bundle, observed, wait, match):
    with pytest.raises(core.BundleRunError, match=match):
        core.plan_run(run_params(wait=wait), core.read_bundle(bundle), observed, False)


def test_check_params_refuses_catalog_address_with_serve_pod():
    with pytest.raises(core.BundleRunError, match="only used with serve=address"):
        core.check_params(run_params(catalog_address="127.0.0.1:50051"))
    core.check_params(run_params(serve="address", catalog_address="127.0.0.1:50051"))


REGISTRY_PARAMS = run_params(opm_image=core.DEFAULT_OPM_IMAGE, image_pull_policy="IfNotPresent", security_context_config="restricted")


def test_plan_registry_of_a_first_install_serves_the_bundle_alone():
    bundle = core.read_bundle(V1)
    run = core.plan_run(REGISTRY_PARAMS, bundle, core.Observed(False, None, None, None), False)
    cms, pod, annotations, digest = core.plan_registry(REGISTRY_PARAMS, bundle, run, None, {})
    assert digest == digest_of(catalog_for_bundle_dirs([V1]))
    assert [cm["metadata"]["name"] for cm in cms] == core.config_map_names(CATALOG, digest, 1)
    assert pod["metadata"]["name"] == pod_name(digest) and "ownerReferences" not in pod["metadata"]
    assert annotations == {
        core.ANNOTATION_INDEX_IMAGE: core.DEFAULT_OPM_IMAGE,
        core.ANNOTATION_INJECTED_BUNDLES: json.dumps([{"name": "kube-demo.v0.0.1", "version": "0.0.1"}], separators=(",", ":")),
        core.ANNOTATION_REGISTRY_POD: pod["metadata"]["name"],
        core.ANNOTATION_DIGEST: digest,
    }


def test_plan_registry_of_an_upgrade_extends_the_served_catalog_and_is_owned():
    bundle = core.read_bundle(V2)
    run = core.plan_run(REGISTRY_PARAMS, bundle, installed(), False)
    served = catalog_for_bundle_dirs([V1])
    owner = core.owner_reference(OURS)
    cms, pod, annotations, digest = core.plan_registry(REGISTRY_PARAMS, bundle, run, served, {core.ANNOTATION_INDEX_IMAGE: core.DEFAULT_OPM_IMAGE}, owner)
    assert digest == digest_of(catalog_for_bundle_dirs([V1, V2]))  # the upgrade's entry replaces the installed CSV
    assert all(o["metadata"]["ownerReferences"] == [owner] for o in cms + [pod])
    assert [b["name"] for b in json.loads(annotations[core.ANNOTATION_INJECTED_BUNDLES])] == ["kube-demo.v0.0.1", "kube-demo.v0.0.2"]


# ------------------------------------------------------------------------------------------------ the bundle


def test_read_bundle_takes_package_channel_version_and_install_modes_from_the_bundle():
    bundle = core.read_bundle(V1)
    assert (bundle.name, bundle.package, bundle.version, bundle.channel) == ("kube-demo.v0.0.1", "kube-demo", "0.0.1", "stable")
    assert {m["type"] for m in bundle.install_modes if m["supported"]} == {"OwnNamespace", "SingleNamespace", "AllNamespaces"}
    assert bundle.blob["image"] == "" and bundle.blob["package"] == "kube-demo"
    assert core.read_bundle(V1, package="kube-demo", channel="alpha").channel == "alpha"
    with pytest.raises(core.BundleRunError, match="differs from the bundle's package 'kube-demo'"):
        core.read_bundle(V1, package="other")


@pytest.mark.parametrize(
    "annotations, channel",
    [
        ({"channel.default.v1": None}, "alpha"),  # the first of the bundle's channels
        ({"channel.default.v1": None, "channels.v1": None}, core.DEFAULT_CHANNEL),  # operator-sdk's
        ({"channel.default.v1": " beta ", "channels.v1": "beta"}, "beta"),
    ],
)
def test_channel_fallbacks(tmp_path, annotations, channel):
    assert core.read_bundle(bundle_copy(tmp_path, **annotations)).channel == channel


def test_relation_to_the_installed_version():
    bundle = core.read_bundle(V2)
    assert core.relation(None, bundle) == core.INSTALL
    assert core.relation("0.0.2", bundle) == core.SAME
    assert core.relation("v0.0.2", bundle) == core.SAME
    assert core.relation("0.0.1", bundle) == core.UPGRADE
    with pytest.raises(core.BundleRunError, match="does not downgrade") as err:
        core.relation("0.1.0", bundle)
    assert err.value.result["reason"] == "NewerVersionInstalled"


# ------------------------------------------------------------------------------------------------ the catalog


def test_install_then_upgrade_chains_replaces_in_one_channel():
    cfg = catalog_for_bundle_dirs([V1, V2])
    assert cfg.packages == [{"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable"}]
    assert [(c["name"], c["entries"]) for c in cfg.channels] == [
        ("stable", [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1"}])
    ]
    assert sorted(b["name"] for b in cfg.bundles) == ["kube-demo.v0.0.1", "kube-demo.v0.0.2"]
    assert catalog_for_bundle_dirs([V1], channel="alpha").channels[0]["name"] == "alpha"


def test_upgrade_adds_the_bundle_replacing_the_installed_csv_and_round_trips_through_configmaps():
    first = core.plan_catalog(None, core.read_bundle(V1), core.INSTALL)
    documents = core.fbc_documents(first)
    parts = core.chunk_documents(documents, limit=8000)
    assert len(parts) == 2  # package and channel, then the bundle
    served = core.load_documents(parts)
    # read back from its ConfigMaps, the served catalog has the digest it was served under (idempotent re-runs)
    assert digest_of(served) == core.catalog_digest(documents)
    assert digest_of(core.plan_catalog(served, core.read_bundle(V1), core.SAME)) == core.catalog_digest(documents)
    upgraded = core.plan_catalog(served, core.read_bundle(V2), core.UPGRADE, "kube-demo.v0.0.1")
    # the upgraded catalog is the one the integration test serves with opm for 0.0.1 + 0.0.2
    assert digest_of(upgraded) == digest_of(catalog_for_bundle_dirs([V1, V2]))
    # the served catalog lost (no ConfigMaps): the new bundle alone, still replacing what is installed
    alone = core.plan_catalog(None, core.read_bundle(V2), core.UPGRADE, "kube-demo.v0.0.1")
    assert alone.channels[0]["entries"] == [{"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1"}]
    assert [b["name"] for b in alone.bundles] == ["kube-demo.v0.0.2"]


def test_a_rebuilt_bundle_of_the_same_name_replaces_its_blob_and_keeps_its_entry():
    cfg = catalog_for_bundle_dirs([V1, V2])
    changed = dict(core.read_bundle(V2).blob, properties=core.read_bundle(V2).blob["properties"][:-1])
    again = core.catalog_with_bundle(cfg, changed, "stable", "kube-demo.v0.0.1")
    assert [b for b in again.bundles if b["name"] == "kube-demo.v0.0.2"] == [changed]
    assert again.channels == cfg.channels
    assert len(cfg.bundles[-1]["properties"]) == len(changed["properties"]) + 1, "the input catalog is not modified"


def test_a_new_channel_is_added_and_becomes_the_default():
    cfg = core.catalog_with_bundle(catalog_for_bundle_dirs([V1]), core.read_bundle(V2).blob, "fast", "kube-demo.v0.0.1")
    assert cfg.packages[0]["defaultChannel"] == "fast"
    assert {c["name"]: c["entries"] for c in cfg.channels} == {
        "stable": [{"name": "kube-demo.v0.0.1"}],
        "fast": [{"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1"}],
    }


def test_an_invalid_catalog_is_refused_before_it_is_served():
    cfg = catalog_for_bundle_dirs([V1])
    cfg.channels[0]["entries"].append({"name": "kube-demo.v9.9.9"})  # an entry without a bundle
    with pytest.raises(core.BundleRunError, match="generated File-Based Catalog is invalid.*kube-demo.v9.9.9"):
        core.catalog_with_bundle(cfg, core.read_bundle(V2).blob, "stable")


def test_chunks_never_split_a_document_and_stay_under_the_limit():
    documents = ["{" + "x" * n + "}\n" for n in (10, 20, 30, 5, 40)]
    chunks = core.chunk_documents(documents, limit=45)
    assert "".join(chunks) == "".join(documents)
    assert all(len(c.encode()) <= 45 for c in chunks)
    assert chunks == [documents[0] + documents[1], documents[2] + documents[3], documents[4]]
    assert core.chunk_documents([]) == []
    with pytest.raises(core.BundleRunError, match="kube-demo.v0.0.1 is .* more than a ConfigMap holds") as err:
        core.chunk_documents(core.fbc_documents(catalog_for_bundle_dirs([V1])), limit=1000)
    assert err.value.result["reason"] == "BundleTooLarge"
    # a real catalog fits one ConfigMap by default; multi-byte text counts in bytes
    assert len(core.chunk_documents(core.fbc_documents(catalog_for_bundle_dirs([V1, V2])))) == 1
    assert len(core.chunk_documents(["\u00e9" * 30, "\u00e9" * 30], limit=100)) == 2


def test_an_index_gets_the_bundle_replacing_its_channel_head():
    """--index-image: the index's catalog (here one with kube-demo 0.0.1) plus the bundle, which replaces the head of
    its channel; only that bundle counts as injected; an index that has the bundle already is refused."""
    index = catalog_for_bundle_dirs([V1])
    cfg = core.plan_catalog(None, core.read_bundle(V2), core.INSTALL, index=index)
    assert [(c["name"], c["entries"]) for c in cfg.channels] == [
        ("stable", [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1"}])
    ]
    assert index.channels[0]["entries"] == [{"name": "kube-demo.v0.0.1"}], "the index itself is not changed"
    assert json.loads(core.injected_bundles(cfg, only={"kube-demo.v0.0.2"})) == [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}]
    alpha = core.plan_catalog(None, core.read_bundle(V2, channel="alpha"), core.INSTALL, index=index)
    assert [(c["name"], c["entries"]) for c in alpha.channels][-1] == ("alpha", [{"name": "kube-demo.v0.0.2"}])  # a new channel
    with pytest.raises(core.BundleRunError, match="the index image already has bundle kube-demo.v0.0.1"):
        core.plan_catalog(None, core.read_bundle(V1), core.INSTALL, index=index)


def test_injected_bundles_annotation():
    assert json.loads(core.injected_bundles(catalog_for_bundle_dirs([V1, V2]))) == [
        {"name": "kube-demo.v0.0.1", "version": "0.0.1"},
        {"name": "kube-demo.v0.0.2", "version": "0.0.2"},
    ]
    v2 = core.read_bundle(V2)
    previous = '[{"name":"kube-demo.v0.0.1","version":"0.0.1"}]'
    assert json.loads(core.injected_bundles(previous=previous, bundle=v2))[-1] == {"name": "kube-demo.v0.0.2", "version": "0.0.2"}
    assert core.injected_bundles(previous=core.injected_bundles(previous=previous, bundle=v2), bundle=v2) == core.injected_bundles(previous=previous, bundle=v2)
    # operator-sdk's own format (imageTag entries) or garbage: start over
    assert json.loads(core.injected_bundles(previous="not json", bundle=v2)) == [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}]
    assert json.loads(core.injected_bundles(previous='[{"imageTag":"quay.io/x/y:v1"}]', bundle=v2)) == [{"name": "kube-demo.v0.0.2", "version": "0.0.2"}]


# ------------------------------------------------------------------------------------------ cluster objects

DIGEST = "sha256:" + "ab12" * 16
OWNER = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource", "name": CATALOG, "uid": "u-1"}


def test_names_labels_and_selector():
    assert core.catalog_name("kube-demo") == CATALOG
    assert core.config_map_names(CATALOG, DIGEST, 2) == ["kube-demo-catalog-ab12ab12ab-1", "kube-demo-catalog-ab12ab12ab-2"]
    assert core.labels(CATALOG, DIGEST) == {
        core.CREATED_BY_LABEL: core.CREATED_BY,
        core.CATALOG_LABEL: CATALOG,
        core.DIGEST_LABEL: "ab12ab12ab",
    }
    assert core.selector(CATALOG) == f"{core.CREATED_BY_LABEL}={core.CREATED_BY},{core.CATALOG_LABEL}={CATALOG}"
    long_name = "a-very-long-operator-package-name-that-goes-on-and-on-for-a-while-catalog"
    value = core.label_value(long_name)
    assert len(value) <= 63 and value.startswith("a-very-long") and value != core.label_value(long_name + "x")
    assert core.label_value("under_score.ok") == "under_score.ok"
    # the same label key as the install machinery, which removes only OperatorGroups it created
    assert core.CREATED_BY_LABEL == cluster_operator.CREATED_BY_LABEL


def test_config_maps_are_immutable_labelled_and_owned():
    cms = core.config_maps(CATALOG, NS, DIGEST, ["{}\n", "{}\n{}\n"], OWNER)
    assert [cm["metadata"]["name"] for cm in cms] == core.config_map_names(CATALOG, DIGEST, 2)
    for cm, data in zip(cms, ["{}\n", "{}\n{}\n"]):
        assert cm["immutable"] is True and cm["data"] == {core.CONFIGMAP_KEY: data}
        assert cm["metadata"]["namespace"] == NS and cm["metadata"]["ownerReferences"] == [OWNER]
        assert cm["metadata"]["labels"] == core.labels(CATALOG, DIGEST)
    assert "ownerReferences" not in core.config_maps(CATALOG, NS, DIGEST, ["{}"])[0]["metadata"]


def test_registry_pod_serves_the_configmaps_as_files():
    names = core.config_map_names(CATALOG, DIGEST, 2)
    pod = core.registry_pod(CATALOG, NS, DIGEST, names, owner=OWNER)
    spec = pod["spec"]
    container = spec["containers"][0]
    assert pod["metadata"]["name"] == core.registry_pod_name(CATALOG, spec) and pod["metadata"]["ownerReferences"] == [OWNER]
    assert pod["metadata"]["labels"] == core.labels(CATALOG, DIGEST)
    assert container["image"] == core.DEFAULT_OPM_IMAGE == "quay.io/operator-framework/opm:v1.73.0"
    assert container["command"] == ["/bin/opm"] and container["args"] == ["serve", "/configs", "--port=50051"]
    assert container["ports"] == [{"name": "grpc", "containerPort": 50051, "protocol": "TCP"}]
    assert container["readinessProbe"]["exec"]["command"] == ["/bin/grpc_health_probe", "-addr=:50051"]
    sources = spec["volumes"][0]["projected"]["sources"]
    assert [s["configMap"]["name"] for s in sources] == names
    assert [s["configMap"]["items"] for s in sources] == [[{"key": core.CONFIGMAP_KEY, "path": f"catalog/{n}.json"}] for n in names]
    # subPath: opm walks plain files, not the ..data symlinks of a ConfigMap volume; /tmp for its cache
    assert container["volumeMounts"] == [
        {"name": "catalog", "mountPath": "/configs", "subPath": "catalog", "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    assert {"name": "tmp", "emptyDir": {}} in spec["volumes"]
    assert spec["automountServiceAccountToken"] is False and "initContainers" not in spec
    assert not any("hostPath" in v for v in spec["volumes"])


def test_restricted_security_context_meets_pod_security_restricted():
    pod = core.registry_pod(CATALOG, NS, DIGEST, ["cm"], security="restricted")
    pod_sc, container_sc = pod["spec"]["securityContext"], pod["spec"]["containers"][0]["securityContext"]
    assert pod_sc == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert "runAsUser" not in pod_sc  # OpenShift assigns one from the namespace's range
    assert container_sc["allowPrivilegeEscalation"] is False and container_sc["capabilities"] == {"drop": ["ALL"]}
    assert container_sc["privileged"] is False and container_sc["readOnlyRootFilesystem"] is True


def test_legacy_security_context_sets_none_and_others_are_refused():
    pod = core.registry_pod(CATALOG, NS, DIGEST, ["cm"], image="mirror.example/opm@sha256:" + "0" * 64, pull_policy="Always", security="legacy")
    assert "securityContext" not in pod["spec"] and "securityContext" not in pod["spec"]["containers"][0]
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    with pytest.raises(core.BundleRunError, match="restricted or legacy"):
        core.registry_pod(CATALOG, NS, DIGEST, ["cm"], security="privileged")


def pod_status(phase="Running", ip="10.244.0.7", ready=True, containers=None, conditions=None):
    ready_condition = {"type": "Ready", "status": "True" if ready else "False", "reason": None if ready else "ContainersNotReady"}
    conds = conditions if conditions is not None else [ready_condition]
    st = {"phase": phase, "conditions": conds, "containerStatuses": containers or []}
    if ip:
        st["podIP"] = ip
    return {"metadata": {"name": "reg"}, "status": st}


def waiting(reason, message="back-off"):
    return [{"name": "registry-grpc", "restartCount": 3, "state": {"waiting": {"reason": reason, "message": message}}}]


VERDICTS = [
    ("gone", None, "failed", "deleted"),
    ("just created", {"metadata": {"name": "reg"}}, "waiting", "phase Pending"),
    (
        "unschedulable",
        pod_status("Pending", None, conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}]),
        "waiting",
        "not scheduled (Unschedulable): 0/3 nodes",
    ),
    ("running, probe failing", pod_status(ready=False), "waiting", "Ready=False (ContainersNotReady)"),
    ("ready without IP", pod_status(ip=None), "waiting", "phase Running"),
    ("ready", pod_status(), "ready", "10.244.0.7:50051"),
    ("image pull", pod_status("Pending", None, containers=waiting("ImagePullBackOff", "pull access denied")), "failed", "ImagePullBackOff"),
    ("crash loop", pod_status(ready=False, containers=waiting("CrashLoopBackOff")), "failed", "CrashLoopBackOff"),
    (
        "opm exited",
        pod_status(
            "Failed",
            containers=[{"name": "registry-grpc", "state": {"terminated": {"reason": "Error", "exitCode": 1, "message": "invalid catalog"}}}],
        ),
        "failed",
        "Error (exit code 1) invalid catalog",
    ),
]


@pytest.mark.parametrize("case, pod, verdict, text", VERDICTS, ids=[v[0] for v in VERDICTS])
def test_registry_pod_verdict(case, pod, verdict, text):
    got, message = core.registry_pod_verdict(pod)
    assert got == verdict, (case, message)
    assert text in message


STARTED = "2026-11-28T06:00:00Z"


def unready_since(started=STARTED):
    running = [{"name": "registry-grpc", "ready": False, "restartCount": 0, "state": {"running": {"startedAt": started}}}]
    return pod_status(ready=False, containers=running)


@pytest.mark.parametrize(
    "seconds, unhealthy, verdict, text",
    [
        (None, None, "waiting", "Ready=False"),  # no clock: as before
        (59, None, "waiting", "Ready=False"),
        (61, None, "failed", "has run 61 s without passing its readiness probe"),
        (61, 'exec: "/bin/grpc_health_probe": stat /bin/grpc_health_probe: no such file', "failed", "stat /bin/grpc_health_probe: no such file"),
    ],
)
def test_a_registry_container_that_never_passes_its_readiness_probe_fails_after_a_minute(seconds, unhealthy, verdict, text):
    now = None if seconds is None else core.parse_time(STARTED) + seconds
    got, message = core.registry_pod_verdict(unready_since(), now, unhealthy)
    assert got == verdict and text in message, message


def test_the_wait_asks_again_on_a_tick_for_a_pod_whose_status_no_longer_changes(fake, monkeypatch):
    """A readiness probe that keeps failing changes nothing in the pod: the watch asks the verdict again every
    RECHECK_SECONDS without a change, and the time settles it."""
    stuck = dict(unready_since("2026-01-01T00:00:00Z"), metadata={"name": "reg", "namespace": NS})
    ticks = []

    def watch_until(client, api_version, kind, name, namespace, predicate, timeout, resource=None, tick=None):
        ticks.append((timeout, tick))
        assert predicate(stuck)  # as asked on a tick: nothing changed, the clock moved
        return stuck

    monkeypatch.setattr(glue, "watch_until", watch_until)
    fake.objects[("Event", "reg.1")] = {"metadata": {"name": "reg.1"}, "reason": "Unhealthy", "message": "Readiness probe failed: connection refused"}
    with pytest.raises(core.BundleRunError, match="without passing its readiness probe.*Readiness probe failed: connection refused") as err:
        glue.wait_registry_pod(glue.Cluster("client"), NS, "reg", 600)
    assert err.value.result["reason"] == "RegistryPodFailed"
    assert ticks == [(600, glue.RECHECK_SECONDS)]


def test_pod_address():
    assert core.pod_address(pod_status(ip="10.1.2.3")) == "10.1.2.3:50051"
    assert core.pod_address(pod_status(ip="fd00::12")) == "[fd00::12]:50051"
    assert core.pod_address(pod_status(ip=None)) is None


def test_catalog_source_object():
    annotations = {core.ANNOTATION_REGISTRY_POD: "reg"}
    cs = core.catalog_source(CATALOG, NS, "kube-demo", "10.1.2.3:50051", annotations)
    assert cs["spec"] == {"sourceType": "grpc", "address": "10.1.2.3:50051", "displayName": "kube-demo", "publisher": "kubeforge"}
    assert cs["metadata"]["labels"] == {core.CREATED_BY_LABEL: core.CREATED_BY} and cs["metadata"]["annotations"] == annotations
    dry = core.catalog_source(CATALOG, NS, "kube-demo", None, annotations)
    assert "address" not in dry["spec"] and dry["kind"] == "CatalogSource" and dry["apiVersion"] == "operators.coreos.com/v1alpha1"


def test_the_pod_name_changes_with_anything_in_its_spec():
    cms = core.config_map_names(CATALOG, DIGEST, 1)
    base = core.registry_pod(CATALOG, NS, DIGEST, cms)["metadata"]["name"]
    assert base.startswith(CATALOG + "-") and len(base) == len(CATALOG) + 1 + core.DIGEST_LENGTH
    assert core.registry_pod(CATALOG, NS, DIGEST, cms, owner=OWNER)["metadata"]["name"] == base  # not the owner
    others = {
        core.registry_pod(CATALOG, NS, DIGEST, cms, image="mirror.example/opm:v1.73.0")["metadata"]["name"],
        core.registry_pod(CATALOG, NS, DIGEST, cms, pull_policy="Always")["metadata"]["name"],
        core.registry_pod(CATALOG, NS, DIGEST, cms, security="legacy")["metadata"]["name"],
        core.registry_pod(CATALOG, NS, "sha256:" + "cd34" * 16, core.config_map_names(CATALOG, "sha256:" + "cd34" * 16, 1))["metadata"]["name"],
    }
    assert len(others) == 4 and base not in others


def test_stale_objects_are_ours_and_not_kept():
    def obj(name, ours=True):
        return {"metadata": {"name": name, "labels": core.labels(CATALOG, DIGEST) if ours else {"app": "x"}}}

    objects = [obj("new"), obj("old"), obj("foreign", ours=False)]
    assert core.stale_objects(objects, ["new"]) == ["old"]
    assert core.stale_objects(objects) == ["new", "old"]
    assert core.is_ours(objects[0]) and not core.is_ours(objects[2])


# ------------------------------------------------------------- the pod-serving sequence (recording fake)


class FakeCluster:
    """What olm_cluster.bundle_run reads through ``Cluster``; writes go through the patched object helpers."""

    def __init__(self, objects):
        self.objects = objects  # {(kind, name): obj}
        self.client = "client"

    def resource(self, kind, api_version=None):
        return kind

    def get(self, kind, name, namespace, api_version=None):
        return self.objects.get((kind, name))

    def list(self, kind, namespace, api_version=None, label_selector=None, **selectors):
        wanted = dict(part.split("=", 1) for part in (label_selector or "").split(",") if part)
        found = [o for (k, _n), o in sorted(self.objects.items()) if k == kind]
        return [o for o in found if all((o["metadata"].get("labels") or {}).get(a) == b for a, b in wanted.items())]


@pytest.fixture
def fake(monkeypatch):
    calls = []
    objects = {("Namespace", NS): {"metadata": {"name": NS}}}
    cluster = FakeCluster(objects)
    pod_states = {}

    def create_object(client, kind, definition, namespace=None):
        name = definition["metadata"]["name"]
        calls.append(("create", kind, name))
        if (kind, name) in objects:
            return Result(changed=False, before=objects[(kind, name)], after=objects[(kind, name)])
        stored = dict(definition, metadata=dict(definition["metadata"], uid=f"uid-{name}"))
        objects[(kind, name)] = stored
        return Result(changed=True, before=None, after=stored)

    def apply_object(client, kind, definition, field_manager, force_conflicts=False, namespace=None):
        name = definition["metadata"]["name"]
        calls.append(("apply", kind, name, definition["spec"].get("address")))
        assert force_conflicts is True and field_manager == k8s_cluster.FIELD_MANAGER  # the catalog is the module's own
        before = objects.get((kind, name))
        after = dict(definition, metadata=dict(definition["metadata"], uid="uid-cs"))
        objects[(kind, name)] = after
        return Result(changed=before != after, before=before, after=after)

    def patch_object(client, kind, name, patch, namespace=None, patch_type="merge"):
        calls.append(("patch", kind, name, patch["metadata"]["ownerReferences"][0]["uid"]))
        objects[(kind, name)]["metadata"].update(patch["metadata"])

    def delete_object(client, kind, name, namespace=None, propagation_policy=None):
        calls.append(("delete", kind, name))
        objects.pop((kind, name), None)

    def watch_until(client, api_version, kind, name, namespace, predicate, timeout, resource=None, tick=None):
        calls.append(("watch", kind, name))
        pod = dict(objects[(kind, name)], status=pod_states.get("status") or pod_status(ip="10.244.1.9")["status"])
        assert predicate(pod)
        return pod

    def install(cluster_, params, check_mode, wait, timeout):
        calls.append(("install", params["catalog"]))
        installs.append(params)
        return {"changed": True, "created": {"subscription": params["subscription_name"]}, "installed_csv": params["starting_csv"], "diff": {}}

    installs = []
    for name, value in (
        ("Cluster", lambda client: cluster),
        ("create_object", create_object),
        ("patch_object", patch_object),
        ("delete_object", delete_object),
        ("watch_until", watch_until),
        ("install", install),
    ):
        monkeypatch.setattr(glue, name, value)
    monkeypatch.setattr(k8s_cluster, "apply_object", apply_object)  # bundle_run applies through k8s.cluster.apply
    return SimpleNamespace(calls=calls, objects=objects, installs=installs, pod_states=pod_states)


def module(**params):
    base = {
        "state": "present",
        "bundle_dir": V1,
        "package": None,
        "namespace": NS,
        "channel": None,
        "serve": "pod",
        "catalog_address": None,
        "opm_image": core.DEFAULT_OPM_IMAGE,
        "image_pull_policy": "IfNotPresent",
        "security_context_config": "restricted",
        "target_namespaces": None,
        "delete_crds_and_data": False,
        "wait": True,
        "wait_timeout": 60,
    }
    base.update(params)
    return FakeModule(base, client="client")


def pod_name(digest):
    return core.registry_pod(CATALOG, NS, digest, core.config_map_names(CATALOG, digest, 1))["metadata"]["name"]


def test_first_run_serves_from_a_ready_pod_then_installs(fake):
    result = glue.execute(module())
    digest = digest_of(catalog_for_bundle_dirs([V1]))
    pod, cm = pod_name(digest), core.config_map_names(CATALOG, digest, 1)[0]
    assert fake.calls == [
        ("create", "ConfigMap", cm),
        ("create", "Pod", pod),
        ("watch", "Pod", pod),
        ("apply", "CatalogSource", CATALOG, "10.244.1.9:50051"),  # only once the pod is Ready: never an empty address
        ("patch", "ConfigMap", cm, "uid-cs"),  # the CatalogSource owns its registry from now on
        ("patch", "Pod", pod, "uid-cs"),
        ("install", CATALOG),
    ]
    assert result["changed"] is True and result["operation"] == "install" and result["catalog_address"] == "10.244.1.9:50051"
    assert result["created"] == {"subscription": "kube-demo", "config_maps": [cm], "registry_pod": pod, "catalog_source": CATALOG}
    annotations = fake.objects[("CatalogSource", CATALOG)]["metadata"]["annotations"]
    assert annotations[core.ANNOTATION_REGISTRY_POD] == pod and annotations[core.ANNOTATION_DIGEST] == digest
    assert annotations[core.ANNOTATION_INDEX_IMAGE] == core.DEFAULT_OPM_IMAGE
    params = fake.installs[0]
    assert params["approval"] == "Manual" and params["version"] == "0.0.1" and params["starting_csv"] == "kube-demo.v0.0.1"
    assert params["install_modes"] == core.read_bundle(V1).install_modes and params["channel"] == "stable"


def test_upgrade_reads_the_served_catalog_and_removes_the_old_pod_last(fake):
    glue.execute(module())
    first = fake.objects[("CatalogSource", CATALOG)]
    old_digest = first["metadata"]["annotations"][core.ANNOTATION_DIGEST]
    fake.objects[("Subscription", "kube-demo")] = {
        "metadata": {"name": "kube-demo", "labels": {}},
        "spec": {"name": "kube-demo", "source": CATALOG, "sourceNamespace": NS},
        "status": {"installedCSV": "kube-demo.v0.0.1"},
    }
    fake.objects[("ClusterServiceVersion", "kube-demo.v0.0.1")] = {"metadata": {"name": "kube-demo.v0.0.1", "labels": {}}, "spec": {"version": "0.0.1"}}
    fake.calls.clear()

    result = glue.execute(module(bundle_dir=V2))
    digest = digest_of(catalog_for_bundle_dirs([V1, V2]))
    new_pod, new_cm = pod_name(digest), core.config_map_names(CATALOG, digest, 1)[0]
    old_pod, old_cm = pod_name(old_digest), core.config_map_names(CATALOG, old_digest, 1)[0]
    assert fake.calls == [
        ("create", "ConfigMap", new_cm),
        ("create", "Pod", new_pod),
        ("watch", "Pod", new_pod),
        ("apply", "CatalogSource", CATALOG, "10.244.1.9:50051"),
        ("delete", "Pod", old_pod),
        ("delete", "ConfigMap", old_cm),
        ("install", CATALOG),
    ]
    assert result["operation"] == "upgrade" and result["removed"] == {"registry_pods": [old_pod], "config_maps": [old_cm]}
    assert fake.objects[("Pod", new_pod)]["metadata"]["ownerReferences"][0]["uid"] == "uid-cs"  # owned from the start
    assert fake.installs[-1]["subscription_name"] == "kube-demo" and fake.installs[-1]["version"] == "0.0.2"

    fake.objects[("Subscription", "kube-demo")]["status"]["installedCSV"] = "kube-demo.v0.0.2"
    fake.objects[("ClusterServiceVersion", "kube-demo.v0.0.2")] = {"metadata": {"name": "kube-demo.v0.0.2"}, "spec": {"version": "0.0.2"}}
    fake.calls.clear()
    again = glue.execute(module(bundle_dir=V2))
    assert again["operation"] == "same" and again["catalog_digest"] == digest and again["removed"] == {}
    assert ("create", "Pod", new_pod) in fake.calls and not [c for c in fake.calls if c[0] == "delete"]


def test_a_registry_pod_that_cannot_start_fails_before_the_catalog_source_moves(fake):
    fake.pod_states["status"] = pod_status("Pending", None, containers=waiting("ImagePullBackOff", "pull access denied"))["status"]
    with pytest.raises(core.BundleRunError, match="ImagePullBackOff") as err:
        glue.execute(module())
    assert err.value.result["reason"] == "RegistryPodFailed"
    assert not [c for c in fake.calls if c[0] in ("apply", "install")]


def test_serve_pod_refuses_catalog_address_and_a_foreign_catalog_source(fake):
    with pytest.raises(core.BundleRunError, match="only used with serve=address"):
        glue.execute(module(catalog_address="127.0.0.1:50051"))
    fake.objects[("CatalogSource", CATALOG)] = {"metadata": {"name": CATALOG, "labels": {}}, "spec": {}}
    with pytest.raises(core.BundleRunError, match="not created by this module"):
        glue.execute(module())
    assert fake.calls == []


def test_a_bundle_run_from_an_image_names_it_in_the_catalog_and_the_annotation():
    image = "registry.example.com/team/kube-demo-bundle@sha256:" + "c" * 64
    bundle = core.read_bundle(V2, image=image)
    assert bundle.blob["image"] == image
    cfg = core.plan_catalog(None, bundle, core.INSTALL, None)
    assert [b["image"] for b in cfg.bundles] == [image]
    assert json.loads(core.injected_bundles(cfg)) == [{"name": "kube-demo.v0.0.2", "version": "0.0.2", "image": image}]


def test_the_registry_pod_pulls_with_the_pull_secret():
    names = core.config_map_names(CATALOG, DIGEST, 1)
    assert core.registry_pod(CATALOG, NS, DIGEST, names, pull_secret="registry-credentials")["spec"]["imagePullSecrets"] == [{"name": "registry-credentials"}]
    assert "imagePullSecrets" not in core.registry_pod(CATALOG, NS, DIGEST, names)["spec"]


def test_an_unwaited_install_says_its_install_plan_stays_unapproved(fake, monkeypatch):
    """wait=false: the Subscription is Manual and nobody approves its InstallPlan; the result says so."""
    monkeypatch.setattr(glue, "install", lambda cluster, params, check_mode, wait, timeout: {"changed": True, "installed_csv": None, "diff": {}})
    result = glue.execute(module(wait=False))
    assert result["changed"] is True
    assert result["warnings"] == [
        "wait=false: the InstallPlan of kube-demo.v0.0.1 stays unapproved (the module approves it while it waits); run again with wait=true to install"
    ]
    assert "warnings" not in glue.execute(module())  # a waited run installs: nothing to say
