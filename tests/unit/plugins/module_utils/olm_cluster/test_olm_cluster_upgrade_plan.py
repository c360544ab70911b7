# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_cluster.upgrade_plan: one LIST per kind whatever the number of operators, CSVs matched to their
Subscriptions and catalogs, OLM v1 extensions judged from their catalog, target catalogs loaded from a directory
or a file like the catalog modules.

The fake client stands in where the testbed cannot help (a 403 on one kind, many operators); the module against
the testbed's OLM is tests/integration/olm/test_upgrade_plan.py.
"""

import contextlib
import json
import os
import re

import pytest
from lib.fakes import FakeDynamicClient, api_exception

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import upgrade_plan as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import upgrade_plan as glue

OPERATORS = "operators.coreos.com/v1alpha1"
EXTENSIONS = "olm.operatorframework.io/v1"
V0 = {(OPERATORS, "Subscription"), (OPERATORS, "ClusterServiceVersion")}
V1 = V0 | {(EXTENSIONS, "ClusterExtension")}


def props(package, version, maximum=None):
    items = [{"type": "olm.package", "value": {"packageName": package, "version": version}}]
    if maximum:
        items.append({"type": core.MAX_OPENSHIFT_VERSION, "value": maximum})
    return items


def csv(name, namespace, version, maximum=None, package="kube-demo", **meta):
    annotations = {core.PROPERTIES_ANNOTATION: json.dumps({"properties": props(package, version, maximum)})}
    annotations.update(meta.pop("annotations", {}))
    return {"metadata": dict(name=name, namespace=namespace, annotations=annotations, **meta), "spec": {"version": version}, "status": {"phase": "Succeeded"}}


def subscription(namespace, installed, package="kube-demo", source="demo", channel="stable"):
    return {
        "metadata": {"name": package, "namespace": namespace},
        "spec": {"name": package, "source": source, "sourceNamespace": "olm", "channel": channel},
        "status": {"installedCSV": installed, "currentCSV": installed},
    }


def extension(name, package, version, catalog=None):
    spec = {"namespace": name, "source": {"sourceType": "Catalog", "catalog": {"packageName": package}}}
    if catalog:
        spec["source"]["catalog"]["selector"] = {"matchLabels": {glue.CATALOG_NAME_LABEL: catalog}}
    return {"metadata": {"name": name}, "spec": spec, "status": {"install": {"bundle": {"name": "%s.v%s" % (package, version), "version": version}}}}


def catalog_docs(package="kube-demo"):
    docs = [{"schema": "olm.package", "name": package, "defaultChannel": "stable"}]
    entries = [{"name": package + ".v0.0.1"}, {"name": package + ".v0.0.2", "replaces": package + ".v0.0.1"}]
    docs.append({"schema": "olm.channel", "package": package, "name": "stable", "entries": entries})
    for version, maximum in (("0.0.1", "4.20"), ("0.0.2", "4.22")):
        docs.append(
            {
                "schema": "olm.bundle",
                "name": "%s.v%s" % (package, version),
                "package": package,
                "image": "r.example/b:" + version,
                "properties": props(package, version, maximum),
            }
        )
    return docs


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "catalog.json"
    path.write_text("\n".join(json.dumps(d) for d in catalog_docs()))
    return str(path)


@pytest.fixture
def catalog_dir(tmp_path):
    root = tmp_path / "configs" / "kube-v1demo"
    root.mkdir(parents=True)
    (root / "catalog.json").write_text("\n".join(json.dumps(d) for d in catalog_docs("kube-v1demo")))
    return str(tmp_path / "configs")


def objects(count=1):
    csvs = [csv("kube-demo.v0.0.1", "ns%d" % i, "0.0.1", "4.20") for i in range(count)]
    subs = [subscription("ns%d" % i, "kube-demo.v0.0.1") for i in range(count)]
    # a copied CSV the label selector missed (IsCopied: annotation naming another namespace), and one without Subscription
    csvs.append(csv("kube-demo.v0.0.1", "elsewhere", "0.0.1", "4.20", annotations={"olm.operatorNamespace": "ns0"}))
    csvs.append(csv("kube-lone.v1.0.0", "lone", "1.0.0", "4.19", package="kube-lone"))
    return {"ClusterServiceVersion": csvs, "Subscription": subs, "ClusterExtension": [extension("v1demo", "kube-v1demo", "0.0.1")]}


@pytest.mark.parametrize("count", [1, 25])
def test_one_list_per_kind_whatever_the_number_of_operators(count, catalog_file):
    client = FakeDynamicClient(objects(count), served=V1)
    result = glue.upgrade_plan(client, "4.21", catalogs=[{"source": "demo", "file": catalog_file}])
    assert client.requests == [
        ("ClusterServiceVersion", "LIST", "!olm.copiedFrom", None),
        ("Subscription", "LIST", None, None),
        ("ClusterExtension", "LIST", None, None),
    ]
    names = [(op["namespace"], op["name"]) for op in result["operators"]]
    assert ("elsewhere", "kube-demo.v0.0.1") not in names  # copied
    assert len(result["operators"]) == count + 2
    assert result["blockers"] == ["lone/kube-lone.v1.0.0"] + ["ns%d/kube-demo.v0.0.1" % i for i in sorted(range(count), key=lambda i: "ns%d" % i)]


def test_rows_from_subscriptions_csvs_and_catalogs(catalog_file, catalog_dir):
    client = FakeDynamicClient(objects(), served=V1)
    result = glue.upgrade_plan(
        client,
        "4.21.3",
        catalogs=[{"source": "demo", "source_namespace": "olm", "file": catalog_file}, {"source": "v1-catalog", "dir": catalog_dir}],
    )
    by_name = {op["name"]: op for op in result["operators"]}
    demo = by_name["kube-demo.v0.0.1"]
    assert (demo["package"], demo["channel"], demo["source"], demo["max_openshift_version"]) == ("kube-demo", "stable", "demo", "4.20")
    assert demo["target_catalog"] == {"package": True, "channel": True}
    assert (demo["action"]["kind"], demo["target_version"], demo["path"]) == ("upgrade", "0.0.2", ["0.0.1", "0.0.2"])
    lone = by_name["kube-lone.v1.0.0"]  # no Subscription: package from olm.package, no catalog
    assert (lone["package"], lone["source"], lone["target_catalog"], lone["action"]["kind"]) == ("kube-lone", None, None, "unknown")
    v1 = by_name["v1demo"]  # its installed bundle's maximum comes from the catalog that has it
    assert (v1["generation"], v1["namespace"], v1["source"], v1["max_openshift_version"], v1["blocks_upgrade"]) == ("v1", None, "v1-catalog", "4.20", True)
    assert (v1["action"]["kind"], v1["action"]["to_version"]) == ("upgrade", "0.0.2")
    assert result["verdict"] == "blocked"  # kube-lone has no catalog
    assert result["blockers"] == ["lone/kube-lone.v1.0.0", "ns0/kube-demo.v0.0.1"]  # v1 extensions are not OLM's blockers
    assert "warnings" not in result


def test_a_csv_being_replaced_is_planned_from_its_successors_subscription(catalog_file):
    """An upgrade under way or stuck (the new CSV failing): OLM keeps the old CSV, Replacing, and still judges it; the
    Subscription names only the new one. The old one is planned from that Subscription's catalog and channel."""
    old = csv("kube-demo.v0.0.1", "ns0", "0.0.1", "4.20")
    new = csv("kube-demo.v0.0.2", "ns0", "0.0.2", "4.22")
    new["spec"]["replaces"] = "kube-demo.v0.0.1"
    client = FakeDynamicClient({"ClusterServiceVersion": [old, new], "Subscription": [subscription("ns0", "kube-demo.v0.0.2")]}, served=V0)
    result = glue.upgrade_plan(client, "4.21", catalogs=[{"source": "demo", "file": catalog_file}])
    by_name = {op["name"]: op for op in result["operators"]}
    replaced = by_name["kube-demo.v0.0.1"]
    assert (replaced["source"], replaced["channel"], replaced["blocks_upgrade"]) == ("demo", "stable", True)
    assert (replaced["action"]["kind"], replaced["path"]) == ("upgrade", ["0.0.1", "0.0.2"])
    assert by_name["kube-demo.v0.0.2"]["action"]["kind"] == "none"
    assert result["verdict"] == "needs_action"


