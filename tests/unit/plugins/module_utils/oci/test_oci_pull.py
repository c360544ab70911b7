import io
import os
import tarfile

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import UnsafeLayerError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import extract_layer


def _layer(entries, gz=True):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz" if gz else "w") as tar:
        for e in entries:
            info = tarfile.TarInfo(e["name"])
            info.type = e.get("type", tarfile.REGTYPE)
            info.mode = e.get("mode", 0o644)
            info.linkname = e.get("link", "")
            data = e.get("data", b"")
            info.size = len(data) if info.type == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if info.type == tarfile.REGTYPE else None)
    raw.seek(0)
    return raw


def test_extracts_files_dirs_links(tmp_path):
    dest = tmp_path / "root"
    skipped = extract_layer(_layer([
        {"name": "./etc", "type": tarfile.DIRTYPE, "mode": 0o755},
        {"name": "./etc/conf", "data": b"x", "mode": 0o4755},
        {"name": "bin/tool", "data": b"#!", "mode": 0o755},
        {"name": "etc/link", "type": tarfile.SYMTYPE, "link": "conf"},
        {"name": "etc/hard", "type": tarfile.LNKTYPE, "link": "etc/conf"},
        {"name": "dev/null", "type": tarfile.CHRTYPE},
        {"name": "fifo", "type": tarfile.FIFOTYPE},
    ], gz=False), str(dest))
    assert (dest / "etc" / "conf").read_bytes() == b"x"
    assert not os.stat(dest / "etc" / "conf").st_mode & 0o4000  # setuid dropped
    assert os.access(dest / "bin" / "tool", os.X_OK)
    assert os.readlink(dest / "etc" / "link") == "conf"
    assert (dest / "etc" / "hard").read_bytes() == b"x"
    assert sorted(skipped) == ["dev/null", "fifo"] and not (dest / "dev" / "null").exists()


@pytest.mark.parametrize("entries,match", [
    ([{"name": "/etc/passwd", "data": b"x"}], "absolute"),
    ([{"name": "a/../../x", "data": b"x"}], r"'\.\.'"),
    ([{"name": "..", "type": tarfile.DIRTYPE}], r"'\.\.'"),
    ([{"name": "h", "type": tarfile.LNKTYPE, "link": "../outside"}], r"'\.\.'"),
    ([{"name": "h", "type": tarfile.LNKTYPE, "link": "missing"}], "hard link"),
    ([{"name": "esc", "type": tarfile.SYMTYPE, "link": "/tmp"}, {"name": "esc/pwned", "data": b"x"}], "symlink"),
    ([{"name": "esc", "type": tarfile.SYMTYPE, "link": "../.."}, {"name": "esc/x/pwned", "data": b"x"}], "symlink"),
])
def test_rejects_unsafe_entries(tmp_path, entries, match):
    dest = tmp_path / "a" / "root"
    with pytest.raises(UnsafeLayerError, match=match):
        extract_layer(_layer(entries), str(dest))
    assert not (tmp_path / "a" / "outside").exists() and not (tmp_path / "x").exists()
    assert not os.path.exists("/tmp/pwned")


def test_whiteouts(tmp_path):
    dest = tmp_path / "root"
    extract_layer(_layer([
        {"name": "keep", "data": b"1"},
        {"name": "gone", "data": b"1"},
        {"name": "dir/old", "data": b"1"},
        {"name": "opq/old1", "data": b"1"},
        {"name": "opq/sub/old2", "data": b"1"},
    ]), str(dest))
    extract_layer(_layer([
        {"name": ".wh.gone"},
        {"name": "dir/.wh.old"},
        {"name": "opq/new", "data": b"2"},  # same-layer content survives the opaque marker
        {"name": "opq/.wh..wh..opq"},
        {"name": ".wh.never-existed"},
    ]), str(dest))
    assert (dest / "keep").exists() and not (dest / "gone").exists()
    assert (dest / "dir").is_dir() and not (dest / "dir" / "old").exists()
    assert sorted(os.listdir(dest / "opq")) == ["new"]
    assert not any(n.startswith(".wh.") for _root, _dirs, fs in os.walk(dest) for n in fs)


def test_not_a_tar(tmp_path):
    with pytest.raises(UnsafeLayerError, match="not a readable tar"):
        extract_layer(io.BytesIO(b"garbage" * 100), str(tmp_path))
