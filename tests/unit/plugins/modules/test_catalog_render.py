"""catalog_render module: basic/semver renders against the committed community-operators catalogs, fan-out,
idempotence, check/diff mode, offline errors, no partial output."""

import functools
import json
import os
import shutil

import pytest
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.outputs import plan_fanout
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError
from ansible_collections.kubeforge.operators.plugins.modules import catalog_render

PROD = shared_conformance_data() / "community-operators-prod"
CATALOGS = PROD / "catalogs"
OPERATORS = PROD / "operators"
KUBE_GREEN = OPERATORS / "kube-green" / "catalog-templates" / "basic-template.yaml"
KAIROS = OPERATORS / "kairos-operator" / "catalog-templates" / "semver.yaml"
FOO_BUNDLE = shared_conformance_data() / "opm-testdata" / "alpha" / "action" / "testdata" / "foo-bundle-v0.2.0"


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_render)


def lookup(op):
    return [str(CATALOGS / "v4.16" / op), str(CATALOGS / "v4.20" / op)]


@pytest.mark.parametrize(
    "op,template,cat",
    [
        ("kube-green", KUBE_GREEN, "v4.16"),
        ("kube-green", KUBE_GREEN, "v4.20"),
        ("kairos-operator", KAIROS, "v4.16"),
        ("kairos-operator", KAIROS, "v4.20"),
    ],
)
def test_single_file_matches_committed_catalog(tmp_path, run, op, template, cat):
    dest = tmp_path / "catalog.yaml"
    level = "bundle-object-to-csv-metadata" if cat == "v4.20" else "none"
    res = run({"template": str(template), "dest": str(dest), "bundle_lookup": lookup(op), "pull": False, "migrate_level": level})
    assert res["changed"] is True and res["files"] == [str(dest)] and res["packages"] == [op]
    assert dest.read_bytes() == (CATALOGS / cat / op / "catalog.yaml").read_bytes()
    again = run({"template": str(template), "dest": str(dest), "bundle_lookup": lookup(op), "pull": False, "migrate_level": level})
    assert again["changed"] is False and again["changed_files"] == []


def test_fanout_default_levels_and_idempotence(tmp_path, run):
    args = {
        "template": str(KUBE_GREEN),
        "dest": str(tmp_path / "catalogs"),
        "pull": False,
        "bundle_lookup": lookup("kube-green"),
        "ocp_versions": ["v4.16", "v4.20"],
    }
    res = run(args)
    assert res["changed"] is True
    assert [(r["ocp_version"], r["migrate_level"]) for r in res["renders"]] == [("v4.16", "none"), ("v4.20", "bundle-object-to-csv-metadata")]
    for cat in ("v4.16", "v4.20"):
        out = tmp_path / "catalogs" / cat / "kube-green" / "catalog.yaml"
        assert out.read_bytes() == (CATALOGS / cat / "kube-green" / "catalog.yaml").read_bytes()
    assert len(res["bundles"]) == 10 and "kube-green.v0.7.1" in res["bundles"]
    assert run(args)["changed"] is False


def test_fanout_override_and_json(tmp_path, run):
    args = {
        "template": str(KAIROS),
        "dest": str(tmp_path),
        "pull": False,
        "format": "json",
        "bundle_lookup": lookup("kairos-operator"),
        "ocp_versions": ["v4.12", "v4.18"],
        "migrate_levels": {"v4.12": "bundle-object-to-csv-metadata"},
    }
    res = run(args)
    assert [r["migrate_level"] for r in res["renders"]] == ["bundle-object-to-csv-metadata"] * 2
    a = (tmp_path / "v4.12" / "kairos-operator" / "catalog.json").read_text()
    b = (tmp_path / "v4.18" / "kairos-operator" / "catalog.json").read_text()
    assert a == b and a.startswith("{\n") and "olm.bundle.object" not in a and "olm.csv.metadata" in a


