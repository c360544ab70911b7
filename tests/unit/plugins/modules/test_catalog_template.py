"""catalog_template module: release-config add semantics on real templates, removal, convert-template parity,
latest_in_channel, idempotence, check/diff mode."""

import functools
import json
import shutil

import pytest
import yaml
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.modules import catalog_template

PROD = shared_conformance_data() / "community-operators-prod"
OPERATORS = PROD / "operators"
CATALOGS = PROD / "catalogs"
FOO_BUNDLE = shared_conformance_data() / "opm-testdata" / "alpha" / "action" / "testdata" / "foo-bundle-v0.2.0"
KG_IMAGE = "quay.io/community-operator-pipeline-prod/kube-green:0.7.2"


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_template)


@pytest.fixture
def kube_green(tmp_path):
    dst = tmp_path / "basic-template.yaml"
    shutil.copy(OPERATORS / "kube-green" / "catalog-templates" / "basic-template.yaml", dst)
    return dst


@pytest.fixture
def kairos(tmp_path):
    dst = tmp_path / "semver.yaml"
    shutil.copy(OPERATORS / "kairos-operator" / "catalog-templates" / "semver.yaml", dst)
    return dst


def test_latest_in_channel(kube_green, run):
    res = run({"path": str(kube_green), "latest_in_channel": "alpha"})
    assert res["latest"] == "kube-green.v0.7.1" and res["changed"] is False and res["template_type"] == "basic"
    res = run({"path": str(kube_green), "latest_in_channel": "beta"})
    assert res["failed"] is True and 'channel "beta" not found' in res["msg"]


def test_add_bundle_basic_minimal_diff_and_idempotent(kube_green, run):
    original = kube_green.read_text()
    args = {"path": str(kube_green), "add_bundle": {"image": KG_IMAGE, "name": "kube-green.v0.7.2",
                                                    "channels": ["alpha"], "replaces": "kube-green.v0.7.1",
                                                    "skipRange": "<0.7.2"}}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and kube_green.read_text() == original
    assert checked["diff"]["before"] == original
    res = run(args)
    assert res["changed"] is True and KG_IMAGE in res["images"]
    new = kube_green.read_text()
    expected = original.replace(
        "    replaces: kube-green.v0.7.0\n  name: alpha\n",
        "    replaces: kube-green.v0.7.0\n  - name: kube-green.v0.7.2\n    replaces: kube-green.v0.7.1\n"
        "    skipRange: <0.7.2\n  name: alpha\n")
    expected = expected.replace("schema: olm.template.basic\n",
                                "- schema: olm.bundle\n  image: %s\nschema: olm.template.basic\n" % KG_IMAGE)
    assert new == expected  # minimal change: style and key order of the file kept
    assert run(args)["changed"] is False
    assert run({"path": str(kube_green), "latest_in_channel": "alpha"})["latest"] == "kube-green.v0.7.2"


def test_add_bundle_name_from_bundle_dir_and_new_template(tmp_path, run):
    path = tmp_path / "new.yaml"
    args = {"path": str(path), "add_bundle": {"image": "quay.io/x/foo:v0.2.0", "bundle_path": str(FOO_BUNDLE),
                                              "channels": ["beta", "stable"], "defaultChannel": "stable"}}
    res = run(args)
    assert res["changed"] is True and res["created"] is True
    doc = yaml.safe_load(path.read_text())
    assert doc["entries"][0] == {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}
    assert [e["name"] for e in doc["entries"][1:3]] == ["beta", "stable"]
    assert doc["entries"][1]["entries"] == [{"name": "foo.v0.2.0"}]
    assert run(args)["changed"] is False


def test_add_bundle_semver(kairos, run):
    img = "quay.io/community-operator-pipeline-prod/kairos-operator:2.3.0"
    args = {"path": str(kairos), "add_bundle": {"image": img, "channels": ["Candidate", "Stable"]}}
    res = run(args)
    assert res["changed"] is True and res["template_type"] == "semver"
    text = kairos.read_text()
    assert text.startswith("---\nSchema: olm.semver\nGenerateMajorChannels: true\n")
    assert "  - Image: %s\nStable:\n  Bundles:\n  - Image: %s\n" % (img, img) in text
    assert run(args)["changed"] is False
    bad = run({"path": str(kairos), "add_bundle": {"image": img, "channels": ["beta"]}})
    assert bad["failed"] is True and "must be one of Candidate, Fast, Stable" in bad["msg"]
    bad = run({"path": str(kairos), "add_bundle": {"image": img, "channels": ["Fast"], "replaces": "x"}})
    assert bad["failed"] is True and "not supported for semver" in bad["msg"]


