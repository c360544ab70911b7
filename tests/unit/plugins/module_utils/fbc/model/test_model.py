# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ports of operator-registry alpha/model/model_test.go (TestChannelHead, TestValidReplacesChain, TestValidators),
alpha/model/error_test.go (tree format), blang/semver behaviour and the graph helpers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from lib.fbc import SVG_SMALL_CIRCLE, build_valid_declarative_config, cfg, new_test_bundle, new_test_channel, new_test_package

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, ValidationTree
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.graph import channel_head, upgrade_path
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.model import Bundle, Channel, Deprecation, Model, Package
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.properties import parse_release


def _channel(*bundles):
    ch = Channel(name="alpha")
    for b in bundles:
        ch.bundles[b.name] = b
        b.channel = ch
    return ch


def B(name, replaces="", skips=(), **kw):
    return Bundle(name=name, replaces=replaces, skips=list(skips), **kw)


HEAD = B("anakin.v0.0.3", "anakin.v0.0.1", ["anakin.v0.0.2"])


@pytest.mark.parametrize("bundles,expected", [
    ([B("anakin.v0.0.1"), B("anakin.v0.0.2"), HEAD], "anakin.v0.0.3"),
    ([B("anakin.v0.0.1", "anakin.v0.0.3"), HEAD], FBCError("no channel head found in graph")),
    ([B("anakin.v0.0.1"), HEAD, B("anakin.v0.0.4", "anakin.v0.0.1")],
     FBCError("multiple channel heads found in graph: anakin.v0.0.3, anakin.v0.0.4")),
], ids=["Success/Valid", "Error/NoChannelHead", "Error/MultipleChannelHeads"])
def test_channel_head(bundles, expected):
    ch = _channel(*[Bundle(name=b.name, replaces=b.replaces, skips=list(b.skips)) for b in bundles])
    if isinstance(expected, Exception):
        with pytest.raises(FBCError) as info:
            ch.head()
        assert str(info.value) == str(expected)
    else:
        assert ch.head().name == expected


@pytest.mark.parametrize("bundles,expected", [
    ([B("anakin.v0.0.1"), B("anakin.v0.0.2", skips=["anakin.v0.0.1"]), B("anakin.v0.0.3", skips=["anakin.v0.0.2"]),
      B("anakin.v0.0.4", "anakin.v0.0.3")], None),
    ([B("anakin.v0.0.4", "anakin.v0.0.4"), B("anakin.v0.0.5", "anakin.v0.0.4")],
     "detected cycle in replaces chain of upgrade graph: anakin.v0.0.4 -> anakin.v0.0.4"),
    ([B("anakin.v0.0.1", "anakin.v0.0.3"), B("anakin.v0.0.2", "anakin.v0.0.1"), B("anakin.v0.0.3", "anakin.v0.0.2"),
      B("anakin.v0.0.4", "anakin.v0.0.3")],
     "detected cycle in replaces chain of upgrade graph: anakin.v0.0.3 -> anakin.v0.0.2 -> anakin.v0.0.1 -> anakin.v0.0.3"),
    ([B("anakin.v0.0.1"), B("anakin.v0.0.2", "anakin.v0.0.1"), B("anakin.v0.0.3", skips=["anakin.v0.0.2"])],
     "channel contains one or more stranded bundles: anakin.v0.0.1"),
    ([B("anakin.v0.0.1"), B("anakin.v0.0.2", "anakin.v0.0.1"), B("anakin.v0.0.3", "anakin.v0.0.2", ["anakin.v0.0.2"])],
     "channel contains one or more stranded bundles: anakin.v0.0.1"),
], ids=["Success/Valid", "Error/CycleNoHops", "Error/CycleMultipleHops", "Error/Stranded", "Error/SkippedReplacesStranded"])
def test_valid_replaces_chain(bundles, expected):
    assert _channel(*bundles).validate_replaces_chain() == expected


def _valid_package():
    """makePackageChannelBundle: anakin / light with one valid bundle."""
    pkg = Package(name="anakin")
    ch = Channel(name="light", package=pkg)
    b = Bundle(name="anakin.v0.0.1", package=pkg, channel=ch, image="anakin-operator:v0.0.1",
               properties=[{"type": "olm.package", "value": {"packageName": "anakin", "version": "0.0.1"}}],
               version=semver.parse("0.0.1"))
    ch.bundles[b.name] = b
    pkg.channels[ch.name] = ch
    pkg.default_channel = ch
    return pkg, ch, b