def test_check_mode_and_diff(tmp_path, run):
    dest = tmp_path / "out.yaml"
    args = {
        "template": str(KUBE_GREEN),
        "dest": str(dest),
        "pull": False,
        "bundle_lookup": lookup("kube-green"),
        "migrate_level": "bundle-object-to-csv-metadata",
    }
    res = run(args, check_mode=True, diff=True)
    assert res["changed"] is True and not dest.exists()
    assert res["diff"][0]["before"] == "" and res["diff"][0]["after"].startswith("---\ndefaultChannel: alpha\n")
    run(args)
    dest.write_text(dest.read_text().replace("kube-green.v0.7.1", "kube-green.v0.7.9", 1))
    before = dest.read_bytes()
    res = run(args, check_mode=True, diff=True)
    assert res["changed"] is True and dest.read_bytes() == before and "kube-green.v0.7.9" in res["diff"][0]["before"]
    big = run(dict(args, migrate_level="none"), check_mode=True, diff=True)
    assert big["diff"][0]["after"].startswith("311194 bytes, sha256:")


def test_directory_dest(tmp_path, run):
    res = run({"template": str(KUBE_GREEN), "dest": str(tmp_path) + "/", "pull": False, "bundle_lookup": lookup("kube-green")})
    assert res["files"] == [str(tmp_path / "kube-green" / "catalog.yaml")]


def test_offline_missing_image_fails_without_output(tmp_path, run):
    dest = tmp_path / "v4.16" / "kube-green" / "catalog.yaml"
    res = run(
        {
            "template": str(KUBE_GREEN),
            "dest": str(tmp_path),
            "pull": False,
            "bundle_lookup": [str(CATALOGS / "v4.20" / "cat-facts-operator")],
            "ocp_versions": ["v4.16"],
        }
    )
    assert res["failed"] is True and "not found" in res["msg"] and "pulling is disabled" in res["msg"]
    assert not dest.exists() and os.listdir(tmp_path) == []


def test_bundle_directory_lookup(tmp_path, run):
    template = tmp_path / "t.yaml"
    template.write_text(
        "schema: olm.template.basic\nentries:\n"
        "- {schema: olm.package, name: foo, defaultChannel: beta}\n"
        "- {schema: olm.channel, package: foo, name: beta, entries: [{name: foo.v0.2.0}]}\n"
        "- {schema: olm.bundle, image: quay.io/example/foo-bundle:v0.2.0}\n"
    )
    res = run({"template": str(template), "dest": str(tmp_path / "o.yaml"), "pull": False, "bundle_lookup": [str(FOO_BUNDLE)]})
    assert res["bundles"] == ["foo.v0.2.0"] and res["pulled"] == []
    out = (tmp_path / "o.yaml").read_text()
    assert "image: quay.io/example/foo-bundle:v0.2.0" in out
    res2 = run(
        {"template": str(template), "dest": str(tmp_path / "p.yaml"), "pull": False, "bundle_images": {"quay.io/example/foo-bundle:v0.2.0": str(FOO_BUNDLE)}}
    )
    assert res2["changed"] is True and (tmp_path / "p.yaml").read_text() == out


def test_puller_used_for_missing_images(tmp_path, run, monkeypatch):
    calls = []

    def fake_make_image_puller(**kwargs):
        calls.append(kwargs)

        def puller(image):
            return str(FOO_BUNDLE)

        puller.cleanup = lambda: calls.append("cleanup")
        return puller

    from ansible_collections.kubeforge.operators.plugins.module_utils.oci import pull

    monkeypatch.setattr(pull, "make_image_puller", fake_make_image_puller)
    template = tmp_path / "t.yaml"
    template.write_text("schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: reg.example/foo:1}\n")
    res = run(
        {"template": str(template), "dest": str(tmp_path / "o.yaml"), "registry_username": "u", "registry_password": "secret-pw", "validate_certs": False}
    )
    assert res["pulled"] == ["reg.example/foo:1"] and res["bundles"] == ["foo.v0.2.0"]
    assert calls[0]["username"] == "u" and calls[0]["verify"] is False and calls[-1] == "cleanup"
    assert "secret-pw" not in json.dumps(res)


