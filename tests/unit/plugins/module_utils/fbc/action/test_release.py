# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import (
    FbcConfig,
    apply_release_config,
    bundle_pullspec,
    check_bundle_registry,
    check_catalog_usage,
    is_catalog_v4_17_plus,
    load_template_file,
    migrate_level_for_catalog,
    parse_ci_fbc,
    parse_release_config,
    render_plan,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FbcTemplateError,
    ReleaseConfigError,
)

OPS = str(data_path("community-operators-prod", "operators"))

CI = """---
fbc:
  enabled: true
  version_promotion_strategy: always
  catalog_mapping:
    - template_name: deprecated.yaml
      type: olm.template.basic
      catalog_names: [v4.12, v4.13]
    - template_name: basic.yaml
      type: olm.template.basic
      catalog_names: [v4.16, v4.17, v4.20]
    - template_name: semver.yaml
      type: olm.semver
      catalog_names: [v4.21]
"""


@pytest.mark.parametrize("cat,plus", [("v4.12", False), ("v4.16", False), ("v4.17", True), ("v4.22", True),
                                      ("v5.0", True), ("v4.9", False), ("4.17", False), ("v4.17.1", False),
                                      ("latest", False), (None, False)])
def test_v4_17_plus(cat, plus):
    assert is_catalog_v4_17_plus(cat) is plus
    assert migrate_level_for_catalog(cat) == ("bundle-object-to-csv-metadata" if plus else "none")


def test_parse_ci():
    fbc = parse_ci_fbc(CI)
    assert fbc.enabled and fbc.version_promotion_strategy == "always"
    assert [m.template_name for m in fbc.catalog_mapping] == ["deprecated.yaml", "basic.yaml", "semver.yaml"]
    assert fbc.catalog_mapping[2].template_type == "semver"
    assert fbc.catalogs == ["v4.12", "v4.13", "v4.16", "v4.17", "v4.20", "v4.21"]
    assert fbc.mapping_for_catalog("v4.17").template_name == "basic.yaml"
    assert fbc.mapping_for_catalog("v4.99") is None
    assert check_catalog_usage(fbc) == []
    assert parse_ci_fbc("reviewers: [a]\n").enabled is False


def test_parse_ci_errors():
    with pytest.raises(ReleaseConfigError, match="Unknown template type 'olm.template.substitutes' in ci.yaml."):
        parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: a.yaml, type: olm.template.substitutes, "
                     "catalog_names: [v4.12]}\n")
    with pytest.raises(FbcTemplateError, match="single path element"):
        parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: ../../x.yaml, type: olm.semver, "
                     "catalog_names: [v4.12]}\n")
    with pytest.raises(FbcTemplateError):
        parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: a.yaml, type: olm.semver, "
                     "catalog_names: [../v4.12]}\n")
    with pytest.raises(ReleaseConfigError):
        parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: a.yaml, type: olm.semver, catalog_names: v4.12}\n")
    with pytest.raises(ReleaseConfigError):
        parse_ci_fbc("fbc: [1]\n")
    with pytest.raises(ReleaseConfigError):
        parse_ci_fbc("fbc:\n  enabled: 'yes please'\n")
    with pytest.raises(ReleaseConfigError):
        parse_ci_fbc("- a\n")
    # typo seen in the docs is accepted
    assert parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: a.yaml, type: olm.semver, "
                        "catalogs_names: [v4.12]}\n").catalogs == ["v4.12"]


def test_catalog_usage_conflict():
    fbc = parse_ci_fbc("fbc:\n  catalog_mapping:\n  - {template_name: a.yaml, type: olm.semver, catalog_names: "
                       "[v4.12, v4.13]}\n  - {template_name: b.yaml, type: olm.semver, catalog_names: [v4.13]}\n")
    assert check_catalog_usage(fbc) == [
        "Operator's 'ci.yaml' contains multiple templates '['a.yaml', 'b.yaml']' for the same catalog 'v4.13'."]


def test_render_plan():
    tasks = render_plan(parse_ci_fbc(CI), "ecr-secret-operator")
    assert [(t.catalog, t.template_type, t.migrate_level) for t in tasks] == [
        ("v4.12", "basic", "none"), ("v4.13", "basic", "none"), ("v4.16", "basic", "none"),
        ("v4.17", "basic", "bundle-object-to-csv-metadata"), ("v4.20", "basic", "bundle-object-to-csv-metadata"),
        ("v4.21", "semver", "bundle-object-to-csv-metadata")]
    t = tasks[3]
    assert t.template_path == "operators/ecr-secret-operator/catalog-templates/basic.yaml"
    assert t.output_path == "catalogs/v4.17/ecr-secret-operator/catalog.yaml"
    assert t.opm_args() == ["alpha", "render-template", "basic", "-o", "yaml", t.template_path,
                            "--migrate-level", "bundle-object-to-csv-metadata"]
    assert tasks[0].opm_args()[-1] == "operators/ecr-secret-operator/catalog-templates/deprecated.yaml"
    assert len({x.render_key for x in tasks}) == 4  # identical commands are cached
    assert [x.catalog for x in render_plan(parse_ci_fbc(CI), "x", catalogs=["v4.20"])] == ["v4.20"]
    with pytest.raises(FbcTemplateError):
        render_plan(parse_ci_fbc(CI), "../x")


