# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of operator-registry alpha/declcfg/declcfg_to_model_test.go (TestConvertToModel, exact strings)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from lib.fbc import (
    SVG_SMALL_CIRCLE,
    bundle_image,
    bundle_name,
    cfg,
    new_test_bundle,
    new_test_channel,
    new_test_package,
    package_property,
)

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import ConvertError, FBCError, ValidationTree
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config

FOO_PKG = new_test_package("foo", "alpha", SVG_SMALL_CIRCLE)
OWNER_PROPS = [{"type": "owner", "value": {"group": "abc.com", "name": "admin"}}]


def with_props(*props):
    def opt(b):
        b["properties"] = list(props)
    return opt


def with_name(name):
    def opt(b):
        b["name"] = name
    return opt


def with_image(image):
    def opt(b):
        b["image"] = image
    return opt


def with_related(*images):
    def opt(b):
        b["relatedImages"] = [{"name": n, "image": i} for n, i in images]
    return opt


def pkg_with_owner():
    p = dict(FOO_PKG)
    p["properties"] = OWNER_PROPS
    return p


def alpha(*names):
    return new_test_channel("foo", "alpha", *[{"name": n} for n in names])


def deprecation(*entries, **kw):
    d = {"schema": "olm.deprecations", "package": kw.get("package", "foo"), "entries": list(entries)}
    if kw.get("package") is None and "package" in kw:
        del d["package"]
    return d


SHA = "abcd1234" * 8