@pytest.mark.parametrize(
    "args,msg",
    [
        ({"ocp_versions": ["4.20"]}, "expected vX.Y"),
        ({"ocp_versions": ["v4.20"], "migrate_levels": {"v4.16": "none"}}, "not in ocp_versions"),
        ({"migrate_levels": {"v4.16": "none"}}, "requires ocp_versions"),
        ({"ocp_versions": ["v4.20"], "migrate_levels": {"v4.20": "bogus"}}, "unknown migration level"),
        ({"template": "/nonexistent/t.yaml"}, "not found"),
    ],
)
def test_bad_arguments(tmp_path, run, args, msg):
    base = {"template": str(KUBE_GREEN), "dest": str(tmp_path / "x"), "pull": False, "bundle_lookup": lookup("kube-green")}
    res = run(dict(base, **args))
    assert res["failed"] is True and msg in res["msg"]


def test_bad_template(tmp_path, run):
    template = tmp_path / "t.yaml"
    template.write_text("schema: olm.nope\n")
    res = run({"template": str(template), "dest": str(tmp_path / "o.yaml")})
    assert res["failed"] is True and "unknown template schema: olm.nope" in res["msg"]


def test_plan_fanout_rules():
    assert plan_fanout(["v4.16", "v4.17", "v4.16"]) == [("v4.16", "none"), ("v4.17", "bundle-object-to-csv-metadata")]
    assert plan_fanout(["v4.20"], migrate_level="none") == [("v4.20", "none")]
    with pytest.raises(PublishError):
        plan_fanout([4.2])


def test_copy_of_shared_catalog_unchanged(tmp_path, run):
    """Rendering over a copy of the committed catalogs directory is a no-op."""
    root = tmp_path / "catalogs"
    for cat in ("v4.16", "v4.20"):
        shutil.copytree(CATALOGS / cat / "kube-green", root / cat / "kube-green")
    res = run({"template": str(KUBE_GREEN), "dest": str(root), "pull": False, "bundle_lookup": lookup("kube-green"), "ocp_versions": ["v4.16", "v4.20"]})
    assert res["changed"] is False and len(res["files"]) == 2


# ----------------------------------------------------------------------------------------- source: opm render CATALOG


def test_source_directory_to_one_file_is_opm_render(tmp_path, run):
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load, write

    dest = tmp_path / "out" / "index.json"
    args = {"source": str(CATALOGS / "v4.20"), "dest": str(dest), "format": "json"}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and not dest.parent.exists()  # check mode creates nothing
    assert checked["diff"][0]["before"] == "" and checked["diff"][0]["after"].endswith(
        " bytes, sha256:%s\n" % (__import__("hashlib").sha256(b"".join(c.encode() for c in write.iter_json(load.load(str(CATALOGS / "v4.20"))))).hexdigest())
    )
    res = run(args)
    expected = "".join(write.iter_json(load.load(str(CATALOGS / "v4.20"))))
    assert res["changed"] is True and res["changed_files"] == [str(dest)] and res["pulled"] == []
    assert dest.read_text() == expected
    assert "hive-operator" in res["packages"] and res["renders"][0]["migrate_level"] == "none"
    assert len(res["bundles"]) == len({b["name"] for b in load.load(str(CATALOGS / "v4.20")).bundles})
    again = run(args, diff=True)
    assert again["changed"] is False and again["diff"] == [] and again["packages"] == res["packages"]


def test_source_with_migration_and_directory_dest(tmp_path, run):
    src = CATALOGS / "v4.16" / "kube-green" / "catalog.yaml"
    res = run({"source": str(src), "dest": str(tmp_path) + "/", "migrate_level": "bundle-object-to-csv-metadata"})
    out = tmp_path / "kube-green" / "catalog.yaml"
    assert res["changed"] is True and res["files"] == [str(out)]
    # the v4.16 catalog migrated is what the pipeline commits for v4.20 (same bundles, csv metadata)
    assert "olm.csv.metadata" in out.read_text() and "olm.bundle.object" not in out.read_text()
    assert run({"source": str(src), "dest": str(tmp_path) + "/", "migrate_level": "bundle-object-to-csv-metadata"})["changed"] is False


