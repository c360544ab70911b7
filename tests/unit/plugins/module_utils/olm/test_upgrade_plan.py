# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm.upgrade_plan: OLM's maxOpenShiftVersion rule (operator-lifecycle-manager v0.46.0,
pkg/controller/operators/openshift/helpers.go and its helpers_test.go cases), its ClusterOperator wording, and each
operator's way forward in a target catalog."""

import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.builder import load_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import upgrade_plan as up

MAX = up.MAX_OPENSHIFT_VERSION
MAJOR = "Invalid character(s) found in major number "
TYPE_ERROR = "failed to unmarshal properties annotation: json: cannot unmarshal "


def parse_error(value, detail):
    return 'failed to parse "%s" as semver: %s' % (value, detail)


def annotation(*values, key="properties", typ="type", val="value"):
    """A properties annotation whose properties are olm.maxOpenShiftVersion with each raw JSON value text."""
    props = ['{"%s":"olm.package","%s":{"packageName":"kube-demo","version":"0.0.1"}}' % (typ, val)]
    props += ['{"%s":"%s","%s":%s}' % (typ, MAX, val, raw) for raw in values]
    return '{"%s":[%s]}' % (key, ",".join(props))


def csv(name="kube-demo.v0.0.1", namespace="ns", props=None, labels=None, annotations=None, reason=None, version="0.0.1"):
    meta = {"name": name, "namespace": namespace, "annotations": dict(annotations or {})}
    if props is not None:
        meta["annotations"][up.PROPERTIES_ANNOTATION] = props
    if labels:
        meta["labels"] = labels
    obj = {"metadata": meta, "spec": {"version": version}, "status": {}}
    if reason:
        obj["status"]["reason"] = reason
    return obj


# ------------------------------------------------------------------------------------ maxOpenShiftVersion


@pytest.mark.parametrize(
    "props, expected",
    [
        (None, (None, None, None)),  # no annotation: no limit
        ('{"properties":[]}', (None, None, None)),
        ("null", (None, None, None)),  # JSON null into a struct is a no-op in Go
        (annotation(), (None, None, None)),  # other properties only
        (annotation('"4.21"'), ("4.21", (4, 21), None)),
        (annotation("4.10"), ("4.10", (4, 10), None)),  # a JSON number keeps its text (json.RawMessage)
        (annotation('"v4.9"'), ("v4.9", (4, 9), None)),  # ParseTolerant: leading v
        (annotation('" 4.8 "'), (" 4.8 ", (4, 8), None)),  # ParseTolerant: spaces
        (annotation('"4"'), ("4", (4, 0), None)),  # ParseTolerant fills .0
        (annotation('"4.21.0"'), ("4.21.0", (4, 21), None)),
        (annotation('"04.021"'), ("04.021", (4, 21), None)),  # ParseTolerant drops leading zeroes
        (annotation('"4.21.0+build.5"'), ("4.21.0+build.5", (4, 21), None)),  # blang's EQ ignores build metadata
        (
            annotation('"\\"4.20\\""'),
            ('\\"4.20\\', None, 'failed to parse "\\"4.20\\" as semver: Invalid character(s) found in major number "0\\\\\\"4"'),
        ),  # ParseTolerant prefixes a 0
        (annotation('"4.21.1"'), ("4.21.1", None, "property olm.maxOpenShiftVersion must specify only <major>.<minor> version, got invalid value 4.21.1")),
        (
            annotation('"4.21.0-rc.1"'),
            ("4.21.0-rc.1", None, "property olm.maxOpenShiftVersion must specify only <major>.<minor> version, got invalid value 4.21.0-rc.1"),
        ),
        (annotation('""'), ("", None, 'value cannot be "" (an empty string)')),
        # helpers_test.go's own cases
        (
            annotation('"1.1.0-pre+build"'),
            ("1.1.0-pre+build", None, "property olm.maxOpenShiftVersion must specify only <major>.<minor> version, got invalid value 1.1.0-pre+build"),
        ),
        (
            annotation('"bad_version"'),
            ("bad_version", None, parse_error("bad_version", MAJOR + '"0bad_version"')),
        ),
        (annotation('"1.0.0"'), ("1.0.0", (1, 0), None)),
        (annotation("4.8"), ("4.8", (4, 8), None)),  # "Unquoted/Short"
        (annotation("null"), ("null", None, parse_error("null", MAJOR + '"0null"'))),
        (
            annotation('"four"'),
            ("four", None, parse_error("four", MAJOR + '"0four"')),
        ),  # blang's ParseTolerant prefixes a 0
        (annotation('"4.x"'), ("4.x", None, 'failed to parse "4.x" as semver: Invalid character(s) found in minor number "x"')),
        (annotation('"4.21-rc"'), ("4.21-rc", None, 'failed to parse "4.21-rc" as semver: Short version cannot contain PreRelease/Build meta data')),
        (annotation('"4.20"', '"4.21"'), (None, None, 'defining more than one "olm.maxOpenShiftVersion" property is not allowed')),
        (annotation('"4.20"', key="Properties", typ="TYPE", val="Value"), ("4.20", (4, 20), None)),  # encoding/json folds keys
        ('{"properties":[{"type":"olm.maxOpenShiftVersion"}]}', ("", None, 'value cannot be "" (an empty string)')),
        (
            '{"properties":{"type":"x"}}',
            (
                None,
                None,
                "failed to unmarshal properties annotation: json: cannot unmarshal object into Go struct field "
                "propertiesAnnotation.properties of type []projection.property",
            ),
        ),
        (
            '{"properties":[{"type":4}]}',
            (
                None,
                None,
                TYPE_ERROR + "number into Go struct field property.properties.type of type string",
            ),
        ),
        ("[]", (None, None, TYPE_ERROR + "array into Go value of type projection.propertiesAnnotation")),
    ],
)
def test_max_openshift_version_reads_the_annotation_like_olm(props, expected):
    assert up.csv_max_openshift_version(csv(props=props)) == expected


