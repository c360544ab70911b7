# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fbc.golang.json: one implementation per Go behaviour, and its callers agreeing with it.

Several tables hold the inputs on which the former per-module helpers disagreed (noted per row).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import csv_metadata
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import decode as DEC
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FBCError,
    LoadError,
    MigrationError,
    TemplateParseError,
    WriteError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang import json as G
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model import properties as M
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template import semver as S
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import parse_basic_template
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import remove_bundle_semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import detect_template_schema
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import meta_of

LONG_S = "\u017f"  # folds to "s" in encoding/json
KELVIN = "\u212a"  # folds to "k" in encoding/json
SHARP_S = "\u00df"  # str.casefold() -> "ss"; encoding/json: no ASCII fold
LIGATURE_ST = "\ufb06"  # str.casefold() -> "st"; encoding/json: no ASCII fold

# ----------------------------------------------------------------------------------------- go_quote


@pytest.mark.parametrize("value,expected", [
    ("plain", '"plain"'),
    ('a"b\\c', '"a\\"b\\\\c"'),
    ("\n\t\r\a\b\f\v", '"\\n\\t\\r\\a\\b\\f\\v"'),
    ("\x01\x7f", '"\\x01\\x7f"'),
    ("é\u2028\u00a0", '"é\\u2028\\u00a0"'),
    ("\U0001f600\U000e0001", '"\U0001f600\\U000e0001"'),
    ("\ud800", '"\\ufffd"'),
    # former semver.go_quote raised TypeError here; former basic.q quoted str(value): now one behaviour
    (5, '"5"'),
    (None, '"None"'),
])
def test_go_quote(value, expected):
    assert G.go_quote(value) == expected


def test_go_quote_is_used_for_percent_q_in_loader_messages():
    # the loader quoted with json.dumps before (\u0001); opm's %q gives \x01
    doc = {"schema": "olm.bundle", "name": "b", "package": "p\x01", "image": "i",
           "properties": [{"type": "olm.bundle.object", "value": 3}]}
    with pytest.raises(LoadError) as info:
        L.add_document(DeclarativeConfig(), doc)
    assert 'package "p\\x01", bundle "b": parse property at index 0 as bundle object' in str(info.value)


# ----------------------------------------------------------------------------------------- go_sort_key

def test_go_sort_key_is_bytewise():
    names = ["b", "B", "a", "\u00e9", "\uffff", "\U00010000", "", "a\x00"]
    assert sorted(names, key=G.go_sort_key) == sorted(names, key=lambda s: s.encode("utf-8"))
    assert G.go_sort_key("\ud800") == b"\xed\xa0\x80"  # a lone surrogate still sorts (no exception)


# ----------------------------------------------------------------------------------------- json_kind

@pytest.mark.parametrize("value,expected", [
    (True, "bool"),
    (0, "number"),
    (1.5, "number"),
    ("", "string"),
    ([], "array"),
    ({}, "object"),
    # load._json_kind said "value", model._json_kind "object", template.util.go_json_kind "null":
    (None, "null"),
    # load: "value", model: "object", util: "null" -> the kind of go_jsonify's conversion:
    ((1, 2), "array"),
    ({1, 2}, "array"),
    (b"x", "string"),
    (datetime.date(2020, 1, 2), "string"),
    # load: "value", model: "object", util: "null":
    (object(), "value"),
])
def test_json_kind(value, expected):
    assert G.json_kind(value) == expected


def test_json_kind_callers_agree():
    # the same non-string in the loader's typed decode, the model's property decode, Meta and the migration
    with pytest.raises(ValueError, match="cannot unmarshal array into Go struct field Package.name of type string"):
        DEC.decode_package({"schema": "olm.package", "name": ["x"]})
    with pytest.raises(FBCError, match="cannot unmarshal array into Go struct field Package.version of type string"):
        M.parse_properties([{"type": "olm.package", "value": {"packageName": "p", "version": ["x"]}}])
    with pytest.raises(TemplateParseError, match="cannot unmarshal array into Go value of type map"):
        meta_of(["x"])
    with pytest.raises(MigrationError, match="cannot unmarshal array into Go value of type string"):
        csv_metadata({"spec": {"displayName": ["x"]}})


