"""fbc.action.filter: oc-mirror v2's operator selection (catalog-filter v0.0.5's rules) on a small catalog built here,
one row per rule, and the errors where this collection is stricter than oc-mirror."""

import pytest
from lib.fbc import selection_catalog as catalog

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import filter as flt


def kept(cfg):
    """{(package, channel): [entry versions]} and the default channels."""
    channels = {(c["package"], c["name"]): [e["name"].split(".v", 1)[1] for e in c["entries"]] for c in cfg.channels}
    return channels, {p["name"]: p["defaultChannel"] for p in cfg.packages}


def pkg(name="demo", **fields):
    return dict({"name": name}, **fields)


ROWS = [
    # selection, kept channels, default channels
    ({}, {("demo", "stable"): ["0.4.0"], ("demo", "fast"): ["0.5.0-rc.1"], ("other", "alpha"): ["1.1.0"]}, {"demo": "stable", "other": "alpha"}),
    # a package by name: the head of every one of its channels, not only the default's
    ({"packages": [pkg()]}, {("demo", "stable"): ["0.4.0"], ("demo", "fast"): ["0.5.0-rc.1"]}, {"demo": "stable"}),
    ({"packages": [pkg(channels=[{"name": "fast"}], default_channel="fast")]}, {("demo", "fast"): ["0.5.0-rc.1"]}, {"demo": "fast"}),
    (
        {"full": True, "packages": [pkg()]},
        {("demo", "stable"): ["0.1.0", "0.2.0", "0.2.1", "0.3.0", "0.4.0"], ("demo", "fast"): ["0.4.0", "0.5.0-rc.1"]},
        {"demo": "stable"},
    ),
    # min only: from the lowest chain node reaching the bound up to the head, with the in-range skips
    ({"packages": [pkg(channels=[{"name": "stable", "min_version": "0.2.1"}])]}, {("demo", "stable"): ["0.2.1", "0.3.0", "0.4.0"]}, {"demo": "stable"}),
    # max only: the head goes down to the node that reaches every bundle in range - 0.3.0, out of range, skips 0.2.1
    (
        {"packages": [pkg(channels=[{"name": "stable", "max_version": "0.2.1"}])]},
        {("demo", "stable"): ["0.1.0", "0.2.0", "0.2.1", "0.3.0"]},
        {"demo": "stable"},
    ),
    (
        {"packages": [pkg(channels=[{"name": "stable", "min_version": "0.2.0", "max_version": "0.3.0"}])]},
        {("demo", "stable"): ["0.2.0", "0.2.1", "0.3.0"]},
        {"demo": "stable"},
    ),
    # min == max: exactly that bundle
    ({"packages": [pkg(channels=[{"name": "stable", "min_version": "0.2.0", "max_version": "0.2.0"}])]}, {("demo", "stable"): ["0.2.0"]}, {"demo": "stable"}),
    # a package range applies to every kept channel; a range without a prerelease part matches no prerelease
    ({"packages": [pkg(min_version="0.4.0")]}, {("demo", "stable"): ["0.4.0"], ("demo", "fast"): ["0.4.0"]}, {"demo": "stable"}),
    (
        {"packages": [pkg(channels=[{"name": "fast", "min_version": "0.5.0-rc.0"}], default_channel="fast")]},
        {("demo", "fast"): ["0.5.0-rc.1"]},
        {"demo": "fast"},
    ),
    # what a cluster runs: the path from it to the kept head is kept too (a channel without that version is as before)
    (
        {"packages": [pkg(installed_version="0.2.0")]},
        {("demo", "stable"): ["0.2.0", "0.2.1", "0.3.0", "0.4.0"], ("demo", "fast"): ["0.5.0-rc.1"]},
        {"demo": "stable"},
    ),
    (
        {"packages": [pkg(installed_version="0.2.0", channels=[{"name": "stable", "min_version": "0.4.0", "max_version": "0.4.0"}])]},
        {("demo", "stable"): ["0.2.0", "0.2.1", "0.3.0", "0.4.0"]},
        {"demo": "stable"},
    ),
]


@pytest.mark.parametrize("selection, channels, defaults", ROWS)
def test_selection(selection, channels, defaults):
    cfg, warnings = flt.filter_catalog(catalog(), selection)
    assert kept(cfg) == (channels, defaults)
    names = {(c["package"], e["name"]) for c in cfg.channels for e in c["entries"]}
    assert [(b["package"], b["name"]) for b in cfg.bundles] == sorted(names)  # exactly the kept entries' bundles
    assert warnings == []