def test_an_annotation_that_is_not_json_is_an_error_with_olms_prefix():
    declared, version, error = up.csv_max_openshift_version(csv(props='{"properties": ['))
    assert (declared, version) == (None, None)
    assert error.startswith("failed to unmarshal properties annotation: ")


def test_a_catalog_bundles_properties_are_projected_like_the_csv_annotation():
    props = [{"type": MAX, "value": "4.21"}, {"type": "olm.package", "value": {"version": "1", "packageName": "p"}}]
    assert up.catalog_properties(props) == [(MAX, '"4.21"'), ("olm.package", '{"packageName":"p","version":"1"}')]
    assert up.max_openshift_version(up.catalog_properties(props)) == ("4.21", (4, 21), None)


# ------------------------------------------------------------------------------------ the comparison


def olm_blocks(current, maximum):
    """incompatibleOperators' comparison written out as OLM has it: normalise the running release, take nextY."""
    norm_current = up.normalize(up.parse_tolerant(current))
    next_minor = (norm_current[0], norm_current[1] + 1)
    return up.normalize(up.parse_tolerant(maximum)) < next_minor


@pytest.mark.parametrize(
    "current, target",
    [("4.19", "4.20"), ("4.20.7", "4.21"), ("4.21", "4.22"), ("4.22", "4.23"), ("4.22", "5.0"), ("4.23", "5.1"), ("5.0", "5.1"), ("5.1", "5.2")],
)
def test_the_target_is_judged_as_olm_judges_its_next_minor(current, target):
    """A target gives the verdict OLM gives on the release below it, for every maximum around it."""
    _normalised, limit = up.parse_target(target)
    for maximum in ("4.18", "4.19", "4.20", "4.21", "4.22", "4.23", "4.24", "5.0", "5.1", "5.2", "6.0"):
        version = up.parse_tolerant(maximum)
        assert up.blocks((version.major, version.minor), None, limit) == olm_blocks(current, maximum), (current, target, maximum)


@pytest.mark.parametrize(
    "target, normalised, limit",
    [("4.21", (4, 21), (4, 21)), ("4.21.3", (4, 21), (4, 21)), ("v4.22.0-rc.1", (4, 22), (4, 22)), ("4.23", (5, 0), (4, 23)), ("5.0", (5, 0), (4, 23))],
)
def test_parse_target(target, normalised, limit):
    assert up.parse_target(target) == (normalised, limit)


def test_a_target_that_is_no_version_is_refused():
    with pytest.raises(InvalidInputError, match="openshift_version 'latest' is not a version"):
        up.parse_target("latest")


