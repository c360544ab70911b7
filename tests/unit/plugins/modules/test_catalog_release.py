"""catalog_release module on a small synthetic community-operators repository (git init in tmp_path): branch and
commit content, untouched work tree, idempotence, check mode, clean failure, signing."""

import functools
import os
import shutil
import subprocess

import pytest
import yaml
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import lookup as catalog_lookup
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import outputs as catalog_outputs
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import release
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.git import GitRepo
from ansible_collections.kubeforge.operators.plugins.modules import catalog_release

TESTDATA = shared_conformance_data() / "opm-testdata" / "alpha" / "action" / "testdata"
REG = "quay.io/community-operator-pipeline-prod"
GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
RC = {"catalog_templates": [{"template_name": "basic.yaml", "channels": ["beta"], "replaces": "foo.v0.1.0"}]}


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo)] + list(args), check=True, capture_output=True, text=True,
                          env=dict(os.environ, **GIT_ENV)).stdout.strip()


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_release)


@pytest.fixture(autouse=True)
def git_identity(monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "community-operators-prod"
    op = root / "operators" / "foo"
    (op / "catalog-templates").mkdir(parents=True)
    (op / "ci.yaml").write_text("---\nfbc:\n  enabled: true\n  catalog_mapping:\n  - template_name: basic.yaml\n"
                                "    type: olm.template.basic\n    catalog_names: [v4.16, v4.18]\n")
    template = ("---\nschema: olm.template.basic\nentries:\n- schema: olm.package\n  name: foo\n"
                "  defaultChannel: beta\n- schema: olm.channel\n  package: foo\n  name: beta\n  entries:\n"
                "  - name: foo.v0.1.0\n- schema: olm.bundle\n  image: %s/foo:0.1.0\n" % REG)
    (op / "catalog-templates" / "basic.yaml").write_text(template)
    lookup = catalog_lookup.build_lookup(bundle_images={"%s/foo:0.1.0" % REG: str(TESTDATA / "foo-bundle-v0.1.0")})[0]
    files = catalog_outputs.render_outputs(template, lookup, str(root / "catalogs"), fanout=[("v4.16", "none")])[0]
    with FileOutput() as out:
        catalog_outputs.write_outputs(files, out)
        out.commit()
    (root / "README.md").write_text("community operators\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def args_for(repo, **kw):
    args = {"repo_path": str(repo), "package": "foo", "version": "0.2.0",
            "bundle_path": str(TESTDATA / "foo-bundle-v0.2.0"), "release_config": RC, "pull": False}
    args.update(kw)
    return args


def test_release_branch_commit_and_idempotence(repo, run):
    head = git(repo, "rev-parse", "HEAD")
    res = run(args_for(repo))
    assert res["changed"] is True and res["branch"] == "foo-0.2.0" and res["base"] == head
    assert res["csv_name"] == "foo.v0.2.0" and res["bundle_image"] == REG + "/foo:0.2.0"
    assert res["templates"] == ["basic.yaml"] and res["catalogs"] == ["v4.16", "v4.18"]
    assert res["validation"] == {"v4.16": {"valid": True, "errors": []}, "v4.18": {"valid": True, "errors": []}}
    assert res["files"] == sorted([
        "catalogs/v4.16/foo/catalog.yaml", "catalogs/v4.18/foo/catalog.yaml",
        "operators/foo/0.2.0/manifests/foo.v0.2.0.csv.yaml", "operators/foo/0.2.0/manifests/foos.test.foo.crd.yaml",
        "operators/foo/0.2.0/metadata/annotations.yaml", "operators/foo/0.2.0/metadata/dependencies.yaml",
        "operators/foo/0.2.0/release-config.yaml", "operators/foo/catalog-templates/basic.yaml"])
    # work tree, index and current branch untouched; no worktrees left behind
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    # the commit
    assert git(repo, "rev-parse", "foo-0.2.0") == res["commit"]
    assert git(repo, "rev-parse", res["commit"] + "^") == head
    assert git(repo, "log", "-1", "--format=%s|%an", res["commit"]) == "operator foo (0.2.0)|Test"
    changed = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", res["commit"]).splitlines()
    assert changed == res["files"]
    tpl = yaml.safe_load(git(repo, "show", "foo-0.2.0:operators/foo/catalog-templates/basic.yaml"))
    assert tpl["entries"][1]["entries"] == [{"name": "foo.v0.1.0"}, {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0"}]
    assert tpl["entries"][-1] == {"schema": "olm.bundle", "image": REG + "/foo:0.2.0"}
    v416 = git(repo, "show", "foo-0.2.0:catalogs/v4.16/foo/catalog.yaml")
    v418 = git(repo, "show", "foo-0.2.0:catalogs/v4.18/foo/catalog.yaml")
    assert "olm.bundle.object" in v416 and "olm.bundle.object" not in v418 and "olm.csv.metadata" in v418
    assert "image: %s/foo:0.2.0" % REG in v418
    assert yaml.safe_load(git(repo, "show", "foo-0.2.0:operators/foo/0.2.0/release-config.yaml")) == RC
    # second identical run: nothing to do
    again = run(args_for(repo))
    assert again["changed"] is False and again["commit"] == res["commit"] and again["files"] == []


def test_check_mode_and_diff(repo, run):
    res = run(args_for(repo), check_mode=True, diff=True)
    assert res["changed"] is True and res["commit"] is None and len(res["files"]) == 8
    assert git(repo, "branch", "--list") == "* main"
    diffs = dict((d["after_header"], d) for d in res["diff"])
    assert "foo.v0.2.0" in diffs["operators/foo/catalog-templates/basic.yaml"]["after"]
    assert diffs["catalogs/v4.18/foo/catalog.yaml"]["before"] == ""


def test_existing_release_config_and_custom_branch(repo, run):
    rc_dir = repo / "operators" / "foo" / "0.2.0"
    rc_dir.mkdir()
    (rc_dir / "release-config.yaml").write_text(yaml.safe_dump(RC))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release config")
    res = run(args_for(repo, release_config=None, branch="release/foo", commit_message="Release foo 0.2.0",
                       author_name="Bot", author_email="bot@example.com"))
    assert res["changed"] is True and res["branch"] == "release/foo" and res["templates"] == ["basic.yaml"]
    assert "operators/foo/0.2.0/release-config.yaml" not in res["files"]
    assert git(repo, "log", "-1", "--format=%s|%an|%ae|%cn", "release/foo") == "Release foo 0.2.0|Bot|bot@example.com|Bot"


def test_bundle_only_without_release_config(repo, run):
    res = run(args_for(repo, release_config=None))
    assert res["changed"] is True and res["catalogs"] == [] and res["templates"] == []
    assert all(f.startswith("operators/foo/0.2.0/") for f in res["files"])


@pytest.mark.parametrize("kw,msg", [
    ({"release_config": {"catalog_templates": [{"template_name": "nope.yaml", "channels": ["beta"]}]}},
     "Template mapping not found for 'nope.yaml' in ci.yaml."),
    ({"release_config": {"catalog_templates": [{"template_name": "basic.yaml", "channels": ["beta"],
                                                "defaultChannel": "x"}]}},
     "defaultChannel 'x' not found in 'basic.yaml'"),
    ({"release_config": {"bogus": 1}}, "Additional properties are not allowed"),
    ({"package": "bar"}, "belongs to package foo"),
    ({"version": "0.3.0"}, 'version "0.3.0" does not match the bundle: its CSV "foo.v0.2.0" has spec.version "0.2.0"'),
    ({"bundle_path": "/nonexistent"}, "not a bundle directory"),
    ({"branch": "bad..name"}, "invalid branch name"),
    ({"base_ref": "nope"}, "is not a commit"),
    ({"bundle_image": "quay.io/x/foo:2", "release_config": {"catalog_templates": [
        {"template_name": "basic.yaml", "channels": ["beta"], "replaces": "foo.v0.1.0"}]},
      "bundle_lookup": []}, None),
])
def test_errors_leave_repo_clean(repo, run, kw, msg):
    res = run(args_for(repo, **kw))
    if msg is None:
        assert res["changed"] is True
        return
    assert res["failed"] is True and msg in res["msg"], res["msg"]
    assert git(repo, "branch", "--list") == "* main" and git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_check_mode_tries_the_signing_key(repo, run, tmp_path, monkeypatch):
    home = tmp_path / "empty-gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    res = run(args_for(repo, gpg_key="DEADBEEFDEADBEEF"), check_mode=True)
    assert res["failed"] is True and "signing key DEADBEEFDEADBEEF is not in gpg's secret keyring" in res["msg"], res
    assert git(repo, "branch", "--list") == "* main"
    assert run(args_for(repo), check_mode=True)["changed"] is True  # unsigned: nothing to try


def test_failed_commit_leaves_no_branch(repo, run):
    res = run(args_for(repo, gpg_key="DEADBEEFDEADBEEF"))
    assert res["failed"] is True and "git commit failed" in res["msg"]
    assert git(repo, "branch", "--list") == "* main" and git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_not_a_repo(tmp_path, run):
    res = run(args_for(tmp_path))
    assert res["failed"] is True and "not a git work tree" in res["msg"]


def test_missing_image_offline(repo, run):
    (repo / "catalogs" / "v4.16" / "foo" / "catalog.yaml").unlink()
    git(repo, "commit", "-q", "-am", "drop catalog")
    res = run(args_for(repo))
    assert res["failed"] is True and "pulling is disabled" in res["msg"]
    assert git(repo, "branch", "--list") == "* main"


def test_branch_checked_out_is_refused(repo, run):
    first = run(args_for(repo))
    git(repo, "checkout", "-q", "foo-0.2.0")
    res = run(args_for(repo, version="0.2.0", release_config={"catalog_templates": [
        {"template_name": "basic.yaml", "channels": ["stable"], "replaces": "foo.v0.1.0"}]}))
    assert res["failed"] is True and "is checked out" in res["msg"]
    assert git(repo, "rev-parse", "foo-0.2.0") == first["commit"]


def test_second_release_on_existing_branch_adds_commit(repo, run):
    first = run(args_for(repo))
    res = run(args_for(repo, release_config={"catalog_templates": [
        {"template_name": "basic.yaml", "channels": ["stable"], "replaces": "foo.v0.1.0"}]}))
    assert res["changed"] is True and res["base"] == first["commit"]
    assert git(repo, "rev-parse", res["commit"] + "^") == first["commit"]


def test_commit_args():
    assert release.commit_args("m") == ["commit", "--quiet", "--no-verify", "-m", "m", "--no-gpg-sign"]
    assert release.commit_args("m", "KEY") == ["-c", "user.signingkey=KEY", "commit", "--quiet", "--no-verify",
                                               "-m", "m", "-S"]
    assert release.commit_args("m", sign=True)[-1] == "-S"


def test_signed_commit(repo, run, tmp_path, monkeypatch):
    if shutil.which("gpg") is None:
        pytest.fail("gpg is required by this test and is not installed (Debian package gnupg; .ci/run installs it, "
                    "bindep.txt lists it)", pytrace=False)
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Test <test@example.com>", "ed25519",
                    "sign", "never"], check=True, capture_output=True)
    fpr = [ln.split(":")[9] for ln in subprocess.run(["gpg", "--with-colons", "--list-secret-keys"], check=True,
                                                     capture_output=True, text=True).stdout.splitlines()
           if ln.startswith("fpr:")][0]
    assert run(args_for(repo, signing_key=fpr), check_mode=True)["changed"] is True  # the key is there
    res = run(args_for(repo, signing_key=fpr))
    assert res["changed"] is True, res.get("msg")
    assert "Good signature" in subprocess.run(["git", "-C", str(repo), "verify-commit", res["commit"]],
                                              capture_output=True, text=True, check=False).stderr
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True, check=False)


def test_snake_cased_release_config(repo, run):
    rc = {"catalog_templates": [{"template_name": "basic.yaml", "channels": ["beta"], "replaces": "foo.v0.1.0",
                                 "skip_range": "<0.2.0", "default_channel": "beta"}]}
    res = run(args_for(repo, release_config=rc))
    assert res["changed"] is True
    written = yaml.safe_load(git(repo, "show", "foo-0.2.0:operators/foo/0.2.0/release-config.yaml"))
    assert written["catalog_templates"][0]["skipRange"] == "<0.2.0"
    assert written["catalog_templates"][0]["defaultChannel"] == "beta"
    tpl = yaml.safe_load(git(repo, "show", "foo-0.2.0:operators/foo/catalog-templates/basic.yaml"))
    assert {"name": "foo.v0.2.0", "replaces": "foo.v0.1.0", "skipRange": "<0.2.0"} in tpl["entries"][1]["entries"]


def test_branch_checked_out_is_refused_in_check_mode(repo, run):
    first = run(args_for(repo))
    git(repo, "checkout", "-q", "foo-0.2.0")
    res = run(args_for(repo, release_config={"catalog_templates": [
        {"template_name": "basic.yaml", "channels": ["stable"], "replaces": "foo.v0.1.0"}]}), check_mode=True)
    assert res["failed"] is True and "is checked out in %s" % repo in res["msg"]
    # the failure carries the partial result
    assert res["branch"] == "foo-0.2.0" and res["base"] == first["commit"] and res["files"]
    # nothing to change: no failure, even with the branch checked out
    assert run(args_for(repo))["changed"] is False


def test_branch_checked_out_in_linked_worktree_is_refused(repo, run, tmp_path):
    first = run(args_for(repo))
    other = tmp_path / "other-worktree"
    git(repo, "worktree", "add", "-q", str(other), "foo-0.2.0")
    res = run(args_for(repo, release_config={"catalog_templates": [
        {"template_name": "basic.yaml", "channels": ["stable"], "replaces": "foo.v0.1.0"}]}))
    assert res["failed"] is True and "is checked out in %s" % other in res["msg"]
    assert git(repo, "rev-parse", "foo-0.2.0") == first["commit"]


def test_repo_path_subdirectory_uses_work_tree_top(repo, run):
    res = run(args_for(repo / "operators", branch="from-subdir"))
    assert res["changed"] is True and "operators/foo/catalog-templates/basic.yaml" in res["files"]
    assert "catalogs/v4.18/foo/catalog.yaml" in res["files"]
    assert git(repo, "rev-parse", "from-subdir") == res["commit"]


@pytest.mark.parametrize("where", [".git", "missing"])
def test_not_a_work_tree(repo, run, where):
    res = run(args_for(repo / where))
    assert res["failed"] is True and res["msg"] == "%s is not a git work tree" % (repo / where)


def test_bare_repository_is_not_a_work_tree(repo, run, tmp_path):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True, capture_output=True)
    res = run(args_for(bare))
    assert res["failed"] is True and "is not a git work tree" in res["msg"]


