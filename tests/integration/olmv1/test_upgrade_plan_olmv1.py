# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_upgrade_plan's OLM v1 rows against the testbed's real catalogd and operator-controller.

The test catalog of conftest.py (kube-v1demo 0.1.0 -> 0.2.0 -> 0.3.0 in channel stable), as catalogd serves it, is
published again as a catalog of this file's own (``kubeforge-olmv1-plan``) with what the module judges added: an
``olm.maxOpenShiftVersion`` per bundle (0.1.0: 4.20, 0.2.0: 4.21, 0.3.0: 4.22) and ``olm.deprecations`` for the
package, the channel stable and the bundle 0.1.0. operator-controller installs kube-v1demo 0.1.0 from it (a version
range, channel stable, a selector naming that catalog) and reports the deprecations itself in the ClusterExtension's
conditions. The module then reads the ClusterExtension and is given target catalogs: what catalogd serves (the path
0.1.0 -> 0.2.0 -> 0.3.0 for OpenShift 4.22, and the deprecations operator-controller reports), a directory without
the package, and none.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import ssl
import urllib.request

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from lib.polling import poll_until
from lib.runners import run_module_subprocess

# One xdist worker for every file of this group: a second ClusterCatalog serving kube-v1demo (resolution from the
# conftest's catalog without a selector would be ambiguous while it exists), kube-v1demo's CRD.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("olmv1")]

GROUP, VERSION = "olm.operatorframework.io", "v1"
PACKAGE = "kube-v1demo"
PLAN_CATALOG = "kubeforge-olmv1-plan"
NAME_LABEL = "olm.operatorframework.io/metadata.name"
EXTENSION = NAMESPACE = "kf-v1plan"
MAXIMA = {"0.1.0": "4.20", "0.2.0": "4.21", "0.3.0": "4.22"}
DEPRECATIONS = [
    {"reference": {"schema": "olm.package"}, "message": "kube-v1demo moves to kube-v2demo"},
    {"reference": {"schema": "olm.channel", "name": "stable"}, "message": "stable ends with 0.3.0"},
    {"reference": {"schema": "olm.bundle", "name": f"{PACKAGE}.v0.1.0"}, "message": "0.1.0 has a CVE"},
]


def served_blobs(olmv1, base_url):
    """What catalogd serves for a ClusterCatalog (``<base>/api/v1/all``, over TLS with the testbed CA)."""
    context = ssl.create_default_context(cafile=olmv1["catalogd_ca_file"])
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), urllib.request.ProxyHandler({}))
    with opener.open(base_url + "/api/v1/all", timeout=10) as response:
        return [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]


def bundle_version(blob):
    (version,) = [p["value"]["version"] for p in blob["properties"] if p["type"] == "olm.package"]
    return version


def with_plan_properties(blobs):
    """The blobs of kube-v1demo with a maximum per bundle and the deprecations added."""
    out = []
    for blob in copy.deepcopy(blobs):
        if blob.get("package", blob.get("name")) != PACKAGE:
            continue
        if blob["schema"] == "olm.bundle":
            blob["properties"].append({"type": "olm.maxOpenShiftVersion", "value": MAXIMA[bundle_version(blob)]})
        out.append(blob)
    out.append({"schema": "olm.deprecations", "package": PACKAGE, "entries": DEPRECATIONS})
    return out


def write_fbc(directory, blobs):
    by_package = {}
    for blob in blobs:
        by_package.setdefault(blob.get("package", blob.get("name")), []).append(blob)
    for package, docs in by_package.items():
        (directory / package).mkdir(parents=True)
        (directory / package / "catalog.json").write_text("".join(json.dumps(d, sort_keys=True) + "\n" for d in docs))
    return directory


def custom_objects(api):
    return k8s.CustomObjectsApi(api)


def read_extension(api):
    return custom_objects(api).get_cluster_custom_object(GROUP, VERSION, "clusterextensions", EXTENSION)


