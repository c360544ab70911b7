"""Every module refuses an option given where it would have no effect (options.Unused rules, checked by
runner.run_module before anything runs) - one row per rule, and the rules name only options the module has."""

import importlib

import pytest
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused, given, unused_options

MODULES = "ansible_collections.kubeforge.operators.plugins.modules."
DIGEST = "sha256:" + "a" * 64

# module, arguments, what the refusal says
ROWS = [
    ("bundle_image", {"path": "bundle", "dockerfile_only": True, "image": "r.example/b:v1"}, "image has no effect with dockerfile_only=true"),
    ("bundle_image", {"path": "bundle", "dockerfile_only": True, "oci_layout": "out"}, "oci_layout has no effect with dockerfile_only=true"),
    ("bundle_image", {"path": "bundle", "ca_file": "ca.crt"}, "ca_file has no effect without push=true"),
    ("catalog_image", {"path": "fbc", "dockerfile_only": True, "platform": "linux/arm64"}, "platform has no effect with dockerfile_only=true"),
    ("catalog_image", {"path": "fbc", "timeout": 5}, "timeout has no effect without push=true or a base_image to pull"),
    (
        "catalog_image",
        {"path": "fbc", "image": "r.example/c:v1", "base_image": "other.example/opm:v1", "registry_username": "me"},
        "registry_username has no effect without push=true unless base_image is on the registry of image",
    ),
    (
        "catalog_render",
        {"source": "fbc", "dest": "out", "bundle_lookup": ["b"], "opm_compat": "v1.46"},
        "bundle_lookup, opm_compat have no effect without template",
    ),
    ("catalog_render", {"template": "t.yaml", "dest": "out", "pull": False, "ca_file": "ca.crt"}, "ca_file has no effect unless something is pulled"),
    (
        "catalog_render",
        {"template": "t.yaml", "dest": "out", "ocp_versions": ["v4.16"], "migrate_levels": {"v4.16": "none"}, "migrate_level": "all"},
        "migrate_level has no effect when migrate_levels gives every one of ocp_versions its own level",
    ),
    ("catalog_render", {"template": "t.yaml", "dest": "out", "select": {"packages": [{"name": "p"}]}}, "select has no effect with template"),
    ("catalog_mirror", {"from_dir": "layout", "mirror": "m.example", "select": {"full": True}}, "select has no effect with from_dir"),
    ("catalog_mirror", {"source_image": "r.example/i:v1", "to_dir": "layout", "manifests_dir": "out"}, "manifests_dir has no effect with to_dir"),
    ("catalog_mirror", {"from_dir": "layout", "mirror": "m.example", "source_registry_username": "me"}, "source_registry_username has no effect with from_dir"),
    ("catalog_validate", {"path": "fbc", "ocp_version": "v4.20"}, "ocp_version has no effect without community_checks=true"),
    ("catalog_diff", {"old": "old", "new": "new", "docker_config": "auth.json"}, "docker_config has no effect without old_image or new_image"),
    ("catalog_template", {"path": "t.yaml", "latest_in_channel": "stable", "relink": False}, "relink has no effect without remove_bundle"),
    (
        "catalog_release",
        {"repo_path": "r", "package": "p", "version": "1.0.0", "bundle_path": "b", "bundle_image": "r.example/b:v1", "bundle_registry": "r.example/x"},
        "bundle_registry has no effect with bundle_image",
    ),
    (
        "catalog_release",
        {"repo_path": "r", "package": "p", "version": "1.0.0", "bundle_path": "b", "pull": False, "timeout": 5},
        "timeout has no effect with pull=false",
    ),
    (
        "olm_operator",
        {"namespace": "ns", "package": "p", "catalog": "c", "delete_crds_and_data": True},
        "delete_crds_and_data has no effect with state=present",
    ),
    (
        "olm_operator",
        {"namespace": "ns", "package": "p", "state": "absent", "delete_crds_and_data": True, "wait": False},
        "delete_crds_and_data has no effect with wait=false",
    ),
    (
        "olm_operator",
        {"namespace": "ns", "package": "p", "catalog": "c", "approval": "Manual", "approve_dependencies": False, "wait": False},
        "approve_dependencies has no effect with wait=false",
    ),
    ("olm_bundle_run", {"namespace": "ns", "bundle_dir": "b", "delete_crds_and_data": True}, "delete_crds_and_data has no effect with state=present"),
    ("olm_bundle_run", {"namespace": "ns", "bundle_dir": "b", "state": "absent", "pull_secret": "creds"}, "pull_secret has no effect without bundle_image"),
    ("olm_bundle_run", {"namespace": "ns", "bundle_dir": "b", "registry_auth": {"ca_file": "ca.crt"}}, "registry_auth has no effect without bundle_image"),
    (
        "olm_bundle_run",
        {"namespace": "ns", "bundle_dir": "b", "serve": "address", "catalog_address": "a:1", "opm_image": "mirror.example/opm:v1"},
        "opm_image has no effect with serve=address",
    ),
    (
        "olm_bundle_run",
        {"namespace": "ns", "bundle_dir": "b", "serve": "address", "catalog_address": "a:1", "index_image": "r.example/index:v1"},
        "index_image has no effect unless state=present and serve=pod",
    ),
    (
        "olm_bundle_run",
        {"namespace": "ns", "bundle_dir": "b", "serve": "address", "catalog_address": "a:1", "pull_secret": "creds"},
        "pull_secret has no effect",
    ),
    (
        "olm_cluster_extension",
        {"name": "x", "namespace": "ns", "package": "p", "delete_crds_and_data": True},
        "delete_crds_and_data has no effect with state=present",
    ),
    (
        "olm_cluster_extension",
        {"name": "x", "namespace": "ns", "package": "p", "service_account": "sa", "registry_auth": {"docker_config": "auth.json"}},
        "registry_auth has no effect without create_service_account=true",
    ),
    (
        "olm_migrate",
        {"package": "p", "namespace": "ns", "state": "rolled_back", "backup_dir": "b", "catalog": "c"},
        "catalog, backup_dir have no effect with state=rolled_back",
    ),
    ("olm_operator_info", {"namespace": "ns", "catalog": "c"}, "catalog has no effect without package"),
    ("olm_install", {"manifests_dir": "olm", "manifests_url": "https://mirror.example/olm"}, "manifests_url has no effect with manifests_dir"),
    ("olm_cluster_catalog_info", {"package": "p", "contents": False}, "package has no effect with contents=false"),
    (
        "olm_catalog_source",
        {"name": "c", "namespace": "ns", "image": "r.example/c@" + DIGEST, "update_interval": "10m"},
        "update_interval has no effect with an image pinned by digest",
    ),
    ("olm_diagnose", {"namespace": "ns", "log_lines": 10}, "log_lines has no effect without dest"),
    (
        "daemonset_canary",
        {"name": "d", "namespace": "ns", "images": {"c": "i"}, "wait": False, "wait_timeout": 60},
        "wait_timeout has no effect with wait=false",
    ),
    (
        "fleet_rollout",
        {"cluster": "c", "kind": "olm_v1", "name": "ext", "version": "0.2.0", "namespace": "ns"},
        "namespace has no effect with kind=olm_v1",
    ),
    (
        "fleet_rollout",
        {"cluster": "c", "kind": "olm_v1", "name": "ext", "version": "0.2.0", "approve_dependencies": False},
        "approve_dependencies has no effect except with kind=olm_v0",
    ),
    (
        "fleet_rollout",
        {"cluster": "c", "kind": "olm_v0", "name": "p", "namespace": "ns", "version": "0.2.0", "catalogd_ca_cert": "ca.crt"},
        "catalogd_ca_cert has no effect except with kind=olm_v1",
    ),
    (
        "fleet_rollout",
        {"cluster": "c", "kind": "olm_v0", "name": "p", "namespace": "ns", "version": "0.2.0", "canary": {"batch": "50%"}},
        "canary has no effect except with kind=daemonset",
    ),
    (
        "fleet_rollout",
        {"cluster": "c", "kind": "olm_v0", "name": "p", "namespace": "ns", "version": "0.2.0", "serial": [1, "100%"]},
        "serial has no effect without clusters, or with wave",
    ),
    ("scc", {"name": "custom", "state": "absent", "base": "restricted-v2", "privileged": True}, "base, privileged have no effect with state=absent"),
    ("scc_access", {"scc": "anyuid", "service_accounts": ["ns/sa"], "remove_from_scc_lists": True}, "remove_from_scc_lists has no effect with state=present"),
    ("pod_security", {"namespace": "ns", "state": "absent", "enforce": "baseline"}, "enforce has no effect with state=absent"),
]


