# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writer tests: ports of operator-registry alpha/declcfg/write_test.go (TestWriteJSON, TestWriteYAML, TestWriteFS)
plus go-yaml v2 emitter edge cases."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from lib.fbc import WRITE_EXPECTED, build_valid_declarative_config, require_data

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import UnsafeNameError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang import json as G
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang import yaml_emit as GY


@pytest.fixture(scope="module")
def write_input():
    return L.load_file(require_data(WRITE_EXPECTED / "TestWriteYAML.Success.yaml"))


def test_write_json_matches_opm(write_input):
    assert W.dumps_json(write_input) == (WRITE_EXPECTED / "TestWriteJSON.Success.json").read_text()


def test_write_yaml_matches_opm(write_input):
    assert W.dumps_yaml(write_input) == (WRITE_EXPECTED / "TestWriteYAML.Success.yaml").read_text()


def test_write_from_built_config_matches_opm():
    """The Go test writes buildValidDeclarativeConfig (others + deprecations) directly, unsorted input."""
    cfg = build_valid_declarative_config(include_unrecognized=True, include_deprecations=True)
    cfg.bundles.reverse()
    cfg.channels.reverse()
    assert W.dumps_yaml(cfg) == (WRITE_EXPECTED / "TestWriteYAML.Success.yaml").read_text()


def test_json_roundtrip_is_stable(write_input):
    text = W.dumps_json(write_input)
    assert W.dumps_json(L.load_bytes(text)) == text


def test_write_fs(tmp_path, write_input):
    written = W.write_fs(write_input, str(tmp_path), "json")
    rels = sorted(os.path.relpath(p, str(tmp_path)) for p in written)
    assert rels == ["anakin/catalog.json", "boba-fett/catalog.json", "catalog.json"]
    root_others = json.loads((tmp_path / "catalog.json").read_text().replace("}\n{", "},{").join("[]"))
    assert root_others == [{"schema": "custom.1"}, {"schema": "custom.2"}]
    again = L.load_fs(str(tmp_path))
    assert W.dumps_json(again) == W.dumps_json(write_input)
    # no temporary files left behind
    assert not list(tmp_path.rglob("*.tmp"))


def test_write_fs_yaml(tmp_path, write_input):
    W.write_fs(write_input, str(tmp_path), "yaml")
    assert (tmp_path / "anakin" / "catalog.yaml").read_text().startswith("---\ndefaultChannel: dark\n")


@pytest.mark.parametrize("name", ["..", ".", "a/b", "../x", "/abs", "a\x00b", ""])
def test_write_fs_rejects_unsafe_package_names(tmp_path, name):
    cfg = DeclarativeConfig(packages=[{"schema": "olm.package", "name": name or "x"}],
                            bundles=[{"schema": "olm.bundle", "name": "b", "package": name}])
    if name == "":
        W.write_fs(cfg, str(tmp_path / "out"), "json")
        return
    with pytest.raises(UnsafeNameError):
        W.write_fs(cfg, str(tmp_path / "out"), "json")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("catalog.json"))


def test_write_file_is_atomic(tmp_path, write_input):
    target = tmp_path / "catalog.yaml"
    target.write_text("old")
    W.write_file(write_input, str(target), "yaml")
    assert target.read_text() == (WRITE_EXPECTED / "TestWriteYAML.Success.yaml").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["catalog.yaml"]


