# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_cluster_catalog and olm_cluster_extension against the real catalogd and operator-controller of the testbed,
with bundle and catalog images built and pushed by the collection's own modules (conftest.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import ssl
import urllib.request

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from lib.olm_bundles import V1DEMO_CRD_FILE
from lib.polling import poll_until

# One xdist worker for every file of this group: fixed ClusterExtension, namespace and ClusterCatalog names and
# kube-v1demo's CRD, shared with the other OLM v1 file.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olmv1")]

PACKAGE = "kube-v1demo"
CRD = "kubev1demos.v1demo.kubeforge.io"


def _exists(read):
    try:
        read()
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def _can(api, namespace, sa, verb, group, resource, name=None, ns=None):
    review = k8s.V1SubjectAccessReview(
        spec=k8s.V1SubjectAccessReviewSpec(
            user=f"system:serviceaccount:{namespace}:{sa}",
            resource_attributes=k8s.V1ResourceAttributes(verb=verb, group=group, resource=resource, name=name, namespace=ns),
        )
    )
    return k8s.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed


def diagnosed(run_module, kubeconfig, extension, cause):
    """olm_diagnose of a ClusterExtension after a failure: its finding of ``cause`` (asserting there is one)."""
    result = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension=extension))
    assert not result.get("failed"), result
    found = [f for f in result["findings"] if f["cause"] == cause]
    assert found, result["summary"]
    return found[0]


def _delete_namespace(api, name):
    try:
        k8s.CoreV1Api(api).delete_namespace(name)
    except ApiException as exc:
        if exc.status != 404:
            raise


def test_cluster_catalog_served_idempotent_and_digest_poll_refused(v1_catalog, olmv1, run_module, api, kubeconfig):
    served = v1_catalog["served"]
    assert served["resolved_ref"].endswith("@" + v1_catalog["digest"])
    assert served["base_url"] == f"https://{olmv1['catalogd_address']}/catalogs/{v1_catalog['name']}"
    labels = served["cluster_catalog"]["metadata"]["labels"]
    assert labels["olm.operatorframework.io/metadata.name"] == v1_catalog["name"]

    # what catalogd serves (over TLS, certificate from the testbed CA) is our catalog, naming our bundle images
    context = ssl.create_default_context(cafile=olmv1["catalogd_ca_file"])
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), urllib.request.ProxyHandler({}))
    with opener.open(served["base_url"] + "/api/v1/all", timeout=10) as response:
        blobs = [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]
    assert sorted(b["name"] for b in blobs if b["schema"] == "olm.package") == ["kube-ownns", "kube-v1demo"]
    served_images = {}
    for blob in blobs:
        if blob["schema"] == "olm.bundle":
            (version,) = [p["value"]["version"] for p in blob["properties"] if p["type"] == "olm.package"]
            served_images[(blob["package"], version)] = blob["image"]
    assert served_images == dict((key, tag_ref) for key, (tag_ref, _digest_ref) in v1_catalog["bundles"].items())

    # catalogd's mutating webhook (registered by URL on 127.0.0.1) labels catalogs created without the name label
    custom = k8s.CustomObjectsApi(api)
    body = {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterCatalog",
        "metadata": {"name": "kubeforge-webhook-probe"},
        "spec": {"availabilityMode": "Unavailable", "source": {"type": "Image", "image": {"ref": v1_catalog["image"]}}},
    }
    created = custom.create_cluster_custom_object("olm.operatorframework.io", "v1", "clustercatalogs", body)
    custom.delete_cluster_custom_object("olm.operatorframework.io", "v1", "clustercatalogs", "kubeforge-webhook-probe")
    assert created["metadata"]["labels"]["olm.operatorframework.io/metadata.name"] == "kubeforge-webhook-probe"

    # olm_cluster_catalog_info reads the same content from catalogd and reports it per package and channel
    info = run_module(
        "olm_cluster_catalog_info", dict(name=v1_catalog["name"], package=PACKAGE, catalogd_ca_cert=olmv1["catalogd_ca_file"], kubeconfig=kubeconfig)
    )
    assert not info.get("failed") and "warnings" not in info, info
    (record,) = info["catalogs"]
    assert (record["serving"], record["resolved_image"], record["base_url"]) == (True, served["resolved_ref"], served["base_url"]), record
    (package,) = record["packages"]
    versions = sorted(version for (name, version) in served_images if name == PACKAGE)
    assert (package["name"], package["default_channel"], [c["name"] for c in package["channels"]]) == (PACKAGE, "stable", ["stable"]), package
    stable = package["channels"][0]
    assert stable["versions"] == versions and stable["head"] == f"{PACKAGE}.v{versions[-1]}", stable
    assert info["offered_by"] == [v1_catalog["name"]]
    # without a CA the testbed's catalogd certificate is refused (TLS verification is on); without contents, one LIST
    unverified = run_module("olm_cluster_catalog_info", dict(name=v1_catalog["name"], kubeconfig=kubeconfig))
    assert "packages" not in unverified["catalogs"][0] and "CERTIFICATE_VERIFY_FAILED" in unverified["catalogs"][0]["contents_error"], unverified
    states = run_module("olm_cluster_catalog_info", dict(contents=False, kubeconfig=kubeconfig))
    assert v1_catalog["name"] in [c["name"] for c in states["catalogs"]] and all("packages" not in c for c in states["catalogs"]), states

    again = run_module("olm_cluster_catalog", dict(name=v1_catalog["name"], image=v1_catalog["image"], wait=True, kubeconfig=kubeconfig))
    assert not again.get("failed") and again["changed"] is False, again

    pinned = served["resolved_ref"]
    refused = run_module("olm_cluster_catalog", dict(name="kubeforge-pinned", image=pinned, poll_interval_minutes=5, kubeconfig=kubeconfig))
    assert refused.get("failed") and "cannot be used with the digest reference" in refused["msg"], refused