@pytest.mark.parametrize(
    "args,msg",
    [
        ({"source": "/nonexistent/catalog"}, "source /nonexistent/catalog not found"),
        ({"source": "x", "template": "y"}, "mutually exclusive"),
        ({}, "one of the following is required: template, source"),
    ],
)
def test_source_bad_arguments(tmp_path, run, args, msg):
    res = run(dict({"dest": str(tmp_path / "o.yaml")}, **args))
    assert res["failed"] is True and msg in res["msg"]
    assert not (tmp_path / "o.yaml").exists()


def test_source_bad_catalog_leaves_no_output(tmp_path, run):
    src = tmp_path / "cat"
    src.mkdir()
    (src / "a.yaml").write_text("schema: olm.package\nname: [unclosed\n")
    dest = tmp_path / "out.yaml"
    res = run({"source": str(src), "dest": str(dest)})
    assert res["failed"] is True and str(src / "a.yaml") in res["msg"]
    assert sorted(os.listdir(tmp_path)) == ["cat"]


def test_source_parallel_path_from_the_module(tmp_path, run, monkeypatch):
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import render_catalog
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load, write

    monkeypatch.setattr(render_catalog, "PARALLEL_MIN_LINES", 1)  # the real catalogs are below the threshold
    seen = []
    original = render_catalog._render_parallel
    monkeypatch.setattr(render_catalog, "_render_parallel", lambda *a: seen.append(a[2]) or original(*a))
    dest = tmp_path / "all.yaml"
    res = run({"source": str(CATALOGS / "v4.16"), "dest": str(dest)})
    cpus = load.usable_cpus()
    assert seen == ([cpus] if cpus >= 2 else [])  # one worker per CPU; one CPU renders in-process
    assert res["changed"] is True
    assert dest.read_text() == "".join(write.iter_yaml(load.load(str(CATALOGS / "v4.16"))))
    assert sorted(os.listdir(tmp_path)) == ["all.yaml"]  # spools and temporary files are gone


def test_select_keeps_the_operators_oc_mirror_keeps(run, tmp_path):
    """select (oc-mirror v2's operators[] entry) on an existing catalog: the kept channels and bundles, written like
    opm; the fbc.action.filter tests hold the rules, this the option's path through the module."""
    from lib.fbc import selection_catalog

    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import dumps_json

    source = tmp_path / "catalog.json"
    source.write_text(dumps_json(selection_catalog()))
    select = {"packages": [{"name": "demo", "channels": [{"name": "stable", "min_version": "0.2.1"}]}]}
    res = run({"source": str(source), "dest": str(tmp_path / "out.json"), "format": "json", "select": select})
    assert not res.get("failed"), res
    assert res["packages"] == ["demo"] and res["bundles"] == ["demo.v0.2.1", "demo.v0.3.0", "demo.v0.4.0"]
    written = load(str(tmp_path / "out.json"))
    assert [(c["name"], [e["name"] for e in c["entries"]]) for c in written.channels] == [("stable", ["demo.v0.2.1", "demo.v0.3.0", "demo.v0.4.0"])]
    widened = run(
        {"source": str(source), "dest": str(tmp_path / "out.json"), "format": "json", "select": {"packages": [{"name": "demo", "max_version": "0.3.0"}]}}
    )
    assert widened["warnings"] and "channel fast: no bundle in version range <=0.3.0" in str(widened["warnings"]), widened
    refused = run({"source": str(source), "dest": str(tmp_path / "x.json"), "select": {"packages": [{"name": "nope"}]}})
    assert refused["failed"] and "package nope is not in the catalog" in refused["msg"]