@pytest.fixture(scope="module")
def plan_catalog(v1_catalog, olmv1, kubeconfig, tmp_path_factory):
    """kube-v1demo as catalogd serves the conftest's catalog, plus maxima and deprecations, served by a ClusterCatalog
    of this file: ``{name, served (its blobs as catalogd serves them), file (the same in one file), others (the
    conftest catalog's blobs of the other packages), work}``."""
    work = tmp_path_factory.mktemp("olmv1-plan")
    original = served_blobs(olmv1, v1_catalog["served"]["base_url"])
    fbc = write_fbc(work / "catalog", with_plan_properties(original))
    image = f"{olmv1['registry']}/kubeforge/olmv1/plan-catalog:test"
    auth = dict(registry_username=olmv1["registry_username"], registry_password=olmv1["registry_password"], ca_file=olmv1["registry_ca_file"])
    pushed = run_module_subprocess(work, "catalog_image", dict(auth, path=str(fbc), image=image, push=True))
    assert not pushed.get("failed"), pushed
    args = dict(name=PLAN_CATALOG, image=image, wait=True, wait_timeout=180, kubeconfig=kubeconfig)
    try:
        served = run_module_subprocess(work, "olm_cluster_catalog", args)
        assert not served.get("failed"), served
        blobs = served_blobs(olmv1, served["base_url"])
        single = work / "served.json"
        single.write_text("".join(json.dumps(b) + "\n" for b in blobs))
        others = [b for b in original if b.get("package", b.get("name")) != PACKAGE]
        yield dict(name=PLAN_CATALOG, served=blobs, file=single, others=others, work=work)
    finally:
        run_module_subprocess(work, "olm_cluster_catalog", dict(args, state="absent"))


@pytest.fixture(scope="module")
def installed(plan_catalog, v1_catalog, api, kubeconfig):
    """kube-v1demo 0.1.0 installed by operator-controller from the plan catalog; the ClusterExtension as read back."""
    work = plan_catalog["work"]
    args = dict(
        name=EXTENSION,
        namespace=NAMESPACE,
        package=PACKAGE,
        version=">=0.1.0 <0.2.0",
        channels=["stable"],
        catalog_selector={"matchLabels": {NAME_LABEL: PLAN_CATALOG}},
        create_service_account=True,
        registry_auth=v1_catalog["registry_auth"],
        wait=True,
        wait_timeout=180,
        kubeconfig=kubeconfig,
    )
    try:
        result = run_module_subprocess(work, "olm_cluster_extension", args)
        assert not result.get("failed"), result
        yield read_extension(api)
    finally:
        run_module_subprocess(work, "olm_cluster_extension", dict(name=EXTENSION, state="absent", delete_crds_and_data=True, wait=True, kubeconfig=kubeconfig))
        try:
            k8s.CoreV1Api(api).delete_namespace(NAMESPACE)
        except ApiException as exc:
            if exc.status != 404:
                raise


def plan(work, kubeconfig, **args):
    result = run_module_subprocess(work, "olm_upgrade_plan", dict(kubeconfig=kubeconfig, **args))
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False
    return result


def v1_row(result):
    (row,) = [op for op in result["operators"] if op["generation"] == "v1" and op["name"] == EXTENSION]
    return row


def conditions(ext):
    return {c["type"]: c for c in (ext.get("status") or {}).get("conditions") or []}


def reported_deprecations(ext):
    """operator-controller's deprecation conditions as the module's ``deprecations`` entries (scope, message)."""
    conds = conditions(ext)
    found = []
    for scope, kind in (("package", "PackageDeprecated"), ("channel", "ChannelDeprecated"), ("bundle", "BundleDeprecated")):
        if conds[kind]["status"] == "True":
            found.extend((scope, line) for line in conds[kind]["message"].split("\n") if line)
    return found


