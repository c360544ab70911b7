"""module_utils.catalog (lookup, outputs, templates, release) and module_utils.git: fan-out planning, bundle
directory matching, template round trips, release-config normalisation and the git helpers."""

import os
import subprocess

import pytest
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.lookup import BundleDirIndex, build_lookup
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.outputs import plan_fanout
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.release import (
    check_branch_name,
    commit_release,
    normalize_release_config,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.templates import (
    dump_template,
    dump_yaml_document,
    load_template_for_edit,
    template_images,
    template_kind,
    text_format,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import BundleNotFoundError, PublishError
from ansible_collections.kubeforge.operators.plugins.module_utils.git import GitError, GitRepo

OPERATORS = shared_conformance_data() / "community-operators-prod" / "operators"
TESTDATA = shared_conformance_data() / "opm-testdata" / "alpha" / "action" / "testdata"


def test_plan_fanout():
    assert plan_fanout(["v4.12", "v4.16", "v4.17", "v4.22"]) == [
        ("v4.12", "none"), ("v4.16", "none"), ("v4.17", "bundle-object-to-csv-metadata"),
        ("v4.22", "bundle-object-to-csv-metadata")]
    assert plan_fanout(["v4.20", "v4.12"], migrate_level="all", migrate_levels={"v4.12": "none"}) == [
        ("v4.20", "all"), ("v4.12", "none")]
    for bad in (["4.17"], ["v4.2.1"], ["../x"], [None]):
        with pytest.raises(PublishError):
            plan_fanout(bad)
    with pytest.raises(PublishError, match="not in ocp_versions"):
        plan_fanout(["v4.16"], migrate_levels={"v4.17": "none"})


def test_bundle_dir_index():
    dirs = [str(TESTDATA / d) for d in ("foo-bundle-v0.1.0", "foo-bundle-v0.2.0", "bar-bundle-v0.1.0")]
    index = BundleDirIndex(dirs)
    assert index.match("quay.io/x/foo:v0.2.0") == dirs[1]
    assert index.match("quay.io/x/foo:0.2.0") == dirs[1]
    assert index.match("quay.io/x/bar:0.1.0") == dirs[2]  # package name decides between foo and bar 0.1.0
    assert index.match("quay.io/x/foo:foo-bundle-v0.1.0") == dirs[0]  # directory name
    assert index.match("quay.io/x/foo@sha256:" + "0" * 64) is None
    assert index.match("quay.io/x/foo:9.9.9") is None


def test_build_lookup_offline_and_puller():
    lookup, state = build_lookup([str(TESTDATA / "foo-bundle-v0.2.0")])
    assert lookup("quay.io/x/foo:v0.2.0").bundles[0]["name"] == "foo.v0.2.0"
    with pytest.raises(BundleNotFoundError, match=r"pulling is disabled\); bundle directories: foo 0\.2\.0 \(foo-bundle-v0\.2\.0\)$"):
        lookup("quay.io/x/foo:v9")
    calls = []

    def factory():
        def puller(image):
            calls.append(image)
            return str(TESTDATA / "foo-bundle-v0.1.0")
        return puller

    lookup, state = build_lookup([], puller_factory=factory)
    assert lookup("r.example/foo:1").bundles[0]["name"] == "foo.v0.1.0"
    assert calls == ["r.example/foo:1"] and state["pulled"] == ["r.example/foo:1"]
    with pytest.raises(PublishError, match="does not exist"):
        build_lookup(["/nonexistent"])


@pytest.mark.parametrize("rel", ["kube-green/catalog-templates/basic-template.yaml",
                                 "kairos-operator/catalog-templates/semver.yaml",
                                 "clusterpulse/catalog-templates/semver.yaml",
                                 "ecr-secret-operator/catalog-templates/deprecated.yaml"])
def test_template_round_trip_is_exact(rel):
    data = (OPERATORS / rel).read_bytes()
    assert dump_template(load_template_for_edit(data)).encode() == data


def test_template_helpers():
    doc = load_template_for_edit('{"schema": "olm.template.basic", "entries": [\n'
                                 '{"schema": "olm.bundle", "image": "a"}]}\n{"ignored": 1}')
    assert text_format('  {"a": 1}') == "json" and text_format("a: 1") == "yaml"
    assert template_kind(doc) == "basic" and template_images(doc) == ["a"]
    assert dump_template(doc, "json").startswith('{\n    "schema": "olm.template.basic",')
    semver = load_template_for_edit("Schema: olm.semver\nStable: {Bundles: [{Image: b}, {Image: a}]}\n"
                                    "Fast: {Bundles: [{Image: a}]}\n")
    assert template_images(semver) == ["b", "a"]
    with pytest.raises(PublishError, match="not a catalog template"):
        template_kind({"schema": "olm.package"})
    with pytest.raises(PublishError, match="cannot parse template"):
        load_template_for_edit("a: [\n")
    assert load_template_for_edit("") is None
    # timestamps stay strings, multi-line strings become literal blocks
    assert load_template_for_edit("d: 2024-01-01\n") == {"d": "2024-01-01"}
    assert dump_yaml_document({"a": "x\ny\n"}) == "---\na: |\n  x\n  y\n"


def test_normalize_release_config():
    rc = {"catalog_templates": [{"template_name": "t", "channels": ["a"], "skip_range": "<1",
                                 "default_channel": "a"}], "merge": False}
    assert normalize_release_config(rc) == {
        "catalog_templates": [{"template_name": "t", "channels": ["a"], "skipRange": "<1", "defaultChannel": "a"}],
        "merge": False}
    assert normalize_release_config("text") == "text"


def test_git_repo_helpers(tmp_path):
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.txt").write_bytes(b"A\n\x00binary")
    (tmp_path / "b.txt").write_text("B")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-q", "-m", "c"], check=True, env=dict(os.environ, **env))
    repo = GitRepo(str(tmp_path), env=env)
    head = repo.rev_parse("HEAD")
    assert len(head) == 40 and repo.rev_parse("nope") is None
    assert repo.ls_tree(head, "x") == ["x/a.txt"]
    assert repo.read_blobs(head, ["x/a.txt", "missing", "b.txt", "x"]) == {"x/a.txt": b"A\n\x00binary", "b.txt": b"B"}
    with pytest.raises(GitError, match="line break"):
        repo.read_blobs(head, ["x/a.txt\nHEAD:b.txt"])
    assert repo.current_branch() == "refs/heads/main"
    assert check_branch_name(repo, "op-1.0.0") == "op-1.0.0"
    for bad in ("a..b", "a b", "-x", "a.lock", "/a", "a/"):
        with pytest.raises(PublishError):
            check_branch_name(repo, bad)
    with pytest.raises(GitError, match="git rev-parse failed"):
        repo.run("rev-parse", "--verify", "nope^{commit}")
    sha = commit_release(repo, head, "rel", {"x/new.txt": b"N"}, "msg")
    assert repo.rev_parse("rel") == sha and repo.read_blobs("rel", ["x/new.txt"]) == {"x/new.txt": b"N"}
    assert not (tmp_path / "x" / "new.txt").exists()