CASES = [
    ("Error/PackageNoName", "config contains package with no name",
     cfg(packages=[new_test_package("", "alpha", SVG_SMALL_CIRCLE)], bundles=[{"schema": "olm.bundle", "name": "foo.v0.1.0"}])),
    ("Error/BundleMissingPackageName", 'package name must be set for bundle "foo.v0.1.0"',
     cfg(packages=[FOO_PKG], bundles=[{"schema": "olm.bundle", "name": "foo.v0.1.0"}])),
    ("Error/BundleUnknownPackage", 'unknown package "bar" for bundle "bar.v0.1.0"',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("bar", "0.1.0")])),
    ("Error/BundleMissingChannel", 'package "foo", bundle "foo.v0.1.0" not found in any channel entries',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/BundleInvalidProperties",
     'parse properties for bundle "foo.v0.1.0": parse property[2] of type "olm.foo": unexpected end of JSON input',
     # Go's RawMessage("{") is invalid JSON; the dict representation's equivalent is a property without a value.
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0", lambda b: b["properties"].append({"type": "olm.foo"}))])),
    ("Error/BundlePackageMismatch", 'package "foo" does not match "olm.package" property "foooperator"',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foooperator", "0.1.0")))])),
    ("Error/BundleInvalidVersion",
     'error parsing bundle "foo.v0.1.0" version "0.1.0.1": Invalid character(s) found in patch number "0.1"',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0.1")))])),
    ("Error/BundleMissingVersion", 'error parsing bundle "foo.v" version "": Version string empty',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "")])),
    ("Error/PackageMissingDefaultChannel",
     'invalid index:\n└── invalid package "foo":\n    └── default channel must be set',
     cfg(packages=[new_test_package("foo", "", SVG_SMALL_CIRCLE)],
         channels=[new_test_channel("foo", "bar", {"name": bundle_name("foo", "0.1.0")})],
         bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/PackageNonExistentDefaultChannel",
     'invalid index:\n└── invalid package "foo":\n    └── invalid channel "bar":\n        └── channel must contain at least one bundle',
     cfg(packages=[new_test_package("foo", "bar", SVG_SMALL_CIRCLE)], channels=[new_test_channel("foo", "bar")])),
    ("Error/BundleMissingPackageProperty", 'package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 0',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0", with_props())])),
    ("Error/BundleMultiplePackageProperty", 'package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 2',
     cfg(packages=[FOO_PKG], bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0"),
                                                                                 package_property("foo", "0.1.0")))])),
    ("Success/BundleWithDataButMissingImage", None,
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_image(""))])),
    ("Error/ChannelEntryWithoutBundle", 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.1.0]',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0")])),
    ("Error/BundleWithoutChannelEntry", 'package "foo", bundle "foo.v0.2.0" not found in any channel entries',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.2.0")])),
    ("Error/ChannelMissingName", 'package "foo" contains channel with no name',
     cfg(packages=[FOO_PKG], channels=[new_test_channel("foo", "", {"name": "foo.v0.1.0"})],
         bundles=[new_test_bundle("foo", "0.2.0")])),
    ("Error/ChannelMissingPackageName", 'unknown package "" for channel "alpha"',
     cfg(packages=[FOO_PKG], channels=[new_test_channel("", "alpha", {"name": "foo.v0.1.0"})],
         bundles=[new_test_bundle("foo", "0.2.0")])),
    ("Error/ChannelNonExistentPackage", 'unknown package "non-existent" for channel "alpha"',
     cfg(packages=[FOO_PKG], channels=[new_test_channel("non-existent", "alpha", {"name": "foo.v0.1.0"})],
         bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/ChannelDuplicateEntry", 'invalid package "foo", channel "alpha": duplicate entry "foo.v0.1.0"',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0", "foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/DuplicatePackage", 'duplicate package "foo"',
     cfg(packages=[FOO_PKG, FOO_PKG], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/PackageBreaksRFC1123", 'invalid package name "foo.bar": [must not contain dots]',
     cfg(packages=[new_test_package("foo.bar", "alpha", SVG_SMALL_CIRCLE)], channels=[alpha("foo.v0.1.0")],
         bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/DuplicateChannel", 'package "foo" has duplicate channel "alpha"',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0"), alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/DuplicateBundle", 'package "foo" has duplicate bundle "foo.v0.1.0"',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0")],
         bundles=[new_test_bundle("foo", "0.1.0"), new_test_bundle("foo", "0.1.0")])),
    ("Success/ValidModel", None,
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Success/ValidModelWithChannelProperties", None,
     cfg(packages=[FOO_PKG],
         channels=[dict(alpha("foo.v0.1.0"), properties=[{"type": "user", "value": {"group": "xyz.com", "name": "account"}}])],
         bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Success/ValidModelWithPackageProperties", None,
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")])),
    ("Error/Deprecation/UnspecifiedPackage", "package name must be set for deprecation item 0",
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[{"schema": "olm.deprecations"}])),
    ("Error/Deprecation/OutOfBoundsBundle", 'cannot deprecate bundle "foo.v2.0.0" for package "foo": bundle not found',
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[deprecation({"reference": {"schema": "olm.bundle", "name": "foo.v2.0.0"},
                                    "message": "foo.v2.0.0 doesn't exist in the first place"})])),
    ("Error/Deprecation/OutOfBoundsPackage", 'cannot apply deprecations to an unknown package "nyarl"',
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[{"schema": "olm.deprecations", "package": "nyarl"}])),
    ("Error/Deprecation/MultiplePerPackage", 'expected a maximum of one deprecation per package: "foo"',
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[deprecation({"reference": {"schema": "olm.channel", "name": "alpha"}, "message": "no more alpha channel"}),
                       deprecation({"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"},
                                    "message": "foo.v0.1.0 is dead.  do another thing"})])),
    ("Error/Deprecation/BadRefSchema",
     'cannot deprecate object declcfg.PackageScopedReference{Schema:"badschema", Name:"foo.v2.0.0"} referenced by entry 0 '
     'for package "foo": object schema unknown',
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[deprecation({"reference": {"schema": "badschema", "name": "foo.v2.0.0"},
                                    "message": "foo.v2.0.0 doesn't exist in the first place"})])),
    ("Error/Deprecation/DuplicateRef",
     'duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.bundle", Name:"foo.v0.1.0"} for package "foo"',
     cfg(packages=[pkg_with_owner()], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")],
         deprecations=[deprecation({"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "foo.v0.1.0 is bad"},
                                   {"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "foo.v0.1.0 is bad"})])),
    ("Error/InvalidReleaseVersion",
     'error parsing bundle "foo.v0.1.0" release version "!!!": invalid release "!!!": segment 0: '
     'Invalid character(s) found in prerelease "!!!"',
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0", "!!!")))])),
    ("Error/InvalidBundleNormalizedName",
     'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n'
     '        └── invalid bundle "foo.v0.1.0-alpha.1.0.0":\n'
     '            └── name "foo.v0.1.0-alpha.1.0.0" does not match normalized name "foo-v0.1.0-alpha.1.0.0"',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0-alpha.1.0.0")],
         bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0", "alpha.1.0.0")),
                                  with_name("foo.v0.1.0-alpha.1.0.0"))])),
    ("Success/ValidBundleReleaseVersion", None,
     cfg(packages=[FOO_PKG], channels=[alpha("foo-v0.1.0-alpha.1.0.0")],
         bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0", "alpha.1.0.0")),
                                  with_name("foo-v0.1.0-alpha.1.0.0"))])),
    ("Error/BundleReleaseWithBuildMetadata",
     'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n'
     '        └── invalid bundle "foo.v0.1.0+alpha.1.0.0-0.0.1":\n'
     '            ├── name "foo.v0.1.0+alpha.1.0.0-0.0.1" does not match normalized name "foo-v0.1.0+alpha.1.0.0-0.0.1"\n'
     '            └── cannot use build metadata in version with a release version',
     cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0+alpha.1.0.0-0.0.1")],
         bundles=[new_test_bundle("foo", "0.1.0", with_props(package_property("foo", "0.1.0+alpha.1.0.0", "0.0.1")),
                                  with_name("foo.v0.1.0+alpha.1.0.0-0.0.1"))])),
    ("Error/BundleImageInvalidPullSpecUnsupportedDigestSsha256", ("contains", "invalid image pull spec"),
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_image("quay.io/operator-framework/foo-bundle@ssha256:" + SHA + "abcd1234"))])),
    ("Error/BundleImageInvalidPullSpecUnsupportedDigestMd5", ("contains", "invalid image pull spec"),
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_image("quay.io/operator-framework/foo-bundle@md5:" + "abcd1234" * 4))])),
    ("Error/BundleRelatedImageInvalidPullSpecSsha256", ("contains", "invalid image pull spec"),
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_related(("bundle", bundle_image("foo", "0.1.0")),
                                                               ("operator", "quay.io/operator-framework/my-operator@ssha256:" + SHA)))])),
    ("Success/BundleImageValidSha256Digest", None,
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_image("quay.io/operator-framework/foo-bundle@sha256:" + SHA),
                                  with_related(("bundle", "quay.io/operator-framework/foo-bundle@sha256:" + SHA)))])),
    ("Success/BundleImageValidTagWithDigest", None,
     cfg(packages=[FOO_PKG], channels=[alpha(bundle_name("foo", "0.1.0"))],
         bundles=[new_test_bundle("foo", "0.1.0", with_image("quay.io/operator-framework/foo-bundle:v0.1.0@sha256:" + SHA),
                                  with_related(("bundle", "quay.io/operator-framework/foo-bundle:v0.1.0@sha256:" + SHA)))])),
]