@pytest.mark.parametrize("name, args, message", ROWS, ids=[f"{row[0]}-{i}" for i, row in enumerate(ROWS)])
def test_an_option_without_effect_is_refused_before_anything_runs(run_module, name, args, message):
    result = run_module(importlib.import_module(MODULES + name), args)
    assert result.get("failed") and message in result["msg"], result


def _rules(module):
    return [value for value in vars(module).values() if isinstance(value, Unused)] + [
        rule for value in vars(module).values() if isinstance(value, tuple) and value and all(isinstance(r, Unused) for r in value) for rule in value
    ]


@pytest.mark.parametrize("name", sorted({row[0] for row in ROWS}))
def test_the_rules_name_the_modules_options(name):
    module = importlib.import_module(MODULES + name)
    rules = _rules(module)
    assert rules, f"{name} has no Unused rules"
    options = set(module.argspec())
    for rule in rules:
        assert set(rule.options) <= options, (name, set(rule.options) - options)


def test_a_default_written_out_is_not_refused():
    rule = Unused(("timeout", "validate_certs", "lookup"), lambda p: p["push"], "without push=true")
    defaults = {"timeout": 60, "validate_certs": True, "lookup": None, "push": False}
    params = {"timeout": 60, "validate_certs": True, "lookup": [], "push": False}
    assert unused_options(params, [rule], defaults) == []
    assert [found[0] for found in unused_options(dict(params, validate_certs=False, lookup=["x"]), [rule], defaults)] == [["validate_certs", "lookup"]]
    assert given({"x": False}, "x", {"x": None}) is True  # false is a choice where the default is None


