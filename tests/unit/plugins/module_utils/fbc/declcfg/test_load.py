# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loader tests: ports of operator-registry alpha/declcfg/load_test.go and declcfg_test.go (Meta decoding)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from lib.fbc import LOAD_FIXTURES, OPM_TESTDATA, require_data

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import documents as D
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import parallel as PL
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang import yaml_load as GY

VALID_FS = LOAD_FIXTURES / "validFS"
INVALID_FS = LOAD_FIXTURES / "invalidFS"


def test_libyaml_is_used():
    # The C loader is what makes YAML parsing fast enough; the venv's PyYAML must have it.
    assert GY.HAVE_LIBYAML
    assert issubclass(GY._FBCYAMLLoader, __import__("yaml").CSafeLoader)


def test_load_fs_valid_dir():
    cfg = L.load_fs(require_data(VALID_FS))
    assert [p.get("name", "") for p in cfg.packages] == ["cockroachdb", "etcd", ""]
    assert len(cfg.channels) == 0
    assert len(cfg.bundles) == 12
    assert len(cfg.deprecations) == 1 and cfg.deprecations[0]["package"] == "kiali"
    assert cfg.others == [{"schema": "unexpected"}]
    # README.md and the CSV file are hidden by .indexignore
    assert L.list_catalog_files(VALID_FS) == ["cockroachdb.json", "deprecations.yaml", "etcd.yaml", "unrecognized-schema.json"]


def test_load_fs_valid_dir_contents():
    cfg = L.load_fs(VALID_FS)
    cockroach = cfg.packages[0]
    assert cockroach["defaultChannel"] == "stable-5.x"
    assert cockroach["icon"]["mediatype"] == "image/svg+xml"
    b = next(b for b in cfg.bundles if b["name"] == "cockroachdb.v2.1.11")
    assert b["image"] == "quay.io/openshift-community-operators/cockroachdb:v2.1.11"
    assert b["properties"] == [
        {"type": "olm.channel", "value": {"name": "stable", "replaces": "cockroachdb.v2.1.1"}},
        {"type": "olm.package", "value": {"packageName": "cockroachdb", "version": "2.1.11"}},
    ]


@pytest.mark.parametrize("name,packages,bundles,others", [
    ("unrecognized-schema.json", 1, 1, 1),
    ("etcd.yaml", 1, 6, 0),
])
def test_load_reader_success(name, packages, bundles, others):
    cfg = L.load_file(VALID_FS / name)
    assert (len(cfg.packages), len(cfg.bundles), len(cfg.others)) == (packages, bundles, others)