@pytest.mark.parametrize(
    "version, error, blocked",
    [((4, 20), None, True), ((4, 21), None, False), ((4, 22), None, False), (None, None, False), (None, "bad", True)],
)
def test_blocks_for_target_4_21(version, error, blocked):
    assert up.blocks(version, error, (4, 21)) is blocked


# ------------------------------------------------------------------------------------ OLM's wording


def test_skew_lines_are_olms():
    assert up.skew_line("ns", "a.v1", (4, 20), None) == "- maximum supported OCP version for ns/a.v1 is 4.20"
    assert up.skew_line("ns", "b.v1", None, 'value cannot be "" (an empty string)') == (
        '- ns/b.v1 has invalid olm.maxOpenShiftVersion properties: value cannot be "" (an empty string)'
    )


def test_the_message_puts_errors_first_and_the_others_reversed_like_skews_string():
    lines = [("- a", False), ("- e1", True), ("- b", False), ("- e2", True), ("- c", False)]
    assert up.upgradeable_message(lines) == (
        "ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:\n- e1\n- e2\n- c\n- b\n- a"
    )


@pytest.mark.parametrize(
    "obj, copied",
    [
        (csv(), False),
        (csv(labels={up.COPIED_LABEL: "ns"}), True),
        (csv(labels={up.COPIED_LABEL: ""}), True),  # the key counts, not its value
        (csv(reason="Copied"), True),
        (csv(annotations={"olm.operatorNamespace": "operators"}), True),
        (csv(annotations={"olm.operatorNamespace": "ns"}), False),
    ],
)
def test_is_copied(obj, copied):
    assert up.is_copied(obj) is copied


def test_the_package_comes_from_the_olm_package_property():
    assert up.csv_package(csv(props=annotation())) == ("kube-demo", "0.0.1")
    assert up.csv_package(csv()) == (None, None)


# ------------------------------------------------------------------------------------ the target catalog


def bundle(version, maximum=None, deprecated=False):
    props = [{"type": "olm.package", "value": {"packageName": "kube-demo", "version": version}}]
    if maximum is not None:
        props.append({"type": MAX, "value": maximum})
    return {"schema": "olm.bundle", "name": "kube-demo.v" + version, "package": "kube-demo", "image": "r.example/b:v" + version, "properties": props}


CATALOG = [
    {"schema": "olm.package", "name": "kube-demo", "defaultChannel": "stable"},
    {
        "schema": "olm.channel",
        "package": "kube-demo",
        "name": "stable",
        "entries": [
            {"name": "kube-demo.v0.0.1"},
            {"name": "kube-demo.v0.0.2", "replaces": "kube-demo.v0.0.1", "skipRange": "<0.0.2"},
            {"name": "kube-demo.v0.0.3", "replaces": "kube-demo.v0.0.2"},
        ],
    },
    {"schema": "olm.channel", "package": "kube-demo", "name": "alpha", "entries": [{"name": "kube-demo.v0.0.1"}]},
    {
        "schema": "olm.channel",
        "package": "kube-demo",
        "name": "candidate",
        "entries": [{"name": "kube-demo.v0.0.1"}, {"name": "kube-demo.v0.1.0", "replaces": "kube-demo.v0.0.1"}],
    },
    bundle("0.0.1", "4.20"),
    bundle("0.0.2", "4.21"),
    bundle("0.0.3", "4.22"),
    bundle("0.1.0", "4.24"),
    {
        "schema": "olm.deprecations",
        "package": "kube-demo",
        "entries": [
            {"reference": {"schema": "olm.channel", "name": "alpha"}, "message": "alpha is gone"},
            {"reference": {"schema": "olm.bundle", "name": "kube-demo.v0.0.1"}, "message": "0.0.1 has a CVE"},
        ],
    },
]


def model(docs=None):
    docs = CATALOG if docs is None else docs
    return convert_to_model(load_bytes("\n".join(json.dumps(d) for d in docs).encode()), validate=False)


def installed(version="0.0.1", channel="stable", maximum=(4, 20), error=None, known=True, generation="v0", package="kube-demo", catalog=0):
    declared = None if maximum is None else "%d.%d" % maximum
    return {
        "generation": generation,
        "namespace": "ns" if generation == "v0" else None,
        "name": "kube-demo.v" + version,
        "package": package,
        "channel": channel,
        "installed_version": version,
        "source": "demo",
        "bundle": "kube-demo.v" + version,
        "properties_known": known,
        "declared": declared,
        "version": maximum,
        "error": error,
        "catalog": catalog,
    }


