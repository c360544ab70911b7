# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of operator-pipelines tests/entrypoints/test_add_bundle_to_fbc.py template cases + removal/heads."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FbcTemplateError,
    ReleaseConfigError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import render_basic_template
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import (
    add_bundle,
    add_bundle_semver,
    channel_entry,
    channel_heads,
    latest_in_channel,
    remove_bundle,
    remove_bundle_semver,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import load_first_document

HIVE = str(data_path("community-operators-prod", "operators", "hive-operator", "catalog-templates", "basic.yaml"))


def test_basic_create():
    tpl, changed = add_bundle(None, "quay.io/x/op:1.0.0", "op.v1.0.0", ["alpha", "beta"], replaces="op.v0.9.0",
                              skips=["op.v0.8.0"], skip_range=">=0.1.0 <1.0.0", package="op", default_channel="beta")
    assert changed
    assert tpl == {"schema": "olm.template.basic", "entries": [
        {"schema": "olm.package", "name": "op", "defaultChannel": "beta"},
        {"schema": "olm.channel", "name": "alpha", "package": "op", "entries": [
            {"name": "op.v1.0.0", "replaces": "op.v0.9.0", "skips": ["op.v0.8.0"], "skipRange": ">=0.1.0 <1.0.0"}]},
        {"schema": "olm.channel", "name": "beta", "package": "op", "entries": [
            {"name": "op.v1.0.0", "replaces": "op.v0.9.0", "skips": ["op.v0.8.0"], "skipRange": ">=0.1.0 <1.0.0"}]},
        {"schema": "olm.bundle", "image": "quay.io/x/op:1.0.0"},
    ]}
    tpl2 = add_bundle(None, "i", "op.v1", ["alpha"], package="op")[0]
    assert tpl2["entries"][0]["defaultChannel"] == "alpha"


def test_basic_amend_adds_channel_entry_bundle_and_is_idempotent():
    tpl = add_bundle(None, "i:1", "op.v1", ["alpha"], package="op")[0]
    tpl, changed = add_bundle(tpl, "i:2", "op.v2", ["alpha", "beta"], replaces="op.v1")
    assert changed
    assert tpl["entries"][0] == {"schema": "olm.package", "name": "op", "defaultChannel": "alpha"}
    assert tpl["entries"][1]["entries"] == [{"name": "op.v1"}, {"name": "op.v2", "replaces": "op.v1"}]
    assert tpl["entries"][3] == {"schema": "olm.channel", "name": "beta", "package": "op",
                                 "entries": [{"name": "op.v2", "replaces": "op.v1"}]}
    assert tpl["entries"][2] == {"schema": "olm.bundle", "image": "i:1"}
    assert tpl["entries"][4] == {"schema": "olm.bundle", "image": "i:2"}
    before = copy.deepcopy(tpl)
    tpl, changed = add_bundle(tpl, "i:2", "op.v2", ["alpha", "beta"], replaces="op.v1")
    assert not changed and tpl == before


def test_basic_amend_different_entry_is_appended():
    tpl = add_bundle(None, "i:1", "op.v1", ["alpha"], package="op")[0]
    tpl, changed = add_bundle(tpl, "i:1", "op.v1", ["alpha"], skips=["op.v0"])
    assert changed and tpl["entries"][1]["entries"] == [{"name": "op.v1"}, {"name": "op.v1", "skips": ["op.v0"]}]


def test_edit_errors():
    with pytest.raises(ReleaseConfigError):
        add_bundle(None, "i", "op.v1", [], package="op")
    with pytest.raises(ReleaseConfigError):
        add_bundle(None, "i", "op.v1", ["a", "a"], package="op")
    with pytest.raises(ReleaseConfigError):
        add_bundle(None, "i", "op.v1", ["a"])
    with pytest.raises(ReleaseConfigError, match="defaultChannel"):
        add_bundle(None, "i", "op.v1", ["a"], package="op", default_channel="b")
    with pytest.raises(FbcTemplateError, match="single path element"):
        add_bundle(None, "i", "op.v1", ["a"], package="../../etc")
    with pytest.raises(FbcTemplateError, match="single path element"):
        add_bundle(None, "i", "../op.v1", ["a"], package="op")
    with pytest.raises(ReleaseConfigError):
        add_bundle({"schema": "olm.semver"}, "i", "op.v1", ["a"])
    with pytest.raises(ReleaseConfigError):
        channel_entry("x", skips="notalist")
    with pytest.raises(ReleaseConfigError):
        add_bundle({"schema": "olm.template.basic", "entries": []}, "i", "op.v1", ["a"])


def test_semver_create_and_amend():
    tpl, changed = add_bundle_semver(None, "i:1", ["Fast", "Candidate"])
    assert changed and tpl == {"Schema": "olm.semver", "GenerateMajorChannels": True, "GenerateMinorChannels": True,
                               "Fast": {"Bundles": [{"Image": "i:1"}]}, "Candidate": {"Bundles": [{"Image": "i:1"}]}}
    tpl, changed = add_bundle_semver(tpl, "i:2", ["Stable", "Fast"])
    assert changed and tpl["Stable"] == {"Bundles": [{"Image": "i:2"}]}
    assert tpl["Fast"]["Bundles"] == [{"Image": "i:1"}, {"Image": "i:2"}]
    before = copy.deepcopy(tpl)
    assert add_bundle_semver(tpl, "i:2", ["Stable", "Fast"]) == (before, False)
    with pytest.raises(ReleaseConfigError):
        add_bundle_semver(tpl, "i:3", ["stable"])
    with pytest.raises(ReleaseConfigError):
        add_bundle_semver({"schema": "olm.template.basic"}, "i:3", ["Stable"])
    tpl, changed = remove_bundle_semver(tpl, "i:2")
    assert changed and tpl["Fast"]["Bundles"] == [{"Image": "i:1"}] and tpl["Stable"]["Bundles"] == []


def test_remove_bundle_relinks():
    tpl = add_bundle(None, "i:1", "op.v1", ["alpha"], package="op")[0]
    add_bundle(tpl, "i:2", "op.v2", ["alpha"], replaces="op.v1")
    add_bundle(tpl, "i:3", "op.v3", ["alpha"], replaces="op.v2", skips=["op.v1"])
    assert latest_in_channel(tpl, "alpha") == "op.v3"
    tpl, changed = remove_bundle(tpl, image="i:2", name="op.v2")
    assert changed
    assert tpl["entries"][1]["entries"] == [{"name": "op.v1"},
                                            {"name": "op.v3", "replaces": "op.v1", "skips": ["op.v1"]}]
    assert {"schema": "olm.bundle", "image": "i:2"} not in tpl["entries"]
    assert remove_bundle(tpl, image="nope")[1] is False
    tpl = remove_bundle(tpl, name="op.v1")[0]
    assert tpl["entries"][1]["entries"] == [{"name": "op.v3", "skips": ["op.v1"]}]
    with pytest.raises(ReleaseConfigError):
        remove_bundle(tpl)


def test_heads_errors():
    tpl = add_bundle(None, "i:1", "op.v1", ["alpha"], package="op")[0]
    add_bundle(tpl, "i:2", "op.v2", ["alpha"])
    assert channel_heads(tpl, "alpha") == ["op.v1", "op.v2"]
    with pytest.raises(ReleaseConfigError, match="multiple channel heads found in channel \"alpha\": op.v1, op.v2"):
        latest_in_channel(tpl, "alpha")
    with pytest.raises(ReleaseConfigError, match="not found"):
        latest_in_channel(tpl, "beta")


def test_real_hive_template_release_next_version():
    with open(HIVE, "rb") as f:
        tpl = load_first_document(f.read())
    head = latest_in_channel(tpl, "alpha")
    assert head == "hive-operator.v1.2.5274-c04833d"
    n_before = len(tpl["entries"])
    img = "quay.io/community-operator-pipeline-prod/hive-operator:1.2.5300-deadbee"
    tpl, changed = add_bundle(tpl, img, "hive-operator.v1.2.5300-deadbee", ["alpha"], replaces=head)
    assert changed and len(tpl["entries"]) == n_before + 1
    assert latest_in_channel(tpl, "alpha") == "hive-operator.v1.2.5300-deadbee"

    def renderer(image):
        return DeclarativeConfig(bundles=[{"schema": "olm.bundle", "name": image, "image": image}])
    out = render_basic_template(tpl, renderer)
    assert out.bundles[-1]["image"] == img
