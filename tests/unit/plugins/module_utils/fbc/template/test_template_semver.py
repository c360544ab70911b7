# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of operator-registry alpha/template/semver/semver_test.go plus README examples and both linking modes."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FbcTemplateError,
    TemplateParseError,
    TemplateSchemaError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.semver import parse as V
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.semver import (
    generate_channels,
    link_edge_scoped,
    parse_semver_template,
    populate_package_metadata,
    render_semver_template,
)

PRIO = {"candidate": 0, "fast": 1, "stable": 2}


def _tuples(spec, kind=1):
    """spec: [(arch, [versions])] -> (tuples, {channel: entries})"""
    tuples, chans = [], {}
    for arch, versions in spec:
        for v in versions:
            ver = V(v)
            e = {"name": "a-v" + v}
            chans.setdefault("%s-v%d" % (arch, ver.major), []).append(e)
            tuples.append((PRIO[arch], kind, ver, e))
    return tuples, chans


def _edges(chans):
    return {e["name"]: (e.get("replaces", ""), e.get("skips", [])) for es in chans.values() for e in es}


# --------------------------------------------------------------------------- TestLinkChannels

def test_link_no_edges_between_successive_major_channels():
    t, ch = _tuples([("stable", ["0.1.0", "0.1.1"]), ("stable", ["1.1.0", "1.2.1", "1.3.1"]),
                     ("stable", ["2.1.0", "2.1.1", "2.3.1", "2.3.2"])])
    link_edge_scoped(t)
    assert _edges(ch) == {
        "a-v0.1.0": ("", []), "a-v0.1.1": ("", ["a-v0.1.0"]),
        "a-v1.1.0": ("", []), "a-v1.2.1": ("a-v1.1.0", []), "a-v1.3.1": ("a-v1.2.1", ["a-v1.1.0"]),
        "a-v2.1.0": ("", []), "a-v2.1.1": ("", ["a-v2.1.0"]), "a-v2.3.1": ("", []),
        "a-v2.3.2": ("a-v2.1.1", ["a-v2.1.0", "a-v2.3.1"]),
    }


def test_link_last_edge_is_x_change():
    t, ch = _tuples([("stable", ["0.1.0", "0.1.1"]), ("stable", ["1.1.0", "1.2.1", "1.3.1"]), ("stable", ["2.1.0"])])
    link_edge_scoped(t)
    e = _edges(ch)
    assert e["a-v2.1.0"] == ("", [])
    assert e["a-v1.3.1"] == ("a-v1.2.1", ["a-v1.1.0"])


def test_link_last_edge_is_archetype_change():
    t, ch = _tuples([("stable", ["1.1.0", "1.2.1", "1.3.1"]), ("stable", ["2.1.0", "2.1.1", "2.3.1"])])
    t2, ch2 = _tuples([("candidate", ["2.3.2"])])
    t += t2
    ch.update({"c-" + k: v for k, v in ch2.items()})
    link_edge_scoped(t)
    e = _edges(ch)
    assert e["a-v2.3.1"] == ("a-v2.1.1", ["a-v2.1.0"])
    assert e["a-v2.3.2"] == ("", [])


def test_link_minimum_viable():
    t, ch = _tuples([("stable", ["1.0.0"])])
    link_edge_scoped(t)
    assert _edges(ch) == {"a-v1.0.0": ("", [])}


# --------------------------------------------------------------------------- TestGenerateChannels

GEN_VERSIONS = ["0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1-alpha", "1.3.1-beta", "1.3.1", "1.4.1-beta1",
                "1.4.1-beta2", "1.4.1", "2.1.0", "2.1.1", "2.3.1", "2.3.2", "3.1.0", "3.1.1"]


def _gen(major, minor, pref, v146=False):
    versions = {"candidate": {}, "fast": {}, "stable": {"a-v" + v: V(v) for v in GEN_VERSIONS}}
    return generate_channels(versions, major, minor, pref, "a", v146=v146)


@pytest.mark.parametrize("major,minor,pref,default", [
    (False, True, "minor", "stable-v3.1"),
    (True, False, "major", "stable-v3"),
    (True, True, "minor", "stable-v3.1"),
    (True, True, "major", "stable-v3"),
    (False, True, "major", "stable-v3.1"),  # mismatched preference with a single kind
    (True, False, "minor", "stable-v3"),
])
def test_generate_channels_default(major, minor, pref, default):
    _channels, dc = _gen(major, minor, pref)
    assert dc == default