def test_an_image_that_is_not_a_catalog_fails_fast_with_catalogds_error(v1_catalog, run_module, api, kubeconfig):
    """A bundle image (no index.configs label) named as a catalog: catalogd retries the tag forever; the module stops
    at once with catalogd's reason."""
    bundle_tag_ref = sorted(tag_ref for tag_ref, _digest_ref in v1_catalog["bundles"].values())[0]
    args = dict(name="kubeforge-not-a-catalog", image=bundle_tag_ref, wait=True, wait_timeout=240, kubeconfig=kubeconfig)
    try:
        result = run_module("olm_cluster_catalog", args)
        assert result.get("failed") and "catalog image is missing the required label" in result["msg"], result
        assert result["duration"] < 60, result
    finally:
        run_module("olm_cluster_catalog", dict(args, state="absent"))


def test_a_catalog_image_that_does_not_exist_fails_fast_with_catalogds_error(v1_catalog, run_module, api, kubeconfig):
    """catalogd keeps Retrying a tag the registry does not have; the module stops at once with its error, and
    olm_diagnose names that catalog for an extension that cannot resolve."""
    missing = v1_catalog["image"].rsplit(":", 1)[0] + ":v9-never-pushed"
    args = dict(name="kubeforge-missing-tag", image=missing, wait=True, wait_timeout=240, kubeconfig=kubeconfig)
    custom = k8s.CustomObjectsApi(api)
    try:
        result = run_module("olm_cluster_catalog", args)
        assert result.get("failed") and "manifest unknown" in result["msg"], result
        assert result["msg"].startswith("catalogd cannot serve ClusterCatalog kubeforge-missing-tag: Progressing=True/Retrying"), result["msg"]
        assert result["duration"] < 60, result

        # olm_diagnose of a ClusterExtension that can resolve from no catalog: operator-controller's resolution error,
        # the catalog that is not serving, and the installer ServiceAccount that does not exist - each named
        custom.create_cluster_custom_object(
            "olm.operatorframework.io",
            "v1",
            "clusterextensions",
            {
                "apiVersion": "olm.operatorframework.io/v1",
                "kind": "ClusterExtension",
                "metadata": {"name": "kf-v1diagnose"},
                "spec": {
                    "namespace": "kf-v1diagnose",
                    "serviceAccount": {"name": "nobody"},
                    "source": {"sourceType": "Catalog", "catalog": {"packageName": PACKAGE, "version": "9.9.9"}},
                },
            },
        )
        named = {"CatalogNotServing", "ServiceAccountMissing"}
        diagnosis = poll_until(
            lambda: run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension="kf-v1diagnose")),
            60,
            interval=2,
            describe="operator-controller's verdict on kf-v1diagnose",
            until=lambda r: r.get("failed") or (named <= set(r["causes"]) and "NotReconciled" not in r["causes"]),
            show=lambda r: r.get("summary") or r,
        )
        assert not diagnosis.get("failed"), diagnosis
        assert diagnosis["namespace"] == "kf-v1diagnose", diagnosis
        # the testbed runs catalogd and operator-controller as processes, not Deployments: nothing to read there
        assert any("OLM v1's namespace is not known" in note for note in diagnosis["notes"]), diagnosis
        not_serving = [f for f in diagnosis["findings"] if f["cause"] == "CatalogNotServing"]
        assert [f["objects"] for f in not_serving] == [["ClusterCatalog/kubeforge-missing-tag"]], not_serving
        assert "manifest unknown" in not_serving[0]["message"], not_serving

        def diagnosed_as(cause):
            return poll_until(
                lambda: run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension="kf-v1diagnose")),
                60,
                interval=2,
                describe=f"olm_diagnose to name {cause} for kf-v1diagnose",
                until=lambda r: r.get("failed") or cause in r["causes"],
                show=lambda r: r.get("summary") or r,
            )

        # with its ServiceAccount there, operator-controller resolves - and stops at the catalog that is not served
        core = k8s.CoreV1Api(api)
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="kf-v1diagnose")))
        core.create_namespaced_service_account("kf-v1diagnose", k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="nobody")))
        (blocked,) = [f for f in diagnosed_as("ResolutionBlocked")["findings"] if f["cause"] == "ResolutionBlocked"]
        assert 'catalog "kubeforge-missing-tag" is not being served' in blocked["message"], blocked
        assert "ClusterCatalog kubeforge-missing-tag is not served" in blocked["fix"], blocked
        # olm_cluster_extension stops at once on the same state: catalogd fails that catalog too, so no retry helps
        stopped = run_module(
            "olm_cluster_extension",
            dict(name="kf-v1blocked", namespace="kf-v1diagnose", package=PACKAGE, service_account="nobody", wait=True, wait_timeout=180, kubeconfig=kubeconfig),
        )
        assert stopped.get("failed") and "ClusterCatalog kubeforge-missing-tag cannot be served" in stopped["msg"], stopped
        assert "manifest unknown" in stopped["msg"] and stopped["duration"] < 60, stopped
        # without that catalog, it finds no such version
        removed = run_module("olm_cluster_catalog", dict(args, state="absent"))
        assert not removed.get("failed"), removed
        resolution = diagnosed_as("ResolutionFailed")
        (failed,) = [f for f in resolution["findings"] if f["cause"] == "ResolutionFailed"]
        assert f'no bundles found for package "{PACKAGE}" matching version "9.9.9"' in failed["message"], failed
        assert not {"ServiceAccountMissing", "CatalogNotServing", "ResolutionBlocked"} & set(resolution["causes"]), resolution["summary"]
    finally:
        _delete_namespace(api, "kf-v1diagnose")
        for extension_name in ("kf-v1diagnose", "kf-v1blocked"):
            try:
                custom.delete_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", extension_name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        removed = run_module("olm_cluster_catalog", dict(args, state="absent"))
        assert not removed.get("failed"), removed