def test_edges_are_kept_as_they_are_and_deprecations_follow_what_is_kept():
    cfg, _warnings = flt.filter_catalog(catalog(), {"packages": [pkg(channels=[{"name": "stable", "min_version": "0.2.1"}])]})
    (stable,) = cfg.channels
    assert stable["entries"][1] == {"name": "demo.v0.3.0", "replaces": "demo.v0.2.0", "skips": ["demo.v0.2.1"]}  # 0.2.0 is gone
    (deprecation,) = cfg.deprecations
    assert [e["reference"]["schema"] for e in deprecation["entries"]] == ["olm.package"]  # fast and 0.1.0 are gone
    assert flt.filter_catalog(catalog(), {})[0].deprecations[0]["entries"][1]["reference"] == {"schema": "olm.channel", "name": "fast"}


def test_full_without_packages_is_the_catalog_unchanged():
    source = catalog()
    cfg, _warnings = flt.filter_catalog(source, {"full": True})
    assert (cfg.packages, cfg.channels, cfg.bundles, cfg.deprecations) == (source.packages, source.channels, source.bundles, source.deprecations)


def test_an_unlisted_channel_a_package_range_empties_is_left_out_with_a_warning():
    cfg, warnings = flt.filter_catalog(catalog(), {"packages": [pkg(max_version="0.3.0")]})
    assert kept(cfg)[0] == {("demo", "stable"): ["0.1.0", "0.2.0", "0.2.1", "0.3.0"]}
    assert warnings == ["package demo channel fast: no bundle in version range <=0.3.0; the channel is left out"]


@pytest.mark.parametrize(
    "selection, message",
    [
        ({"packages": [pkg("nope")]}, "package nope is not in the catalog (it has demo, other)"),
        ({"packages": [pkg(channels=[{"name": "beta"}])]}, "package demo has no channel beta (its channels: fast, stable)"),
        ({"packages": [pkg(channels=[{"name": "fast"}])]}, "its default channel stable is not kept; set default_channel to one of fast"),
        ({"packages": [pkg(channels=[{"name": "fast"}], default_channel="stable")]}, "default_channel stable is not among the channels kept"),
        ({"packages": [pkg(channels=[{"name": "stable", "min_version": "5.0.0"}])]}, "package demo channel stable: no bundle in version range >=5.0.0"),
        (
            {"packages": [pkg(channels=[{"name": "stable", "min_version": "9.9.9", "max_version": "9.9.9"}])]},
            "version 9.9.9 is not in channel stable of package demo",
        ),
        (
            {"packages": [pkg(min_version="0.1.0", channels=[{"name": "stable", "max_version": "0.2.0"}])]},
            "on the package and on its channels cannot be combined",
        ),
        ({"full": True, "packages": [pkg(min_version="0.1.0")]}, "full=true cannot be combined with a version range"),
        ({"packages": [pkg(), pkg()]}, "package demo is listed twice"),
        ({"packages": [pkg(channels=[{"name": "fast"}, {"name": "fast"}])]}, "channel fast is listed twice"),
        ({"packages": [pkg(min_version="v1.0")]}, "'v1.0' is not a semantic version"),
    ],
)
def test_a_selection_the_catalog_cannot_satisfy_is_refused(selection, message):
    with pytest.raises(flt.FilterError, match=None) as refused:
        flt.filter_catalog(catalog(), selection)
    assert message in str(refused.value)


def test_a_channel_without_one_head_and_an_invalid_result_are_refused():
    two_heads = catalog()
    two_heads.channels[1]["entries"].append({"name": "demo.v0.2.0"})  # a second head in fast
    with pytest.raises(flt.FilterError, match="channel fast: expected one channel head, found demo.v0.2.0, demo.v0.5.0-rc.1"):
        flt.filter_catalog(two_heads, {})
    no_blob = catalog()
    no_blob.bundles = [b for b in no_blob.bundles if b["name"] != "demo.v0.4.0"]  # the head of stable has no bundle
    with pytest.raises(flt.FilterError, match="the filtered catalog is not valid: .*demo.v0.4.0"):
        flt.filter_catalog(no_blob, {"packages": [pkg(channels=[{"name": "stable"}])]})