BASIC_TEMPLATE = """schema: olm.template.basic
entries:
  - schema: olm.package
    name: kube-green
    defaultChannel: alpha
  - schema: olm.channel
    package: kube-green
    name: alpha
    entries: []
"""
SEMVER_TEMPLATE = "schema: olm.semver\nGenerateMajorChannels: true\nStable:\n  Bundles: []\n"
GRAPH_INPUT = shared_conformance_data() / "opm-testdata" / "alpha" / "declcfg" / "write_test_expected" / "TestWriteYAML.Success.yaml"


def _template(tmp_path, text):
    path = tmp_path / "template.yaml"
    path.write_text(text)
    return str(path)


# Contradictions the rules cannot express (they need a file read, or a value's form): refused by the module's core.
FLEET = {"cluster": "c", "name": "p", "namespace": "ns"}
CONTRADICTIONS = [
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="daemonset", version="1.0.0"), "kind=daemonset needs images"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="daemonset", images={"c": "i"}, version="1.0.0"), "kind=daemonset moves images, not a version"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="olm_v0"), "kind=olm_v0 needs version"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="olm_v0", version="1.0.0", images={"c": "i"}), "images is only for kind=daemonset"),
    ("fleet_rollout", lambda tmp: {"cluster": "c", "name": "p", "kind": "olm_v0", "version": "1.0.0"}, "kind=olm_v0 needs namespace"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="olm_v0", version="1.0.0", soak_seconds=-1), "soak_seconds must be 0 or more"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="olm_v0", version="1.0.0", clusters=["a", "b"]), "cluster c is not one of clusters (a, b)"),
    ("fleet_rollout", lambda tmp: dict(FLEET, kind="olm_v0", version="1.0.0", rollout_id="a\nb"), "rollout_id must be one line"),
    (
        "scc_access",
        lambda tmp: {"state": "absent", "service_accounts": ["ns/sa"], "for_workload": {"kind": "Pod", "spec": {"containers": [{"name": "c"}]}}},
        "for_workload has no effect with state=absent unless scc is set",
    ),
    (
        "catalog_template",
        lambda tmp: {"path": _template(tmp, BASIC_TEMPLATE), "template_type": "semver", "latest_in_channel": "alpha"},
        "template_type semver does not apply",
    ),
    (
        "catalog_template",
        lambda tmp: {"path": _template(tmp, BASIC_TEMPLATE), "format": "json", "remove_bundle": ["kube-green.v0.0.1"]},
        "format json does not apply",
    ),
    (
        "catalog_render",
        lambda tmp: {"template": _template(tmp, BASIC_TEMPLATE), "dest": str(tmp / "out"), "opm_compat": "v1.46"},
        "opm_compat=v1.46 only changes semver templates",
    ),
    ("catalog_validate", lambda tmp: {"path": "fbc", "community_checks": True, "ocp_version": "4.20"}, "ocp_version must look like vX.Y"),
    (
        "catalog_release",
        lambda tmp: {"repo_path": "r", "package": "p", "version": "1.0.0", "bundle_path": "b", "gpg_key": "0xDEADBEEF", "sign": False},
        "sign=false contradicts gpg_key",
    ),
    (
        "catalog_graph",
        lambda tmp: {"path": str(GRAPH_INPUT), "package": "boba-fett", "min_edge": "anakin.v0.1.0"},
        "is a bundle of package anakin, not of boba-fett",
    ),
    (
        "catalog_template",
        lambda tmp: {
            "path": _template(tmp, BASIC_TEMPLATE),
            "add_bundle": {"image": "r.example/b:v1", "name": "other.v1.0.0", "channels": ["alpha"], "package": "other"},
        },
        "differs from the template's package kube-green",
    ),
    (
        "catalog_template",
        lambda tmp: {
            "path": _template(tmp, BASIC_TEMPLATE),
            "add_bundle": {"image": "r.example/b:v1", "name": "kube-green.v1.0.0", "channels": ["alpha"], "default_channel": "beta"},
        },
        "this one keeps defaultChannel alpha",
    ),
    (
        "catalog_template",
        lambda tmp: {
            "path": _template(tmp, SEMVER_TEMPLATE),
            "template_type": "semver",
            "add_bundle": {"image": "r.example/b:v1", "channels": ["stable"], "package": "p"},
        },
        "add_bundle.package is not supported for semver templates",
    ),
]


@pytest.mark.parametrize("name, args, message", CONTRADICTIONS, ids=[f"{row[0]}-{i}" for i, row in enumerate(CONTRADICTIONS)])
def test_a_contradiction_is_refused(run_module, tmp_path, name, args, message):
    result = run_module(importlib.import_module(MODULES + name), args(tmp_path))
    assert result.get("failed") and message in result["msg"], result
