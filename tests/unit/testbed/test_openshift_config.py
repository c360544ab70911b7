"""The OpenShift member's config.openshift.io pieces (openshift_config.py): pure, no cluster."""

import pytest
from testbed import openshift_config

# Upgradeable as OLM v0.46.0 writes it (helpers.go skews.String(): invalid declarations first, then the others).
BLOCKING_MESSAGE = "\n".join(
    [
        "ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:",
        "- ocp-two/kube-ocp-two.v0.1.0 has invalid olm.maxOpenShiftVersion properties: "
        'defining more than one "olm.maxOpenShiftVersion" property is not allowed',
        "- ocp-patch/kube-ocp-patch.v0.1.0 has invalid olm.maxOpenShiftVersion properties: property olm.maxOpenShiftVersion must specify only "
        "<major>.<minor> version, got invalid value 4.21.1",
        "- maximum supported OCP version for operators/kube-ocp-equal.v0.1.0 is 4.20",
    ]
)


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"type": "Upgradeable", "status": "True"}, {}),
        (
            {"type": "Upgradeable", "status": "False", "reason": "IncompatibleOperatorsInstalled", "message": BLOCKING_MESSAGE},
            {
                "ocp-two/kube-ocp-two.v0.1.0": (
                    "invalid",
                    'ocp-two/kube-ocp-two.v0.1.0 has invalid olm.maxOpenShiftVersion properties: defining more than one "olm.maxOpenShiftVersion" '
                    "property is not allowed",
                ),
                "ocp-patch/kube-ocp-patch.v0.1.0": (
                    "invalid",
                    "ocp-patch/kube-ocp-patch.v0.1.0 has invalid olm.maxOpenShiftVersion properties: property olm.maxOpenShiftVersion must specify only "
                    "<major>.<minor> version, got invalid value 4.21.1",
                ),
                "operators/kube-ocp-equal.v0.1.0": ("max", "maximum supported OCP version for operators/kube-ocp-equal.v0.1.0 is 4.20"),
            },
        ),
    ],
)
def test_blocking_csvs_reads_olms_message(condition, expected):
    assert openshift_config.blocking_csvs(condition) == expected


@pytest.mark.parametrize(
    ("condition", "error"),
    [
        ({"status": "False", "message": "Waiting for updates to take effect"}, "no verdict on CSVs"),
        ({"status": "False", "reason": "ErrorCheckingOperatorCompatibility", "message": "Encountered errors"}, "no verdict on CSVs"),
        ({"status": "False", "reason": "IncompatibleOperatorsInstalled", "message": "Something else:\n- a/b"}, "header"),
        ({"status": "False", "reason": "IncompatibleOperatorsInstalled", "message": openshift_config.BLOCKING_HEADER + "\n* a/b"}, "no known format"),
        (
            {
                "status": "False",
                "reason": "IncompatibleOperatorsInstalled",
                "message": openshift_config.BLOCKING_HEADER
                + "\n- maximum supported OCP version for a/b is 4.1\n- maximum supported OCP version for a/b is 4.2",
            },
            "twice",
        ),
    ],
)
def test_blocking_csvs_refuses_what_is_no_verdict(condition, error):
    with pytest.raises(ValueError, match=error):
        openshift_config.blocking_csvs(condition)


@pytest.mark.parametrize("release", ["4.20.0", "4.23.7", "5.0.0"])
def test_release_versions_accepted(release):
    assert openshift_config.check_release(release) == release


@pytest.mark.parametrize("release", ["", "4.20", "v4.20.0", "4.20.0-rc.1", "latest"])
def test_release_versions_refused(release):
    with pytest.raises(openshift_config.OpenShiftConfigError, match="major>.<minor>.<patch>"):
        openshift_config.check_release(release)


@pytest.mark.parametrize(
    ("go_mod", "expected"),
    [
        ("require (\n\tgithub.com/openshift/api v0.0.0-20260101000000-aaaaaaaaaaaa\n)\n", "v0.0.0-20260101000000-aaaaaaaaaaaa"),
        (
            "require (\n\tgithub.com/openshift/api v0.0.0-20260101000000-aaaaaaaaaaaa\n)\n"
            "replace github.com/openshift/api => github.com/openshift/api v0.0.0-20260202000000-bbbbbbbbbbbb\n",
            "v0.0.0-20260202000000-bbbbbbbbbbbb",
        ),
    ],
)
def test_pinned_version_follows_go_mod(tmp_path, go_mod, expected):
    (tmp_path / "go.mod").write_text("module example\n\n" + go_mod)
    assert openshift_config.pinned_version(tmp_path / "go.mod") == expected


def test_the_repository_pins_openshift_api():
    assert openshift_config.pinned_version().startswith("v0.0.0-")


def test_cluster_objects_and_status_name_the_release():
    objects = {o["kind"]: o for o in openshift_config.cluster_objects("4.20.3")}
    assert set(objects) == {"Proxy", "APIServer", "ClusterVersion"}
    assert objects["ClusterVersion"]["metadata"]["name"] == openshift_config.CLUSTER_VERSION
    assert objects["ClusterVersion"]["spec"]["channel"] == "stable-4.20"
    status = openshift_config.status_patch("4.20.3", "2026-11-29T10:00:00Z")["status"]
    assert status["desired"]["version"] == status["history"][0]["version"] == "4.20.3"
    assert status["history"][0]["state"] == "Completed"


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({}, (["--writeStatusName="], {})),
        ({"openshift_release": "4.20.0"}, (["--writeStatusName=operator-lifecycle-manager"], {"RELEASE_VERSION": "4.20.0"})),
    ],
)
def test_only_an_openshift_member_runs_olms_cluster_operator_controller(tmp_path, state, expected):
    from testbed import cluster, members

    main = cluster.Testbed(tmp_path)
    assert main._olm_operator_options() == (["--writeStatusName="], {})
    member = members.Member(main, members.OPENSHIFT_MEMBER)
    member.state = state
    assert member._olm_operator_options() == expected
