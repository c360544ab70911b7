# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ClusterExtension definition, ServiceAccount requirement, operator-controller's verdict and bundle selection
(olmv1/cluster_extension.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce


def extension(generation=3, installed=None, progressing=None, bundle=None):
    conditions = []
    for cond_type, value in (("Installed", installed), ("Progressing", progressing)):
        if value:
            status, reason, observed, message = value
            conditions.append({"type": cond_type, "status": status, "reason": reason, "message": message, "observedGeneration": observed})
    obj = {
        "metadata": {"name": "demo", "generation": generation},
        "spec": {"namespace": "ns", "source": {"catalog": {"packageName": "kube-demo"}}},
        "status": {"conditions": conditions},
    }
    if bundle:
        obj["status"]["install"] = {"bundle": bundle}
    return obj


def test_definition_full_and_minimal():
    obj = ce.cluster_extension_definition(
        "demo",
        "ns",
        "kube-demo",
        version=">=0.0.1 <0.1.0",
        channels=["stable"],
        selector={"matchLabels": {"a": "b"}},
        upgrade_constraint_policy="SelfCertified",
        crd_upgrade_safety="None",
        config={"watchNamespace": "x"},
        service_account="demo-installer",
    )
    assert obj["spec"] == {
        "namespace": "ns",
        "serviceAccount": {"name": "demo-installer"},
        "source": {
            "sourceType": "Catalog",
            "catalog": {
                "packageName": "kube-demo",
                "version": ">=0.0.1 <0.1.0",
                "channels": ["stable"],
                "selector": {"matchLabels": {"a": "b"}},
                "upgradeConstraintPolicy": "SelfCertified",
            },
        },
        "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}},
        "config": {"configType": "Inline", "inline": {"watchNamespace": "x"}},
    }
    minimal = ce.cluster_extension_definition("demo", "ns", "kube-demo")
    assert minimal["spec"] == {"namespace": "ns", "source": {"sourceType": "Catalog", "catalog": {"packageName": "kube-demo"}}}


def _bad_version(text):
    raise ValueError("improper constraint: " + text)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"namespace": "Not_A_Label"}, "namespace 'Not_A_Label' is not valid"),
        ({"namespace": "x" * 64}, "at most 63"),
        ({"package": "UPPER"}, "package 'UPPER' is not valid"),
        ({"version": "1" * 65}, "longer than 64"),
        ({"version": "nope", "check_version": _bad_version}, "not a valid version constraint: improper constraint: nope"),
        ({"channels": ["Bad Channel"]}, "channel 'Bad Channel'"),
        ({"selector": {"labels": {}}}, "matchLabels and/or matchExpressions"),
        ({"upgrade_constraint_policy": "Whatever"}, "upgrade_constraint_policy must be one of"),
        ({"crd_upgrade_safety": "Lax"}, "crd_upgrade_safety must be one of"),
        ({"config": ["x"]}, "config must be a dictionary"),
        ({"service_account": "Bad SA"}, "service account 'Bad SA'"),
    ],
)
def test_definition_refuses(kwargs, message):
    args = dict(name="demo", namespace="ns", package="kube-demo")
    args.update(kwargs)
    with pytest.raises(ce.ClusterExtensionError, match=message):
        ce.cluster_extension_definition(**args)


@pytest.mark.parametrize(
    "selector, text",
    [
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["x", "y"]}, {"key": "old", "operator": "DoesNotExist"}]}, "tier in (x,y),!old"),
        (
            {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["z"]}, {"key": "c", "operator": "Exists"}]},
            "a=1,b notin (z),c",
        ),
    ],
)
def test_selector_string(selector, text):
    assert ce.selector_string(selector) == text


@pytest.mark.parametrize(
    "selector, message",
    [
        ({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]}, "operator In, NotIn, Exists or DoesNotExist"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "operator In of key a needs values"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "takes no values"),
        ({"labels": {}}, "matchLabels and/or matchExpressions"),
    ],
)
def test_selector_string_refuses(selector, message):
    with pytest.raises(ce.ClusterExtensionError, match=message):
        ce.selector_string(selector)


def _crd(required):
    schema = {"openAPIV3Schema": {"properties": {"spec": {"required": required, "properties": {}}}}}
    return {"spec": {"versions": [{"name": "v1", "storage": True, "schema": schema}]}}


@pytest.mark.parametrize(
    "crd, required",
    [
        (_crd(["namespace", "serviceAccount", "source"]), True),  # v1.0 .. v1.10
        (_crd(["namespace", "source"]), False),  # v1.11+
        (None, False),
        ({"spec": {}}, False),
    ],
)
def test_service_account_required(crd, required):
    assert ce.service_account_required(crd) is required


def test_unknown_spec_fields():
    crd = _crd(["namespace", "source"])
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = {"namespace": {}, "source": {}, "install": {}}
    definition = ce.cluster_extension_definition("demo", "ns", "kube-demo", config={"watchNamespace": "x"}, crd_upgrade_safety="Strict")
    assert ce.unknown_spec_fields(crd, definition) == ["spec.config"]
    assert ce.unknown_spec_fields(None, definition) == []


