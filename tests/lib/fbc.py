# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers for the FBC engine tests: conformance-data location and ports of operator-registry's
test fixture builders (alpha/declcfg/helpers_test.go)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
from pathlib import Path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from lib.testdata import COMMUNITY_OPERATORS_PROD, OPM_TESTDATA, data_path

WRITE_EXPECTED = OPM_TESTDATA / "alpha" / "declcfg" / "write_test_expected"
LOAD_FIXTURES = OPM_TESTDATA / "alpha" / "declcfg" / "load_test_fixtures"
COMMUNITY_CATALOGS = COMMUNITY_OPERATORS_PROD / "catalogs"


def require_data(path):
    """Fail (never skip) when committed test data (tests/data) is missing."""
    return data_path(Path(path))


SVG_SMALL_CIRCLE = '<svg viewBox="0 0 100 100"><circle cx="25" cy="25" r="25"/></svg>'
SVG_BIG_CIRCLE = '<svg viewBox="0 0 100 100"><circle cx="50" cy="50" r="50"/></svg>'


def b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def bundle_name(pkg, version):
    return "%s.v%s" % (pkg, version)


def bundle_image(pkg, version):
    return "%s-bundle:v%s" % (pkg, version)


def package_property(pkg, version, release=None):
    value = {"packageName": pkg, "version": version}
    if release is not None:
        value["release"] = release
    return {"type": "olm.package", "value": value}


def bundle_object_property(data):
    return {"type": "olm.bundle.object", "value": {"data": b64(data)}}


def new_test_bundle(pkg, version, *opts):
    csv = '{"kind": "ClusterServiceVersion", "apiVersion": "operators.coreos.com/v1alpha1", "metadata":{"name":%s}}' % json.dumps(bundle_name(pkg, version))
    b = {
        "schema": "olm.bundle",
        "name": bundle_name(pkg, version),
        "package": pkg,
        "image": bundle_image(pkg, version),
        "properties": [
            package_property(pkg, version),
            bundle_object_property(csv),
            bundle_object_property('{"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1"}'),
        ],
        "relatedImages": [{"name": "bundle", "image": bundle_image(pkg, version)}],
    }
    for opt in opts:
        opt(b)
    b["properties"].sort(key=lambda p: (p["type"], json.dumps(p.get("value"), sort_keys=True, separators=(",", ":"))))
    return b


def new_test_package(pkg, default_channel, svg):
    return {
        "schema": "olm.package",
        "name": pkg,
        "defaultChannel": default_channel,
        "icon": {"base64data": b64(svg), "mediatype": "image/svg+xml"},
        "description": "%s operator" % pkg,
    }


def new_test_channel(pkg, name, *entries):
    return {"schema": "olm.channel", "name": name, "package": pkg, "entries": [dict(e) for e in entries]}


def cfg(packages=(), channels=(), bundles=(), deprecations=(), others=()):
    return DeclarativeConfig(packages=list(packages), channels=list(channels), bundles=list(bundles), deprecations=list(deprecations), others=list(others))