def test_install_upgrade_pin_downgrade_and_uninstall(v1_catalog, run_module, api, kubeconfig):
    name, namespace = "kf-v1demo", "kf-v1demo"
    base = dict(
        name=name,
        namespace=namespace,
        package=PACKAGE,
        create_service_account=True,
        registry_auth=v1_catalog["registry_auth"],
        wait=True,
        wait_timeout=180,
        kubeconfig=kubeconfig,
    )
    try:
        # check mode creates nothing
        dry = run_module("olm_cluster_extension", dict(base, version="0.1.0"), check_mode=True)
        assert not dry.get("failed") and dry["changed"] is True, dry
        assert not _exists(lambda: k8s.CoreV1Api(api).read_namespace(namespace))

        first = run_module("olm_cluster_extension", dict(base, version="0.1.0"))
        assert not first.get("failed"), first
        assert first["changed"] is True and first["installed_version"] == "0.1.0", first
        assert first["installed_bundle"]["name"] == "kube-v1demo.v0.1.0"
        assert first["service_account"] == f"{name}-installer"
        assert first["installer"]["bundles"] == ["kube-v1demo.v0.1.0"]
        # check mode planned the installer the real run applied (its objects as dry runs, the same names and actions)
        assert {k: dry.get(k) for k in ("service_account", "installer", "warnings")} == {k: first.get(k) for k in ("service_account", "installer", "warnings")}
        assert _exists(lambda: k8s.ApiextensionsV1Api(api).read_custom_resource_definition(CRD))
        # least privilege: the installer may manage the CRDs and Deployments it installs, not others
        sa = first["service_account"]
        assert _can(api, namespace, sa, "update", "apiextensions.k8s.io", "customresourcedefinitions", CRD)
        assert not _can(api, namespace, sa, "update", "apiextensions.k8s.io", "customresourcedefinitions", "clustercatalogs.olm.operatorframework.io")
        assert not _can(api, namespace, sa, "delete", "apps", "deployments", "something-else", namespace)
        assert not _can(api, namespace, sa, "get", "", "secrets", None, "kube-system")
        # the ClusterRoles operator-controller generated carry the names the module predicted
        generated = k8s.RbacAuthorizationV1Api(api).list_cluster_role(label_selector=f"olm.operatorframework.io/owner-name={name}").items
        assert generated, "operator-controller generated no ClusterRole"
        for role in generated:
            assert _can(api, namespace, sa, "update", "rbac.authorization.k8s.io", "clusterroles", role.metadata.name), role.metadata.name

        again = run_module("olm_cluster_extension", dict(base, version="0.1.0"))
        assert not again.get("failed") and again["changed"] is False, again

        # v1.5.1's CRD has no spec.config: refused before anything is sent
        configured = run_module("olm_cluster_extension", dict(base, version=">=0.1.0 <0.3.0", config={"watchNamespace": namespace}))
        assert configured.get("failed") and "does not know spec.config" in configured["msg"], configured

        upgraded = run_module("olm_cluster_extension", dict(base, version=">=0.1.0 <0.3.0", crd_upgrade_safety="Strict"))
        assert not upgraded.get("failed"), upgraded
        assert upgraded["installed_version"] == "0.2.0", upgraded  # the newest inside the range, not 0.3.0
        assert sorted(upgraded["installer"]["bundles"]) == ["kube-v1demo.v0.1.0", "kube-v1demo.v0.2.0"]
        assert upgraded["cluster_extension"]["spec"]["install"] == {"preflight": {"crdUpgradeSafety": {"enforcement": "Strict"}}}

        blocked = run_module("olm_cluster_extension", dict(base, version="0.1.0"))
        assert blocked.get("failed"), blocked
        assert 'error upgrading from currently installed version "0.2.0"' in blocked["msg"], blocked["msg"]
        assert blocked["installed_version"] == "0.2.0"

        downgraded = run_module("olm_cluster_extension", dict(base, version="0.1.0", upgrade_constraint_policy="SelfCertified"))
        assert not downgraded.get("failed"), downgraded
        assert downgraded["installed_version"] == "0.1.0"

        missing = run_module("olm_cluster_extension", dict(base, version="9.9.9", upgrade_constraint_policy="SelfCertified"))
        assert missing.get("failed"), missing
        assert f'no bundles found for package "{PACKAGE}" matching version "9.9.9"' in missing["msg"], missing["msg"]

        info = run_module("olm_operator_info", dict(namespace=namespace, kubeconfig=kubeconfig))
        assert not info.get("failed"), info
        (summary,) = info["cluster_extensions"]
        assert summary["name"] == name and summary["installed_version"] == "0.1.0" and summary["version_constraint"] == "9.9.9"
        assert summary["installed"] is False  # the current generation (9.9.9) cannot be resolved

        refused = run_module("olm_cluster_extension", dict(name=name, state="absent", wait=True, kubeconfig=kubeconfig))
        assert refused.get("failed") and CRD in refused["msg"] and "delete_crds_and_data=true" in refused["msg"], refused
        assert _exists(lambda: k8s.ApiextensionsV1Api(api).read_custom_resource_definition(CRD))

        removed = run_module(
            "olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, wait_timeout=180, kubeconfig=kubeconfig)
        )
        assert not removed.get("failed") and removed["changed"] is True, removed
        assert removed["deleted_crds"] == [CRD]
        assert not _exists(lambda: k8s.ApiextensionsV1Api(api).read_custom_resource_definition(CRD))
        assert not _exists(lambda: k8s.CoreV1Api(api).read_namespaced_service_account(sa, namespace))
        assert not k8s.RbacAuthorizationV1Api(api).list_cluster_role(label_selector=f"olm.operatorframework.io/owner-name={name}").items

        gone = run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, kubeconfig=kubeconfig))
        assert not gone.get("failed") and gone["changed"] is False, gone
    finally:
        run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        _delete_namespace(api, namespace)