def test_generate_minor_channels():
    channels = _gen(False, True, "minor")[0]
    by = {c["name"]: c["entries"] for c in channels}
    assert [c["name"] for c in channels] == sorted(by)
    assert by["stable-v1.2"] == [{"name": "a-v1.2.1", "replaces": "a-v1.1.0"}]
    assert by["stable-v1.3"] == [{"name": "a-v1.3.1-alpha"}, {"name": "a-v1.3.1-beta"},
                                 {"name": "a-v1.3.1", "replaces": "a-v1.2.1",
                                  "skips": ["a-v1.1.0", "a-v1.3.1-alpha", "a-v1.3.1-beta"]}]
    assert by["stable-v1.4"][-1] == {"name": "a-v1.4.1", "replaces": "a-v1.3.1",
                                     "skips": ["a-v1.1.0", "a-v1.2.1", "a-v1.3.1-alpha", "a-v1.3.1-beta",
                                               "a-v1.4.1-beta1", "a-v1.4.1-beta2"]}
    assert by["stable-v2.3"] == [{"name": "a-v2.3.1"},
                                 {"name": "a-v2.3.2", "replaces": "a-v2.1.1", "skips": ["a-v2.1.0", "a-v2.3.1"]}]
    assert by["stable-v0.1"] == [{"name": "a-v0.1.0"}, {"name": "a-v0.1.1", "skips": ["a-v0.1.0"]}]
    assert all(c["package"] == "a" and c["schema"] == "olm.channel" for c in channels)


def test_generate_both_is_union_sorted_by_name():
    both = _gen(True, True, "minor")[0]
    major = _gen(True, False, "major")[0]
    minor = _gen(False, True, "minor")[0]
    assert both == sorted(major + minor, key=lambda c: c["name"])


def test_readme_example_major_candidate():
    names = ["0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.2.0", "0.2.1", "0.2.2", "0.3.0"]
    versions = {"candidate": {"p.v" + v: V(v) for v in names}}
    channels, dc = generate_channels(versions, True, False, "major", "p")
    assert dc == "candidate-v0"
    e = {x["name"]: x for x in channels[0]["entries"]}
    assert e["p.v0.1.3"] == {"name": "p.v0.1.3", "skips": ["p.v0.1.0", "p.v0.1.1", "p.v0.1.2"]}
    assert e["p.v0.2.2"] == {"name": "p.v0.2.2", "replaces": "p.v0.1.3",
                             "skips": ["p.v0.1.0", "p.v0.1.1", "p.v0.1.2", "p.v0.2.0", "p.v0.2.1"]}
    assert e["p.v0.3.0"] == {"name": "p.v0.3.0", "replaces": "p.v0.2.2",
                             "skips": ["p.v0.1.0", "p.v0.1.1", "p.v0.1.2", "p.v0.1.3", "p.v0.2.0", "p.v0.2.1"]}
    assert "replaces" not in e["p.v0.2.0"] and "skips" not in e["p.v0.1.1"]


def test_minor_mode_replaces_cross_channels():
    versions = {"candidate": {"p.v" + v: V(v) for v in ["0.1.0", "0.1.3", "0.2.0", "0.2.2"]}}
    channels, dc = generate_channels(versions, False, True, "minor", "p")
    assert dc == "candidate-v0.2"
    assert channels[1]["entries"][-1] == {"name": "p.v0.2.2", "replaces": "p.v0.1.3",
                                          "skips": ["p.v0.1.0", "p.v0.2.0"]}


# --------------------------------------------------------------------------- inchworm (v1.46)

CLUSTERPULSE = ["0.1.1", "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0"]


def test_inchworm_clusterpulse_example():
    versions = {"fast": {"clusterpulse.v" + v: V(v) for v in CLUSTERPULSE}}
    channels, dc = generate_channels(versions, True, False, "major", "clusterpulse", v146=True)
    assert dc == "fast-v0"
    assert channels[0]["entries"] == [
        {"name": "clusterpulse.v0.1.1"}, {"name": "clusterpulse.v0.2.0"}, {"name": "clusterpulse.v0.2.1"},
        {"name": "clusterpulse.v0.2.2"},
        {"name": "clusterpulse.v0.2.3", "replaces": "clusterpulse.v0.1.1",
         "skips": ["clusterpulse.v0.1.1", "clusterpulse.v0.2.0", "clusterpulse.v0.2.1", "clusterpulse.v0.2.2"]},
        {"name": "clusterpulse.v0.3.0", "replaces": "clusterpulse.v0.2.3", "skips": ["clusterpulse.v0.2.3"]},
    ]