def _messages(err):
    return err.messages() if err is not None else []


def test_validators_model_and_package():
    pkg, ch, b = _valid_package()
    assert Model({"anakin": pkg}).validate() is None
    assert 'package key "foo" does not match package name "anakin"' in _messages(Model({"foo": pkg}).validate())
    assert "package name must not be empty" in _messages(Package().validate())
    assert "package must contain at least one channel" in _messages(Package(name="anakin").validate())
    nodefault = Package(name="anakin", channels={"light": ch})
    assert "default channel must be set" in _messages(nodefault.validate())
    pkg2, ch2 = _valid_package()[:2]
    pkg2.channels = {"dark": ch2}
    assert 'channel key "dark" does not match channel name "light"' in _messages(pkg2.validate())
    pkg3 = _valid_package()[0]
    pkg3.default_channel = Channel(name="not-found")
    assert 'default channel "not-found" not found in channels list' in _messages(pkg3.validate())
    pkg4, ch4 = _valid_package()[:2]
    ch4.package = Package(name="other")
    assert 'channel "light" not correctly linked to parent package' in _messages(pkg4.validate())
    pkg5 = _valid_package()[0]
    pkg5.deprecation = Deprecation("")
    assert "invalid deprecation: message must be set" in _messages(pkg5.validate())


def test_validators_duplicate_versions():
    pkg, ch = _valid_package()[:2]
    ch.bundles = {}
    for name, ver in (("anakin.v0.0.1", "0.0.1"), ("anakin.v0.0.2", "0.0.1"), ("anakin.v1.0.1", "1.0.1"), ("anakin.v1.0.2", "1.0.1")):
        ch.bundles[name] = Bundle(name=name, version=semver.parse(ver), package=pkg, channel=ch)
    assert ("duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {1.0.1: [anakin.v1.0.1, anakin.v1.0.2]}]"
            in _messages(pkg.validate()))
    # with releases: "<version>-<release>" keys
    ch.bundles = {}
    for key, name, rel in (("a", "anakin.v0.0.1", ()), ("b", "anakin.v0.0.2", ()), ("c", "anakin.v0.0.1", parse_release("100")),
                           ("d", "anakin.v0.0.2", parse_release("100"))):
        ch.bundles[key] = Bundle(name=name, version=semver.parse("0.0.1"), release=rel, package=pkg, channel=ch)
    assert ("duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {0.0.1-100: [anakin.v0.0.1, anakin.v0.0.2]}]"
            in _messages(pkg.validate()))


def test_validators_channel():
    pkg, ch, b = _valid_package()
    assert ch.validate() is None
    assert "channel name must not be empty" in _messages(Channel(package=pkg, bundles=dict(ch.bundles)).validate())
    assert "package must be set" in _messages(Channel(name="light", bundles=dict(ch.bundles)).validate())
    assert "channel must contain at least one bundle" in _messages(Channel(name="light", package=pkg).validate())
    heads = Channel(name="light", package=pkg, bundles={"anakin.v0.0.0": B("anakin.v0.0.0"), "anakin.v0.0.1": B("anakin.v0.0.1")})
    assert "multiple channel heads found in graph: anakin.v0.0.0, anakin.v0.0.1" in _messages(heads.validate())
    mismatch = Channel(name="light", package=pkg, bundles={"foo": B("bar")})
    assert 'bundle key "foo" does not match bundle name "bar"' in _messages(mismatch.validate())
    other = Channel(name="light", package=pkg)
    other.bundles[b.name] = b  # b.channel still points at ch
    assert 'bundle "anakin.v0.0.1" not correctly linked to parent channel' in _messages(other.validate())


def _bundle(**kw):
    pkg, ch = _valid_package()[:2]
    base = dict(name="anakin.v0.0.1", package=pkg, channel=ch, image="registry.io/image",
                properties=[{"type": "olm.package", "value": {"packageName": "anakin", "version": "0.0.1"}}])
    base.update(kw)
    return Bundle(**base)