def test_go_struct_shapes():
    cfg = DeclarativeConfig(
        packages=[{"schema": "olm.package", "name": "p"}],
        channels=[{"schema": "olm.channel", "name": "c", "package": "p"}],
        bundles=[{"schema": "olm.bundle", "name": "b", "package": "p", "relatedImages": [{"image": "i"}],
                  "properties": [{"type": "x"}]}],
        deprecations=[{"schema": "olm.deprecations", "package": "p", "entries": [{"reference": {"schema": "olm.package"}}]}])
    out = W.dumps_json(cfg)
    docs = [json.loads("{" + d) for d in out[1:].split("\n{")]
    assert docs[0] == {"schema": "olm.package", "name": "p", "defaultChannel": ""}
    assert docs[1] == {"schema": "olm.channel", "name": "c", "package": "p", "entries": None}
    assert docs[2] == {"schema": "olm.bundle", "name": "b", "package": "p", "image": "",
                       "properties": [{"type": "x", "value": None}], "relatedImages": [{"name": "", "image": "i"}]}
    assert docs[3] == {"schema": "olm.deprecations", "package": "p",
                       "entries": [{"reference": {"schema": "olm.package"}, "message": ""}]}
    assert list(docs[2]) == ["schema", "name", "package", "image", "properties", "relatedImages"]


def test_json_escaping_like_go():
    cfg = DeclarativeConfig(others=[{"s": "<a & b>\u2028\x01é", "schema": "x"}])
    assert W.dumps_json(cfg) == '{\n    "s": "<a & b>\\u2028\\u0001é",\n    "schema": "x"\n}\n'
    assert "\\u003ca \\u0026 b\\u003e" in W.dumps_json(cfg, escape_html=True)


def y(value):
    return GY.yaml_document({"k": value})


@pytest.mark.parametrize("value,expected", [
    ("plain", "k: plain\n"),
    ("", 'k: ""\n'),
    ("true", 'k: "true"\n'),
    ("y", 'k: "y"\n'),
    ("off", 'k: "off"\n'),
    ("null", 'k: "null"\n'),
    ("~", 'k: "~"\n'),
    ("123", 'k: "123"\n'),
    ("0x1F", 'k: "0x1F"\n'),
    ("1_000", 'k: "1_000"\n'),
    ("08", 'k: "08"\n'),
    ("1.5", 'k: "1.5"\n'),
    (".5", 'k: ".5"\n'),
    ("1e3", 'k: "1e3"\n'),
    ("1:20", 'k: "1:20"\n'),
    ("2026-02-09T13:23:51Z", 'k: "2026-02-09T13:23:51Z"\n'),
    ("2026-02-09", 'k: "2026-02-09"\n'),
    ("2026-02-30", "k: 2026-02-30\n"),
    ("v1.0.0", "k: v1.0.0\n"),
    (">=4.19", "k: '>=4.19'\n"),
    ("- item", "k: '- item'\n"),
    ("a: b", "k: 'a: b'\n"),
    ("a:b", "k: a:b\n"),
    ("a #b", "k: 'a #b'\n"),
    ("a#b", "k: a#b\n"),
    ("it's", "k: it's\n"),
    ("'quoted'", "k: '''quoted'''\n"),
    (" lead", "k: ' lead'\n"),
    ("trail ", "k: 'trail '\n"),
    ("tab\there", 'k: "tab\\there"\n'),
    ("cat \U0001F431", 'k: "cat \\U0001F431"\n'),
    ("line1\nline2", "k: |-\n  line1\n  line2\n"),
    ("line1\nline2\n", "k: |\n  line1\n  line2\n"),
    ("line1\n\n", "k: |+\n  line1\n\n"),
    (" indented\nx", "k: |2-\n   indented\n  x\n"),
    ("trailing space \nx", 'k: "trailing space \\nx"\n'),
    (True, "k: true\n"),
    (None, "k: null\n"),
    (12, "k: 12\n"),
    (0.5, "k: 0.5\n"),
    (1234567.5, "k: 1.2345675e+06\n"),
    (1e-07, "k: 1e-07\n"),
    ({}, "k: {}\n"),
    ([], "k: []\n"),
    ([1, [2, 3], {"a": 1}], "k:\n- 1\n- - 2\n  - 3\n- a: 1\n"),
    ({"b": [{"x": "y", "z": []}]}, "k:\n  b:\n  - x: \"y\"\n    z: []\n"),
])
def test_yaml_scalar_styles(value, expected):
    assert y(value) == expected