def test_edge_scoped_on_clusterpulse_input():
    versions = {"fast": {"clusterpulse.v" + v: V(v) for v in CLUSTERPULSE}}
    channels = generate_channels(versions, True, False, "major", "clusterpulse")[0]
    e = {x["name"]: x for x in channels[0]["entries"]}
    assert e["clusterpulse.v0.2.3"]["replaces"] == "clusterpulse.v0.1.1"
    assert e["clusterpulse.v0.2.3"]["skips"] == ["clusterpulse.v0.2.0", "clusterpulse.v0.2.1", "clusterpulse.v0.2.2"]
    assert e["clusterpulse.v0.3.0"]["skips"] == ["clusterpulse.v0.1.1", "clusterpulse.v0.2.0", "clusterpulse.v0.2.1",
                                                 "clusterpulse.v0.2.2"]


def test_inchworm_minor_channels_never_replace():
    versions = {"stable": {"a-v" + v: V(v) for v in GEN_VERSIONS}}
    channels = generate_channels(versions, False, True, "minor", "a", v146=True)[0]
    for c in channels:
        assert all("replaces" not in e for e in c["entries"])
    by = {c["name"]: c["entries"] for c in channels}
    assert by["stable-v1.3"][-1] == {"name": "a-v1.3.1", "skips": ["a-v1.3.1-alpha", "a-v1.3.1-beta"]}


# --------------------------------------------------------------------------- TestReadFile

VALID = """---
schema: olm.semver
generatemajorchannels: true
generateminorchannels: true
candidate:
  bundles:
  - image: quay.io/foo/olm:testoperator.v0.1.0
stable:
  bundles:
  - image: quay.io/foo/olm:testoperator.v1.0.0
"""


def test_read_file_valid():
    sv = parse_semver_template(VALID)
    assert sv.generate_major and sv.generate_minor
    assert sv.default_channel_type_preference == "minor"
    assert sv.bundles["candidate"] == ["quay.io/foo/olm:testoperator.v0.1.0"]
    assert sv.bundles["fast"] == []


def test_read_file_camel_case_and_defaults():
    sv = parse_semver_template("Schema: olm.semver\nCandidate:\n  Bundles:\n  - Image: x\n")
    assert sv.generate_minor and not sv.generate_major
    assert sv.default_channel_type_preference == "minor"
    sv = parse_semver_template("Schema: olm.semver\nGenerateMajorChannels: true\n")
    assert sv.default_channel_type_preference == "major" and not sv.generate_minor


def test_read_file_unknown_field():
    with pytest.raises(TemplateParseError) as e:
        parse_semver_template(VALID + "invalid: yes\n")
    assert str(e.value) == 'error unmarshaling JSON: while decoding JSON: json: unknown field "invalid"'
    with pytest.raises(TemplateParseError, match='unknown field "AvoidSkipPatch"'):
        parse_semver_template("Schema: olm.semver\nAvoidSkipPatch: true\n")
    with pytest.raises(TemplateParseError, match='unknown field "foo"'):
        parse_semver_template("Schema: olm.semver\nStable:\n  Bundles:\n  - Image: x\n    foo: 1\n")


@pytest.mark.parametrize("text,msg", [
    ("schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\n"
     "defaultChannelTypePreference: minor\n",
     "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating "
     "minor-version channels"),
    ("schema: olm.semver\ngenerateMajorChannels: false\ngenerateMinorChannels: true\n"
     "defaultChannelTypePreference: major\n",
     "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating "
     "major-version channels"),
    ("schema: olm.semver\ndefaultChannelTypePreference: foo\n",
     "unknown DefaultChannelTypePreference: \"foo\"\nValid values are 'major' or 'minor'"),
])
def test_read_file_preference_errors(text, msg):
    with pytest.raises(TemplateParseError) as e:
        parse_semver_template(text)
    assert str(e.value) == msg


def test_read_file_schema_and_types():
    with pytest.raises(TemplateSchemaError) as e:
        parse_semver_template("schema: olm.template.semver\n")
    assert str(e.value) == 'readFile: input file has unknown schema, should be "olm.semver"'
    with pytest.raises(TemplateSchemaError):
        parse_semver_template("")
    with pytest.raises(TemplateParseError, match="cannot unmarshal string into Go struct field "
                                                 "SemverTemplateData.generateMajorChannels of type bool"):
        parse_semver_template("schema: olm.semver\ngenerateMajorChannels: 'yes please'\n")
    with pytest.raises(TemplateParseError, match="cannot unmarshal array into Go value"):
        parse_semver_template("- a\n")


# --------------------------------------------------------------------------- rendering with a fake renderer

def _blob(pkg, version, image=None, name=None, csv=None):
    b = {"schema": "olm.bundle", "name": name or "%s.v%s" % (pkg, version), "package": pkg,
         "image": image or "reg/%s:%s" % (pkg, version),
         "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": version}}]}
    return b