def test_committed_directory_symlink_is_not_followed(repo, run, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("victim\n")
    os.symlink(str(victim), str(repo / "operators" / "foo" / "0.2.0"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "symlinked version directory")
    res = run(args_for(repo))
    assert res["failed"] is True and "operators/foo/0.2.0 is a symbolic link in the repository" in res["msg"]
    assert sorted(os.listdir(str(victim))) == ["keep.txt"] and (victim / "keep.txt").read_text() == "victim\n"
    assert git(repo, "branch", "--list") == "* main" and git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1


def test_committed_file_symlink_is_replaced_not_followed(repo, run, tmp_path):
    victim = tmp_path / "victim.yaml"
    victim.write_text("victim\n")
    rel = "operators/foo/0.2.0/metadata/annotations.yaml"
    target = repo / rel
    target.parent.mkdir(parents=True)
    os.symlink(str(victim), str(target))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "symlinked bundle file")
    res = run(args_for(repo))
    assert res.get("changed") is True and rel in res["files"], res.get("msg")
    assert victim.read_text() == "victim\n"
    assert git(repo, "ls-tree", res["commit"], rel).split()[0] == "100644"
    expected = (TESTDATA / "foo-bundle-v0.2.0" / "metadata" / "annotations.yaml").read_text()
    assert git(repo, "show", "%s:%s" % (res["commit"], rel)) == expected.strip()


def test_diff_uses_files_make_diff(repo, run):
    res = run(args_for(repo, release_config=None), diff=True)
    diffs = dict((d["after_header"], d) for d in res["diff"])
    assert sorted(diffs) == res["files"]
    csv = "operators/foo/0.2.0/manifests/foo.v0.2.0.csv.yaml"
    assert diffs[csv]["before_header"] == csv + " (absent)" and diffs[csv]["before"] == ""
    assert "foo.v0.2.0" in diffs[csv]["after"]
    again = run(args_for(repo, release_config=None), diff=True)
    assert again["changed"] is False and "diff" not in again


def test_release_refs_and_guards(repo):
    repo_obj = release.open_work_tree(str(repo / "operators" / "foo"))
    assert os.path.realpath(repo_obj.path) == os.path.realpath(str(repo))
    branch, base, existing = release.release_refs(repo_obj, "foo-0.2.0", "HEAD")
    assert branch == "foo-0.2.0" and base == git(repo, "rev-parse", "HEAD") and existing is None
    with pytest.raises(PublishError, match="base_ref nope is not a commit"):
        release.release_refs(repo_obj, "foo-0.2.0", "nope")
    with pytest.raises(PublishError, match="invalid branch name"):
        release.release_refs(repo_obj, "bad..name", "HEAD")
    # an existing branch: base_ref counts only as far as the branch contains it
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "foo-0.2.0", first)
    git(repo, "commit", "--allow-empty", "-q", "-m", "after the branch")
    assert release.release_refs(repo_obj, "foo-0.2.0", first, base_given=True)[2] == first
    with pytest.raises(PublishError, match="branch foo-0.2.0 exists and does not contain base_ref main"):
        release.release_refs(repo_obj, "foo-0.2.0", "main", base_given=True)
    assert release.release_refs(repo_obj, "foo-0.2.0", "main")[2] == first  # HEAD, the default: the branch goes on
    assert release.checked_out_branches(repo_obj) == {"refs/heads/main": str(repo)}
    with pytest.raises(PublishError, match="is not a git work tree"):
        release.open_work_tree(str(repo / "nope"))
    assert isinstance(repo_obj, GitRepo)