def test_case_count_matches_upstream():
    # operator-registry v1.71.0 TestConvertToModel has 41 table entries (fbc.md section 11.2 lists them as "40").
    assert len(CASES) == 41


@pytest.mark.parametrize("name,expected,config", CASES, ids=[c[0] for c in CASES])
def test_convert_to_model(name, expected, config):
    if expected is None:
        convert_to_model(config)
        return
    with pytest.raises(FBCError) as info:
        convert_to_model(config)
    if isinstance(expected, tuple):
        assert expected[1] in str(info.value)
    else:
        assert str(info.value) == expected
    # the tree errors come from model validation, the flat ones from the sequential checks
    expected_type = ValidationTree if (isinstance(expected, str) and expected.startswith("invalid index:")) else ConvertError
    assert isinstance(info.value, expected_type)


@pytest.mark.parametrize("name,expected,config", CASES, ids=[c[0] for c in CASES])
def test_validate_config_reports_the_opm_error(name, expected, config):
    """The all-problems API must include opm's first error (flat) or the tree's leaves."""
    result = validate_config(config)
    if expected is None:
        assert result.valid, result.errors
        return
    assert not result.valid
    if isinstance(expected, tuple):
        assert any(expected[1] in e for e in result.errors)
    elif expected.startswith("invalid index:"):
        assert result.opm_error == expected
        leaf = expected.rsplit("── ", 1)[1]
        assert any(e.endswith(leaf) for e in result.errors)
    else:
        assert expected in result.errors
        assert result.opm_error == expected