@pytest.mark.parametrize("kw,expected", [
    ({"replaces": "anakin.v0.0.0", "skips": ["anakin.v0.0.2"]}, None),
    ({"replaces": "anakin.v0.0.0-not-in-channel"}, None),
    ({"image": "", "object_count": 2}, None),
    ({"image": ""}, "bundle image must be set"),
    ({"name": ""}, "name must be set"),
    ({"channel": None}, "channel must be set"),
    ({"package": None, "channel": None}, "package must be set"),
    ({"package": Package(name="other")}, "package does not match channel's package"),
    ({"properties": [{"type": "broken"}]}, 'parse property[0] of type "broken": unexpected end of JSON input'),
    ({"skips": [""]}, "skip[0] is empty"),
    ({"skip_range": ""}, None),
    ({"skip_range": ">=1.0.0 <2.0.0"}, None),
    ({"skip_range": ">v0.1.0"},
     'invalid skipRange ">v0.1.0": Could not parse Range ">v0.1.0": Could not parse comparator ">v" in ">v0.1.0"'),
    ({"skip_range": ">1.00.1"},
     'invalid skipRange ">1.00.1": Could not parse Range ">1.00.1": Could not parse version "1.00.1" in ">1.00.1": '
     'Minor number must not contain leading zeroes "00"'),
    ({"properties": []}, 'must be exactly one property with type "olm.package"'),
    ({"properties": [{"type": "olm.package", "value": {"packageName": "anakin", "version": "0.0.1"}}] * 2},
     'must be exactly one property with type "olm.package"'),
    ({"deprecation": Deprecation("")}, "invalid deprecation: message must be set"),
    ({"name": "anakin.v0.0.1.alpha1", "version": semver.parse("0.0.1"), "release": parse_release("alpha1")},
     'name "anakin.v0.0.1.alpha1" does not match normalized name "anakin-v0.0.1-alpha1"'),
    ({"name": "anakin-v0.0.1+b-1", "version": semver.parse("0.0.1+b"), "release": parse_release("1")},
     "cannot use build metadata in version with a release version"),
])
def test_validators_bundle(kw, expected):
    err = _bundle(**kw).validate()
    if expected is None:
        assert err is None, str(err)
    else:
        assert expected in _messages(err)


def test_validation_tree_format():
    tree = ValidationTree("invalid index", [
        ValidationTree('invalid package "a"', ["x", ValidationTree('invalid channel "c"', ["y", "z"])]),
        ValidationTree('invalid package "b"', ["w"]),
    ])
    assert str(tree) == (
        'invalid index:\n'
        '├── invalid package "a":\n'
        '│   ├── x\n'
        '│   └── invalid channel "c":\n'
        '│       ├── y\n'
        '│       └── z\n'
        '└── invalid package "b":\n'
        '    └── w')
    assert tree.leaves() == ["x", "y", "z", "w"]