def test_packages_narrow_the_plan(catalog_file):
    result = glue.upgrade_plan(FakeDynamicClient(objects(), served=V1), "4.21", catalogs=[{"source": "demo", "file": catalog_file}], packages=["kube-demo"])
    assert [op["name"] for op in result["operators"]] == ["kube-demo.v0.0.1"]
    assert result["verdict"] == "needs_action"


def test_a_v1_extension_without_its_catalog_is_unknown():
    result = glue.upgrade_plan(FakeDynamicClient(objects(), served=V1), "4.21", packages=["kube-v1demo"])
    (v1,) = result["operators"]
    assert (v1["max_openshift_version"], v1["blocks_upgrade"], v1["action"]["kind"]) == (None, False, "unknown")


def test_a_selector_naming_another_catalog_is_not_searched(catalog_dir):
    objs = objects()
    objs["ClusterExtension"] = [extension("v1demo", "kube-v1demo", "0.0.1", catalog="other")]
    result = glue.upgrade_plan(FakeDynamicClient(objs, served=V1), "4.21", catalogs=[{"source": "v1-catalog", "dir": catalog_dir}], packages=["kube-v1demo"])
    (v1,) = result["operators"]
    assert (v1["source"], v1["action"]["kind"]) == ("other", "unknown")
    assert result["warnings"] == ["catalogs[0] (v1-catalog) is the catalog of no installed operator"]


