# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ClusterCatalog definition and catalogd's verdict (olmv1/cluster_catalog.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc

DIGEST = "sha256:" + "a" * 64


def catalog(generation=2, progressing=None, serving=None, mode=None, ref="127.0.0.1:5000/c@" + DIGEST):
    conditions = []
    for cond_type, value in (("Progressing", progressing), ("Serving", serving)):
        if value:
            status, reason, observed = value
            conditions.append({"type": cond_type, "status": status, "reason": reason, "message": f"{reason} text", "observedGeneration": observed})
    obj = {"metadata": {"name": "c", "generation": generation}, "spec": {}, "status": {"conditions": conditions}}
    if mode:
        obj["spec"]["availabilityMode"] = mode
    if ref:
        obj["status"]["resolvedSource"] = {"type": "Image", "image": {"ref": ref}}
    return obj


def test_definition_sets_only_given_fields_and_the_name_label():
    obj = cc.cluster_catalog_definition("demo", "registry.example.com/c:v1", poll_interval_minutes=5, priority=-3, availability_mode="Available")
    assert obj["metadata"] == {"name": "demo", "labels": {cc.NAME_LABEL: "demo"}}
    assert obj["spec"] == {
        "source": {"type": "Image", "image": {"ref": "registry.example.com/c:v1", "pollIntervalMinutes": 5}},
        "priority": -3,
        "availabilityMode": "Available",
    }
    assert cc.cluster_catalog_definition("demo", "r.example.com/c:v1")["spec"] == {"source": {"type": "Image", "image": {"ref": "r.example.com/c:v1"}}}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"image": "r.example.com/c@" + DIGEST, "poll_interval_minutes": 10}, "cannot be used with the digest reference"),
        ({"image": "r.example.com/c:v1", "poll_interval_minutes": 0}, "whole number of minutes >= 1"),
        ({"image": "r.example.com/c:v1", "poll_interval_minutes": True}, "whole number of minutes"),
        ({"image": "r.example.com/c:v1", "priority": 2**31}, "32-bit integer"),
        ({"image": "r.example.com/c:v1", "availability_mode": "Sometimes"}, "availability_mode must be one of"),
        ({"image": "has space:v1"}, "image:"),
        ({"image": "r.example.com/c:v1", "labels": {cc.NAME_LABEL: "other"}}, "must be the catalog's name"),
    ],
)
def test_definition_refuses(kwargs, message):
    with pytest.raises(cc.ClusterCatalogError, match=message):
        cc.cluster_catalog_definition("demo", **kwargs)


@pytest.mark.parametrize(
    "obj, verdict",
    [
        (None, cc.VERDICT_WAITING),
        (catalog(progressing=("True", "Succeeded", 2), serving=("True", "Available", 2)), cc.VERDICT_READY),
        # catalogd has not handled generation 2 yet
        (catalog(progressing=("True", "Succeeded", 1), serving=("True", "Available", 1)), cc.VERDICT_WAITING),
        (catalog(progressing=("True", "Succeeded", 2), serving=("True", "Available", 1)), cc.VERDICT_WAITING),
        # a pull error is retried by catalogd
        (catalog(progressing=("True", "Retrying", 2), serving=None, ref=None), cc.VERDICT_WAITING),
        (catalog(progressing=("False", "Blocked", 2), serving=None, ref=None), cc.VERDICT_FAILED),
        # a stale Blocked of an older generation does not fail the new one
        (catalog(progressing=("False", "Blocked", 1), serving=None, ref=None), cc.VERDICT_WAITING),
        (catalog(progressing=("True", "Succeeded", 2), serving=("True", "Available", 2), ref=None), cc.VERDICT_WAITING),
        (catalog(progressing=("True", "Succeeded", 2), serving=("False", "UserSpecifiedUnavailable", 2), mode="Unavailable"), cc.VERDICT_READY),
        (catalog(progressing=("True", "Succeeded", 2), serving=("True", "Available", 2), mode="Unavailable"), cc.VERDICT_WAITING),
    ],
)
def test_verdict(obj, verdict):
    assert cc.cluster_catalog_verdict(obj)[0] == verdict
    assert cc.settled(obj) == (verdict != cc.VERDICT_WAITING)


def test_verdict_message_carries_catalogd_conditions_and_status_fields():
    obj = catalog(progressing=("True", "Retrying", 2), serving=None, ref=None)
    assert cc.cluster_catalog_verdict(obj)[1] == "Progressing=True/Retrying: Retrying text"
    served = catalog(progressing=("True", "Succeeded", 2), serving=("True", "Available", 2))
    served["status"]["urls"] = {"base": "https://127.0.0.1:1/catalogs/c"}
    assert cc.resolved_ref(served).endswith(DIGEST)
    assert cc.base_url(served) == "https://127.0.0.1:1/catalogs/c"
    assert cc.describe({"metadata": {}}) == "no status yet"


def retrying(message):
    obj = catalog(progressing=("True", "Retrying", 2), serving=None, ref=None)
    obj["status"]["conditions"][0]["message"] = message
    return obj