@pytest.mark.parametrize("text,error", [
    ("", "Version string empty"),
    ("1.2", "No Major.Minor.Patch elements found"),
    ("v1.2.3", 'Invalid character(s) found in major number "v1"'),
    ("01.2.3", 'Major number must not contain leading zeroes "01"'),
    ("1.02.3", 'Minor number must not contain leading zeroes "02"'),
    ("1.2.03", 'Patch number must not contain leading zeroes "03"'),
    ("1.2.3-", "Prerelease is empty"),
    ("1.2.3-01", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("1.2.3-a_b", 'Invalid character(s) found in prerelease "a_b"'),
    ("1.2.3+", "Build meta data is empty"),
    ("1.2.3+a_b", 'Invalid character(s) found in build meta data "a_b"'),
    ("99999999999999999999.0.0", 'strconv.ParseUint: parsing "99999999999999999999": value out of range'),
])
def test_semver_parse_errors(text, error):
    with pytest.raises(semver.SemverError) as info:
        semver.parse(text)
    assert str(info.value) == error


def test_semver_ordering_and_string():
    vs = ["1.0.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
          "1.0.0-rc.1", "0.9.9", "1.0.0+build"]
    ordered = sorted(vs, key=semver.parse)
    assert ordered[:8] == ["0.9.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
                           "1.0.0-beta.11", "1.0.0-rc.1"]
    assert semver.parse("1.0.0+build") == semver.parse("1.0.0")
    assert str(semver.parse("1.2.3-rc.1+b.5")) == "1.2.3-rc.1+b.5"


@pytest.mark.parametrize("rng,inside,outside", [
    (">=1.0.0 <2.0.0", ["1.0.0", "1.9.9"], ["2.0.0", "0.9.9"]),
    (">=2.1.x <2.2.1", ["2.1.0", "2.2.0"], ["2.2.1", "2.0.9"]),
    ("1.2.x", ["1.2.0", "1.2.9"], ["1.3.0"]),
    ("<=1.2.x", ["1.2.5"], ["1.3.0"]),
    (">1.2.x", ["1.3.0"], ["1.2.9"]),
    ("<1.0.0 || >=2.0.0", ["0.1.0", "2.0.0"], ["1.5.0"]),
    ("!1.0.0", ["1.0.1"], ["1.0.0"]),
    (">= 1.0.0", ["1.0.0"], ["0.1.0"]),
])
def test_semver_ranges(rng, inside, outside):
    r = semver.parse_range(rng)
    assert all(r(semver.parse(v)) for v in inside)
    assert not any(r(semver.parse(v)) for v in outside)


@pytest.mark.parametrize("rng,error", [
    ("", "Last element in range is '||'"),
    ("|| 1.0.0", "First element in range is '||'"),
    (">=abc", 'Could not get version from string: ">=abc"'),
])
def test_semver_range_errors(rng, error):
    with pytest.raises(semver.SemverError) as info:
        semver.parse_range(rng)
    assert str(info.value) == error


def test_release_errors():
    with pytest.raises(semver.SemverError) as info:
        parse_release("a" * 21)
    assert str(info.value) == 'invalid release "%s": exceeds maximum length of 20 characters' % ("a" * 21)
    with pytest.raises(semver.SemverError) as info:
        parse_release("01.!")
    assert str(info.value) == ('invalid release "01.!": segment 0: Numeric PreRelease version must not contain leading zeroes "01"\n'
                               'segment 1: Invalid character(s) found in prerelease "!"')


def test_graph_helpers_on_valid_config():
    m = convert_to_model(build_valid_declarative_config())
    assert channel_head(m, "anakin") == "anakin.v0.1.1"
    assert channel_head(m, "anakin", "light") == "anakin.v0.1.0"
    # 0.0.1 -> 0.1.1 directly (replaces), not through the skipped 0.1.0
    assert upgrade_path(m, "anakin", "anakin.v0.0.1") == ["anakin.v0.0.1", "anakin.v0.1.1"]
    assert upgrade_path(m, "anakin", "0.1.0") == ["anakin.v0.1.0", "anakin.v0.1.1"]
    assert upgrade_path(m, "anakin", "anakin.v0.1.1") == []
    assert upgrade_path(m, "boba-fett", "1.0.0") == ["boba-fett.v1.0.0", "boba-fett.v2.0.0"]
    with pytest.raises(FBCError):
        upgrade_path(m, "anakin", "9.9.9")
    with pytest.raises(FBCError):
        channel_head(m, "nope")


def test_upgrade_path_skip_range_and_long_chain():
    entries = [{"name": "p.v1.0.%d" % i, "replaces": "p.v1.0.%d" % (i - 1)} if i else {"name": "p.v1.0.0"} for i in range(200)]
    entries.append({"name": "p.v2.0.0", "replaces": "p.v1.0.199", "skipRange": ">=1.0.0 <2.0.0"})
    bundles = [new_test_bundle("p", "1.0.%d" % i) for i in range(200)] + [new_test_bundle("p", "2.0.0")]
    m = convert_to_model(cfg(packages=[new_test_package("p", "stable", SVG_SMALL_CIRCLE)],
                             channels=[new_test_channel("p", "stable", *entries)], bundles=bundles))
    assert upgrade_path(m, "p", "1.0.3") == ["p.v1.0.3", "p.v2.0.0"]
    # a version that is not in the channel but covered by a skipRange
    assert upgrade_path(m, "p", "1.5.0") == ["1.5.0", "p.v2.0.0"]
