# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: the loader never crashes with anything but LoadError, and writer output always loads back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

YAML_TOKENS = st.sampled_from([
    "schema", "olm.package", "olm.bundle", "olm.channel", "olm.deprecations", "name", "package", "entries",
    "properties", "value", "type", ":", " ", "\n", "- ", "---\n", "{", "}", "[", "]", ",", "&a", "*a", "!!binary",
    "\"", "'", "|", ">", "#", "? ", "\t", "1", "0x1", ".inf", "y", "~", "null", "2026-01-01", "\\u0000", "é", "\U0001F431",
    "icon", "base64data", "image", "relatedImages", "skips", "replaces", "data", "olm.bundle.object",
])


def _assert_clean(data):
    try:
        cfg = L.load_bytes(data, source="fuzz")
    except LoadError as e:
        assert str(e).startswith("fuzz: ")
        return None
    assert isinstance(cfg, DeclarativeConfig)
    return cfg


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes(data):
    _assert_clean(data)


@SETTINGS
@given(st.lists(YAML_TOKENS, max_size=60).map("".join))
def test_yaml_token_soup(text):
    _assert_clean(text)


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 60, 2 ** 60), st.text(max_size=20),
                         st.floats(allow_nan=False, allow_infinity=False, width=64))
json_values = st.recursive(json_scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                                st.dictionaries(st.text(max_size=8), kids, max_size=4)),
                           max_leaves=12)


@SETTINGS
@given(st.dictionaries(st.sampled_from(["schema", "Schema", "name", "package", "entries", "properties", "icon",
                                        "image", "relatedImages", "defaultChannel", "x"]), json_values, max_size=6))
def test_structured_json_documents(doc):
    _assert_clean(json.dumps(doc))
    _assert_clean(json.dumps(doc) + json.dumps(doc))


# Strings the writer must round-trip exactly: anything except lone surrogates (not valid UTF-8) and NEL,
# which opm's YAML output folds on purpose (see test_write.py::test_nel_is_folded_like_opm).
safe_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x85"), max_size=120)
doc_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2 ** 53, 2 ** 53), safe_text,
              st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(safe_text, kids, max_size=4)),
    max_leaves=16)


@SETTINGS
@given(st.dictionaries(safe_text, doc_values, max_size=6))
def test_yaml_writer_output_loads_back_identically(extra):
    doc = dict(extra)
    doc["schema"] = "x.custom"
    doc = {k: v for k, v in doc.items() if k.casefold() not in ("package", "name") or k == "schema"}
    if any(k.casefold() == "schema" for k in doc if k != "schema"):
        return
    if len(set(k.casefold() for k in doc)) != len(doc):
        return  # keys equal but for case are duplicate keys to opm: a load error (load.meta_fields), not a round trip
    cfg = DeclarativeConfig(others=[L.load_bytes(json.dumps(doc)).others[0]])
    text = W.dumps_yaml(cfg)
    again = L.load_bytes(text)
    assert again.others == cfg.others
    assert W.dumps_yaml(again) == text
    assert L.load_bytes(W.dumps_json(cfg)).others == cfg.others