@pytest.mark.parametrize(
    "message, verdict",
    [
        ("source catalog content: error fetching image: reading manifest v9 in 127.0.0.1:5000/c: manifest unknown", cc.VERDICT_FAILED),
        ("reading manifest v1 in 127.0.0.1:5000/nope: name unknown: repository name not known to registry", cc.VERDICT_FAILED),
        ("reading manifest v1 in r.example.com/c: unauthorized: authentication required", cc.VERDICT_FAILED),
        ("reading manifest v1 in r.example.com/c: requested access to the resource is denied", cc.VERDICT_FAILED),
        ('source catalog content: catalog image is missing the required label "operators.operatorframework.io.index.configs.v1"', cc.VERDICT_FAILED),
        ("error storing fbc: error parsing catalog: invalid package", cc.VERDICT_FAILED),
        (
            "pinging container registry r.example.com: Get https://r.example.com/v2/: tls: failed to verify certificate: x509: certificate signed by "
            "unknown authority",
            cc.VERDICT_FAILED,
        ),
        ("choosing image instance: no matching manifest for linux/amd64 in the manifest list entries", cc.VERDICT_FAILED),
        # network and server trouble may pass: catalogd retries, the module waits
        ("pinging container registry 127.0.0.1:5000: connect: connection refused", cc.VERDICT_WAITING),
        ("reading manifest v1 in r.example.com/c: received unexpected HTTP status: 503 Service Unavailable", cc.VERDICT_WAITING),
    ],
)
def test_a_pull_error_no_retry_fixes_fails_fast(message, verdict):
    obj = retrying(message)
    assert cc.cluster_catalog_verdict(obj) == (verdict, f"Progressing=True/Retrying: {message}")
    stale = retrying(message)
    stale["status"]["conditions"][0]["observedGeneration"] = 1  # about the previous image
    assert cc.cluster_catalog_verdict(stale)[0] == cc.VERDICT_WAITING


# --- contents (olm_cluster_catalog_info) --------------------------------------------------------------------------

CONTENTS = b"""
{"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable", "description": "A demo"}
{"schema": "olm.channel", "package": "kube-demo", "name": "stable", "entries": [
  {"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1"},
  {"name": "kube-demo.v0.0.10", "replaces": "kube-demo.v0.0.2"}]}
{"schema": "olm.channel", "package": "kube-demo", "name": "fast", "entries": [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.0.2"}]}
{"schema": "olm.bundle", "package": "kube-demo", "name": "kube-demo.v0.0.1", "image": "r/b:1",
 "properties": [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": "0.0.1"}}]}
{"schema": "olm.bundle", "package": "kube-demo", "name": "kube-demo.v0.0.2", "image": "r/b:2",
 "properties": [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": "0.0.2"}}]}
{"schema": "olm.bundle", "package": "kube-demo", "name": "kube-demo.v0.0.10", "image": "r/b:10",
 "properties": [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": "0.0.10"}}]}
{"schema": "olm.deprecations", "package": "kube-demo", "entries": [
  {"reference": {"schema": "olm.channel", "name": "fast"}, "message": "fast is gone, use stable"},
  {"reference": {"schema": "olm.bundle", "name": "kube-demo.v0.0.1"}, "message": "0.0.1 has a CVE"}]}
{"schema": "olm.package", "name": "other", "defaultChannel": "alpha"}
{"schema": "olm.channel", "package": "other", "name": "alpha", "entries": [{"name": "other.v1.0.0"}]}
{"schema": "olm.bundle", "package": "other", "name": "other.v1.0.0", "image": "r/o:1",
 "properties": [{"type": "olm.package", "value": {"packageName": "other", "version": "1.0.0"}}]}
"""


def test_contents_summary_reports_heads_versions_in_order_and_deprecations():
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes

    packages, problems = cc.contents_summary(load_bytes(CONTENTS))
    assert [p["name"] for p in packages] == ["kube-demo", "other"]
    demo = packages[0]
    assert (demo["default_channel"], demo["description"], demo["deprecated"]) == ("stable", "A demo", None)
    fast, stable = demo["channels"]
    # versions in semver order (0.0.10 after 0.0.2), the head by the replaces chain
    assert (stable["name"], stable["head"], stable["head_version"], stable["versions"]) == (
        "stable",
        "kube-demo.v0.0.10",
        "0.0.10",
        ["0.0.1", "0.0.2", "0.0.10"],
    )
    assert stable["entries"][0] == {"name": "kube-demo.v0.0.1", "version": "0.0.1", "deprecated": "0.0.1 has a CVE"}
    # two entries nothing replaces: no head, and the catalog's problem is reported, not raised
    assert (fast["head"], fast["deprecated"]) == (None, "fast is gone, use stable")
    assert problems == ["package kube-demo, channel fast: multiple channel heads found in graph: kube-demo.v0.0.1, kube-demo.v0.0.2"]
    only = cc.contents_summary(cc.only_package(load_bytes(CONTENTS), "other"))[0]
    assert [p["name"] for p in only] == ["other"] and only[0]["channels"][0]["head"] == "other.v1.0.0"