# ----------------------------------------------------------------------------------------- key folding

@pytest.mark.parametrize("key,folded", [
    ("schema", "schema"),
    ("SCHEMA", "schema"),
    ("defaultChannel", "defaultchannel"),
    (LONG_S + "chema", "schema"),  # str.lower() kept U+017F: the loader and the model missed this key
    ("pac" + KELVIN + "age", "package"),
    ("me" + SHARP_S + "age", "me" + SHARP_S + "age"),  # str.casefold() gave "message": get_ci matched it
    ("in" + LIGATURE_ST + "allModes", "in" + LIGATURE_ST + "allmodes"),
    ("\u0130mage", "\u0130mage"),  # dotted capital I folds to itself (caseOrbit)
    ("\u0131mage", "\u0131mage"),  # dotless i too
    ("\u00c9t\u00c9", "\u00c9t\u00c9"),  # non-ASCII kept: only compared with ASCII field names
])
def test_go_fold_name(key, folded):
    assert G.go_fold_name(key) == folded


def test_cases_fold_is_full_folding_for_meta():
    assert G.cases_fold("me" + SHARP_S + "age") == "message"
    assert G.cases_fold(LONG_S + "CHEMA") == "schema"
    # opm's Meta rejects keys that collide under cases.Fold (even where encoding/json would not match them)
    with pytest.raises(LoadError, match=r'duplicate keys for key "message": \[message meßage\]'):
        L.load_bytes('{"schema": "olm.package", "message": 1, "me\u00dfage": 2}')


# (object, expected fold_lookup(obj, ("name", "skips"), nullable=("skips",)))
FOLD_TABLE = [
    ({"name": "a"}, {"name": "a"}),
    # last matching key wins, exact or not: former get_ci/meta_value returned "a" (exact preferred)
    ({"name": "a", "NAME": "b"}, {"name": "b"}),
    ({"NAME": "b", "name": "a"}, {"name": "a"}),
    ({"Name": "a", "nAmE": "b"}, {"name": "b"}),
    # null into a string field is a no-op (the earlier value survives); former _fold_lookup stored None
    ({"name": "a", "Name": None}, {"name": "a"}),
    ({"name": None}, {}),
    # null into a slice resets it
    ({"skips": ["x"], "Skips": None}, {"skips": None}),
    # U+017F matches "s" (former _fold_lookup used lower() and missed it)
    ({LONG_S + "kips": ["x"]}, {"skips": ["x"]}),
    # U+00DF does not match "ss" (former get_ci used casefold() and matched "ss"-containing names)
    ({"na" + SHARP_S: "x"}, {}),
    # non-string keys are skipped (former _fold_lookup raised AttributeError)
    ({1: "x", "name": "a"}, {"name": "a"}),
    ({"other": 1}, {}),
]


@pytest.mark.parametrize("obj,expected", FOLD_TABLE)
def test_fold_lookup(obj, expected):
    assert G.fold_lookup(obj, ("name", "skips"), nullable=("skips",)) == expected
    assert G.get_ci(obj, "name") == expected.get("name")
    matches = list(G.fold_matches(obj, ("name", "skips")))
    assert all(f in ("name", "skips") for f, _v in matches)


def test_fold_lookup_without_nullable_lets_null_win():
    assert G.fold_lookup({"name": "a", "NAME": None}, ("name",)) == {"name": None}
    assert G.get_ci({"entries": [1], "Entries": None}, "entries", nullable=True) is None
    assert G.get_ci({"entries": [1], "Entries": None}, "entries") == [1]
    assert G.get_ci({}, "image", "") == ""


@pytest.mark.parametrize("obj,expected", [
    ({"name": "c", "Name": "d"}, "d"),
    ({"Name": "d", "name": "c"}, "c"),
    ({"name": "c", "NAME": None}, "c"),
    ({LONG_S + "kipRange": "<1.0.0"}, None),  # only "name" is looked up here
])
def test_fold_callers_agree_on_nested_struct_keys(obj, expected):
    # the loader's typed decode of a channel entry, the model's property struct decode and get_ci pick the same key
    entry = dict(obj)
    cfg = DeclarativeConfig()
    L.add_document(cfg, {"schema": "olm.channel", "name": "ch", "package": "p", "entries": [entry]})
    assert cfg.channels[0]["entries"][0].get("name") == expected
    assert G.get_ci(entry, "name") == expected
    props = M.parse_properties([{"type": "olm.package", "value": {"package" + k: v for k, v in obj.items()}}])
    assert (props.packages[0]["packageName"] or None) == expected