def test_installed_by_operator_controller_with_a_path_in_what_catalogd_serves(installed, plan_catalog, api, kubeconfig):
    ext = installed
    bundle = ext["status"]["install"]["bundle"]
    assert (bundle["name"], bundle["version"]) == (f"{PACKAGE}.v0.1.0", "0.1.0"), ext["status"]
    assert conditions(ext)["Installed"]["status"] == "True"
    # operator-controller installs manifests, no CSV: OLM v0 has nothing of it
    # copies of other tests' AllNamespaces operators (olm_migrate's) may sit in every namespace
    csvs = custom_objects(api).list_namespaced_custom_object
    own = csvs("operators.coreos.com", "v1alpha1", NAMESPACE, "clusterserviceversions", label_selector="!olm.copiedFrom")
    assert not own["items"]

    # no packages filter: every installed operator of the cluster is judged, none of OLM v0 rows is this one
    result = plan(plan_catalog["work"], kubeconfig, openshift_version="4.22", catalogs=[{"source": PLAN_CATALOG, "file": str(plan_catalog["file"])}])
    assert not [op for op in result["operators"] if op["generation"] == "v0" and (op["package"] == PACKAGE or op["name"] == bundle["name"])]
    row = v1_row(result)
    spec = ext["spec"]["source"]["catalog"]
    assert (row["namespace"], row["package"], row["channel"], row["installed_version"], row["source"]) == (
        None,
        spec["packageName"],
        spec["channels"][0],
        bundle["version"],
        spec["selector"]["matchLabels"][NAME_LABEL],
    )
    # the installed bundle's maximum as catalogd serves it; OLM v1's rows are judged, but not OLM v0's blockers
    assert (row["max_openshift_version"], row["blocks_upgrade"], row["block_reason"]) == (
        "4.20",
        True,
        f"- maximum supported OCP version for {EXTENSION} is 4.20",
    )
    assert f"/{EXTENSION}" not in " ".join(result["blockers"]) and EXTENSION not in (result["olm_condition"]["message"] or "")
    assert row["target_catalog"] == {"package": True, "channel": True}
    assert (row["path"], row["target_version"]) == (["0.1.0", "0.2.0", "0.3.0"], "0.3.0")
    assert row["action"] == {"kind": "upgrade", "to_version": "0.3.0", "to_channel": None, "reason": "0.3.0 allows OpenShift 4.22"}
    assert result["target"] == "4.22" and result["verdict"] in ("needs_action", "blocked")
    # what operator-controller reports is what the module reports, entry for entry
    assert [(d["scope"], d["message"]) for d in row["deprecations"]] == reported_deprecations(ext)
    assert [d["name"] for d in row["deprecations"]] == [PACKAGE, "stable", bundle["name"]]

    # 4.21: one step; a ClusterExtension is in neither blockers nor OLM v0's condition, which speak for CSVs
    served = [{"source": PLAN_CATALOG, "file": str(plan_catalog["file"])}]
    one = plan(plan_catalog["work"], kubeconfig, openshift_version="4.21.3", packages=[PACKAGE], catalogs=served)
    assert (v1_row(one)["path"], v1_row(one)["action"]["kind"], v1_row(one)["action"]["to_version"]) == (["0.1.0", "0.2.0"], "upgrade", "0.2.0")
    assert (one["target"], one["verdict"], one["blockers"], one["olm_condition"]["status"]) == ("4.21", "needs_action", [], "True")
    # 4.23 (= 5.0): no version of the package allows it - a blocker without a way forward
    none = plan(plan_catalog["work"], kubeconfig, openshift_version="4.23", packages=[PACKAGE], catalogs=served)
    assert (v1_row(none)["action"]["kind"], v1_row(none)["path"], none["target"], none["verdict"]) == ("remove_or_replace", [], "5.0", "blocked")
    # 4.20: the installed bundle allows it, nothing to do
    ready = plan(
        plan_catalog["work"], kubeconfig, openshift_version="4.20", packages=[PACKAGE], catalogs=[{"source": PLAN_CATALOG, "file": str(plan_catalog["file"])}]
    )
    assert (v1_row(ready)["blocks_upgrade"], v1_row(ready)["action"]["kind"], v1_row(ready)["path"], ready["verdict"]) == (False, "none", [], "ready")