class FakeRenderer:
    def __init__(self, blobs, csvs=None, rewrite=None):
        self.blobs = {b["image"]: b for b in blobs}
        self.csvs = csvs or {}
        self.rewrite = rewrite or {}
        self.calls = []

    def __call__(self, image):
        self.calls.append(image)
        b = dict(self.blobs[self.rewrite.get(image, image)])
        cfg = DeclarativeConfig(bundles=[b])
        if b["name"] in self.csvs:
            cfg.csv_json = {b["name"]: self.csvs[b["name"]]}
        return cfg


def _tpl(**archs):
    lines = ["schema: olm.semver", "generateMajorChannels: true", "generateMinorChannels: false"]
    for arch, imgs in archs.items():
        lines.append("%s:\n  bundles:" % arch)
        lines.extend("  - image: %s" % i for i in imgs)
    return "\n".join(lines) + "\n"


def test_render_basic_flow_and_package_metadata():
    blobs = [_blob("p", v) for v in ("1.0.0", "1.1.0", "2.0.0")]
    csv = {"spec": {"description": "hello", "icon": [{"base64data": "PHN2Zz48L3N2Zz4=", "mediatype": "image/svg+xml"},
                                                     {"base64data": "AAAA", "mediatype": "x"}]}}
    r = FakeRenderer(blobs, csvs={"p.v1.1.0": csv})
    out = render_semver_template(_tpl(candidate=["reg/p:2.0.0"], stable=["reg/p:1.0.0", "reg/p:1.1.0"]), r)
    assert r.calls == ["reg/p:2.0.0", "reg/p:1.0.0", "reg/p:1.1.0"]
    assert out.packages == [{"schema": "olm.package", "name": "p", "defaultChannel": "stable-v1",
                             "icon": {"base64data": "PHN2Zz48L3N2Zz4=", "mediatype": "image/svg+xml"},
                             "description": "hello"}]
    assert [c["name"] for c in out.channels] == ["candidate-v2", "stable-v1"]
    out146 = render_semver_template(_tpl(candidate=["reg/p:2.0.0"], stable=["reg/p:1.0.0", "reg/p:1.1.0"]),
                                    FakeRenderer(blobs, csvs={"p.v1.1.0": csv}), opm_compat="v1.46")
    assert out146.packages == [{"schema": "olm.package", "name": "p", "defaultChannel": "stable-v1"}]


@pytest.mark.parametrize("meta,expect", [
    ({}, {}),
    ({"spec": {"description": "d"}}, {"description": "d"}),
    ({"spec": {"icon": [{"base64data": "AAAA", "mediatype": "image/png"}]}},
     {"icon": {"base64data": "AAAA", "mediatype": "image/png"}}),
    ({"spec": {"description": "", "icon": []}}, {}),
])
def test_populate_package_metadata_cases(meta, expect):
    pkg = {"schema": "olm.package", "name": "p", "defaultChannel": "c"}
    ch = [{"name": "c", "entries": [{"name": "p.v1"}, {"name": "p.v2"}]}]
    bundles = [{"name": "p.v2", "properties": []}]
    populate_package_metadata(pkg, ch, bundles, {"p.v2": meta})
    assert {k: v for k, v in pkg.items() if k in ("icon", "description")} == expect


def test_populate_package_metadata_noops():
    pkg = {"schema": "olm.package", "name": "p", "defaultChannel": "c"}
    populate_package_metadata(pkg, [], [], {})
    populate_package_metadata(pkg, [{"name": "c", "entries": []}], [], {})
    populate_package_metadata(pkg, [{"name": "c", "entries": [{"name": "x"}]}], [], {})
    populate_package_metadata(pkg, [{"name": "c", "entries": [{"name": "x"}]}], [{"name": "x"}], {})
    assert pkg == {"schema": "olm.package", "name": "p", "defaultChannel": "c"}


def test_get_versions_from_standard_channel():
    imgs = ["a-v0.1.0", "a-v0.1.1", "a-v1.1.0", "a-v1.2.1", "a-v1.3.1-alpha", "a-v1.3.1", "a-v2.1.0", "a-v2.1.1",
            "a-v3.1.0", "a-v3.1.1"]
    blobs = [_blob("a", i[3:], image=i, name=i) for i in imgs]
    out = render_semver_template(_tpl(stable=imgs), FakeRenderer(blobs))
    assert out.packages[0]["name"] == "a"
    assert sorted(e["name"] for c in out.channels for e in c["entries"]) == sorted(imgs)