def build_valid_declarative_config(include_unrecognized=False, include_deprecations=False):
    """buildValidDeclarativeConfig: anakin (dark, light) and boba-fett (mando)."""
    a = "anakin"
    others = []
    if include_unrecognized:
        others = [
            {"schema": "custom.1"},
            {"schema": "custom.2"},
            {"myField": "foobar", "package": "anakin", "schema": "custom.3"},
            {"myField": "foobar", "package": "boba-fett", "schema": "custom.3"},
        ]
    deprecations = []
    if include_deprecations:
        deprecations = [
            {
                "schema": "olm.deprecations",
                "package": a,
                "entries": [
                    {"reference": {"schema": "olm.bundle", "name": bundle_name(a, "0.0.1")}, "message": "This bundle version is deprecated"},
                    {"reference": {"schema": "olm.channel", "name": "light"}, "message": "This channel is deprecated"},
                    {"reference": {"schema": "olm.package"}, "message": "This package is deprecated... there is another"},
                ],
            }
        ]
    return cfg(
        packages=[new_test_package(a, "dark", SVG_SMALL_CIRCLE), new_test_package("boba-fett", "mando", SVG_BIG_CIRCLE)],
        channels=[
            new_test_channel(
                a,
                "dark",
                {"name": bundle_name(a, "0.0.1")},
                {"name": bundle_name(a, "0.1.0"), "replaces": bundle_name(a, "0.0.1")},
                {"name": bundle_name(a, "0.1.1"), "replaces": bundle_name(a, "0.0.1"), "skips": [bundle_name(a, "0.1.0")]},
            ),
            new_test_channel(a, "light", {"name": bundle_name(a, "0.0.1")}, {"name": bundle_name(a, "0.1.0"), "replaces": bundle_name(a, "0.0.1")}),
            new_test_channel(
                "boba-fett",
                "mando",
                {"name": bundle_name("boba-fett", "1.0.0")},
                {"name": bundle_name("boba-fett", "2.0.0"), "replaces": bundle_name("boba-fett", "1.0.0")},
            ),
        ],
        bundles=[
            new_test_bundle(a, "0.0.1"),
            new_test_bundle(a, "0.1.0"),
            new_test_bundle(a, "0.1.1"),
            new_test_bundle("boba-fett", "1.0.0"),
            new_test_bundle("boba-fett", "2.0.0"),
        ],
        others=others,
        deprecations=deprecations,
    )


# A catalog for the operator selection (fbc.action.filter) tests.
def selection_bundle(package, version):
    return {
        "schema": "olm.bundle",
        "package": package,
        "name": f"{package}.v{version}",
        "image": f"registry.example.com/{package}-bundle:v{version}",
        "properties": [{"type": "olm.package", "value": {"packageName": package, "version": version}}],
    }


def selection_entry(package, version, replaces=None, skips=None):
    item = {"name": f"{package}.v{version}"}
    if replaces:
        item["replaces"] = f"{package}.v{replaces}"
    if skips:
        item["skips"] = [f"{package}.v{s}" for s in skips]
    return item


def selection_catalog():
    """demo: stable 0.1.0 <- 0.2.0 <- 0.3.0 (skips 0.2.1) <- 0.4.0, with 0.2.1 replacing 0.2.0; fast 0.4.0 <- 0.5.0-rc.1;
    default stable; deprecations of the package, the fast channel and 0.1.0. other: alpha 1.0.0 <- 1.1.0."""
    stable = [
        selection_entry("demo", "0.1.0"),
        selection_entry("demo", "0.2.0", "0.1.0"),
        selection_entry("demo", "0.2.1", "0.2.0"),
        selection_entry("demo", "0.3.0", "0.2.0", ["0.2.1"]),
    ]
    stable.append(selection_entry("demo", "0.4.0", "0.3.0"))
    return DeclarativeConfig(
        packages=[{"schema": "olm.package", "name": "demo", "defaultChannel": "stable"}, {"schema": "olm.package", "name": "other", "defaultChannel": "alpha"}],
        channels=[
            {"schema": "olm.channel", "package": "demo", "name": "stable", "entries": stable},
            {
                "schema": "olm.channel",
                "package": "demo",
                "name": "fast",
                "entries": [selection_entry("demo", "0.4.0"), selection_entry("demo", "0.5.0-rc.1", "0.4.0")],
            },
            {
                "schema": "olm.channel",
                "package": "other",
                "name": "alpha",
                "entries": [selection_entry("other", "1.0.0"), selection_entry("other", "1.1.0", "1.0.0")],
            },
        ],
        bundles=[selection_bundle("demo", v) for v in ("0.1.0", "0.2.0", "0.2.1", "0.3.0", "0.4.0", "0.5.0-rc.1")]
        + [selection_bundle("other", v) for v in ("1.0.0", "1.1.0")],
        deprecations=[
            {
                "schema": "olm.deprecations",
                "package": "demo",
                "entries": [
                    {"reference": {"schema": "olm.package"}, "message": "demo is deprecated"},
                    {"reference": {"schema": "olm.channel", "name": "fast"}, "message": "fast is deprecated"},
                    {"reference": {"schema": "olm.bundle", "name": "demo.v0.1.0"}, "message": "0.1.0 is deprecated"},
                ],
            }
        ],
    )