SUCCEEDED = ("True", "Succeeded", 3, "desired state reached")
INSTALLED = ("True", "Succeeded", 3, "Installed bundle x successfully")


@pytest.mark.parametrize(
    "obj, serving, verdict",
    [
        (None, True, ce.VERDICT_WAITING),
        (extension(installed=INSTALLED, progressing=SUCCEEDED, bundle={"name": "kube-demo.v0.0.2", "version": "0.0.2"}), True, ce.VERDICT_READY),
        # the status describes generation 2, the spec is at 3
        (extension(installed=("True", "Succeeded", 2, "m"), progressing=("True", "Succeeded", 2, "m")), True, ce.VERDICT_WAITING),
        (extension(installed=("True", "Succeeded", 2, "m"), progressing=SUCCEEDED), True, ce.VERDICT_WAITING),
        (extension(installed=("False", "Failed", 3, "No bundle installed"), progressing=("False", "Blocked", 3, "terminal")), True, ce.VERDICT_FAILED),
        (extension(progressing=("True", "Retrying", 3, 'no bundles found for package "kube-demo" matching version "9.9.9"')), True, ce.VERDICT_FAILED),
        # the same message while a catalog is still unpacking is not final
        (extension(progressing=("True", "Retrying", 3, 'no bundles found for package "kube-demo" matching version "9.9.9"')), False, ce.VERDICT_WAITING),
        (extension(progressing=("True", "Retrying", 3, 'error upgrading from currently installed version "0.0.2": no bundles found')), True, ce.VERDICT_FAILED),
        (
            extension(progressing=("True", "Retrying", 3, "supported install modes [OwnNamespace] do not support targeting all namespaces")),
            False,
            ce.VERDICT_FAILED,
        ),
        (extension(progressing=("True", "Retrying", 3, "installation cannot proceed due to missing ServiceAccount")), True, ce.VERDICT_FAILED),
        (
            extension(progressing=("True", "Retrying", 3, 'deployments.apps is forbidden: User "system:serviceaccount:ns:sa" cannot create')),
            True,
            ce.VERDICT_FAILED,
        ),
        (
            extension(
                progressing=(
                    "True",
                    "Retrying",
                    3,
                    "CustomResourceDefinition 'a.b' already exists in namespace '' and cannot be managed by operator-controller",
                )
            ),
            True,
            ce.VERDICT_FAILED,
        ),
        (extension(progressing=("True", "Retrying", 3, "unsupported bundle: webhookDefinitions are not supported")), True, ce.VERDICT_FAILED),
        (extension(progressing=("True", "Retrying", 3, 'validating upgrade for CRD "a.b" failed: scope changed')), True, ce.VERDICT_FAILED),
        (
            extension(progressing=("True", "Retrying", 3, 'error for resolved bundle "x.v1" with version "1.0.0": pulling: manifest unknown')),
            True,
            ce.VERDICT_FAILED,
        ),
        # transient: image pull errors, connection problems
        (extension(progressing=("True", "Retrying", 3, "error pulling image: connection refused")), True, ce.VERDICT_WAITING),
    ],
)
def test_verdict(obj, serving, verdict):
    assert ce.cluster_extension_verdict(obj, catalogs_serving=serving)[0] == verdict


@pytest.mark.parametrize(
    "labels, owner",
    [
        ({ce.OWNER_KIND_LABEL: "ClusterExtension", ce.OWNER_NAME_LABEL: "demo"}, None),
        ({ce.OWNER_KIND_LABEL: "ClusterExtension", ce.OWNER_NAME_LABEL: "other"}, "ClusterExtension other"),
        ({"olm.managed": "true", "operators.coreos.com/kube-demo.ns": ""}, "OLM v0 (operator kube-demo.ns)"),
        ({}, "something other than OLM v1"),
    ],
)
def test_foreign_owner(labels, owner):
    assert ce.foreign_owner({"metadata": {"name": "x", "labels": labels}}, "demo") == owner


V0_LABELS = {"olm.managed": "true", "operators.coreos.com/kube-demo.ns": "", "app.kubernetes.io/managed-by": "Helm"}


@pytest.mark.parametrize(
    "labels, annotations, owner",
    [
        # olm_migrate stamped Helm's keys for this extension: OLM v0's labels stay until the move ends
        (V0_LABELS, {"meta.helm.sh/release-name": "demo", "meta.helm.sh/release-namespace": "ns"}, None),
        # Helm's keys for another release, or the annotation without Helm's label: still OLM v0's
        (V0_LABELS, {"meta.helm.sh/release-name": "other"}, "OLM v0 (operator kube-demo.ns)"),
        ({"olm.managed": "true"}, {"meta.helm.sh/release-name": "demo"}, "OLM v0"),
        # another extension's object keeps being refused whatever its Helm keys say
        (
            {ce.OWNER_KIND_LABEL: "ClusterExtension", ce.OWNER_NAME_LABEL: "other", "app.kubernetes.io/managed-by": "Helm"},
            {"meta.helm.sh/release-name": "demo"},
            "ClusterExtension other",
        ),
    ],
)
def test_foreign_owner_accepts_helm_keys_of_the_extension(labels, annotations, owner):
    assert ce.foreign_owner({"metadata": {"name": "x", "labels": labels, "annotations": annotations}}, "demo") == owner