def test_release_config_schema():
    rc = parse_release_config("catalog_templates:\n- template_name: basic.yaml\n  channels: [stable-3.9]\n"
                              "  defaultChannel: stable-3.9\n  replaces: q.v3.9.22\n  skips: [a, b]\n"
                              "  skipRange: '>=1.0.0 <1.31.0'\nmerge: false\n")
    assert rc["catalog_templates"][0]["skipRange"] == ">=1.0.0 <1.31.0" and rc["merge"] is False
    for bad in ("{}\n", "catalog_templates: []\n", "catalog_templates:\n- channels: [a]\n",
                "catalog_templates:\n- {template_name: a, channels: []}\n",
                "catalog_templates:\n- {template_name: a, channels: [x, x]}\n",
                "catalog_templates:\n- {template_name: a, channels: [x], foo: 1}\n",
                "catalog_templates:\n- {template_name: a, channels: [x]}\nextra: 1\n",
                "catalog_templates:\n- {template_name: a, channels: [x], skips: [a, a]}\n",
                "catalog_templates:\n- {template_name: a, channels: [x], replaces: 3}\n",
                "catalog_templates:\n- {template_name: a, channels: [x]}\n- {template_name: a, channels: [x]}\n",
                "catalog_templates:\n- {template_name: a, channels: [x]}\nmerge: maybe\n",
                "catalog_templates:\n- {template_name: ../a, channels: [x]}\n"):
        with pytest.raises(ReleaseConfigError):
            parse_release_config(bad)


def test_apply_release_config_create_and_amend():
    fbc = parse_ci_fbc(CI)
    templates = {}
    rc = "catalog_templates:\n- template_name: basic.yaml\n  channels: [alpha]\n  defaultChannel: alpha\n" \
         "- template_name: semver.yaml\n  channels: [Fast]\n"
    changed, tasks, cats = apply_release_config(rc, fbc, templates, "op", bundle_pullspec("op", "1.0.0"), "op.v1.0.0")
    assert changed == ["basic.yaml", "semver.yaml"]
    assert cats == ["v4.16", "v4.17", "v4.20", "v4.21"]
    assert [t.catalog for t in tasks] == ["v4.16", "v4.17", "v4.20", "v4.21"]
    assert templates["basic.yaml"]["entries"][-1] == {"schema": "olm.bundle",
                                                      "image": "quay.io/community-operator-pipeline-prod/op:1.0.0"}
    assert templates["semver.yaml"]["Fast"] == {"Bundles": [{"Image": "quay.io/community-operator-pipeline-prod/op:1.0.0"}]}
    snapshot = copy.deepcopy(templates)
    changed = apply_release_config(rc, fbc, templates, "op", bundle_pullspec("op", "1.0.0"), "op.v1.0.0")[0]
    assert changed == [] and templates == snapshot


def test_release_config_keys_a_semver_template_does_not_use_are_warned_of():
    fbc = parse_ci_fbc(CI)
    warnings = []
    rc = ("catalog_templates:\n- template_name: semver.yaml\n  channels: [Fast]\n  replaces: op.v0.9.0\n  skipRange: '<1.0.0'\n"
          "- template_name: basic.yaml\n  channels: [alpha]\n  replaces: op.v0.9.0\n")
    apply_release_config(rc, fbc, {}, "op", bundle_pullspec("op", "1.0.0"), "op.v1.0.0", warnings)
    assert warnings == ["release-config: replaces, skipRange of template semver.yaml have no effect: a semver template derives the "
                        "upgrade edges and the default channel from the versions (the community pipeline ignores them too)"]


def test_apply_release_config_errors():
    fbc = parse_ci_fbc(CI)
    with pytest.raises(ReleaseConfigError) as e:
        apply_release_config("catalog_templates:\n- {template_name: nope.yaml, channels: [a]}\n", fbc, {}, "op",
                             "i", "op.v1")
    assert str(e.value) == "Template mapping not found for 'nope.yaml' in ci.yaml."
    with pytest.raises(ReleaseConfigError) as e:
        apply_release_config("catalog_templates:\n- {template_name: basic.yaml, channels: [a, b], "
                             "defaultChannel: c}\n", fbc, {}, "op", "i", "op.v1")
    assert str(e.value) == "defaultChannel 'c' not found in 'basic.yaml'. Available channels: ['a', 'b']"
    with pytest.raises(ReleaseConfigError):
        apply_release_config("catalog_templates:\n- {template_name: semver.yaml, channels: [alpha]}\n", fbc, {},
                             "op", "i", "op.v1")
    with pytest.raises(FbcTemplateError):
        apply_release_config("catalog_templates:\n- {template_name: basic.yaml, channels: [a]}\n", fbc, {},
                             "../op", "i", "op.v1")