def test_a_service_account_of_the_user_gets_the_rbac_but_is_never_taken_over(v1_catalog, run_module, api, kubeconfig):
    name = namespace = "kf-v1usersa"
    core = k8s.CoreV1Api(api)
    try:
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace)))
        core.create_namespaced_service_account(namespace, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="mine")))
        installed = run_module(
            "olm_cluster_extension",
            dict(
                name=name,
                namespace=namespace,
                package=PACKAGE,
                version="0.1.0",
                service_account="mine",
                create_service_account=True,
                registry_auth=v1_catalog["registry_auth"],
                wait=True,
                wait_timeout=120,
                kubeconfig=kubeconfig,
            ),
        )
        assert not installed.get("failed") and installed["installed_version"] == "0.1.0", installed
        assert "ServiceAccount" not in [o["kind"] for o in installed["installer"]["objects"]]
        assert not (core.read_namespaced_service_account("mine", namespace).metadata.labels or {})
        removed = run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        assert not removed.get("failed"), removed
        assert _exists(lambda: core.read_namespaced_service_account("mine", namespace))
        assert not _exists(lambda: k8s.RbacAuthorizationV1Api(api).read_cluster_role(f"{name}-installer"))
    finally:
        run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        _delete_namespace(api, namespace)


def test_a_crd_owned_by_olm_v0_is_refused_fast(v1_catalog, run_module, api, kubeconfig):
    name = namespace = "kf-v1conflict-" + os.urandom(3).hex()
    crd = yaml.safe_load((v1_catalog["bundle_dirs"][PACKAGE] / "0.1.0" / V1DEMO_CRD_FILE).read_text())
    crd["metadata"]["labels"] = {"olm.managed": "true", f"operators.coreos.com/{PACKAGE}.elsewhere": ""}
    extensions = k8s.ApiextensionsV1Api(api)
    core = k8s.CoreV1Api(api)
    rbac = k8s.RbacAuthorizationV1Api(api)
    try:
        extensions.create_custom_resource_definition(crd)
        base = dict(name=name, namespace=namespace, package=PACKAGE, version="0.1.0", wait=True, wait_timeout=120, kubeconfig=kubeconfig)
        derived = run_module("olm_cluster_extension", dict(base, create_service_account=True, registry_auth=v1_catalog["registry_auth"]))
        assert derived.get("failed"), derived
        assert f"CustomResourceDefinition {CRD} (managed by OLM v0 (operator {PACKAGE}.elsewhere))" in derived["msg"], derived["msg"]
        assert not _exists(lambda: k8s.CustomObjectsApi(api).get_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", name))
        # with the user's own ServiceAccount nothing is read beforehand: operator-controller's refusal ends the wait at once
        # (the test makes that ServiceAccount a cluster-admin, so that ownership, not permissions, stops the install)
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace)))
        core.create_namespaced_service_account(namespace, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="mine")))
        rbac.create_cluster_role_binding(
            k8s.V1ClusterRoleBinding(
                metadata=k8s.V1ObjectMeta(name=name),
                role_ref=k8s.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="cluster-admin"),
                subjects=[k8s.RbacV1Subject(kind="ServiceAccount", name="mine", namespace=namespace)],
            )
        )
        refused = run_module("olm_cluster_extension", dict(base, service_account="mine"))
        assert refused.get("failed") and "cannot be managed by operator-controller" in refused["msg"], refused
        assert refused["duration"] < 60, refused["duration"]
        conflict = diagnosed(run_module, kubeconfig, name, "OwnershipConflict")
        assert CRD in conflict["message"] and "remove that installation first" in conflict["fix"], conflict
    finally:
        run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        _delete_namespace(api, namespace)
        for delete, what in ((extensions.delete_custom_resource_definition, CRD), (rbac.delete_cluster_role_binding, name)):
            try:
                delete(what)
            except ApiException as exc:
                if exc.status != 404:
                    raise


