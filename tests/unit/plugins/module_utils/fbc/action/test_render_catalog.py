# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""render_catalog (opm render CATALOG): the parallel spool path must give the bytes of load + write, whatever
the layout, and fail like the serial loader."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import os

import pytest
from lib.fbc import COMMUNITY_CATALOGS, require_data

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import render_catalog as R
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError, WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput


def _expected(path, fmt):
    return "".join(W.iter_format(L.load(str(path)), fmt)).encode("utf-8")


def _render(path, fmt, workers, **kwargs):
    out = io.BytesIO()
    R.render_catalog(str(path), out, fmt, workers=workers, **kwargs)
    return out.getvalue()


def _tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# A package spread over several files, duplicate names (ties keep load order), case-folded meta keys, objects
# dropped by opm's writer (no package), package-less others, deprecations, JSON and YAML side by side.
MIXED = {
    "a/catalog.yaml": "---\nschema: olm.package\nname: zeta\ndefaultChannel: b\n"
                      "---\nschema: olm.channel\npackage: zeta\nname: b\nentries: [{name: zeta.v2}]\n"
                      "---\nschema: olm.bundle\npackage: zeta\nname: zeta.v2\nimage: img:2\nproperties: []\n"
                      "---\nschema: custom.note\npackage: zeta\ntext: first\n"
                      "---\nschema: custom.root\ntext: root-1\n",
    "b/catalog.json": '{"schema": "olm.channel", "package": "zeta", "name": "a", "entries": [{"name": "zeta.v1"}]}\n'
                      '{"schema": "olm.bundle", "package": "zeta", "name": "zeta.v1", "image": "img:1"}\n'
                      '{"Schema": "custom.note", "Package": "zeta", "text": "second"}\n'
                      '{"schema": "olm.deprecations", "package": "zeta", "entries": []}\n'
                      '{"schema": "olm.channel", "name": "orphan", "entries": []}\n',
    "c/catalog.yaml": "---\nschema: olm.package\nname: alpha\n"
                      "---\nschema: olm.channel\npackage: zeta\nname: b\nentries: [{name: zeta.v1}]\n"
                      "---\nschema: custom.a\npackage: zeta\nx: 1\n"
                      "---\nschema: custom.root\ntext: root-2\n"
                      "---\nschema: olm.bundle\npackage: alpha\nname: alpha.v1\nimage: a:1\n",
    "d.yaml": "schema: olm.package\nname: zeta\n",
}


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_mixed_layout_same_bytes_as_load_and_write(tmp_path, fmt, workers):
    _tree(tmp_path, MIXED)
    assert _render(tmp_path, fmt, workers) == _expected(tmp_path, fmt)


@pytest.mark.parametrize("catalog", ["v4.12", "v4.16", "v4.20"])
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_real_catalogs_same_bytes_in_parallel(catalog, fmt):
    path = require_data(COMMUNITY_CATALOGS / catalog)
    expected = _expected(path, fmt)
    assert _render(path, fmt, 2) == expected
    assert _render(path, fmt, None) == expected


def test_single_file_and_spools_cleaned_up(tmp_path):
    _tree(tmp_path / "cat", MIXED)
    spools = tmp_path / "spools"
    spools.mkdir()
    assert _render(tmp_path / "cat", "json", 2, spool_dir=str(spools)) == _expected(tmp_path / "cat", "json")
    assert os.listdir(spools) == []
    single = tmp_path / "cat" / "d.yaml"
    assert _render(single, "yaml", 4) == _expected(single, "yaml")


def test_first_bad_file_in_walk_order_wins_and_nothing_is_written(tmp_path):
    files = dict(MIXED)
    files["b/catalog.json"] = '{"schema": "olm.package", "name": "x"\n'  # truncated JSON
    files["c/catalog.yaml"] = "schema: olm.package\nname: [unclosed\n"
    _tree(tmp_path, files)
    with pytest.raises(LoadError) as serial:
        L.load(str(tmp_path))
    for workers in (1, 2, 3):
        out = io.BytesIO()
        with pytest.raises(LoadError) as info:
            R.render_catalog(str(tmp_path), out, "json", workers=workers)
        assert str(info.value) == str(serial.value)
        assert str(info.value).startswith(str(tmp_path / "b" / "catalog.json"))
        assert out.getvalue() == b""


