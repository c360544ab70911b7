# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import TemplateSchemaError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template import basic, registry, semver

BASIC = "schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: 'r/foo:1.0.0'}\n"
SEMVER = "schema: olm.semver\nstable:\n  bundles:\n  - image: r/foo:1.0.0\n"


def renderer(image):
    v = image.rsplit(":", 1)[1]
    return DeclarativeConfig(bundles=[{"schema": "olm.bundle", "name": "foo.v" + v, "package": "foo", "image": image,
                                       "properties": [{"type": "olm.package",
                                                       "value": {"packageName": "foo", "version": v}}]}])


@pytest.mark.parametrize("schema,text,template_type,parsed_type,check", [
    ("olm.template.basic", BASIC, "basic", dict, lambda cfg: [b["name"] for b in cfg.bundles] == ["foo.v1.0.0"]),
    ("olm.semver", SEMVER, "semver", semver.SemverTemplate, lambda cfg: [c["name"] for c in cfg.channels] == [
        "stable-v1.0"]),
])
def test_each_schema_renders_via_its_entry(schema, text, template_type, parsed_type, check):
    parse, render = registry.TEMPLATES[schema]
    assert isinstance(parse(text), parsed_type)
    assert registry.TEMPLATE_TYPES[template_type] == schema
    assert registry.detect_template_schema(text) == schema
    direct = render(text, renderer, migrate_level=None, opm_compat=None, strict_names=True)
    assert check(direct)
    for kw in ({}, {"template_type": template_type}, {"template_type": schema}):
        assert registry.render_template(text, renderer, **kw) == direct
    assert registry.render_template(text.encode("utf-8"), renderer) == direct


def test_table_covers_the_known_schemas():
    assert set(registry.TEMPLATES) == {basic.SCHEMA_BASIC, semver.SCHEMA_SEMVER}
    assert registry.SCHEMA_SUBSTITUTES in registry.UNSUPPORTED_SCHEMAS
    assert registry.SCHEMA_SUBSTITUTES not in registry.TEMPLATES


@pytest.mark.parametrize("call,message", [
    (lambda: registry.detect_template_schema("schema: olm.template.substitutes\n"),
     "unknown template schema: olm.template.substitutes"),
    (lambda: registry.detect_template_schema("schema: custom\n"), "unknown template schema: custom"),
    (lambda: registry.detect_template_schema("entries: []\n"), "template input missing required 'schema' field"),
    (lambda: registry.render_template(BASIC, renderer, template_type="substitutes"),
     "unknown template schema: substitutes"),
    (lambda: registry.render_template(BASIC, renderer, template_type="olm.template.substitutes"),
     "unknown template schema: olm.template.substitutes"),
    (lambda: registry.render_template(BASIC, renderer, template_type="other"), "unknown template schema: other"),
    (lambda: registry.render_template("schema: olm.template.substitutes\n", renderer),
     "unknown template schema: olm.template.substitutes"),
])
def test_unknown_and_unsupported_schemas(call, message):
    with pytest.raises(TemplateSchemaError) as info:
        call()
    assert str(info.value) == message


def test_template_modules_do_not_import_each_other():
    assert "template.semver" not in inspect.getsource(basic)
    assert "template.basic" not in inspect.getsource(semver)