NOT_SERVED = 'error walking catalogs: error getting package "kube-demo" from catalog "broken": catalog "broken" is not being served'


@pytest.mark.parametrize(
    "failed_catalogs, verdict",
    [
        ({"broken": "Progressing=True/Retrying: manifest unknown"}, ce.VERDICT_FAILED),  # catalogd cannot serve it: final
        ({}, ce.VERDICT_WAITING),  # still unpacking, say
        ({"other": "manifest unknown"}, ce.VERDICT_WAITING),
    ],
)
def test_a_catalog_catalogd_cannot_serve_blocks_resolution(failed_catalogs, verdict):
    found, message = ce.cluster_extension_verdict(extension(progressing=("True", "Retrying", 3, NOT_SERVED)), True, failed_catalogs)
    assert found == verdict
    if verdict == ce.VERDICT_FAILED:
        assert message.startswith("ClusterCatalog broken cannot be served (Progressing=True/Retrying: manifest unknown)"), message
        assert ce.unserved_catalog(NOT_SERVED) == "broken" and ce.unserved_catalog("no bundles found") is None


def test_failed_verdict_returns_operator_controller_message_and_retrying_is_reported():
    message = 'no bundles found for package "kube-demo" matching version "9.9.9"'
    obj = extension(progressing=("True", "Retrying", 3, message))
    assert ce.cluster_extension_verdict(obj) == (ce.VERDICT_FAILED, message)
    assert ce.retrying_message(obj) == message
    assert ce.retrying_message(extension(progressing=("True", "Retrying", 2, message))) is None
    assert ce.retrying_message(extension(progressing=SUCCEEDED)) is None


def _bundle(name, version, objects=None, image=None):
    props = [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": version}}]
    for obj in objects or ():
        props.append({"type": "olm.bundle.object", "value": {"data": base64.b64encode(json.dumps(obj).encode()).decode()}})
    return {"schema": "olm.bundle", "name": name, "package": "kube-demo", "image": image or f"r.example.com/b:{version}", "properties": props}


CFG = DeclarativeConfig(
    channels=[
        {"schema": "olm.channel", "package": "kube-demo", "name": "alpha", "entries": [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.3"}]},
        {"schema": "olm.channel", "package": "kube-demo", "name": "stable", "entries": [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.2"}]},
        {"schema": "olm.channel", "package": "other", "name": "stable", "entries": [{"name": "kube-demo.v0.0.3"}]},
    ],
    bundles=[
        _bundle("kube-demo.v0.0.1", "0.0.1"),
        _bundle("kube-demo.v0.0.2", "0.0.2"),
        _bundle("kube-demo.v0.0.3", "0.0.3"),
        dict(_bundle("other.v1.0.0", "1.0.0"), package="other"),
    ],
)


@pytest.mark.parametrize(
    "channels, matches, names",
    [
        (None, None, ["kube-demo.v0.0.1", "kube-demo.v0.0.2", "kube-demo.v0.0.3"]),
        (["stable"], None, ["kube-demo.v0.0.1", "kube-demo.v0.0.2"]),
        (["alpha", "stable"], lambda v: v != "0.0.1", ["kube-demo.v0.0.2", "kube-demo.v0.0.3"]),
        (["beta"], None, []),
        (None, lambda v: v == "0.0.2", ["kube-demo.v0.0.2"]),
    ],
)
def test_candidate_bundles(channels, matches, names):
    assert [b["name"] for b in ce.candidate_bundles(CFG, "kube-demo", channels, matches)] == names


def test_embedded_objects():
    csv = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "x"}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "a.b"}}
    assert ce.embedded_objects(_bundle("x", "1.0.0", [csv, crd])) == [csv, crd]
    # without a CSV (olm.csv.metadata catalogs) the bundle image has to be read
    assert ce.embedded_objects(_bundle("x", "1.0.0", [crd])) is None
    broken = _bundle("x", "1.0.0")
    broken["properties"].append({"type": "olm.bundle.object", "value": {"data": "%%%"}})
    with pytest.raises(ce.ClusterExtensionError, match="not base64 JSON"):
        ce.embedded_objects(broken)


def test_extensions_in_filters_by_namespace_and_package():
    ready = extension(installed=INSTALLED, progressing=SUCCEEDED, bundle={"name": "kube-demo.v0.0.2", "version": "0.0.2"})
    other = extension()
    other["metadata"]["name"] = "elsewhere"
    other["spec"]["namespace"] = "other"
    summaries = ce.extensions_in([other, ready], "ns")
    assert [s["name"] for s in summaries] == ["demo"]
    assert summaries[0]["installed"] is True and summaries[0]["installed_version"] == "0.0.2"
    assert summaries[0]["conditions"]["Progressing"]["current"] is True
    assert ce.extensions_in([ready], "ns", package="something-else") == []