def test_new_semver_template_json(tmp_path, run):
    path = tmp_path / "semver.json"
    res = run({"path": str(path), "template_type": "semver", "format": "json",
               "add_bundle": {"image": "q/x:1", "channels": ["Fast"]}})
    assert res["changed"] is True
    assert json.loads(path.read_text()) == {"Schema": "olm.semver", "GenerateMajorChannels": True,
                                            "GenerateMinorChannels": True, "Fast": {"Bundles": [{"Image": "q/x:1"}]}}


def test_basic_requires_name(kube_green, run):
    res = run({"path": str(kube_green), "add_bundle": {"image": KG_IMAGE, "channels": ["alpha"]}})
    assert res["failed"] is True and "add_bundle.name" in res["msg"]


def test_remove_bundle_relinks(kube_green, run):
    img = yaml.safe_load(kube_green.read_text())["entries"][-1]["image"]
    res = run({"path": str(kube_green), "remove_bundle": [img, "kube-green.v0.7.0", "nothing"]}, diff=True)
    assert res["changed"] is True and res["removed"] == [img, "kube-green.v0.7.0"]
    doc = yaml.safe_load(kube_green.read_text())
    entries = [e for e in doc["entries"] if e["schema"] == "olm.channel"][0]["entries"]
    assert {"name": "kube-green.v0.7.1", "replaces": "kube-green.v0.6.0"} in entries
    assert img not in res["images"]
    assert run({"path": str(kube_green), "remove_bundle": [img]})["changed"] is False


def test_remove_semver(kairos, run):
    img = "quay.io/community-operator-pipeline-prod/kairos-operator:2.0.1"
    res = run({"path": str(kairos), "remove_bundle": [img]})
    assert res["changed"] is True and img not in kairos.read_text()


@pytest.mark.parametrize("op,cat,template", [("kube-green", "v4.20", "basic-template.yaml"),
                                             ("ecr-secret-operator", "v4.12", "deprecated.yaml")])
def test_convert_from_reproduces_committed_template(tmp_path, run, op, cat, template):
    dest = tmp_path / "t.yaml"
    args = {"path": str(dest), "convert_from": str(CATALOGS / cat / op / "catalog.yaml")}
    res = run(args)
    assert res["changed"] is True and res["template_type"] == "basic"
    ours = yaml.safe_load(dest.read_text())
    theirs = yaml.safe_load((OPERATORS / op / "catalog-templates" / template).read_text())
    assert ours == theirs
    assert run(args)["changed"] is False
    # a directory works as well
    assert run(dict(args, convert_from=str(CATALOGS / cat / op)))["changed"] is False


def test_convert_from_json(tmp_path, run):
    dest = tmp_path / "t.json"
    run({"path": str(dest), "format": "json",
         "convert_from": str(CATALOGS / "v4.20" / "kube-green" / "catalog.yaml")})
    text = dest.read_text()
    assert text.startswith('{\n    "schema": "olm.template.basic",\n    "entries": [\n')


def test_argument_rules(kube_green, run):
    assert run({"path": str(kube_green)})["failed"] is True
    res = run({"path": str(kube_green), "latest_in_channel": "alpha", "remove_bundle": ["x"]})
    assert res["failed"] is True and "mutually exclusive" in res["msg"]
    res = run({"path": str(kube_green) + ".missing", "latest_in_channel": "alpha"})
    assert res["failed"] is True and "not found" in res["msg"]


def test_not_a_template(tmp_path, run):
    p = tmp_path / "x.yaml"
    p.write_text("schema: olm.package\nname: x\n")
    res = run({"path": str(p), "latest_in_channel": "alpha"})
    assert res["failed"] is True and "not a catalog template" in res["msg"]


def test_template_with_yaml_anchors_is_not_rewritten(tmp_path, run):
    """PyYAML cannot keep anchors/aliases through an edit: a rewrite is refused (file untouched); a no-op is fine."""
    path = tmp_path / "anchors.yaml"
    text = ("schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: p\n  defaultChannel: alpha\n"
            "- &alpha\n  schema: olm.channel\n  package: p\n  name: alpha\n  entries:\n  - name: p.v1.0.0\n"
            "- schema: olm.bundle\n  image: quay.io/o/p-bundle:v1.0.0\n")
    path.write_text(text)
    res = run({"path": str(path), "add_bundle": {"image": "quay.io/o/p-bundle:v1.0.1", "name": "p.v1.0.1",
                                                 "channels": ["alpha"], "replaces": "p.v1.0.0"}})
    assert res["failed"] is True
    assert res["msg"] == ("%s: template uses YAML anchors/aliases (&alpha): writing the edited template would expand "
                          "them into copies, so it is left unchanged; edit it by hand or remove the anchors first" % path)
    assert path.read_text() == text
    res = run({"path": str(path), "remove_bundle": ["quay.io/o/not-there:v9"]})
    assert res["changed"] is False and "failed" not in res and path.read_text() == text