@pytest.mark.parametrize("errors, expected", [
    # (file index, is a load error, message, path, context)
    ([(3, True, "bad 3", "c", None), (1, True, "bad 1", "a", None)], (LoadError, "a: bad 1")),
    ([(0, False, "nan", "w", None), (5, True, "late load", "l", "doc 2")], (LoadError, "l: doc 2: late load")),
    ([(4, False, "w4", "x", None), (2, False, "w2", "y", None)], (WriteError, "y: w2")),
])
def test_error_precedence(errors, expected):
    results = [("spool", [], e) for e in errors] + [("spool", [], None)]
    with pytest.raises(expected[0]) as info:
        R._raise_first_error(results)
    assert str(info.value) == expected[1]


def test_falls_back_to_one_process_without_a_pool(tmp_path, monkeypatch):
    _tree(tmp_path, MIXED)
    import multiprocessing

    def no_pool(method):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    assert _render(tmp_path, "yaml", 2) == _expected(tmp_path, "yaml")


def test_invalid_format_and_missing_source(tmp_path):
    with pytest.raises(WriteError, match='invalid output format "xml"'):
        _render(tmp_path, "xml", 1)
    with pytest.raises(LoadError, match="missing.yaml: open: No such file"):
        _render(tmp_path / "missing.yaml", "json", 1)


def test_default_workers_follow_line_count(tmp_path, monkeypatch):
    _tree(tmp_path, MIXED)
    paths = [str(tmp_path / rel) for rel in sorted(MIXED)]
    monkeypatch.setattr(L, "usable_cpus", lambda: 4)
    assert R._default_workers(paths) == 1
    monkeypatch.setattr(R, "PARALLEL_MIN_LINES", 10)
    assert R._default_workers(paths) == 4
    assert R._default_workers(paths[:1]) == 1  # one file: nothing to share
    monkeypatch.setattr(L, "usable_cpus", lambda: 1)
    assert R._default_workers(paths) == 1


def _render_file(source, dest, workers, check_mode=False, diff_max_bytes=0):
    """render_catalog_file through a FileOutput, the way catalog_render runs it."""
    with FileOutput(check_mode=check_mode, diff=diff_max_bytes > 0, diff_max_bytes=diff_max_bytes) as out:
        changed, packages, bundles = R.render_catalog_file(source, dest, out, "json", workers=workers)
        out.commit()
    return {"changed": changed, "packages": packages, "bundles": bundles, "diffs": out.diffs}


def test_render_catalog_file_is_atomic_and_reports_changes(tmp_path):
    _tree(tmp_path / "cat", MIXED)
    source = str(tmp_path / "cat")
    expected = _expected(tmp_path / "cat", "json")
    dest = tmp_path / "out" / "catalog.json"
    checked = _render_file(source, str(dest), 2, check_mode=True, diff_max_bytes=1 << 20)
    assert checked["changed"] is True and not dest.exists() and not dest.parent.exists()
    assert checked["diffs"][0]["before"] == "" and checked["diffs"][0]["after"] == expected.decode()
    assert checked["packages"] == ["alpha", "zeta"]
    assert checked["bundles"] == ["alpha.v1", "zeta.v1", "zeta.v2"]
    assert _render_file(source, str(dest), 2)["changed"] is True
    assert dest.read_bytes() == expected
    before = os.stat(dest)
    again = _render_file(source, str(dest), 1, diff_max_bytes=10)
    assert again["changed"] is False and again["diffs"] == []
    assert again["packages"] == checked["packages"] and again["bundles"] == checked["bundles"]
    assert os.stat(dest).st_mtime_ns == before.st_mtime_ns  # unchanged output is not rewritten
    (tmp_path / "cat" / "d.yaml").write_text("schema: olm.package\nname: [broken\n")
    with pytest.raises(LoadError):
        _render_file(source, str(dest), 2)
    assert dest.read_bytes() == expected
    assert sorted(os.listdir(dest.parent)) == ["catalog.json"]  # no temporary file or spool directory left behind
