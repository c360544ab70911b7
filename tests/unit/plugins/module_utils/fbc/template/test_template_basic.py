# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleRenderError,
    FbcTemplateError,
    TemplateParseError,
    TemplateSchemaError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import (
    load_slice,
    parse_basic_template,
    render_basic_template,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import (
    detect_template_schema,
    render_template,
)

TEMPLATE = """---
schema: olm.template.basic
entries:
- schema: olm.package
  name: foo
  defaultChannel: beta
  unknownField: dropped
- schema: olm.channel
  package: foo
  name: beta
  entries:
  - name: foo.v0.1.0
  - name: foo.v0.2.0
    replaces: foo.v0.1.0
    skipRange: <0.2.0
    extra: dropped
- schema: olm.bundle
  image: reg/foo:0.1.0
- schema: olm.bundle
  name: ignored-name
  image: reg/foo:0.2.0
- schema: custom.thing
  package: foo
  anything: [1, 2]
- schema: olm.deprecations
  package: foo
  entries:
  - reference: {schema: olm.bundle, name: foo.v0.1.0}
    message: old
"""


def _blob(version, image):
    return {"schema": "olm.bundle", "name": "foo.v" + version, "package": "foo", "image": image,
            "properties": [{"type": "olm.package", "value": {"packageName": "foo", "version": version}}]}


def renderer(image):
    return DeclarativeConfig(bundles=[_blob(image.rsplit(":", 1)[1], image)])


def test_render_basic():
    out = render_basic_template(TEMPLATE, renderer)
    assert out.packages == [{"schema": "olm.package", "name": "foo", "defaultChannel": "beta"}]
    assert out.channels == [{"schema": "olm.channel", "name": "beta", "package": "foo", "entries": [
        {"name": "foo.v0.1.0"}, {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0", "skipRange": "<0.2.0"}]}]
    assert [b["name"] for b in out.bundles] == ["foo.v0.1.0", "foo.v0.2.0"]
    assert out.others == [{"schema": "custom.thing", "package": "foo", "anything": [1, 2]}]
    assert out.deprecations == [{"schema": "olm.deprecations", "package": "foo", "entries": [
        {"reference": {"schema": "olm.bundle", "name": "foo.v0.1.0"}, "message": "old"}]}]


def test_render_basic_json_input_and_dict_input():
    doc = {"schema": "olm.template.basic", "entries": [{"schema": "olm.bundle", "image": "r/foo:1.0.0"}]}
    assert render_basic_template(json.dumps(doc), renderer).bundles[0]["name"] == "foo.v1.0.0"
    assert render_basic_template(doc, renderer).bundles[0]["image"] == "r/foo:1.0.0"


def test_render_basic_multi_bundle_contributor():
    def multi(image):
        return DeclarativeConfig(bundles=[_blob("1.0.0", "a"), _blob("2.0.0", "b")],
                                 packages=[{"schema": "olm.package", "name": "zzz"}])
    out = render_basic_template("schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: x}\n", multi)
    assert [b["name"] for b in out.bundles] == ["foo.v1.0.0", "foo.v2.0.0"]
    assert out.packages == []  # only bundles of the contributor are kept


def test_first_document_only():
    out = render_basic_template("schema: olm.template.basic\nentries: []\n---\nschema: olm.semver\n", renderer)
    assert out.bundles == [] and out.packages == []


@pytest.mark.parametrize("entry", [
    {"schema": "olm.bundle", "image": "x", "package": "foo"},
    {"schema": "olm.bundle", "image": "x", "properties": [{"type": "olm.package", "value": {}}]},
    {"schema": "olm.bundle", "image": "x", "relatedImages": [{"image": "y"}]},
    {"schema": "olm.bundle"},
    {"schema": "olm.bundle", "image": ""},
])
def test_unexpected_bundle_fields(entry):
    with pytest.raises(TemplateParseError) as e:
        render_basic_template({"schema": "olm.template.basic", "entries": [entry]}, renderer)
    assert str(e.value) == "unexpected fields present in basic template bundle"


def test_parse_errors():
    with pytest.raises(TemplateSchemaError) as e:
        parse_basic_template("schema: olm.semver\n")
    assert str(e.value) == 'template has unknown schema ("olm.semver"), should be "olm.template.basic"'
    with pytest.raises(TemplateParseError, match="^decoding template schema: EOF$"):
        parse_basic_template("")
    with pytest.raises(TemplateParseError, match="^decoding template schema: "):
        parse_basic_template("a: [1, 2\n")
    with pytest.raises(TemplateParseError, match="cannot unmarshal array into Go value of type basic"):
        parse_basic_template("- 1\n")
    with pytest.raises(TemplateParseError, match="BasicTemplateData.entries"):
        parse_basic_template("schema: olm.template.basic\nentries: 3\n")
    with pytest.raises(TemplateParseError):
        parse_basic_template("schema: olm.template.basic\nentries: [3]\n")


def test_case_insensitive_keys():
    tpl = parse_basic_template("Schema: olm.template.basic\nEntries:\n- Schema: olm.package\n  Name: p\n"
                               "  DefaultChannel: c\n")
    cfg = load_slice(tpl["entries"])
    assert cfg.packages == [{"schema": "olm.package", "name": "p", "defaultChannel": "c"}]


def test_load_slice_errors():
    with pytest.raises(TemplateParseError) as e:
        load_slice([{"name": "x"}])
    assert str(e.value) == """object '{"name":"x"}\n' is missing root schema field"""
    with pytest.raises(TemplateParseError, match=r'duplicate keys for key "schema": \[Schema schema\]'):
        load_slice([{"schema": "olm.package", "Schema": "olm.package"}])
    with pytest.raises(TemplateParseError, match="expected value for key \"schema\" to be a string"):
        load_slice([{"schema": 3}])
    with pytest.raises(TemplateParseError, match="parse package: json: cannot unmarshal number"):
        load_slice([{"schema": "olm.package", "name": "p", "defaultChannel": 3}])
    with pytest.raises(TemplateParseError, match="parse channel"):
        load_slice([{"schema": "olm.channel", "entries": [{"name": "a", "skips": [1]}]}])
    with pytest.raises(TemplateParseError, match="illegal base64"):
        load_slice([{"schema": "olm.package", "name": "p", "icon": {"base64data": "!!!", "mediatype": "x"}}])


def test_package_icon_normalized():
    raw = base64.b64encode(b"<svg/>").decode()
    cfg = load_slice([{"schema": "olm.package", "name": "p", "icon": {"base64data": raw[:4] + "\n" + raw[4:],
                                                                      "mediatype": "image/svg+xml"}}])
    assert cfg.packages[0]["icon"] == {"base64data": raw, "mediatype": "image/svg+xml"}


def test_channel_without_entries_is_kept_without_entries():
    cfg = load_slice([{"schema": "olm.channel", "name": "c", "package": "p", "Extra": 1}])
    assert cfg.channels == [{"schema": "olm.channel", "name": "c", "package": "p"}]


def test_renderer_errors_are_clean():
    def boom(image):
        raise OSError("connection refused")
    with pytest.raises(BundleRenderError, match='render reference "x": connection refused'):
        render_basic_template({"schema": "olm.template.basic", "entries": [{"schema": "olm.bundle", "image": "x"}]},
                              boom)
    with pytest.raises(BundleRenderError, match="expected DeclarativeConfig"):
        render_basic_template({"schema": "olm.template.basic", "entries": [{"schema": "olm.bundle", "image": "x"}]},
                              lambda i: [])


def test_path_traversal_rejected():
    for name in ("../x", "a/b", ".."):
        with pytest.raises(FbcTemplateError, match="single path element"):
            render_basic_template({"schema": "olm.template.basic",
                                   "entries": [{"schema": "olm.package", "name": name}]}, renderer)
    out = render_basic_template({"schema": "olm.template.basic",
                                 "entries": [{"schema": "olm.package", "name": "../x"}]}, renderer,
                                strict_names=False)
    assert out.packages[0]["name"] == "../x"


def test_detect_schema():
    assert detect_template_schema("schema: olm.template.basic\n") == "olm.template.basic"
    assert detect_template_schema("Schema: olm.semver\n") == "olm.semver"
    with pytest.raises(TemplateSchemaError) as e:
        detect_template_schema("entries: []\n")
    assert str(e.value) == "template input missing required 'schema' field"
    with pytest.raises(TemplateSchemaError) as e:
        detect_template_schema("schema: olm.template.substitutes\n")
    assert str(e.value) == "unknown template schema: olm.template.substitutes"


def test_render_template_dispatch():
    basic = "schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: 'r/foo:1.0.0'}\n"
    semver = "schema: olm.semver\nstable:\n  bundles:\n  - image: r/foo:1.0.0\n"
    assert render_template(basic, renderer).bundles[0]["name"] == "foo.v1.0.0"
    assert render_template(basic, renderer, template_type="basic").bundles
    out = render_template(semver, renderer)
    assert out.channels[0]["name"] == "stable-v1.0"
    assert render_template(semver, renderer, template_type="semver", opm_compat="v1.46").packages[0][
        "defaultChannel"] == "stable-v1.0"
    with pytest.raises(TemplateSchemaError):
        render_template(basic, renderer, template_type="substitutes")
    with pytest.raises(TemplateSchemaError, match="template has unknown schema"):
        render_template(semver, renderer, template_type="basic")


def test_non_string_keys_in_dict_input():
    doc = {"schema": "olm.template.basic", "entries": [{1: "x", "schema": "olm.package", "name": "p"},
                                                       {"schema": "olm.bundle", "image": "r/foo:1.0.0", 2.0: None}]}
    out = render_basic_template(doc, renderer)
    assert out.packages[0]["name"] == "p" and out.bundles[0]["name"] == "foo.v1.0.0"
