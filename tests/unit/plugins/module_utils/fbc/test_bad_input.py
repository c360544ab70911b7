# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile and broken input: clean FBCError subclasses naming the file/object, no partial output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, LoadError, UnsafeNameError, WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_catalog, validate_config

BILLION_LAUGHS = """schema: olm.package
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def test_alias_bomb_is_rejected_quickly(tmp_path):
    p = _write(tmp_path, "bomb.yaml", BILLION_LAUGHS)
    start = time.time()
    with pytest.raises(LoadError) as info:
        L.load_file(p)
    assert time.time() - start < 5
    assert str(info.value).startswith(str(p) + ": document at line 1: YAML alias expansion exceeds")


def test_recursive_alias_is_rejected(tmp_path):
    p = _write(tmp_path, "rec.yaml", "schema: x\na: &a [*a]\n")
    with pytest.raises(LoadError) as info:
        L.load_file(p)
    assert str(p) in str(info.value)


@pytest.mark.parametrize("content,fragment", [
    ("schema: olm.package\nname: [unclosed\n", "error converting YAML to JSON"),
    ("schema: olm.package\n  bad: indent\n", "error converting YAML to JSON"),
    ('{"schema": "olm.package", "name": }', "invalid JSON"),
    ('{"schema": "olm.package"} {"schema": ', "object 1: invalid JSON"),
    ('{"schema": "olm.package"} [1, 2]', "object 1: json: cannot unmarshal array"),
    ('{"schema": "olm.package", "n": NaN}', "object 0"),
    ("schema: x\nv: .inf\n", "unsupported value"),
    ("- a\n- b\n", "cannot unmarshal array"),
    ("just a string\n", "cannot unmarshal string"),
    ("name: foo\n", "is missing root schema field"),
    ("schema: olm.bundle\nname: b\nproperties: {}\n", 'olm.bundle "b": parse bundle'),
    ("schema: olm.package\nname: p\nicon: 5\n", 'olm.package "p": parse package'),
    ("schema: olm.deprecations\npackage: p\nentries: [5]\n", "parse deprecation"),
    (b"\xff\xfe\x00garbage", "invalid UTF-8"),
    ("schema: x\n? [a, b]\n: c\n", "unhashable"),
])
def test_malformed_files(tmp_path, content, fragment):
    p = _write(tmp_path, "bad.yaml", content)
    with pytest.raises(LoadError) as info:
        L.load_file(p)
    assert fragment in str(info.value)
    assert str(info.value).startswith(str(p) + ": ")


def test_error_in_second_file_names_it_and_returns_nothing(tmp_path):
    _write(tmp_path, "a.yaml", "schema: olm.package\nname: a\n")
    bad = _write(tmp_path, "b/c.json", '{"schema": 1}')
    with pytest.raises(LoadError) as info:
        L.load_fs(tmp_path)
    assert str(info.value).startswith(str(bad) + ": object 0: expected value for key \"schema\"")


def test_unknown_schemas_are_kept(tmp_path):
    _write(tmp_path, "x.yaml", "schema: my.custom\npackage: a\nfoo: {z: 1, a: 2}\n")
    cfg = L.load_fs(tmp_path)
    assert cfg.others == [{"foo": {"a": 2, "z": 1}, "package": "a", "schema": "my.custom"}]


def test_duplicates_are_reported_all(tmp_path):
    pkg = {"schema": "olm.package", "name": "a", "defaultChannel": "s"}
    ch = {"schema": "olm.channel", "package": "a", "name": "s", "entries": [{"name": "a.v1.0.0"}]}
    b = {"schema": "olm.bundle", "package": "a", "name": "a.v1.0.0", "image": "r/a:1",
         "properties": [{"type": "olm.package", "value": {"packageName": "a", "version": "1.0.0"}}]}
    _write(tmp_path, "one.json", "".join(json.dumps(o) for o in (pkg, ch, b)))
    _write(tmp_path, "two.json", "".join(json.dumps(o) for o in (pkg, ch, b)))
    result = validate_catalog(tmp_path)
    assert not result.valid
    assert result.errors == ['duplicate package "a"', 'package "a" has duplicate channel "s"', 'package "a" has duplicate bundle "a.v1.0.0"']


def test_missing_path_is_a_clean_result():
    result = validate_catalog("/definitely/not/here")
    assert not result.valid and "/definitely/not/here" in result.errors[0]


@pytest.mark.parametrize("name", ["../evil", "a/b", "/etc", "a\x00b", ".."])
def test_path_traversal_names(tmp_path, name):
    cfg = DeclarativeConfig(
        packages=[{"schema": "olm.package", "name": "good"}, {"schema": "olm.package", "name": name}],
        channels=[{"schema": "olm.channel", "package": name, "name": "s", "entries": []}])
    out = tmp_path / "out"
    with pytest.raises(UnsafeNameError):
        W.write_fs(cfg, str(out), "yaml")
    # nothing at all was written, not even the valid package
    assert not out.exists() or not any(out.rglob("*"))
    assert not (tmp_path / "evil").exists()
    # validation also refuses such package names (RFC 1123)
    assert any("invalid package name" in e for e in validate_config(cfg).errors)


@pytest.mark.parametrize("name", ["../x", "x/y", "a\x00"])
def test_check_path_component(name):
    with pytest.raises(UnsafeNameError) as info:
        W.check_path_component(name, "bundle")
    assert "invalid bundle name" in str(info.value)
    assert W.check_path_component("ok-name.v1", "channel") == "ok-name.v1"


def test_write_failure_leaves_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "catalog.json"
    target.write_text("previous")

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(WriteError, match="write file .*catalog.json.*disk full"):
        W.write_file(DeclarativeConfig(others=[{"schema": "x"}]), str(target), "json")
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["catalog.json"]


def test_unwritable_values_raise_fbc_error():
    with pytest.raises(FBCError):
        W.dumps_yaml(DeclarativeConfig(others=[{"schema": "x", "v": object()}]))
    with pytest.raises(FBCError):
        W.dumps_json(DeclarativeConfig(others=[{"schema": "x", "v": float("nan")}]))


@pytest.mark.parametrize("image,message", [
    ("Quay.io/Foo/Bar:1", "invalid reference format: repository name must be lowercase"),
    ("quay.io/foo:bar:baz", "invalid reference format"),
    ("a" * 64, "invalid repository name (%s), cannot specify 64-byte hexadecimal strings" % ("a" * 64)),
    ("quay.io/foo@sha256:abcd", "invalid reference format"),
    ("quay.io/foo@sha256:" + "A" * 64, "invalid checksum digest format"),
    ("quay.io/foo@sha256:" + "a" * 63 + "aa", "invalid checksum digest length"),
    ("quay.io/foo@md5:" + "a" * 32, "unsupported digest algorithm"),
    ("quay.io/" + "a-" * 3000 + "!", "invalid reference format"),
    ("a" * 5000 + "!", "invalid reference format"),
])
def test_image_reference_errors(image, message):
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import ImageReferenceError, parse_normalized_named

    start = time.time()
    with pytest.raises(ImageReferenceError) as info:
        parse_normalized_named(image)
    assert str(info.value) == message
    assert time.time() - start < 1  # no catastrophic regex backtracking


def test_valid_image_references():
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import parse_normalized_named

    for image in ("busybox", "quay.io/org/op-bundle:v1.0.0", "localhost:5000/a/b@sha256:" + "a" * 64,
                  "registry.redhat.io/a__b/c---d:tag", "quay.io/x/y:v1@sha256:" + "0" * 64):
        parse_normalized_named(image)


def test_opm_validate_json_output(tmp_path):
    # compared with `opm validate <dir> -o json` (v1.71.0)
    _write(tmp_path, "c.json", '{"schema":"olm.package","name":"Bad.Name"}')
    result = validate_catalog(tmp_path)
    assert result.opm_json() == (
        '{\n  "passed": false,\n  "error": {\n    "message": "invalid package name \\"Bad.Name\\": [a lowercase RFC 1123 '
        "label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]\"\n  }\n}\n")
    (tmp_path / "c.json").write_text('{"schema":"x"}')
    assert validate_catalog(tmp_path).opm_json() == '{\n  "passed": true\n}\n'


def test_opm_validate_json_output_escapes_html(tmp_path):
    objs = [{"schema": "olm.package", "name": "p", "defaultChannel": "s"},
            {"schema": "olm.channel", "name": "s", "package": "p", "entries": [{"name": "p.v1.0.0", "skipRange": ">v0.1.0 & <x"}]},
            {"schema": "olm.bundle", "name": "p.v1.0.0", "package": "p", "image": "r/p:1",
             "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}]}]
    _write(tmp_path, "c.json", "".join(json.dumps(o) for o in objs))
    # byte-for-byte what opm v1.71.0 printed for this catalog
    assert validate_catalog(tmp_path).opm_json() == (
        '{\n  "passed": false,\n  "error": {\n    "message": "invalid index:\\n└── invalid package \\"p\\":\\n'
        '    └── invalid channel \\"s\\":\\n        └── invalid bundle \\"p.v1.0.0\\":\\n'
        '            └── invalid skipRange \\"\\u003ev0.1.0 \\u0026 \\u003cx\\": Could not get version from string: '
        '\\"\\u003cx\\""\n  }\n}\n')