def test_a_target_catalog_without_the_package(installed, plan_catalog, kubeconfig):
    gone = write_fbc(plan_catalog["work"] / "without-package", plan_catalog["others"])
    result = plan(plan_catalog["work"], kubeconfig, openshift_version="4.22", packages=[PACKAGE], catalogs=[{"source": PLAN_CATALOG, "dir": str(gone)}])
    row = v1_row(result)
    # the entry of the ClusterCatalog the selector names has no package: nothing to upgrade to there; the installed
    # bundle's properties are in no target catalog, so it is not judged as blocking
    assert (row["installed_version"], row["source"], row["max_openshift_version"], row["blocks_upgrade"]) == ("0.1.0", PLAN_CATALOG, None, False)
    assert (row["target_catalog"], row["deprecations"], row["path"], row["target_version"]) == ({"package": False, "channel": False}, [], [], None)
    assert row["action"] == {"kind": "remove_or_replace", "to_version": None, "to_channel": None, "reason": f"the target catalog has no package {PACKAGE}"}
    assert (result["verdict"], result["blockers"]) == ("needs_action", [])


def test_without_its_catalog_the_row_is_unknown(installed, plan_catalog, kubeconfig):
    # an entry for another catalog only: the selector names the plan catalog, so that entry is not searched
    other = dict(source="some-other-catalog", file=str(plan_catalog["file"]))
    result = plan(plan_catalog["work"], kubeconfig, openshift_version="4.22", packages=[PACKAGE], catalogs=[other])
    row = v1_row(result)
    assert (row["source"], row["max_openshift_version"], row["blocks_upgrade"], row["target_catalog"]) == (PLAN_CATALOG, None, False, None)
    assert row["action"]["kind"] == "unknown" and PLAN_CATALOG in row["action"]["reason"], row["action"]
    assert "catalogs[0] (some-other-catalog) is the catalog of no installed operator" in str(result["warnings"])
    none = v1_row(plan(plan_catalog["work"], kubeconfig, openshift_version="4.22", packages=[PACKAGE]))
    assert (none["installed_version"], none["source"], none["action"]["kind"], none["path"]) == ("0.1.0", PLAN_CATALOG, "unknown", [])


def test_deprecations_follow_operator_controller_when_no_channel_is_named(installed, plan_catalog, api, kubeconfig):
    """operator-controller reports a channel deprecation only for channels spec.source.catalog.channels names: with
    none named, it resolves from every channel and the channel's deprecation is not the extension's."""
    custom = custom_objects(api)
    custom.patch_cluster_custom_object(GROUP, VERSION, "clusterextensions", EXTENSION, {"spec": {"source": {"catalog": {"channels": None}}}})

    def settled(ext):
        conds = conditions(ext)
        return conds.get("ChannelDeprecated", {}).get("observedGeneration") == ext["metadata"]["generation"] and conds["Installed"]["status"] == "True"

    ext = poll_until(lambda: read_extension(api), 60, 0.5, "operator-controller to judge kf-v1plan without channels", until=settled)
    assert conditions(ext)["ChannelDeprecated"]["status"] == "False" and ext["status"]["install"]["bundle"]["version"] == "0.1.0"
    result = plan(
        plan_catalog["work"], kubeconfig, openshift_version="4.22", packages=[PACKAGE], catalogs=[{"source": PLAN_CATALOG, "file": str(plan_catalog["file"])}]
    )
    row = v1_row(result)
    assert row["channel"] is None
    assert (
        [(d["scope"], d["message"]) for d in row["deprecations"]]
        == reported_deprecations(ext)
        == [
            ("package", "kube-v1demo moves to kube-v2demo"),
            ("bundle", "0.1.0 has a CVE"),
        ]
    )
    # the path runs through the package's default channel, the one channel there is
    assert (row["path"], row["action"]["kind"], row["action"]["to_channel"]) == (["0.1.0", "0.2.0", "0.3.0"], "upgrade", None)