@pytest.mark.parametrize("name,fragment", [
    ("invalid-format.txt", "error converting YAML to JSON"),
    ("not-object.json", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    ("no-schema.yaml", "object '{\"hello\":\"world\"}\n' is missing root schema field"),
    ("invalid-package.json", 'expected value for key "name" to be a string'),
    ("invalid-bundle.json", "parse bundle: json: cannot unmarshal object into Go struct field Bundle.relatedImages"),
])
def test_load_reader_errors(name, fragment):
    path = require_data(INVALID_FS / name)
    with pytest.raises(LoadError) as info:
        L.load_file(path)
    assert fragment in str(info.value)
    assert str(info.value).startswith(str(path) + ": ")


def test_load_fs_invalid_dir_fails_naming_the_first_bad_file():
    with pytest.raises(LoadError) as info:
        L.load_fs(INVALID_FS)
    assert "invalid-bundle.json" in str(info.value)


def test_load_fs_missing_dir_and_file():
    with pytest.raises(LoadError) as info:
        L.load_fs("/non/existent/dir")
    assert "/non/existent/dir" in str(info.value)
    with pytest.raises(LoadError):
        L.load_file("/non/existent/file.yaml")
    with pytest.raises(LoadError):
        L.load_fs(VALID_FS / "etcd.yaml")


def test_other_fbc_dirs_load():
    for d in ("alpha/action/testdata/foo-index-v0.2.0-declcfg", "alpha/action/testdata/index-declcfgs/latest",
              "test/e2e/testdata/test-configs/prometheus"):
        cfg = L.load(require_data(OPM_TESTDATA / d))
        assert cfg.packages, d


def test_json_stream_of_concatenated_objects():
    data = b'{"schema":"olm.package","name":"a"}\n  {"schema": "olm.channel", "package": "a", "name": "s", "entries": []}{"schema":"x.y"}'
    cfg = L.load_bytes(data)
    assert cfg.packages == [{"schema": "olm.package", "name": "a"}]
    assert cfg.channels == [{"schema": "olm.channel", "name": "s", "package": "a", "entries": []}]
    assert cfg.others == [{"schema": "x.y"}]


def test_yaml_multi_doc_and_separators():
    data = "---\nschema: olm.package\nname: a\n--- # comment\nschema: olm.channel\npackage: a\nname: s\n---\n"
    cfg = L.load_bytes(data)
    assert len(cfg.packages) == 1 and len(cfg.channels) == 1
    with pytest.raises(LoadError) as info:
        L.load_bytes("---\nschema: olm.package\n--- {a: 1}\n")
    assert "invalid Yaml document separator: {a: 1}" in str(info.value)


def test_empty_and_comment_only_documents():
    assert L.load_bytes("").is_empty()
    assert L.load_bytes("---\n").is_empty()
    with pytest.raises(LoadError) as info:
        L.load_bytes("---\n# just a comment\n---\nschema: olm.package\nname: a\n")
    # opm: the null document leaves Meta's blob empty
    assert str(info.value) == "<input>: document at line 2: object '' is missing root schema field"


def test_case_insensitive_meta_keys_and_typed_fields():
    cfg = L.load_bytes('{"Schema": "olm.package", "NAME": "a", "DefaultChannel": "s", "unknown": 1}')
    assert cfg.packages == [{"schema": "olm.package", "name": "a", "defaultChannel": "s"}]
    cfg = L.load_bytes('{"SCHEMA": "custom", "Package": "a", "x": 1}')
    assert cfg.others == [{"Package": "a", "SCHEMA": "custom", "x": 1}]


def test_duplicate_folded_keys():
    with pytest.raises(LoadError) as info:
        L.load_bytes('{"schema": "olm.package", "Schema": "olm.package"}')
    assert 'duplicate keys for key "schema": [Schema schema]' in str(info.value)


@pytest.mark.parametrize("value,expected", [
    ("1", "got %!t(float64=1): 1"),
    ("true", "got true: true"),
    ("null", "got %!t(<nil>): <nil>"),
    ('["a"]', "got [%!t(string=a)]: [a]"),
    ('{"a": 1}', "got map[%!t(string=a):%!t(float64=1)]: map[a:1]"),
])
def test_non_string_meta_value(value, expected):
    with pytest.raises(LoadError) as info:
        L.load_bytes('{"schema": %s}' % value)
    assert 'expected value for key "schema" to be a string, ' + expected in str(info.value)


def test_numbers_behave_like_go_float64_and_keys_are_sorted():
    cfg = L.load_bytes('{"schema": "x", "b": 1.0, "a": {"z": 1e3, "y": 0.5, "big": 12345678901234567890}}')
    other = cfg.others[0]
    assert list(other) == ["a", "b", "schema"]
    assert list(other["a"]) == ["big", "y", "z"]
    assert other["b"] == 1 and isinstance(other["b"], int)
    assert other["a"]["z"] == 1000 and other["a"]["y"] == 0.5
    assert other["a"]["big"] == 12345678901234567000  # float64 rounding printed as Go does (checked against opm)


def test_yaml_scalars_follow_go_yaml_v2():
    cfg = L.load_bytes("schema: x\nts: 2026-02-09T13:23:51Z\nd: 2026-02-09\ny: y\nn: N\nnum: 0x1F\nf: 1.50\nv: {a: on, b: n}\n")
    o = cfg.others[0]
    assert o["ts"] == "2026-02-09T13:23:51Z" and o["d"] == "2026-02-09"
    assert o["true"] is True and o["false"] is False  # keys y/n/on are booleans too (go-yaml v2)
    assert o["v"] == {"a": True, "b": False}
    assert o["num"] == 31 and o["f"] == 1.5


def test_icon_base64_is_normalised_and_validated():
    cfg = L.load_bytes('{"schema":"olm.package","name":"a","icon":{"base64data":"PHN2\\nZz4=","mediatype":"image/svg+xml"}}')
    assert cfg.packages[0]["icon"]["base64data"] == "PHN2Zz4="
    with pytest.raises(LoadError) as info:
        L.load_bytes('{"schema":"olm.package","name":"a","icon":{"base64data":"***","mediatype":"x"}}')
    assert "parse package: illegal base64 data at input byte" in str(info.value)


def test_bundle_object_must_be_base64():
    doc = {"schema": "olm.bundle", "name": "b", "package": "p", "properties": [{"type": "olm.bundle.object", "value": {"data": "%%%"}}]}
    with pytest.raises(LoadError) as info:
        L.load_bytes(json.dumps(doc))
    assert ('read bundle objects: package "p", bundle "b": parse property at index 0 as bundle object: illegal base64 data'
            in str(info.value))


def test_property_without_value_is_kept_missing():
    cfg = L.load_bytes('{"schema":"olm.bundle","name":"b","properties":[{"type":"olm.foo"},{"type":"t","value":null}]}')
    assert cfg.bundles[0]["properties"] == [{"type": "olm.foo"}, {"type": "t", "value": None}]


def test_typed_decode_errors_name_the_object():
    with pytest.raises(LoadError) as info:
        L.load_bytes('{"schema":"olm.channel","name":"c","entries":[{"name":5}]}')
    assert 'olm.channel "c": parse channel: json: cannot unmarshal number into Go struct field ChannelEntry.entries.name of type string' in str(info.value)
    assert info.value.opm_message == ("parse channel: json: cannot unmarshal number into Go struct field "
                                      "ChannelEntry.entries.name of type string")
    assert info.value.context == 'object 0: olm.channel "c"'


def _tree(tmp_path, files):
    for rel, content in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    return tmp_path


PKG = '{"schema":"olm.package","name":"%s"}'


def test_indexignore_nested_and_negation(tmp_path):
    root = _tree(tmp_path, {
        ".indexignore": "*.md\n# comment\n\nsub/skipped.json\n",
        "a.json": PKG % "a",
        "README.md": "not fbc",
        "sub/skipped.json": PKG % "skipped",
        "sub/b.json": PKG % "b",
        "sub/.indexignore": "*.txt\n!keep.txt\n",
        "sub/notes.txt": "nope",
        "sub/keep.txt": PKG % "keep",
        "sub/deeper/x.txt": "nope",
        "other/notes.txt": PKG % "other-txt",
    })
    files = L.list_catalog_files(root)
    assert files == ["a.json", "other/notes.txt", "sub/b.json", "sub/keep.txt"]
    names = sorted(p["name"] for p in L.load_fs(root).packages)
    assert names == ["a", "b", "keep", "other-txt"]


def test_indexignore_glob_patterns(tmp_path):
    root = _tree(tmp_path, {
        ".indexignore": "/top.json\n**/gen/*.json\ndir/\n[ab].yaml\n",
        "top.json": "x", "keep.json": PKG % "k",
        "deep/gen/x.json": "x", "gen/y.json": "x",
        "dir/z.json": "x",
        "a.yaml": "x", "c.yaml": "schema: olm.package\nname: c\n",
    })
    assert L.list_catalog_files(root) == ["c.yaml", "keep.json"]


def test_alias_budget_allows_small_aliases():
    cfg = L.load_bytes("schema: x\nbase: &b {k: v}\nuse: *b\n")
    assert cfg.others[0]["use"] == {"k": "v"}


def test_parallel_load_matches_serial():
    serial = L.load_fs(VALID_FS, workers=1)
    parallel = L.load_fs(VALID_FS, workers=2)
    assert parallel == serial


def test_parallel_load_reports_first_bad_file_in_walk_order(tmp_path):
    _tree(tmp_path, {"a.yaml": "schema: olm.package\nname: a\n", "b.json": '{"schema": 1}', "c.yaml": "x: [",
                     "d.yaml": "schema: olm.package\nname: d\n"})
    with pytest.raises(LoadError) as info:
        L.load_fs(tmp_path, workers=2)
    assert str(info.value).startswith(str(tmp_path / "b.json") + ": ")


def test_default_workers_only_parallelises_big_yaml(tmp_path, monkeypatch):
    _tree(tmp_path, {"a.json": PKG % "a", "b.yaml": "schema: olm.package\nname: b\n"})
    paths = [str(tmp_path / "a.json"), str(tmp_path / "b.yaml")]
    monkeypatch.setattr(PL, "usable_cpus", lambda: 2)
    assert PL._default_workers(paths) == 1
    monkeypatch.setattr(PL, "PARALLEL_MIN_YAML_LINES", 1)
    monkeypatch.setattr(PL, "usable_cpus", lambda: 2)
    assert PL._default_workers(paths) == 2
    monkeypatch.setattr(PL, "usable_cpus", lambda: 1)
    assert PL._default_workers(paths) == 1
    assert sorted(p["name"] for p in L.load_fs(tmp_path).packages) == ["a", "b"]


def test_yaml_merge_keys_and_aliases():
    cfg = L.load_bytes("schema: x\nbase: &b {k: v, z: 1}\nm:\n  <<: *b\n  z: 2\nl: [*b, *b]\n")
    o = cfg.others[0]
    assert o["m"] == {"k": "v", "z": 2}
    assert o["l"] == [{"k": "v", "z": 1}, {"k": "v", "z": 1}]
    o["l"][0]["k"] = "changed"  # alias copies are independent objects
    assert o["l"][1]["k"] == "v" and o["base"]["k"] == "v"


def test_explicit_tags():
    cfg = L.load_bytes('schema: x\na: !!str 123\nb: !!int "0x10"\nc: !!float "1"\nd: !!binary aGk=\ne: !custom {q: 1}\n')
    assert cfg.others[0] == {"a": "123", "b": 16, "c": 1, "d": "hi", "e": {"q": 1}, "schema": "x"}


def test_pure_python_loader_fallback_behaves_the_same():
    """Without libyaml the loader class derives from yaml.SafeLoader; the conversion must be identical."""
    import yaml

    pure = type("PureFBCLoader", (yaml.SafeLoader,), {"resolve": GY._FBCYAMLLoader.resolve,
                                                      "yaml_constructors": GY._FBCYAMLLoader.yaml_constructors})
    text = "schema: x\nts: 2026-02-09\ny: n\nnum: 0o17\nl: [1, '2', ~]\nm: {b: 1, a: [x]}\nblock: |\n  a\n  b\n"
    assert GY._load_yaml_document(text, pure) == GY._load_yaml_document(text)
    catalog = (LOAD_FIXTURES / "validFS" / "etcd.yaml").read_text()
    for doc, _line in D._split_yaml_documents(catalog, "etcd.yaml"):
        assert GY._load_yaml_document(doc, pure) == GY._load_yaml_document(doc)


# Messages below were compared with `opm validate -o json` (operator-registry v1.71.0) output.
@pytest.mark.parametrize("content,ext,message", [
    ("[1]", "json", "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type "
                    "map[string]interface {} at offset 1 (indicated by <==)\n[ <== \n    1\n]"),
    ('"x"', "json", "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type "
                    'map[string]interface {} at offset 3 (indicated by <==)\n"x" <=='),
    ("just text\n", "yaml", "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value "
                            'of type map[string]interface {} at offset 11 (indicated by <==)\n"just text" <=='),
    ('{"schema":"olm.package"} [1, 2]', "json", "json: cannot unmarshal array into Go value of type map[string]interface {} "
                                                "at offset 1 (indicated by <==)\n[ <== \n    1,\n    2\n]"),
    ("---\n# comment\n---\nschema: olm.package\nname: p\n", "yaml", "object '' is missing root schema field"),
    ('{"schema": {"a": 1}}', "json", 'expected value for key "schema" to be a string, got map[%!t(string=a):%!t(float64=1)]: map[a:1]'),
    ('{"schema":"olm.bundle","name":"b","package":"p","properties":[{"type":"olm.bundle.object","value":"x"}]}', "json",
     'read bundle objects: package "p", bundle "b": parse property at index 0 as bundle object: json: cannot unmarshal '
     "string into Go value of type property.BundleObject"),
    ('{"schema":"olm.package","name":"p","icon":{"base64data":"***","mediatype":"x"}}', "json",
     "parse package: illegal base64 data at input byte 0"),
])
def test_load_messages_match_opm(content, ext, message):
    with pytest.raises(LoadError) as info:
        L.load_bytes(content, source="catalog." + ext)
    assert info.value.opm_message == message


@pytest.mark.parametrize("text, expected", [
    ("v: 123", 123),                    # plain: typed by go-yaml v2's rules
    ("v: '123'", "123"),                # quoted: always a string
    ("v: !!int '7'", 7),                # explicit tag: the constructor table
    ("v: ! {a: 1}", {"a": 1}),          # non-specific tag on a mapping: still a mapping
    ("v: !!map {b: 2}", {"b": 2}),
    ("v: ! [x, 2]", ["x", 2]),
    ("v: |\n  true\n", "true\n"),        # block scalars are strings
    ("v: ~", None),
    ("v: yes", True),                   # YAML 1.1 bool, as go-yaml v2 reads it
])
def test_untagged_nodes_are_resolved_by_the_converter(text, expected):
    # the loader tags untagged nodes with slice(kind, value, implicit) instead of calling a Python resolver
    assert L.load_bytes("schema: x\n" + text + "\n").others[0]["v"] == expected