def test_fold_callers_agree_on_unicode_keys():
    # U+017F / U+212A match like encoding/json in every decoder; U+00DF never does
    cfg = DeclarativeConfig()
    L.add_document(cfg, {"schema": "olm.channel", "name": "ch", "package": "p",
                         "entries": [{"name": "a", LONG_S + "kips": ["x"], "ski" + "p" + SHARP_S: 1}]})
    assert cfg.channels[0]["entries"][0] == {"name": "a", "skips": ["x"]}
    props = M.parse_properties([{"type": "olm.package", "value": {"pac" + KELVIN + "ageName": "p", "version": "1"}}])
    assert props.packages[0]["packageName"] == "p"
    with pytest.raises(FBCError, match="CSVMetadata.keywords of type"):
        M.parse_properties([{"type": "olm.csv.metadata", "value": {KELVIN + "eywords": 1}}])
    # casefold() would have matched U+FB06 to "st" in installModes; encoding/json ignores the key
    M.parse_properties([{"type": "olm.csv.metadata", "value": {"in" + LIGATURE_ST + "allModes": 1}}])
    tpl = S.parse_semver_template({LONG_S + "chema": "olm.semver", "Stable": {"Bundles": [{"Image": "r/x:1"}]}})
    assert tpl.bundles["stable"] == ["r/x:1"]
    with pytest.raises(TemplateParseError, match="unknown field"):
        S.parse_semver_template({"schema": "olm.semver", "me" + SHARP_S + "age": 1})
    template = {"schema": "olm.semver", LONG_S + "table": {"bundles": [{"image": "r/x:1"}]}}
    assert remove_bundle_semver(template, "r/x:1")[1] is True


def test_template_schema_last_key_wins_everywhere():
    # schema.go detectSchema and basic's parseSpec decode into structs: the last key wins in both
    doc = {"schema": "olm.semver", "Schema": "olm.template.basic", "entries": []}
    assert detect_template_schema(doc) == "olm.template.basic"
    assert parse_basic_template(doc)["schema"] == "olm.template.basic"
    assert G.get_ci(doc, "schema") == "olm.template.basic"
    # a null after the schema is ignored by both
    doc = {"schema": "olm.template.basic", "SCHEMA": None}
    assert detect_template_schema(doc) == "olm.template.basic"
    assert parse_basic_template(doc)["schema"] == "olm.template.basic"


@pytest.mark.parametrize("doc,stable", [
    ({"stable": {"bundles": [{"image": "a:1"}]}, "Stable": {}}, ["a:1"]),  # a struct decoded again is updated
    ({"stable": {"bundles": [{"image": "a:1"}]}, "Stable": None}, ["a:1"]),  # null into a struct: no-op
    ({"stable": {"bundles": [{"image": "a:1"}], "Bundles": None}}, []),  # null into a slice: reset
    ({"stable": {"bundles": [{"image": "a:1"}], "Bundles": [{"image": "b:1"}]}}, ["b:1"]),  # last key wins
    ({"stable": {"bundles": [{"image": "a:1", "IMAGE": "b:1"}]}}, ["b:1"]),
])
def test_semver_template_decodes_like_a_go_struct(doc, stable):
    assert S.parse_semver_template(dict(doc, schema="olm.semver")).bundles["stable"] == stable


def test_meta_lookup_for_others_matches_loader():
    cfg = L.load_bytes('{"schema": "custom", "PACKAGE": "p", "name": "n"}')
    assert cfg.others[0]["PACKAGE"] == "p"
    assert cfg.package_names() == ["p"]
    assert W.meta_str(cfg.others[0], "package") == "p"
    assert L.meta_fields(cfg.others[0]) == ("custom", "p", "n")


# ----------------------------------------------------------------------------------------- go_jsonify