def test_convert_to_model_bundle_mapping():
    """TestConvertToModelBundle."""
    m = convert_to_model(cfg(packages=[FOO_PKG], channels=[alpha("foo.v0.1.0")], bundles=[new_test_bundle("foo", "0.1.0")]))
    pkg = m["foo"]
    ch = pkg.channels["alpha"]
    b = ch.bundles["foo.v0.1.0"]
    assert b.package is pkg and b.channel is ch
    assert b.name == "foo.v0.1.0"
    assert b.image == "foo-bundle:v0.1.0"
    assert b.replaces == "" and b.skips == [] and b.skip_range == ""
    assert len(b.properties) == 3
    assert [(r.name, r.image) for r in b.related_images] == [("bundle", "foo-bundle:v0.1.0")]
    assert b.deprecation is None
    assert b.object_count == 2
    assert str(b.version) == "0.1.0"
    assert pkg.default_channel is ch


def test_collect_mode_gathers_every_sequential_problem():
    config = cfg(
        packages=[FOO_PKG, FOO_PKG, new_test_package("Bad.Name", "alpha", SVG_SMALL_CIRCLE)],
        channels=[alpha("foo.v0.1.0", "foo.v0.1.0"), new_test_channel("nope", "x", {"name": "a"})],
        bundles=[new_test_bundle("foo", "0.1.0"), new_test_bundle("foo", "0.1.0"),
                 new_test_bundle("foo", "0.2.0", with_props(package_property("foo", "bad")))],
        deprecations=[{"schema": "olm.deprecations", "package": "ghost"}],
    )
    result = validate_config(config)
    assert result.errors[:3] == [
        'duplicate package "foo"',
        'invalid package name "Bad.Name": [%s]' % (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
            "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        'invalid package "foo", channel "alpha": duplicate entry "foo.v0.1.0"',
    ]
    for msg in ('unknown package "nope" for channel "x"',
                'package "foo" has duplicate bundle "foo.v0.1.0"',
                'error parsing bundle "foo.v0.2.0" version "bad": No Major.Minor.Patch elements found',
                'package "foo", bundle "foo.v0.2.0" not found in any channel entries',
                'cannot apply deprecations to an unknown package "ghost"'):
        assert msg in result.errors
    assert result.opm_error == 'duplicate package "foo"'
    # Bad.Name has no channels: model validation is reported with its tree path
    assert 'invalid package "Bad.Name": invalid channel "alpha": channel must contain at least one bundle' in result.errors


def test_channel_entry_quirk_only_last_channel_checked_strict_but_all_in_collect():
    config = cfg(packages=[FOO_PKG],
                 channels=[alpha("foo.v0.1.0", "foo.v0.0.9"), new_test_channel("foo", "beta", {"name": "foo.v0.1.0"})],
                 bundles=[new_test_bundle("foo", "0.1.0")])
    with pytest.raises(ValidationTree) as info:
        convert_to_model(config)
    assert "bundle image must be set" in info.value.leaves()
    result = validate_config(config)
    assert 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.0.9]' in result.errors


def test_opm_error_ignores_problems_opm_does_not_check():
    """Found by differential fuzzing against opm v1.71: an entry without bundle in a non-last channel is skipped
    by opm's sequential check, so opm reports the next sequential problem (here a deprecation)."""
    config = cfg(packages=[FOO_PKG],
                 channels=[alpha("foo.v0.1.0", "foo.v0.0.9"), new_test_channel("foo", "beta", {"name": "foo.v0.1.0"})],
                 bundles=[new_test_bundle("foo", "0.1.0")],
                 deprecations=[deprecation({"reference": {"schema": "olm.channel", "name": "nope"}, "message": "m"})])
    result = validate_config(config)
    assert result.opm_error == 'cannot deprecate channel "nope" for package "foo": channel not found'
    assert result.errors[:2] == ['cannot deprecate channel "nope" for package "foo": channel not found',
                                 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.0.9]']
    with pytest.raises(ConvertError) as info:
        convert_to_model(config)
    assert str(info.value) == result.opm_error
