# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fbc/action/diff.py: one change per row on a small catalog built in code, and the committed catalog pair
(tests/data/catalog-diff: a directory of YAML files against one rendered file) against its reviewed result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest
from lib.fbc import SVG_SMALL_CIRCLE, cfg, new_test_bundle, new_test_channel, new_test_package
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.diff import diff_catalogs, diff_configs
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError

PAIR = data_path("catalog-diff")


def base():
    """p: stable [p.v1.0.0 <- p.v1.1.0], fast [p.v1.1.0]; q: alpha [q.v0.1.0]."""
    return cfg(
        packages=[new_test_package("p", "stable", SVG_SMALL_CIRCLE), new_test_package("q", "alpha", SVG_SMALL_CIRCLE)],
        channels=[
            new_test_channel("p", "stable", {"name": "p.v1.0.0"}, {"name": "p.v1.1.0", "replaces": "p.v1.0.0"}),
            new_test_channel("p", "fast", {"name": "p.v1.1.0"}),
            new_test_channel("q", "alpha", {"name": "q.v0.1.0"}),
        ],
        bundles=[new_test_bundle("p", "1.0.0"), new_test_bundle("p", "1.1.0"), new_test_bundle("q", "0.1.0")],
    )


def _channel(c, pkg, name):
    return next(ch for ch in c.channels if ch["package"] == pkg and ch["name"] == name)


def _bundle(c, name):
    return next(b for b in c.bundles if b["name"] == name)


def add_p_v120(c):
    c.bundles.append(new_test_bundle("p", "1.2.0"))
    _channel(c, "p", "stable")["entries"].append({"name": "p.v1.2.0", "replaces": "p.v1.1.0"})


def remove_p_v100(c):
    c.bundles.remove(_bundle(c, "p.v1.0.0"))
    _channel(c, "p", "stable")["entries"].pop(0)


def add_package(name):
    def change(c):
        c.packages.append(new_test_package(name, "stable", SVG_SMALL_CIRCLE))
        c.channels.append(new_test_channel(name, "stable", {"name": "%s.v1.0.0" % name}))
        c.bundles.append(new_test_bundle(name, "1.0.0"))

    return change


def remove_q(c):
    c.packages = [p for p in c.packages if p["name"] != "q"]
    c.channels = [ch for ch in c.channels if ch["package"] != "q"]
    c.bundles = [b for b in c.bundles if b["package"] != "q"]


def add_channel(c):
    c.channels.append(new_test_channel("p", "candidate", {"name": "p.v1.0.0"}, {"name": "p.v1.1.0", "replaces": "p.v1.0.0"}))


def remove_fast(c):
    c.channels.remove(_channel(c, "p", "fast"))


def fast_from_v100(c):
    _channel(c, "p", "fast")["entries"] = [{"name": "p.v1.0.0"}, {"name": "p.v1.1.0", "replaces": "p.v1.0.0"}]


def default_fast(c):
    c.packages[0]["defaultChannel"] = "fast"


def deprecate(*entries):
    def change(c):
        c.deprecations.append({"schema": "olm.deprecations", "package": "p", "entries": [dict(e) for e in entries]})

    return change


PKG_DEP = {"reference": {"schema": "olm.package"}, "message": "p is deprecated"}
CH_DEP = {"reference": {"schema": "olm.channel", "name": "fast"}, "message": "fast ends"}
B_DEP = {"reference": {"schema": "olm.bundle", "name": "p.v1.0.0"}, "message": "CVE"}


def max_ocp(bundle, *values):
    def change(c):
        b = _bundle(c, bundle)
        b["properties"] = [p for p in b["properties"] if p["type"] != "olm.maxOpenShiftVersion"]
        b["properties"].extend({"type": "olm.maxOpenShiftVersion", "value": v} for v in values)

    return change


def both(*changes):
    def change(c):
        for ch in changes:
            ch(c)

    return change


