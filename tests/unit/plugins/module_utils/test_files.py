"""module_utils.files: the one file-output service (stage, compare, diff, fsync + atomic rename, temp hygiene)."""

import os
import subprocess
import sys

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils import files
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput, make_diff


def test_make_diff_full_text_or_summary():
    assert make_diff("p", None, b"new\n") == {"before_header": "p (absent)", "after_header": "p", "before": "",
                                              "after": "new\n"}
    big = make_diff("p", b"a" * 10, b"b" * 200, max_bytes=100)
    assert big["before"].startswith("10 bytes, sha256:") and big["after"].startswith("200 bytes, sha256:")
    assert make_diff("p", None, b"b" * 200, max_bytes=100)["before"] == ""
    assert make_diff("p", "1 bytes, sha256:x\n", "2 bytes, sha256:y\n")["after"] == "2 bytes, sha256:y\n"


def test_stage_compare_commit(tmp_path):
    same, new = tmp_path / "a.yaml", tmp_path / "d" / "b.yaml"
    same.write_text("same")
    os.chmod(same, 0o600)
    before = os.stat(same).st_mtime_ns
    with FileOutput(diff=True) as out:
        assert out.write(str(same), "same") is False
        assert out.write(str(new), ["ne", "w"]) is True
        assert not new.exists()  # nothing replaced before commit
        out.commit()
    assert out.changed_paths == [str(new)] and out.paths == [str(same), str(new)]
    assert out.diffs == [make_diff(str(new), None, b"new")]
    assert new.read_text() == "new" and oct(new.stat().st_mode & 0o777) == "0o644"
    assert os.stat(same).st_mtime_ns == before  # unchanged content is not rewritten
    with FileOutput() as out:
        out.write(str(same), "changed")
        out.commit()
    assert same.read_text() == "changed" and oct(same.stat().st_mode & 0o777) == "0o600"  # mode kept
    assert sorted(os.listdir(tmp_path)) == ["a.yaml", "d"]


def test_check_mode_creates_nothing_next_to_the_destination(tmp_path):
    dest = tmp_path / "new" / "x.json"
    with FileOutput(check_mode=True, diff=True) as out:
        assert out.write(str(dest), "{}\n") is True
        scratch = out.staging_dir(str(dest))
        out.commit()
    assert not (tmp_path / "new").exists() and not os.path.exists(scratch)
    assert out.changed and out.diffs[0]["after"] == "{}\n"


def test_failure_while_staging_replaces_nothing(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old")

    def failing(f):
        f.write(b"partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        with FileOutput() as out:
            out.write(str(a), "new")
            out.stream(str(b), failing)
            out.commit()
    assert a.read_text() == "old" and not b.exists() and sorted(os.listdir(tmp_path)) == ["a"]


def test_directory_destination_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        with FileOutput() as out:
            out.write(str(tmp_path), "x")
    with pytest.raises(IsADirectoryError):
        files.read_bytes(str(tmp_path))


def test_temporary_names_never_follow_a_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    dest = tmp_path / "out.yaml"
    # every name an attacker could guess: the old fixed name and our prefix for this process
    os.symlink(victim, str(dest) + ".tmp")
    os.symlink(victim, str(tmp_path / (files.temp_prefix("out.yaml") + "tmp")))
    files.write_file(str(dest), "data")
    assert dest.read_text() == "data" and victim.read_text() == "precious"


def test_dangling_symlink_destination_is_replaced_with_and_without_diff(tmp_path):
    for diff in (False, True):
        dest = tmp_path / ("out-%s.yaml" % ("diff" if diff else "plain"))
        os.symlink(tmp_path / "missing", dest)
        with FileOutput(diff=diff) as out:
            assert out.write(str(dest), "data") is True
            out.commit()
        assert not dest.is_symlink() and dest.read_text() == "data"
        assert out.diffs == ([make_diff(str(dest), None, b"data")] if diff else [])


def test_a_path_is_written_once_per_output(tmp_path):
    with pytest.raises(ValueError, match="written twice"):
        with FileOutput() as out:
            out.write(str(tmp_path / "a"), "1")
            out.write(str(tmp_path / "a"), "2")
    assert os.listdir(tmp_path) == []


def test_temporaries_of_other_hosts_and_live_processes_are_kept(tmp_path):
    ours_dead = tmp_path / (".kubeforge-%s-999999999-x.abcdef12.tmp" % files._host_tag())
    other_host = tmp_path / ".kubeforge-00000000-999999999-x.abcdef12.tmp"
    ours_alive = tmp_path / (files.temp_prefix("x") + "abcdef12.tmp")
    for p in (ours_dead, other_host, ours_alive):
        p.write_text("")
    assert files.remove_stale_temps(str(tmp_path)) == [str(ours_dead)]
    assert sorted(os.listdir(tmp_path)) == sorted([other_host.name, ours_alive.name])


def test_write_replaces_a_symlinked_destination_not_its_target(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    dest = tmp_path / "out.yaml"
    os.symlink(victim, dest)
    files.write_file(str(dest), "data")
    assert not dest.is_symlink() and dest.read_text() == "data" and victim.read_text() == "precious"


@pytest.mark.parametrize("name,expected", [
    (".kubeforge-0a1b2c3d-123-catalog.yaml.ab12_x9z.tmp", True),
    (".kubeforge-0a1b2c3d-99-render.k2j4l5m6", True),
    (".kubeforge-123-catalog.yaml.ab12_x9z.tmp", False),
    (".kubeforge-catalog.yaml", False),
    ("catalog.yaml", False),
    (".kubeforge-0a1b2c3d-12-x", False),
])
def test_is_temp_name(name, expected):
    assert files.is_temp_name(name) is expected


# the directory holding ansible_collections/, for a child interpreter
_COLLECTIONS = files.__file__[:files.__file__.rindex(os.sep + "ansible_collections" + os.sep)]


def _killed_writer(directory):
    """A real process that stages a file and a spool directory in ``directory`` and dies mid-write (SIGKILL)."""
    code = (
        "import os, sys, signal\n"
        "sys.path.insert(0, %r)\n"
        "from ansible_collections.kubeforge.operators.plugins.module_utils import files\n"
        "out = files.FileOutput()\n"
        "files.make_temp_dir(%r, 'render')\n"
        "def die(f):\n"
        "    f.write(b'schema: olm.package\\nname: half')\n"
        "    f.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "out.stream(os.path.join(%r, 'catalog.yaml'), die)\n"
    ) % (_COLLECTIONS, directory, directory)
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -9


def test_interrupted_writer_leaves_nothing_the_loader_or_next_run_sees(tmp_path):
    catalog = tmp_path / "cat" / "pkg"
    catalog.mkdir(parents=True)
    good = "---\nschema: olm.package\nname: pkg\n"
    (catalog / "catalog.yaml").write_text(good)
    _killed_writer(str(catalog))
    leftovers = sorted(n for n in os.listdir(catalog) if n != "catalog.yaml")
    assert len(leftovers) == 2 and all(files.is_temp_name(n) for n in leftovers)
    assert load(str(tmp_path / "cat")).package_names() == ["pkg"]  # the loader ignores them
    with FileOutput() as out:
        out.write(str(catalog / "catalog.yaml"), good)  # the next run in that directory removes them
        out.commit()
    assert os.listdir(catalog) == ["catalog.yaml"]