def test_pullspec_and_registry():
    assert bundle_pullspec("op", "1.2.3") == "quay.io/community-operator-pipeline-prod/op:1.2.3"
    with pytest.raises(FbcTemplateError):
        bundle_pullspec("op", "../1")
    assert check_bundle_registry("quay.io/openshift-community-operators/x@sha256:1")
    assert not check_bundle_registry("docker.io/x:1")
    assert isinstance(FbcConfig(True, None, []).catalogs, list)


@pytest.mark.parametrize("op", sorted(os.listdir(OPS)))
def test_real_ci_yaml(op):
    with open(os.path.join(OPS, op, "ci.yaml"), "rb") as f:
        fbc = parse_ci_fbc(f.read())
    assert fbc.enabled
    assert check_catalog_usage(fbc) == []
    for m in fbc.catalog_mapping:
        assert os.path.exists(os.path.join(OPS, op, "catalog-templates", m.template_name))
    tasks = render_plan(fbc, op)
    assert len(tasks) == len(fbc.catalogs)


def _release_configs():
    out = []
    for op in sorted(os.listdir(OPS)):
        for v in sorted(os.listdir(os.path.join(OPS, op))):
            if os.path.isfile(os.path.join(OPS, op, v, "release-config.yaml")):
                out.append((op, v))
    return out


RELEASES = _release_configs()
# historical release-configs whose template is no longer mapped in ci.yaml
STALE = {("cat-facts-operator", "1.1.0"), ("clusterpulse", "0.1.0")}


def test_release_inventory():
    assert len(RELEASES) == 59


@pytest.mark.parametrize("op,version", RELEASES, ids=["%s-%s" % r for r in RELEASES])
def test_real_release_configs_are_already_applied(op, version):
    """Replaying each committed release-config.yaml on the committed templates changes nothing (idempotent
    amend), and the touched catalogs are exactly the mapped ones."""
    with open(os.path.join(OPS, op, "ci.yaml"), "rb") as f:
        fbc = parse_ci_fbc(f.read())
    with open(os.path.join(OPS, op, version, "release-config.yaml"), "rb") as f:
        rc = parse_release_config(f.read())
    templates = {it["template_name"]: load_template_file(os.path.join(OPS, op, "catalog-templates",
                                                                      it["template_name"]))
                 for it in rc["catalog_templates"]}
    before = copy.deepcopy(templates)
    image = bundle_pullspec(op, version)
    if (op, version) in STALE:
        with pytest.raises(ReleaseConfigError, match="Template mapping not found"):
            apply_release_config(rc, fbc, templates, op, image, "%s.v%s" % (op, version))
        return
    changed, tasks, cats = apply_release_config(rc, fbc, templates, op, image, "%s.v%s" % (op, version))
    assert changed == [] and templates == before
    mapped = set()
    for it in rc["catalog_templates"]:
        mapped.update(fbc.mapping_for_template(it["template_name"]).catalog_names)
    assert cats == sorted(mapped)


def test_render_tasks_end_to_end_kube_green():
    """ci.yaml -> render plan -> render each OCP catalog from the v4.16 bundles (olm.bundle.object): v4.16 output is
    the committed v4.16 catalog, v4.17+ outputs (migrated to olm.csv.metadata) equal the committed v4.20 catalog."""
    import json

    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import render_tasks
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
        BundleLookup,
        load_catalog,
    )
    op = "kube-green"
    cats = os.path.join(os.path.dirname(OPS), "catalogs")
    with open(os.path.join(OPS, op, "ci.yaml"), "rb") as f:
        fbc = parse_ci_fbc(f.read())
    tasks = render_plan(fbc, op)
    assert [t.catalog for t in tasks] == ["v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21"]
    templates = {"basic-template.yaml": load_template_file(os.path.join(OPS, op, "catalog-templates",
                                                                        "basic-template.yaml"))}
    lookup = BundleLookup([os.path.join(cats, "v4.16", op)])
    results = render_tasks(tasks, templates, lookup)

    def norm(cfg):
        return [sorted(json.dumps(x, sort_keys=True) for x in getattr(cfg, k))
                for k in ("packages", "channels", "bundles")]
    by_cat = {t.catalog: cfg for t, cfg in results}
    assert by_cat["v4.15"] is by_cat["v4.16"] and by_cat["v4.17"] is by_cat["v4.21"]
    assert norm(by_cat["v4.16"]) == norm(load_catalog(os.path.join(cats, "v4.16", op)))
    assert norm(by_cat["v4.20"]) == norm(load_catalog(os.path.join(cats, "v4.20", op)))
    with pytest.raises(ReleaseConfigError):
        render_tasks(tasks, {}, lookup)