def test_yaml_folding_of_long_strings():
    words = " ".join(["word%d" % i for i in range(30)])
    out = y(words)
    lines = out.splitlines()
    assert lines[0].startswith("k: word0 ") and len(lines) > 1
    assert all(line.startswith("  ") for line in lines[1:])
    assert L.load_bytes("schema: x\n" + out).others[0]["k"] == words
    dq = y(words + "\t")
    assert dq.startswith('k: "word0') and "\n  " in dq
    assert L.load_bytes("schema: x\n" + dq).others[0]["k"] == words + "\t"
    double_space = y(("ab  " * 40).strip() + "\x01")
    assert L.load_bytes("schema: x\n" + double_space).others[0]["k"] == ("ab  " * 40).strip() + "\x01"


def test_yaml_key_order_is_go_yaml_natural_order():
    assert GY.yaml_sorted_keys(["b", "a10", "a9", "A", "_x", "a-b", "ab"]) == ["_x", "A", "a-b", "a9", "a10", "ab", "b"]
    assert GY.yaml_document({"z": 1, "a": 2}) == "a: 2\nz: 1\n"


def test_yaml_special_keys():
    assert GY.yaml_document({"": 1, "true": 2, "a b": 3}) == '"": 1\na b: 3\n"true": 2\n'
    assert GY.yaml_document({"multi\nline": 1}) == "? |-\n  multi\n  line\n: 1\n"


# Input and expected output verified with `opm render <dir> -o yaml` (operator-registry v1.71.0): go-yaml v2 typing
# of plain scalars (y/n/on keys and values, octal, hex, underscores, base-60, timestamps, merge keys, big ints).
GO_YAML_TYPING_INPUT = (
    '---\n'
    'schema: olm.package\n'
    'name: p\n'
    'defaultChannel: s\n'
    '---\n'
    'schema: custom.thing\n'
    'package: p\n'
    'a: y\n'
    'b: N\n'
    'c: on\n'
    'd: 0o17\n'
    'e: 017\n'
    'f: 0x1F\n'
    'g: 1_000\n'
    'h: 1:20\n'
    'i: 2026-02-09T13:23:51Z\n'
    'j: 2026-02-09\n'
    'k: 1.50\n'
    'l: .5\n'
    'm: 1e3\n'
    'n: 08\n'
    'o: ~\n'
    'q: "quoted"\n'
    'r: !!str 12\n'
    's: 12345678901234567890\n'
    't: -0b101\n'
    'u: +12\n'
    'v: 2026-02-30\n'
    'w: 1.0\n'
    'x: [1, 2.5, -3]\n'
    'y: {z: 1, b: 2, A: 3}\n'
    'z: |\n'
    '  multi\n'
    '  line\n'
    '"y": 1\n'
    '? complex\n'
    ': key\n'
    'yes: 1\n'
    '<<: {mergedkey: 1}\n'
)

GO_YAML_TYPING_EXPECTED = (
    '---\n'
    'defaultChannel: s\n'
    'name: p\n'
    'schema: olm.package\n'
    '---\n'
    'a: true\n'
    'b: false\n'
    'c: true\n'
    'complex: key\n'
    'd: 15\n'
    'e: 15\n'
    'f: 31\n'
    '"false": 8\n'
    'g: 1000\n'
    'h: "1:20"\n'
    'i: "2026-02-09T13:23:51Z"\n'
    'j: "2026-02-09"\n'
    'k: 1.5\n'
    'l: 0.5\n'
    'm: 1000\n'
    'mergedkey: 1\n'
    'o: null\n'
    'package: p\n'
    'q: quoted\n'
    'r: "12"\n'
    's: 12345678901234567000\n'
    'schema: custom.thing\n'
    't: -5\n'
    '"true": 1\n'
    'u: 12\n'
    'v: 2026-02-30\n'
    'w: 1\n'
    'x:\n'
    '- 1\n'
    '- 2.5\n'
    '- -3\n'
    '"y": 1\n'
    'z: |\n'
    '  multi\n'
    '  line\n'
)