# (id, change to the old catalog, change to the new catalog, {result path: expected value})
ROWS = [
    ("identical", None, None, {"differs": False, "packages": {"added": [], "removed": []}, "heads": [], "warnings": []}),
    (
        "package added, names in Go byte order",
        None,
        both(add_package("z"), add_package("b")),
        {
            "packages": {"added": ["b", "z"], "removed": []},
            "channels.added": [{"package": "b", "channel": "stable"}, {"package": "z", "channel": "stable"}],
            "bundles.added": [{"package": "b", "bundle": "b.v1.0.0", "channels": ["stable"]}, {"package": "z", "bundle": "z.v1.0.0", "channels": ["stable"]}],
            "channel_bundles.added": [],
        },
    ),
    (
        "package removed",
        None,
        remove_q,
        {
            "packages": {"added": [], "removed": ["q"]},
            "channels.removed": [{"package": "q", "channel": "alpha"}],
            "bundles.removed": [{"package": "q", "bundle": "q.v0.1.0", "channels": ["alpha"]}],
        },
    ),
    (
        "channel added",
        None,
        add_channel,
        {
            "channels": {"added": [{"package": "p", "channel": "candidate"}], "removed": []},
            "bundles": {"added": [], "removed": []},
            "channel_bundles": {"added": [], "removed": []},
            "heads": [],
        },
    ),
    ("channel removed", None, remove_fast, {"channels.removed": [{"package": "p", "channel": "fast"}], "bundles.removed": []}),
    (
        "bundle added: head moves",
        None,
        add_p_v120,
        {
            "bundles.added": [{"package": "p", "bundle": "p.v1.2.0", "channels": ["stable"]}],
            "channel_bundles.added": [{"package": "p", "channel": "stable", "bundle": "p.v1.2.0"}],
            "heads": [{"package": "p", "channel": "stable", "old": "p.v1.1.0", "new": "p.v1.2.0"}],
        },
    ),
    (
        "bundle removed from the tail: head stays",
        None,
        remove_p_v100,
        {
            "bundles.removed": [{"package": "p", "bundle": "p.v1.0.0", "channels": ["stable"]}],
            "channel_bundles.removed": [{"package": "p", "channel": "stable", "bundle": "p.v1.0.0"}],
            "heads": [],
        },
    ),
    (
        "bundle added to another channel",
        None,
        fast_from_v100,
        {
            "bundles": {"added": [], "removed": []},
            "channel_bundles.added": [{"package": "p", "channel": "fast", "bundle": "p.v1.0.0"}],
            "heads": [],
        },
    ),
    ("default channel changed", None, default_fast, {"default_channels": [{"package": "p", "old": "stable", "new": "fast"}], "differs": True}),
    (
        "deprecations added",
        None,
        deprecate(B_DEP, CH_DEP, PKG_DEP),
        {
            "olm_deprecations.added": [
                {"package": "p", "schema": "olm.package", "name": "", "message": "p is deprecated"},
                {"package": "p", "schema": "olm.channel", "name": "fast", "message": "fast ends"},
                {"package": "p", "schema": "olm.bundle", "name": "p.v1.0.0", "message": "CVE"},
            ],
            "olm_deprecations.removed": [],
            "differs": True,
        },
    ),
    (
        "deprecation removed",
        deprecate(CH_DEP),
        None,
        {"olm_deprecations.removed": [{"package": "p", "schema": "olm.channel", "name": "fast", "message": "fast ends"}]},
    ),
    (
        "deprecation message changed",
        deprecate(B_DEP),
        deprecate(dict(B_DEP, message="CVE-2026-1")),
        {
            "olm_deprecations": {
                "added": [],
                "removed": [],
                "changed": [{"package": "p", "schema": "olm.bundle", "name": "p.v1.0.0", "old_message": "CVE", "new_message": "CVE-2026-1"}],
            },
        },
    ),
    (
        "maxOpenShiftVersion set on a head",
        None,
        max_ocp("p.v1.1.0", "4.18"),
        {
            "max_openshift_versions": {
                "bundles": [{"package": "p", "bundle": "p.v1.1.0", "old": None, "new": "4.18"}],
                "heads": [
                    {"package": "p", "channel": "fast", "old_head": "p.v1.1.0", "new_head": "p.v1.1.0", "old": None, "new": "4.18"},
                    {"package": "p", "channel": "stable", "old_head": "p.v1.1.0", "new_head": "p.v1.1.0", "old": None, "new": "4.18"},
                ],
            },
            "heads": [],
        },
    ),
    (
        "maxOpenShiftVersion on a bundle that is no head",
        max_ocp("p.v1.0.0", "4.16"),
        max_ocp("p.v1.0.0", "4.17"),
        {
            "max_openshift_versions.bundles": [{"package": "p", "bundle": "p.v1.0.0", "old": "4.16", "new": "4.17"}],
            "max_openshift_versions.heads": [],
        },
    ),
    (
        "a new head without the old head's maxOpenShiftVersion",
        max_ocp("p.v1.1.0", "4.17"),
        both(max_ocp("p.v1.1.0", "4.17"), add_p_v120),
        {
            "max_openshift_versions": {
                "bundles": [],
                "heads": [{"package": "p", "channel": "stable", "old_head": "p.v1.1.0", "new_head": "p.v1.2.0", "old": "4.17", "new": None}],
            },
        },
    ),
    (
        "maxOpenShiftVersion repeated, and a number (the YAML 4.10 reads as 4.1)",
        max_ocp("p.v1.0.0", 4.10),
        max_ocp("p.v1.0.0", "4.16", "4.17"),
        {
            "max_openshift_versions.bundles": [{"package": "p", "bundle": "p.v1.0.0", "old": "4.1", "new": ["4.16", "4.17"]}],
        },
    ),
    (
        "a channel with two heads: no head, a warning",
        None,
        lambda c: _channel(c, "p", "stable")["entries"][1].pop("replaces"),
        {
            "heads": [{"package": "p", "channel": "stable", "old": "p.v1.1.0", "new": None}],
            "warnings": ["new catalog: package p channel stable: multiple channel heads found in graph: p.v1.0.0, p.v1.1.0"],
        },
    ),
]


