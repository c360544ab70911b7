"""olm_bundle_run against the testbed's real OLM v0: run bundle, bundle-upgrade, cleanup.

serve=address is proven for real: the test renders the catalogs the module serves in pod mode
(``lib.bundle_run.catalog_for_bundle_dirs``, built with ``olm.bundle_run.read_bundle`` and ``plan_catalog``, the
functions the module itself uses) and serves them with the testbed's real ``opm serve`` on free loopback ports -
kube-demo 0.0.1 first, then 0.0.1 + 0.0.2 (0.0.2 replaces 0.0.1) on a second port for the upgrade.

serve=pod is sent here as server-side dry runs (check mode) only: a KWOK pod gets a fake IP, and pointing a
CatalogSource at it would make OLM dial it; test_bundle_run_real_node.py runs it for real on the real node. The dry
runs prove that the ConfigMaps, the registry pod (through Pod Security admission, in a namespace enforcing
``restricted``) and the CatalogSource are valid objects, and that the module would serve exactly the catalog the
address test serves (same digest).
"""

import subprocess

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.bundle_run import catalog_for_bundle_dirs
from lib.polling import poll_until
from testbed import config
from testbed.cluster import bin_dir
from testbed.procs import free_port, port_open

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import bundle_run as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode

pytestmark = pytest.mark.testbed

GROUP, V1ALPHA1 = "operators.coreos.com", "v1alpha1"
BUNDLES = config.FIXTURES_DIR / "kube-demo" / "bundles"
V1, V2 = str(BUNDLES / "0.0.1"), str(BUNDLES / "0.0.2")
CATALOG = "kube-demo-catalog"