@pytest.mark.parametrize("value,expected", [
    ({3: "a", False: "b", None: "c", 2.0: "d"}, {"3": "a", "false": "b", "null": "c", "2": "d"}),
    ([1.0, 1.5, 2 ** 70 * 1.0], [1, 1.5, 2 ** 70 * 1.0]),
    (datetime.date(2020, 1, 2), "2020-01-02"),
    (b"x", "x"),
    ((1, 2), [1, 2]),
])
def test_go_jsonify(value, expected):
    assert G.go_jsonify(value) == expected


def test_go_jsonify_returns_unchanged_objects():
    doc = {"a": [1, "x", {"b": None}]}
    assert G.go_jsonify(doc) is doc


# ----------------------------------------------------------------------------------------- encoding

@pytest.mark.parametrize("text,escape_html,expected", [
    ('"<a&b>"', True, '"\\u003ca\\u0026b\\u003e"'),
    ('"<a&b>"', False, '"<a&b>"'),
    # U+2028/2029 are escaped unconditionally: former go_html_escape only with HTML escaping, compact_json never
    ('"\u2028\u2029"', False, '"\\u2028\\u2029"'),
    ('"\u2028"', True, '"\\u2028"'),
])
def test_go_json_escape(text, escape_html, expected):
    assert G.go_json_escape(text, escape_html) == expected


@pytest.mark.parametrize("value,expected", [
    ({"b": 1, "a": [True, None, "x"]}, '{"b":1,"a":[true,null,"x"]}'),
    ({"s": "<&>"}, '{"s":"\\u003c\\u0026\\u003e"}'),
    ({"s": "\u2028"}, '{"s":"\\u2028"}'),
    # Go's float text (the former template.util.go_marshal printed Python's repr: 1e-05, 1e+16, 1e-07)
    ({"f": 3.5756180823427176e-05}, '{"f":0.000035756180823427176}'),
    ({"f": 1.5e16}, '{"f":15000000000000000}'),
    ({"f": 1e-07}, '{"f":1e-7}'),
    ({"f": 1e21}, '{"f":1e+21}'),
    ({"f": -0.0}, '{"f":-0}'),
    ({"f": 2.0, "g": [1.0, -3.0, 0.5]}, '{"f":2,"g":[1,-3,0.5]}'),
    # number-like text inside strings is left alone
    ({"s": "1e+5 1e-05 NaN Infinity"}, '{"s":"1e+5 1e-05 NaN Infinity"}'),
    ({"s\"1e-05": 1e-05}, '{"s\\"1e-05":0.00001}'),
])
def test_go_marshal(value, expected):
    assert G.go_marshal(value) == expected


def test_go_marshal_options():
    assert G.go_marshal({"b": 1, "a": "<"}, sort_keys=True, escape_html=False) == '{"a":"<","b":1}'
    for bad in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(WriteError, match="json: unsupported value"):
            G.go_marshal({"x": bad})
        with pytest.raises(WriteError, match="json: unsupported value"):
            G.go_marshal_indent({"x": bad})


@pytest.mark.parametrize("value", [
    {"a": 1e-05, "b": ["<", "\u2028", None, True, 1.5e16], "c": {}},
    [{"x": "y"}, []],
    {"k": -0.0, "t": (1, 2)},
])
def test_go_marshal_and_indent_agree_with_each_other_and_the_writer(value):
    compact = G.go_marshal(value, escape_html=False)
    indented = G.go_marshal_indent(value, escape_html=False)
    assert json.loads(compact) == json.loads(indented)
    assert compact == "".join(line.strip() for line in indented.splitlines()).replace('": ', '":')
    assert W.json_document(value) == indented + "\n"
    assert G.go_marshal_indent(value) == G.go_json_escape(indented, True)


def test_loader_error_blobs_use_go_marshal():
    # "missing root schema field" shows the object as opm's Encoder (SetEscapeHTML(false)) writes it
    with pytest.raises(LoadError) as info:
        L.add_document(DeclarativeConfig(), {"b": 1e-05, "a": "<\u2028"})
    assert "object '{\"a\":\"<\\u2028\",\"b\":0.00001}\n' is missing root schema field" in str(info.value)