@pytest.mark.parametrize("catalog, target_catalog, kind", [("v1-catalog", {"package": False, "channel": False}, "remove_or_replace"), (None, None, "unknown")])
def test_the_catalog_a_selector_names_answers_without_the_package(catalog_file, catalog, target_catalog, kind):
    """The entry of the ClusterCatalog the selector names is the extension's target catalog even without its package
    (on the testbed: tests/integration/olmv1/test_upgrade_plan_olmv1.py); without a selector, no entry is known."""
    objs = objects()
    objs["ClusterExtension"] = [extension("v1demo", "kube-v1demo", "0.0.1", catalog=catalog)]
    result = glue.upgrade_plan(FakeDynamicClient(objs, served=V1), "4.21", catalogs=[{"source": "v1-catalog", "file": catalog_file}], packages=["kube-v1demo"])
    (v1,) = result["operators"]
    assert (v1["target_catalog"], v1["action"]["kind"], v1["blocks_upgrade"]) == (target_catalog, kind, False)


def test_without_olm_v1_no_extension_request():
    client = FakeDynamicClient(objects(), served=V0)
    glue.upgrade_plan(client, "4.21")
    assert [r[0] for r in client.requests] == ["ClusterServiceVersion", "Subscription"]


def test_extensions_a_stale_discovery_cache_lists_are_not_served():
    """The cache listed olm.operatorframework.io/v1 but the server answers 404 (a cluster started again at the same
    address without OLM v1, as the testbed's ocp-1 met it): no ClusterExtensions, no warning, no failure."""
    client = FakeDynamicClient(objects(), served=V1, errors={"ClusterExtension": api_exception(404, "Not Found")})
    result = glue.upgrade_plan(client, "4.21")
    assert "warnings" not in result
    assert all(op["generation"] == "v0" for op in result["operators"])


def test_forbidden_extensions_are_a_warning():
    client = FakeDynamicClient(objects(), served=V1, errors={"ClusterExtension": api_exception(403, "Forbidden")})
    result = glue.upgrade_plan(client, "4.21")
    assert result["warnings"][0].startswith("OLM v1 ClusterExtensions are not judged: ")
    assert all(op["generation"] == "v0" for op in result["operators"])


@pytest.mark.parametrize(
    "version, catalogs, message",
    [
        ("4.21", [{"source": "demo", "dir": "d", "registry_auth": {"username": "u"}}], "catalogs[0] (demo): registry_auth is refused without image"),
        ("latest", [], "openshift_version 'latest' is not a version"),
    ],
)
def test_refused_before_any_request(version, catalogs, message):
    client = FakeDynamicClient(objects(), served=V1)
    with pytest.raises(InvalidInputError, match=re.escape(message)):
        glue.upgrade_plan(client, version, catalogs=catalogs)
    assert client.requests == []


def test_an_image_is_pulled_with_its_registry_auth(monkeypatch, catalog_file):
    """The image branch goes through catalog.lookup.pulled_catalog with the registry options renamed back."""
    seen = {}

    @contextlib.contextmanager
    def fake_pull(params):
        seen.update(params)
        yield os.path.dirname(catalog_file), {"ref": params["source_image"], "digest": None}

    monkeypatch.setattr(glue, "pulled_catalog", fake_pull)
    model = glue.load_catalog({"source": "demo", "image": "r.example/c:v4.21", "registry_auth": {"username": "u", "password": "p", "ca_file": "ca.crt"}})
    assert seen == {"source_image": "r.example/c:v4.21", "registry_username": "u", "registry_password": "p", "ca_file": "ca.crt"}
    assert "kube-demo" in model


def test_only_the_installed_packages_of_a_catalog_are_converted(tmp_path):
    catalog = tmp_path / "three.json"
    catalog.write_text("\n".join(json.dumps(d) for name in ("kube-demo", "kube-other", "kube-v1demo") for d in catalog_docs(name)))
    catalogs = [{"source": "demo", "file": str(catalog)}]
    asked = []

    def loader(entry, packages):
        asked.append(sorted(packages))
        return glue.load_catalog(entry, packages)

    result = glue.upgrade_plan(FakeDynamicClient(objects(), served=V1), "4.21", catalogs=catalogs, catalog_loader=loader)
    assert asked == [["kube-demo", "kube-lone", "kube-v1demo"]]  # v0 Subscriptions/CSVs and v1 ClusterExtensions
    assert sorted(glue.load_catalog(catalogs[0], set(asked[0]))) == ["kube-demo", "kube-v1demo"]  # kube-other left out
    assert sorted(glue.load_catalog(catalogs[0])) == ["kube-demo", "kube-other", "kube-v1demo"]
    # the same plan as from the whole catalog
    whole = glue.upgrade_plan(
        FakeDynamicClient(objects(), served=V1), "4.21", catalogs=catalogs, catalog_loader=lambda entry, _packages: glue.load_catalog(entry)
    )
    assert result == whole
