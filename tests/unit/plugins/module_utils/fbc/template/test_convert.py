# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import TemplateParseError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import parse_basic_template
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.convert import (
    convert_declcfg,
    convert_documents,
    convert_fbc_stream,
    dump_basic_template_json,
    dump_basic_template_yaml,
)

OPM = str(data_path("opm-testdata"))

FBC = """---
schema: olm.package
name: foo
defaultChannel: beta
description: a <b>&</b>
---
schema: olm.channel
package: foo
name: beta
entries:
- name: foo.v0.1.0
  skipRange: <0.1.0
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: reg/foo:0.1.0
properties:
- type: olm.package
  value: {packageName: foo, version: 0.1.0}
relatedImages:
- {name: x, image: y}
---
schema: custom
zeta: 1
alpha: {b: 2, a: 1}
"""


def test_convert_entries():
    tpl = convert_fbc_stream(FBC)
    assert tpl["schema"] == "olm.template.basic"
    e = tpl["entries"]
    assert list(e[0]) == ["defaultChannel", "description", "name", "schema"]  # Meta blob: sorted keys
    assert e[2] == {"schema": "olm.bundle", "image": "reg/foo:0.1.0"} and list(e[2]) == ["schema", "image"]
    assert list(e[3]) == ["alpha", "schema", "zeta"] and list(e[3]["alpha"]) == ["a", "b"]


def test_convert_json_output_exact():
    out = dump_basic_template_json(convert_fbc_stream(FBC))
    assert out.startswith('{\n    "schema": "olm.template.basic",\n    "entries": [\n        {\n')
    assert out.endswith("    ]\n}\n")
    assert '"description": "a \\u003cb\\u003e\\u0026\\u003c/b\\u003e"' in out
    assert '"skipRange": "\\u003c0.1.0"' in out
    assert '        {\n            "schema": "olm.bundle",\n            "image": "reg/foo:0.1.0"\n        },' in out
    assert json.loads(out) == convert_fbc_stream(FBC)


def test_convert_yaml_output():
    out = dump_basic_template_yaml(convert_fbc_stream(FBC))
    assert out.startswith("---\nentries:\n- defaultChannel: beta\n")
    assert out.endswith("schema: olm.template.basic\n\n")
    assert "\n- image: reg/foo:0.1.0\n  schema: olm.bundle\n" in out
    assert yaml.safe_load(out) == convert_fbc_stream(FBC)
    # the result is a valid basic template
    assert parse_basic_template(out)["entries"][2] == {"image": "reg/foo:0.1.0", "schema": "olm.bundle"}


def test_convert_json_stream_input():
    path = os.path.join(OPM, "test/e2e/testdata/test-configs/prometheus/prometheus.json")
    # A missing file fails the test: the committed test data (tests/data) is part of the fixture, never optional.
    with open(path, "rb") as f:
        tpl = convert_fbc_stream(f.read())
    schemas = [e["schema"] for e in tpl["entries"]]
    assert schemas[0] == "olm.package" and "olm.bundle" in schemas
    assert all(set(e) == {"schema", "image"} for e in tpl["entries"] if e["schema"] == "olm.bundle")


def test_convert_errors():
    with pytest.raises(TemplateParseError):
        convert_documents([{"name": "x", "Name": "y", "schema": "s"}])
    with pytest.raises(TemplateParseError):
        convert_documents(["not an object"])
    with pytest.raises(TemplateParseError):
        convert_fbc_stream("{bad json")
    with pytest.raises(TemplateParseError):
        convert_documents([{"schema": "olm.bundle", "image": 3}])


def test_convert_declcfg_writer_order():
    cfg = DeclarativeConfig(
        packages=[{"schema": "olm.package", "name": "b"}, {"schema": "olm.package", "name": "a"}],
        channels=[{"schema": "olm.channel", "name": "z", "package": "a"},
                  {"schema": "olm.channel", "name": "y", "package": "a"}],
        bundles=[{"schema": "olm.bundle", "name": "a.v2", "package": "a", "image": "i2"},
                 {"schema": "olm.bundle", "name": "a.v1", "package": "a", "image": "i1"}],
        deprecations=[{"schema": "olm.deprecations", "package": "a", "entries": []}],
        others=[{"schema": "x"}, {"schema": "y", "package": "b"}])
    tpl = convert_declcfg(cfg)
    names = [(e["schema"], e.get("name") or e.get("image") or e.get("package")) for e in tpl["entries"]]
    assert names == [("olm.package", "a"), ("olm.channel", "y"), ("olm.channel", "z"), ("olm.bundle", "i1"),
                     ("olm.bundle", "i2"), ("olm.deprecations", "a"), ("olm.package", "b"), ("y", "b"), ("x", None)]
    with pytest.raises(TemplateParseError):
        convert_declcfg({"not": "a cfg"})
