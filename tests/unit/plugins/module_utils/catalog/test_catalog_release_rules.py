"""catalog.release: the catalog_release module's git work-tree guards and naming rules (pure parts; the git-backed
ones are exercised in tests/unit/plugins/modules/test_catalog_release.py)."""

import os

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import release
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError


def test_defaults():
    assert release.default_branch("foo", "0.2.0") == "foo-0.2.0"
    assert release.default_commit_message("foo", "0.2.0") == "operator foo (0.2.0)"


@pytest.mark.parametrize("rc,out,expected", [
    (0, b"true\n/src/repo\n", "/src/repo"),
    (0, "true\n/src/repo\n", "/src/repo"),
    (0, b"false\n", None),  # inside .git or a bare repository
    (128, b"", None),  # not a repository
    (0, b"true\n", None),
])
def test_work_tree_top(rc, out, expected):
    assert release.work_tree_top(rc, out) == expected


def test_parse_worktree_branches():
    text = ("worktree /src/repo\nHEAD 1111\nbranch refs/heads/main\n\n"
            "worktree /tmp/wt\nHEAD 2222\ndetached\n\n"
            "worktree /src/other\nHEAD 3333\nbranch refs/heads/foo-0.2.0\n\n"
            "worktree /src/bare.git\nbare\n")
    assert release.parse_worktree_branches(text) == {"refs/heads/main": "/src/repo",
                                                     "refs/heads/foo-0.2.0": "/src/other"}
    assert release.parse_worktree_branches("") == {}


def test_check_branch_free(tmp_path):
    top = str(tmp_path)
    worktrees = {"refs/heads/main": top, "refs/heads/foo-0.2.0": "/src/other"}
    release.check_branch_free("foo-0.3.0", worktrees, top, "~/repo")
    with pytest.raises(PublishError) as e:
        release.check_branch_free("main", worktrees, top, "~/repo", result={"branch": "main", "changed": True})
    assert str(e.value) == ("branch main is checked out in ~/repo; check out another branch first (the release "
                            "commit is made without touching the work tree)")
    assert e.value.result == {"branch": "main", "changed": True}
    with pytest.raises(PublishError, match="branch foo-0.2.0 is checked out in /src/other;"):
        release.check_branch_free("foo-0.2.0", worktrees, top, "~/repo")


def test_worktree_file(tmp_path):
    wt = tmp_path / "wt"
    (wt / "operators").mkdir(parents=True)
    assert release.worktree_file(str(wt), "operators/foo/0.2.0/x.yaml") == str(wt / "operators/foo/0.2.0/x.yaml")
    os.symlink(str(tmp_path), str(wt / "operators" / "foo"))
    with pytest.raises(PublishError, match="cannot write operators/foo/x.yaml: operators/foo is a symbolic link"):
        release.worktree_file(str(wt), "operators/foo/x.yaml")
    # a link in place of the file itself is fine: FileOutput replaces it
    os.symlink(str(tmp_path / "victim"), str(wt / "operators" / "link.yaml"))
    assert release.worktree_file(str(wt), "operators/link.yaml") == str(wt / "operators" / "link.yaml")
    for bad in ("../x", "a//b", "/abs", "a/./b", ""):
        with pytest.raises(PublishError, match="invalid repository path"):
            release.worktree_file(str(wt), bad)