def action(kind, to_version=None, to_channel=None):
    return kind, to_version, to_channel


@pytest.mark.parametrize(
    "row, target, with_catalog, blocks, act, path",
    [
        # within the channel, the first version that allows the target (not the head)
        (installed(), "4.21", True, True, action("upgrade", "0.0.2"), ["0.0.1", "0.0.2"]),
        (installed(), "4.22", True, True, action("upgrade", "0.0.3"), ["0.0.1", "0.0.2", "0.0.3"]),
        # a version the channel does not have starts from the bundles whose skipRange covers it
        (installed(version="0.0.0"), "4.21", True, True, action("upgrade", "0.0.2"), ["0.0.0", "0.0.2"]),
        (installed(version="0.0.2", maximum=(4, 21)), "4.21", True, False, action("none"), []),
        # no version of the channel allows it: another channel does
        (installed(), "4.23", True, True, action("switch_channel", "0.1.0", "candidate"), ["0.0.1", "0.1.0"]),
        # the channel is gone from the target catalog: the default channel
        (installed(channel="beta"), "4.21", True, True, action("switch_channel", "0.0.2", "stable"), ["0.0.1", "0.0.2"]),
        (installed(channel="beta", maximum=None), "4.21", True, False, action("switch_channel", None, "stable"), []),
        # nothing anywhere allows it
        (installed(), "5.1", True, True, action("remove_or_replace"), []),
        (installed(package="kube-gone"), "4.21", True, True, action("remove_or_replace"), []),
        # no catalog given
        (installed(catalog=None), "4.21", False, True, action("unknown"), []),
        (installed(catalog=None, maximum=(4, 22)), "4.21", False, False, action("none"), []),
        # an invalid property blocks (fail closed) and gets a path like any blocker
        (installed(maximum=None, error='value cannot be "" (an empty string)'), "4.21", True, True, action("upgrade", "0.0.2"), ["0.0.1", "0.0.2"]),
        # OLM v1 without the installed bundle's properties
        (installed(generation="v1", known=False, maximum=None, catalog=None), "4.21", False, False, action("unknown"), []),
        # ... in the catalog its selector names, which has no package: nothing to upgrade to there either
        (installed(generation="v1", known=False, maximum=None, package="kube-gone"), "4.21", True, False, action("remove_or_replace"), []),
        # the channel defaults to the package's default channel
        (installed(channel=None), "4.21", True, True, action("upgrade", "0.0.2"), ["0.0.1", "0.0.2"]),
    ],
)
def test_plan_operator(row, target, with_catalog, blocks, act, path):
    normalised, limit = up.parse_target(target)
    result = up.plan_operator(row, model() if with_catalog else None, limit, up.version_text(normalised))
    assert result["blocks_upgrade"] is blocks
    assert (result["action"]["kind"], result["action"]["to_version"], result["action"]["to_channel"]) == act
    assert result["path"] == path
    assert result["target_version"] == (path[-1] if path else None)
    assert (result["action"]["reason"] is None) == (act[0] == "none")


def test_target_catalog_presence_and_deprecations():
    result = up.plan_operator(installed(channel="alpha"), model(), (4, 21), "4.21")
    assert result["target_catalog"] == {"package": True, "channel": True}
    assert result["deprecations"] == [
        {"scope": "channel", "name": "alpha", "message": "alpha is gone"},
        {"scope": "bundle", "name": "kube-demo.v0.0.1", "message": "0.0.1 has a CVE"},
    ]
    gone = up.plan_operator(installed(package="kube-gone"), model(), (4, 21), "4.21")
    assert gone["target_catalog"] == {"package": False, "channel": False} and gone["deprecations"] == []
    assert up.plan_operator(installed(catalog=None), None, (4, 21), "4.21")["target_catalog"] is None


DEPRECATED_CHANNELS = CATALOG[:-1] + [
    {
        "schema": "olm.deprecations",
        "package": "kube-demo",
        "entries": [
            {"reference": {"schema": "olm.channel", "name": "alpha"}, "message": "alpha is gone"},
            {"reference": {"schema": "olm.channel", "name": "stable"}, "message": "stable ends"},
        ],
    }
]


