# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: template/config parsers never crash on arbitrary input (only FbcTemplateError), and the semver
linking / convert round trip keep their invariants on generated inputs."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import (
    parse_ci_fbc,
    parse_release_config,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FbcTemplateError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.semver import Version
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import (
    load_slice,
    parse_basic_template,
    render_basic_template,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.convert import (
    convert_documents,
    convert_fbc_stream,
    dump_basic_template_json,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import add_bundle
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import (
    detect_template_schema,
    render_template,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.semver import (
    generate_channels,
    parse_semver_template,
    render_semver_template,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = st.sampled_from(["schema", "Schema", "entries", "name", "package", "image", "defaultChannel",
                        "generateMajorChannels", "GenerateMinorChannels", "defaultChannelTypePreference",
                        "candidate", "Fast", "stable", "bundles", "Bundles", "Image", "properties", "relatedImages",
                        "icon", "base64data", "skips", "replaces", "skipRange", "type", "value", "fbc",
                        "catalog_mapping", "template_name", "catalog_names", "catalog_templates", "channels",
                        "enabled", "x"]) | st.integers(0, 2)
SCHEMAS = st.sampled_from(["olm.template.basic", "olm.semver", "olm.package", "olm.channel", "olm.bundle",
                           "olm.deprecations", "olm.template.substitutes", "", "custom"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, width=32),
                    st.text(max_size=8), SCHEMAS, st.sampled_from(["major", "minor", "1.0.0", "../x", "a/b"]))
JSONISH = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(KEYS, inner, max_size=5)), max_leaves=20)


def _renderer(image):
    if not isinstance(image, str) or ":" not in image:
        raise FbcTemplateError("no such image %r" % (image,))
    v = image.rsplit(":", 1)[1]
    return DeclarativeConfig(bundles=[{"schema": "olm.bundle", "name": "p.v" + v, "package": "p", "image": image,
                                       "properties": [{"type": "olm.package",
                                                       "value": {"packageName": "p", "version": v}}]}])


def _clean(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except FbcTemplateError:
        return None


@SETTINGS
@given(st.text(max_size=300))
def test_text_never_crashes(text):
    for fn in (parse_basic_template, parse_semver_template, detect_template_schema, convert_fbc_stream,
               parse_ci_fbc, parse_release_config):
        _clean(fn, text)
    _clean(render_template, text, _renderer)


@SETTINGS
@given(JSONISH)
def test_structures_never_crash(doc):
    text = yaml.safe_dump(doc)
    for fn in (parse_basic_template, parse_semver_template, parse_ci_fbc, parse_release_config):
        _clean(fn, doc)
        _clean(fn, text)
    _clean(render_template, text, _renderer)
    _clean(render_template, json.dumps(doc), _renderer)
    if isinstance(doc, list):
        _clean(load_slice, doc)
        _clean(convert_documents, doc)


ENTRY = st.fixed_dictionaries({"schema": SCHEMAS}, optional={"name": SCALARS, "package": SCALARS, "image": SCALARS,
                                                             "entries": JSONISH, "properties": JSONISH,
                                                             "defaultChannel": SCALARS, "icon": JSONISH})


@SETTINGS
@given(st.lists(ENTRY, max_size=6))
def test_basic_template_entries_never_crash(entries):
    out = _clean(render_basic_template, {"schema": "olm.template.basic", "entries": entries}, _renderer)
    if out is not None:
        assert isinstance(out, DeclarativeConfig)


VERSIONS = st.builds(lambda a, b, c, pre: "%d.%d.%d%s" % (a, b, c, pre), st.integers(0, 3), st.integers(0, 4),
                     st.integers(0, 4), st.sampled_from(["", "", "", "-alpha", "-beta.1", "-rc.2"]))


@SETTINGS
@given(st.dictionaries(st.sampled_from(["Candidate", "Fast", "Stable"]),
                       st.lists(VERSIONS, min_size=1, max_size=8, unique=True), min_size=1),
       st.booleans(), st.booleans(), st.booleans())
def test_semver_render_invariants(archs, major, minor, v146):
    lines = ["Schema: olm.semver", "GenerateMajorChannels: %s" % str(major).lower(),
             "GenerateMinorChannels: %s" % str(minor).lower()]
    for arch, versions in archs.items():
        lines.append("%s:\n  Bundles:" % arch)
        lines.extend("  - Image: reg/p:%s" % v for v in versions)
    out = render_semver_template("\n".join(lines) + "\n", _renderer, opm_compat="v1.46" if v146 else None)
    kinds = (1 if major else 0) + (1 if minor else 0) or 1
    total = sum(len(v) for v in archs.values())
    assert sum(len(c["entries"]) for c in out.channels) == total * kinds
    dc = out.packages[0]["defaultChannel"]
    version_of = {"p.v" + v: Version.parse(v) for vs in archs.values() for v in vs}
    # opm quirk kept: the high-water mark starts at (candidate, 0.0.0) and a channel competes with the version that
    # created it (its lowest), so candidate channels all starting below 0.0.0 leave the default channel empty
    assert dc in {c["name"] for c in out.channels} or (dc == "" and set(archs) == {"Candidate"} and all(
        version_of[c["entries"][0]["name"]] < Version(0, 0, 0) for c in out.channels))
    names = [c["name"] for c in out.channels]
    assert names == sorted(names)
    for c in out.channels:
        vs = [version_of[e["name"]] for e in c["entries"]]
        assert vs == sorted(vs)
        for e in c["entries"]:
            v = version_of[e["name"]]
            for ref in ([e["replaces"]] if "replaces" in e else []) + e.get("skips", []):
                assert version_of[ref] < v and version_of[ref].major == v.major
            assert len(e.get("skips", [])) == len(set(e.get("skips", [])))
    # the most stable archetype present provides the default channel
    best = max(archs, key=["Candidate", "Fast", "Stable"].index).lower()
    assert dc == "" or dc.startswith(best + "-")


@SETTINGS
@given(st.lists(VERSIONS, min_size=1, max_size=12, unique=True))
def test_edge_scoped_major_channel_single_head(versions):
    vs = {"p.v" + v: Version.parse(v) for v in versions}
    channels = generate_channels({"stable": vs}, True, False, "major", "p")[0]
    for c in channels:
        referenced = set()
        for e in c["entries"]:
            if e.get("replaces"):
                referenced.add(e["replaces"])
            referenced.update(e.get("skips", []))
        heads = [e["name"] for e in c["entries"] if e["name"] not in referenced]
        assert heads == [c["entries"][-1]["name"]]


@SETTINGS
@given(st.lists(VERSIONS, min_size=1, max_size=10, unique=True),
       st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
def test_edit_convert_render_round_trip(versions, channels):
    tpl = None
    for v in versions:
        tpl = add_bundle(tpl, "reg/p:%s" % v, "p.v%s" % v, channels, package="p")[0]
    out = render_basic_template(tpl, _renderer)
    assert [b["image"] for b in out.bundles] == ["reg/p:%s" % v for v in versions]
    docs = out.packages + out.channels + out.bundles
    conv = convert_documents(docs)
    again = render_basic_template(json.loads(dump_basic_template_json(conv)), _renderer)
    assert again.bundles == out.bundles and again.channels == out.channels and again.packages == out.packages