def test_ownnamespace_only_bundle_is_refused(v1_catalog, run_module, api, kubeconfig):
    name = namespace = "kf-v1ownns"
    base = dict(name=name, namespace=namespace, package="kube-ownns", wait=True, wait_timeout=120, kubeconfig=kubeconfig)
    try:
        # deriving the installer's permissions reads the bundle: refused before anything is created
        derived = run_module("olm_cluster_extension", dict(base, create_service_account=True, registry_auth=v1_catalog["registry_auth"]))
        assert derived.get("failed") and "AllNamespaces" in derived["msg"], derived
        assert not _exists(lambda: k8s.CustomObjectsApi(api).get_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", name))

        # with a ServiceAccount of the user's, operator-controller's own refusal fails the module
        k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=namespace)))
        k8s.CoreV1Api(api).create_namespaced_service_account(namespace, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="installer")))
        refused = run_module("olm_cluster_extension", dict(base, service_account="installer"))
        assert refused.get("failed"), refused
        assert "do not support targeting all namespaces" in refused["msg"], refused["msg"]
        mode = diagnosed(run_module, kubeconfig, name, "InstallModeMismatch")
        assert "do not support targeting all namespaces" in mode["message"] and "OLM v0" in mode["fix"], mode
    finally:
        run_module("olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        _delete_namespace(api, namespace)


def test_service_account_required_error_names_what_is_needed(v1_catalog, run_module, api, kubeconfig):
    result = run_module("olm_cluster_extension", dict(name="kf-v1nosa", namespace="kf-v1nosa", package=PACKAGE, kubeconfig=kubeconfig))
    assert result.get("failed"), result
    assert "set service_account" in result["msg"] and "create_service_account=true" in result["msg"], result["msg"]
    # nothing to derive permissions from: refused, naming the request and the catalogs searched
    nothing = run_module(
        "olm_cluster_extension",
        dict(
            name="kf-v1nosa",
            namespace="kf-v1nosa",
            package=PACKAGE,
            version="9.9.9",
            create_service_account=True,
            registry_auth=v1_catalog["registry_auth"],
            kubeconfig=kubeconfig,
        ),
    )
    assert nothing.get("failed"), nothing
    assert f"no bundle of package {PACKAGE} with version 9.9.9" in nothing["msg"] and v1_catalog["name"] in nothing["msg"], nothing["msg"]
    assert not _exists(lambda: k8s.CustomObjectsApi(api).get_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", "kf-v1nosa"))
    assert not _exists(lambda: k8s.CoreV1Api(api).read_namespace("kf-v1nosa"))


def test_an_uninstall_held_by_finalizers_names_what_holds_it(v1_catalog, run_module, api, kubeconfig):
    """A custom resource whose finalizer was its (now uninstalled) operator's keeps the CRD, and so the uninstall,
    from ending: the timeout names that object and its finalizer."""
    name = namespace = "kf-v1held"
    custom = k8s.CustomObjectsApi(api)
    held = {"apiVersion": "v1demo.kubeforge.io/v1alpha1", "kind": "KubeV1Demo", "metadata": {"name": "held", "finalizers": ["example.kubeforge.io/held"]}}
    try:
        installed = run_module(
            "olm_cluster_extension",
            dict(name=name, namespace=namespace, package=PACKAGE, version="0.1.0", create_service_account=True,
                 registry_auth=v1_catalog["registry_auth"], wait=True, wait_timeout=180, kubeconfig=kubeconfig),
        )
        assert not installed.get("failed"), installed
        custom.create_namespaced_custom_object("v1demo.kubeforge.io", "v1alpha1", namespace, "kubev1demos", held)
        stuck = run_module(
            "olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, wait_timeout=15, kubeconfig=kubeconfig)
        )
        assert stuck.get("failed"), stuck
        expected = f"CustomResourceDefinition {CRD} waits for 1 of its objects to be deleted - {namespace}/held (finalizers: example.kubeforge.io/held)"
        assert expected in stuck["msg"], stuck["msg"]
    finally:
        try:
            custom.patch_namespaced_custom_object(
                "v1demo.kubeforge.io", "v1alpha1", namespace, "kubev1demos", "held", {"metadata": {"finalizers": None}}
            )
        except ApiException as exc:
            if exc.status != 404:
                raise
        removed = run_module(
            "olm_cluster_extension", dict(name=name, state="absent", delete_crds_and_data=True, wait=True, wait_timeout=180, kubeconfig=kubeconfig)
        )
        assert not removed.get("failed"), removed
        crds = k8s.ApiextensionsV1Api(api)
        poll_until(lambda: _exists(lambda: crds.read_custom_resource_definition(CRD)), 60, 0.5, f"{CRD} to be deleted", until=lambda e: not e)
        _delete_namespace(api, namespace)