def _get(result, path):
    for part in path.split("."):
        result = result[part]
    return result


@pytest.mark.parametrize("old_change, new_change, expected", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_one_change(old_change, new_change, expected):
    old, new = base(), base()
    for change, catalog in ((old_change, old), (new_change, new)):
        if change is not None:
            change(catalog)
    result = diff_configs(old, new)
    for path, value in expected.items():
        assert _get(result, path) == value, path
    # the result is plain data (what a module returns) and the same when computed again
    assert json.loads(json.dumps(result)) == result
    assert diff_configs(copy.deepcopy(old), copy.deepcopy(new)) == result


def test_identical_summary_says_so():
    result = diff_configs(base(), base())
    assert result["summary"] == [
        "old: 2 packages, 3 channels, 3 bundles; new: 2 packages, 3 channels, 3 bundles",
        "no differences in packages, channels, bundles, default channels, heads, deprecations or maxOpenShiftVersion",
    ]


def test_summary_counts_and_truncates_names():
    new = base()
    for i in range(7):
        add_package("n%d" % i)(new)
    result = diff_configs(base(), new)
    assert result["summary"][1] == "packages: 7 added, 0 removed (+ n0, n1, n2, n3, n4, ... 2 more)"
    assert result["summary"][2].startswith("channels: 7 added, 0 removed (+ n0/stable, ")
    assert len(result["summary"]) == 4  # totals, packages, channels, bundles: nothing else changed


@pytest.mark.parametrize(
    "side, message",
    [
        ("old", 'old catalog: unknown package "x" for channel "c"'),
        ("new", 'new catalog: unknown package "x" for channel "c"'),
    ],
)
def test_convert_error_names_the_side(side, message):
    broken = base()
    broken.channels.append(new_test_channel("x", "c", {"name": "x.v1"}))
    with pytest.raises(FBCError) as info:
        diff_configs(broken, base()) if side == "old" else diff_configs(base(), broken)
    assert str(info.value) == message


def test_load_error_names_the_side(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "olm.package", "name": ')
    with pytest.raises(FBCError) as info:
        diff_catalogs(str(PAIR / "old"), str(bad))
    assert str(info.value).startswith("new catalog: ")


def test_committed_pair_directory_against_rendered_file():
    """old/ (three package directories) against new.yaml (one file): every kind of change at once."""
    result = diff_catalogs(str(PAIR / "old"), str(PAIR / "new.yaml"))
    expected = json.loads((PAIR / "expected.json").read_text())
    assert result == expected
    # what a person reads: one line per kind of change
    assert [line.split(":")[0] for line in result["summary"]] == [
        "old",
        "packages",
        "channels",
        "bundles",
        "default channels",
        "channel heads",
        "deprecations",
        "maxOpenShiftVersion",
    ]
    # and the other way round, every addition is a removal
    back = diff_catalogs(str(PAIR / "new.yaml"), str(PAIR / "old"))
    assert back["packages"] == {"added": result["packages"]["removed"], "removed": result["packages"]["added"]}
    assert back["bundles"] == {"added": result["bundles"]["removed"], "removed": result["bundles"]["added"]}
    assert back["olm_deprecations"]["added"] == result["olm_deprecations"]["removed"]
    assert [(h["old"], h["new"]) for h in back["heads"]] == [(h["new"], h["old"]) for h in result["heads"]]


@pytest.mark.parametrize("values", [["4.16"], [4.10], [4], ["4.17", "4.18"], []], ids=["string", "float", "int", "repeated", "none"])
def test_max_openshift_version_reads_as_the_upgrade_plan_does(values):
    """catalog_diff and olm_upgrade_plan agree: a single value is the plan's ``declared`` value (OLM's reading)."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.olm.upgrade_plan import catalog_properties, max_openshift_version

    old = base()
    new = base()
    max_ocp("p.v1.1.0", *values)(new)
    props = _bundle(new, "p.v1.1.0")["properties"]
    declared, _version, error = max_openshift_version(catalog_properties(props))
    changes = diff_configs(old, new)["max_openshift_versions"]["bundles"]
    if not values:
        assert changes == [] and declared is None and error is None
    elif len(values) == 1:
        assert changes == [{"package": "p", "bundle": "p.v1.1.0", "old": None, "new": declared}]
    else:
        assert changes[0]["new"] == values and error == 'defining more than one "olm.maxOpenShiftVersion" property is not allowed'