def test_go_yaml_typing_matches_opm():
    assert W.dumps_yaml(L.load_bytes(GO_YAML_TYPING_INPUT)) == GO_YAML_TYPING_EXPECTED


# opm re-parses its JSON as YAML before printing YAML; a raw NEL (U+0085) in a string is then folded like a
# line break. Outputs verified with `opm render -o yaml` (v1.71.0).
@pytest.mark.parametrize("value,expected", [
    ("a\x85#b", "k: 'a #b'\n"),
    ("\x85a", "k: ' a'\n"),
    ("a\x85", "k: 'a '\n"),
    ("a \x85 b", "k: a b\n"),
    ("a\x85\x85b", "k: |-\n  a\n  b\n"),
    ("a\x85\x85\x85b", "k: |-\n  a\n\n  b\n"),
    ("\x85", "k: ' '\n"),
    ("a\x85 \x85b", "k: |-\n  a\n  b\n"),
    ("a\x85- b", "k: a - b\n"),
    ("x\x85---", "k: x ---\n"),
    ("a\u2028b", "k: 'a\u2028  b'\n"),
])
def test_nel_is_folded_like_opm(value, expected):
    assert y(value) == expected


@pytest.mark.parametrize("value,expected", [
    (3.0389163459791373e-07, "3.0389163459791373e-7"),
    (3.5756180823427176e-05, "0.000035756180823427176"),
    (1e21, "1e+21"),
    (123456.789, "123456.789"),
    (-0.0, "-0"),
    (0.5, "0.5"),
])
def test_json_floats_like_go(value, expected):
    # verified with `opm render -o json` (v1.71.0)
    assert G.go_json_float(value) == expected
    assert W.json_document({"v": value}) == '{\n    "v": %s\n}\n' % expected


# ----------------------------------------------------------------------------------------- fast paths

def _stdlib_indented_json(obj):
    from json import encoder as E

    iterencode = E._make_iterencode({}, G._unserializable, E.encode_basestring, "    ", G.go_json_float, ": ", ",",
                                    False, False, False)
    return "".join(iterencode(obj, 0))


JSON_VALUES = [
    {}, [], {"a": {}}, {"a": []}, [[], {}], {"s": "x\"y\\z\u2028\n<&>", "n": None, "t": True, "f": False},
    {"i": 0, "neg": -12, "big": 2 ** 70, "fl": 1.5, "tiny": 1e-7, "huge": 1e21, "whole": 3.0},
    [1, "two", [3, [4, {"five": [6]}]], None], {"ü": ["é", {"k": ""}]},
]


@pytest.mark.parametrize("obj", JSON_VALUES)
def test_fast_json_encoder_matches_stdlib_indenting_encoder(obj):
    assert G._json_text(obj) == _stdlib_indented_json(obj)


def test_fast_json_encoder_leaves_unusual_values_to_stdlib():
    # tuples and non-string keys are not produced by the loader; the standard encoder still handles them
    assert G._json_text({"t": (1, 2)}) == _stdlib_indented_json({"t": (1, 2)})
    assert G._json_text({1: "x", None: "y"}) == _stdlib_indented_json({1: "x", None: "y"})
    with pytest.raises(W.WriteError, match="unsupported value"):
        W.json_document({"x": float("nan")})
    with pytest.raises(W.WriteError, match="unsupported value"):
        W.json_document({"x": object()})


def test_positive_character_classes_match_the_negated_definitions():
    import re

    # go-yaml v2's is_printable, negated, as first written; the module compiles faster positive equivalents
    special = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
    dq_escape = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]|[\"\\\\\x85\u2028\u2029]")
    for code in range(0x110000):
        ch = chr(code)
        fast = GY._SPECIAL_ASCII_RE if ch.isascii() else GY._SPECIAL_RE
        assert bool(fast.match(ch)) == bool(special.match(ch)), hex(code)
        assert bool(GY._DQ_ESCAPE_RE.match(ch)) == bool(dq_escape.match(ch)), hex(code)