def test_bail_on_build_metadata():
    blobs = [_blob("a", "1.3.1-alpha+2001Jan21", image="i1"), _blob("a", "1.3.1-alpha+2003May06", image="i2")]
    with pytest.raises(FbcTemplateError) as e:
        render_semver_template(_tpl(stable=["i1", "i2"]), FakeRenderer(blobs))
    assert str(e.value) == (
        'render: unable to post-process bundle info: encountered bundle versions which differ only by build '
        'metadata, which cannot be ordered: bundle version "1.3.1-alpha+2003May06" cannot be compared to '
        '"1.3.1-alpha"')
    blobs.append(_blob("a", "1.3.1-alpha", image="i3"))
    with pytest.raises(FbcTemplateError, match=r"ordered: \[bundle version"):
        render_semver_template(_tpl(stable=["i1", "i2", "i3"]), FakeRenderer(blobs))


def test_render_errors():
    blobs = [_blob("a", "1.0.0"), _blob("b", "1.0.0"), _blob("a", "bad", image="reg/bad")]
    with pytest.raises(FbcTemplateError) as e:
        render_semver_template(_tpl(stable=["reg/a:1.0.0", "reg/b:1.0.0"]), FakeRenderer(blobs))
    assert str(e.value) == ('render: unable to post-process bundle info: bundle "b" does not belong to this '
                            'package: "a"')
    with pytest.raises(FbcTemplateError, match='bundle "a.vbad" has invalid version "bad": No Major.Minor.Patch'):
        render_semver_template(_tpl(stable=["reg/bad"]), FakeRenderer(blobs))
    with pytest.raises(FbcTemplateError, match='duplicate bundle name "a.v1.0.0"'):
        render_semver_template(_tpl(stable=["reg/a:1.0.0", "reg/a:1.0.0"]), FakeRenderer(blobs))
    two = dict(blobs[0])
    two["properties"] = two["properties"] * 2
    with pytest.raises(FbcTemplateError, match='bundle "a.v1.0.0" has multiple "olm.package" properties, expected '
                                               'exactly 1'):
        render_semver_template(_tpl(stable=["reg/a:1.0.0"]), FakeRenderer([two]))
    with pytest.raises(FbcTemplateError) as e:
        render_semver_template(_tpl(), FakeRenderer([]))
    assert str(e.value) == "render: no bundles specified or no bundles could be rendered"
    with pytest.raises(TemplateSchemaError, match="^render: unable to read file: readFile"):
        render_semver_template("schema: x\n", FakeRenderer([]))

    def multi(image):
        return DeclarativeConfig(bundles=[_blob("a", "1.0.0"), _blob("a", "2.0.0")])
    with pytest.raises(FbcTemplateError, match='bundle reference "x" resulted in 2 bundles, expected 1'):
        render_semver_template(_tpl(stable=["x"]), multi)
    with pytest.raises(FbcTemplateError, match="unsupported opm_compat"):
        render_semver_template(_tpl(stable=["x"]), multi, opm_compat="v0.1")


def test_image_rewrite_head_vs_v146():
    """HEAD maps template ref -> rendered image; v1.46 requires identical images."""
    blob = _blob("a", "1.0.0", image="reg/a@sha256:abc")
    r = FakeRenderer([blob], rewrite={"reg/a:1.0.0": "reg/a@sha256:abc"})
    out = render_semver_template(_tpl(stable=["reg/a:1.0.0"]), r)
    assert out.bundles[0]["image"] == "reg/a@sha256:abc"
    with pytest.raises(FbcTemplateError, match='supplied bundle image name "reg/a:1.0.0" not found in rendered'):
        render_semver_template(_tpl(stable=["reg/a:1.0.0"]), FakeRenderer([blob], rewrite={
            "reg/a:1.0.0": "reg/a@sha256:abc"}), opm_compat="v1.46")


def test_package_name_path_traversal_rejected():
    blobs = [_blob("../evil", "1.0.0", image="i")]
    with pytest.raises(ValueError, match="single path element"):
        render_semver_template(_tpl(stable=["i"]), FakeRenderer(blobs))


def test_default_channel_quirk_prerelease_zero():
    """opm: hwc starts at (candidate, 0.0.0); a channel whose first version is 0.0.0-x never replaces it."""
    versions = {"candidate": {"p.v0.0.0-alpha": V("0.0.0-alpha")}}
    channels, dc = generate_channels(versions, False, True, "minor", "p")
    assert [c["name"] for c in channels] == ["candidate-v0.0"] and dc == ""
    versions = {"fast": {"p.v0.0.0-alpha": V("0.0.0-alpha")}}
    assert generate_channels(versions, False, True, "minor", "p")[1] == "fast-v0.0"