@pytest.fixture
def opm_serve(tmp_path):
    """``serve(bundle_dirs) -> address``: the catalog of those bundles served by the real ``opm serve`` on a free
    loopback port; every server is stopped (by its own pid) at the end of the test."""
    opm = bin_dir() / "opm"
    servers = []

    def serve(bundle_dirs):
        index = len(servers) + 1
        root = tmp_path / f"catalog-{index}"
        (root / "kube-demo").mkdir(parents=True)
        documents = core.fbc_documents(catalog_for_bundle_dirs(bundle_dirs))
        (root / "kube-demo" / "catalog.json").write_text("".join(documents))
        port = free_port()
        log = open(tmp_path / f"opm-{index}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(  # noqa: S603
            [str(opm), "serve", str(root), "-p", str(port), "-t", str(tmp_path / f"term-{index}"), f"--pprof-addr=127.0.0.1:{free_port()}"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        servers.append((proc, log))

        def listening():
            if port_open(port):
                return True
            assert proc.poll() is None, (tmp_path / f"opm-{index}.log").read_text()
            return False

        poll_until(listening, 30, 0.1, f"opm serve to listen on port {port}")
        return f"127.0.0.1:{port}"

    yield serve
    for proc, log in servers:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


# copies of CSVs from global (AllNamespaces) operators other tests install are in every namespace: not ours
def items(custom, namespace, plural, version=V1ALPHA1):
    selector = "!olm.copiedFrom" if plural == "clusterserviceversions" else None
    return custom.list_namespaced_custom_object(GROUP, version, namespace, plural, label_selector=selector)["items"]


def names(custom, namespace, plural, version=V1ALPHA1):
    return sorted(i["metadata"]["name"] for i in items(custom, namespace, plural, version))


def catalog_source(custom, namespace):
    try:
        return custom.get_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", CATALOG)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def run(run_module, kubeconfig, namespace, check_mode=False, diff=False, **args):
    params = dict(kubeconfig=kubeconfig, namespace=namespace, wait_timeout=120)
    params.update(args)
    return run_module("olm_bundle_run", params, check_mode=check_mode, diff=diff)


def ok(result):
    assert not result.get("failed"), result
    return result


def same_plan(predicted, done):
    """Check mode's result and the real run's agree on what the run does: the operation, the bundle, what is created,
    the CatalogSource's and the Subscription's specs."""
    for key in ("operation", "bundle", "created", "catalog_address"):
        assert predicted.get(key) == done.get(key), (key, predicted.get(key), done.get(key))
    for key in ("catalog_source", "subscription"):
        assert predicted[key]["spec"] == done[key]["spec"], (key, predicted[key]["spec"], done[key]["spec"])
    return True


def test_run_upgrade_cleanup_through_real_opm_serve(run_module, kubeconfig, namespace, custom, api, opm_serve):
    ns = namespace
    first_address = opm_serve([V1])

    predicted = ok(run(run_module, kubeconfig, ns, check_mode=True, bundle_dir=V1, serve="address", catalog_address=first_address))
    assert predicted["changed"] is True and predicted["operation"] == "install"
    assert predicted["created"] == {"catalog_source": CATALOG, "operator_group": ns, "subscription": "kube-demo"}
    assert predicted["subscription"]["spec"]["startingCSV"] == "kube-demo.v0.0.1"
    assert catalog_source(custom, ns) is None and names(custom, ns, "subscriptions") == [] and names(custom, ns, "operatorgroups", "v1") == []

    # run bundle
    first = ok(run(run_module, kubeconfig, ns, diff=True, bundle_dir=V1, serve="address", catalog_address=first_address))
    assert first["changed"] is True and first["operation"] == "install"
    assert first["installed_csv"] == "kube-demo.v0.0.1" and first["phase"] == "Succeeded" and first["version"] == "0.0.1"
    assert len(first["approved_install_plans"]) == 1
    assert first["bundle"] == {"name": "kube-demo.v0.0.1", "package": "kube-demo", "version": "0.0.1", "channel": "stable"}
    assert first["diff"]["before"]["catalog_source"] == {} and first["diff"]["after"]["catalog_source"]["spec"]["address"] == first_address
    stored = catalog_source(custom, ns)
    assert stored["spec"]["address"] == first_address and stored["metadata"]["labels"][core.CREATED_BY_LABEL] == core.CREATED_BY
    assert stored["metadata"]["annotations"][core.ANNOTATION_INJECTED_BUNDLES] == '[{"name":"kube-demo.v0.0.1","version":"0.0.1"}]'
    sub = custom.get_namespaced_custom_object(GROUP, V1ALPHA1, ns, "subscriptions", "kube-demo")
    assert sub["spec"]["installPlanApproval"] == "Manual" and sub["spec"]["source"] == CATALOG and sub["spec"]["channel"] == "stable"
    groups = items(custom, ns, "operatorgroups", "v1")
    targets = installmode.choose_targets(core.read_bundle(V1).install_modes, ns)  # the collection's choice for the CSV's modes
    assert len(groups) == 1 and (groups[0]["spec"].get("targetNamespaces") or []) == targets, groups
    # check mode decided what the real run did (one plan, olm.bundle_run.plan_run)
    assert same_plan(predicted, first)

    again = ok(run(run_module, kubeconfig, ns, bundle_dir=V1, serve="address", catalog_address=first_address))
    assert again["changed"] is False and again["operation"] == "same", again

    # run bundle-upgrade: a catalog where 0.0.2 replaces 0.0.1, on another port
    second_address = opm_serve([V1, V2])
    predicted_upgrade = ok(run(run_module, kubeconfig, ns, check_mode=True, bundle_dir=V2, serve="address", catalog_address=second_address))
    assert predicted_upgrade["changed"] is True and predicted_upgrade["operation"] == "upgrade"
    assert predicted_upgrade["catalog_source"]["spec"]["address"] == second_address
    assert catalog_source(custom, ns)["spec"]["address"] == first_address, "check mode must not move the CatalogSource"

    # without waiting nothing is approved: an upgrade is refused before anything changes
    unwaited = run(run_module, kubeconfig, ns, bundle_dir=V2, serve="address", catalog_address=second_address, wait=False)
    assert unwaited.get("failed") and "with wait=false nothing would change" in unwaited["msg"], unwaited
    assert catalog_source(custom, ns)["spec"]["address"] == first_address

    upgraded = ok(run(run_module, kubeconfig, ns, bundle_dir=V2, serve="address", catalog_address=second_address))
    assert upgraded["changed"] is True and upgraded["operation"] == "upgrade"
    assert upgraded["installed_csv"] == "kube-demo.v0.0.2" and upgraded["phase"] == "Succeeded"
    assert same_plan(predicted_upgrade, upgraded)
    assert len(upgraded["approved_install_plans"]) == 1 and upgraded["approved_install_plans"] != first["approved_install_plans"]
    stored = catalog_source(custom, ns)
    assert stored["spec"]["address"] == second_address
    assert stored["metadata"]["annotations"][core.ANNOTATION_INJECTED_BUNDLES] == (
        '[{"name":"kube-demo.v0.0.1","version":"0.0.1"},{"name":"kube-demo.v0.0.2","version":"0.0.2"}]'
    )
    assert ok(run(run_module, kubeconfig, ns, bundle_dir=V2, serve="address", catalog_address=second_address))["changed"] is False

    older = run(run_module, kubeconfig, ns, bundle_dir=V1, serve="address", catalog_address=second_address)
    assert older["failed"] and older["reason"] == "NewerVersionInstalled" and "does not downgrade" in older["msg"], older

    # the same installation switched to serve=pod, as a dry run: the module would serve what opm serves now
    switch = ok(run(run_module, kubeconfig, ns, check_mode=True, bundle_dir=V2))
    assert switch["operation"] == "same" and switch["changed"] is True
    assert switch["created"]["registry_pod"] == switch["registry_pod"] and switch["created"]["config_maps"] == switch["config_maps"]
    assert switch["catalog_source"]["spec"]["address"] == second_address  # the pod has no IP yet: the dry run keeps it
    assert switch["catalog_source"]["metadata"]["annotations"][core.ANNOTATION_REGISTRY_POD] == switch["registry_pod"]
    assert client.CoreV1Api(api).list_namespaced_pod(ns, label_selector=core.selector(CATALOG)).items == []

    # cleanup
    predicted_cleanup = ok(run(run_module, kubeconfig, ns, check_mode=True, state="absent", package="kube-demo"))
    assert predicted_cleanup["changed"] is True and predicted_cleanup["removed"]["catalog_source"] == CATALOG
    assert names(custom, ns, "subscriptions") == ["kube-demo"] and catalog_source(custom, ns) is not None

    removed = ok(run(run_module, kubeconfig, ns, state="absent", bundle_dir=V2))
    assert removed["removed"] == {"subscription": "kube-demo", "csv": "kube-demo.v0.0.2", "operator_group": ns, "catalog_source": CATALOG}, removed
    assert names(custom, ns, "subscriptions") == [] and names(custom, ns, "clusterserviceversions") == []
    assert names(custom, ns, "operatorgroups", "v1") == [] and catalog_source(custom, ns) is None
    # InstallPlans (owner refs to the Subscription) and the operator's Deployment go with the garbage collector.
    apps = client.AppsV1Api(api)
    poll_until(
        lambda: items(custom, ns, "installplans") + apps.list_namespaced_deployment(ns).items,
        60,
        0.5,
        "the garbage collector to delete the InstallPlans and the Deployment",
        until=lambda left: not left,
    )
    assert items(custom, ns, "installplans") == [] and apps.list_namespaced_deployment(ns).items == []
    assert ok(run(run_module, kubeconfig, ns, state="absent", package="kube-demo"))["changed"] is False


def test_pod_mode_dry_run_passes_pod_security_restricted(run_module, kubeconfig, namespace, custom, api):
    core_api = client.CoreV1Api(api)
    core_api.patch_namespace(namespace, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    expected = core.catalog_digest(core.fbc_documents(catalog_for_bundle_dirs([V1])))

    predicted = ok(run(run_module, kubeconfig, namespace, check_mode=True, diff=True, bundle_dir=V1))
    assert predicted["changed"] is True and predicted["operation"] == "install"
    assert predicted["catalog_digest"] == expected
    assert predicted["config_maps"] == [f"{CATALOG}-{expected[7:17]}-1"]
    assert predicted["registry_pod"] == core.registry_pod(CATALOG, namespace, expected, predicted["config_maps"])["metadata"]["name"]
    assert predicted["created"] == {
        "catalog_source": CATALOG,
        "config_maps": predicted["config_maps"],
        "registry_pod": predicted["registry_pod"],
        "operator_group": namespace,
        "subscription": "kube-demo",
    }
    dry_source = predicted["catalog_source"]
    assert "address" not in dry_source["spec"] and predicted["catalog_address"] is None
    assert dry_source["metadata"]["annotations"][core.ANNOTATION_DIGEST] == expected
    assert dry_source["metadata"]["annotations"][core.ANNOTATION_INDEX_IMAGE] == core.DEFAULT_OPM_IMAGE
    assert predicted["diff"]["after"]["subscription"]["spec"]["startingCSV"] == "kube-demo.v0.0.1"
    # nothing was stored
    assert core_api.list_namespaced_config_map(namespace, label_selector=core.selector(CATALOG)).items == []
    assert core_api.list_namespaced_pod(namespace).items == []
    assert catalog_source(custom, namespace) is None and names(custom, namespace, "subscriptions") == []

    # operator-sdk's default (no security context) is what Pod Security admission refuses here
    legacy = run(run_module, kubeconfig, namespace, check_mode=True, bundle_dir=V1, security_context_config="legacy")
    assert legacy["failed"] and "violates PodSecurity" in legacy["msg"] and "restricted" in legacy["msg"], legacy


def test_pod_mode_dry_run_in_a_missing_namespace_predicts(run_module, kubeconfig, namespace):
    missing = namespace + "-none"
    predicted = ok(run(run_module, kubeconfig, missing, check_mode=True, bundle_dir=V2, target_namespaces=[missing]))
    assert predicted["changed"] is True
    assert set(predicted["created"]) == {"namespace", "catalog_source", "config_maps", "registry_pod", "operator_group", "subscription"}
    assert predicted["catalog_source"]["metadata"]["annotations"][core.ANNOTATION_REGISTRY_POD] == predicted["registry_pod"]


def test_a_catalog_source_it_did_not_make_is_refused_and_left_alone(run_module, kubeconfig, namespace, custom, testbed):
    body = {
        "apiVersion": f"{GROUP}/{V1ALPHA1}",
        "kind": "CatalogSource",
        "metadata": {"name": CATALOG, "namespace": namespace},
        "spec": {"sourceType": "grpc", "address": testbed.catalog_address},
    }
    custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", body)
    refused = run(run_module, kubeconfig, namespace, bundle_dir=V1, serve="address", catalog_address=testbed.catalog_address)
    assert refused["failed"] and "was not created by this module" in refused["msg"], refused
    cleanup = ok(run(run_module, kubeconfig, namespace, state="absent", package="kube-demo"))
    assert cleanup["changed"] is False and "left alone" in str(cleanup.get("warnings")), cleanup
    assert catalog_source(custom, namespace) is not None


def test_a_package_subscribed_from_another_catalog_is_refused_and_left_alone(run_module, kubeconfig, namespace, custom):
    body = {
        "apiVersion": f"{GROUP}/{V1ALPHA1}",
        "kind": "Subscription",
        "metadata": {"name": "demo-from-elsewhere", "namespace": namespace},
        "spec": {"name": "kube-demo", "source": "some-other-catalog", "sourceNamespace": namespace, "channel": "stable"},
    }
    custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "subscriptions", body)
    refused = run(run_module, kubeconfig, namespace, check_mode=True, bundle_dir=V1)
    assert refused["failed"] and refused["reason"] == "InstalledFromAnotherCatalog" and "some-other-catalog" in refused["msg"], refused
    cleanup = ok(run(run_module, kubeconfig, namespace, state="absent", bundle_dir=V1))
    assert cleanup["changed"] is False and "demo-from-elsewhere" in str(cleanup.get("warnings")), cleanup
    assert names(custom, namespace, "subscriptions") == ["demo-from-elsewhere"]