@pytest.mark.parametrize(
    "generation, channel, channels, deprecated",
    [
        # a Subscription without a channel follows the default channel: its deprecation applies
        ("v0", None, None, ["stable"]),
        ("v0", "alpha", None, ["alpha"]),
        # operator-controller's SetDeprecationStatus: only the channels spec.source.catalog.channels names - with
        # none it resolves from every channel, and the default channel's deprecation is not the extension's
        ("v1", None, [], []),
        ("v1", "alpha", ["alpha"], ["alpha"]),
        ("v1", None, ["alpha", "stable"], ["alpha", "stable"]),
        ("v1", "candidate", ["candidate"], []),
    ],
)
def test_channel_deprecations_v0_and_v1(generation, channel, channels, deprecated):
    row = installed(generation=generation, channel=channel, version="0.0.2", maximum=(4, 21))
    if channels is not None:
        row["channels"] = channels
    result = up.plan_operator(row, model(DEPRECATED_CHANNELS), (4, 21), "4.21")
    assert [d["name"] for d in result["deprecations"] if d["scope"] == "channel"] == deprecated


def test_block_reason_is_olms_line():
    blocked = up.plan_operator(installed(), None, (4, 21), "4.21")
    assert blocked["block_reason"] == "- maximum supported OCP version for ns/kube-demo.v0.0.1 is 4.20"
    invalid = up.plan_operator(installed(maximum=None, error="boom"), None, (4, 21), "4.21")
    assert invalid["block_reason"] == "- ns/kube-demo.v0.0.1 has invalid olm.maxOpenShiftVersion properties: boom"
    # a ClusterExtension is cluster-scoped: named alone, not "/name" (on the testbed: tests/integration/olmv1/test_upgrade_plan_olmv1.py)
    v1 = up.plan_operator(installed(generation="v1"), None, (4, 21), "4.21")
    assert v1["block_reason"] == "- maximum supported OCP version for kube-demo.v0.0.1 is 4.20"


@pytest.mark.parametrize(
    "rows, target, verdict, blockers",
    [
        ([installed(version="0.0.2", maximum=(4, 21))], "4.21", "ready", []),
        ([installed(version="0.0.2", maximum=(4, 21)), installed()], "4.21", "needs_action", ["ns/kube-demo.v0.0.1"]),
        ([installed(version="0.0.2", maximum=(4, 21)), installed(catalog=None)], "4.21", "blocked", ["ns/kube-demo.v0.0.1"]),
        ([installed()], "5.1", "blocked", ["ns/kube-demo.v0.0.1"]),
        ([installed(generation="v1", known=False, maximum=None, catalog=None)], "4.21", "needs_action", []),
        ([installed(generation="v1", catalog=0)], "4.21", "needs_action", []),  # a v1 blocker is judged but not OLM's blocker
        ([], "4.21", "ready", []),
    ],
)
def test_plan_verdict_and_blockers(rows, target, verdict, blockers):
    result = up.plan(rows, {0: model()}, target)
    assert result["verdict"] == verdict
    assert result["blockers"] == blockers
    assert all("_error" not in op for op in result["operators"])


def test_plan_orders_blockers_first_and_reports_olms_condition():
    rows = [installed(version="0.0.2", maximum=(4, 21)), installed(maximum=None, error="boom"), installed(version="0.0.3", maximum=(4, 19))]
    rows[1]["name"] = "kube-bad.v1"
    result = up.plan(rows, {0: model()}, "4.21")
    assert [op["name"] for op in result["operators"]] == ["kube-bad.v1", "kube-demo.v0.0.3", "kube-demo.v0.0.2"]
    assert result["target"] == "4.21"
    assert result["olm_condition"] == {
        "status": "False",
        "reason": "IncompatibleOperatorsInstalled",
        "message": "ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:\n"
        "- ns/kube-bad.v1 has invalid olm.maxOpenShiftVersion properties: boom\n"
        "- maximum supported OCP version for ns/kube-demo.v0.0.3 is 4.19",
    }
    assert up.plan([rows[0]], {0: model()}, "4.21")["olm_condition"] == {"status": "True", "reason": None, "message": None}


def test_4_23_is_reported_as_5_0():
    assert up.plan([], {}, "4.23")["target"] == "5.0"
