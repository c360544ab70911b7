"""module_utils.credentials: the secrets of user info in image references, and the runner masking them in every
output of a real module run (its invocation.module_args included), as Ansible masks no_log values."""

import json

import pytest
from lib.runners import run_module_in_process
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import kubeconfig_secrets, strings_in, userinfo_secrets
from ansible_collections.kubeforge.operators.plugins.modules import bundle_image, olm_cluster_catalog, olm_operator

SECRET = "s3cr3t-PASSWORD"
DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    "value, secrets",
    [
        (f"robot:{SECRET}@registry.example:5000/team/op:v1", [f"robot:{SECRET}", SECRET]),
        (f"https://robot:{SECRET}@registry.example/team/op", [f"robot:{SECRET}", SECRET]),
        (f"robot:{SECRET}@registry.example/team/op@{DIGEST}", [f"robot:{SECRET}", SECRET]),
        (f"registry.example/team/op@{DIGEST}", []),
        ("robot@registry.example/team/op", []),  # a user name alone is no secret
        ("registry.example:5000/team/op:v1", []),
        ("a sentence with x@y.example/z in it", []),
        ("", []),
    ],
)
def test_userinfo_secrets(value, secrets):
    assert userinfo_secrets(value) == secrets


def test_strings_in_walks_nested_parameters():
    params = {"a": "x", "b": ["y", {"c": "z", "d": 1}], "e": None}
    assert sorted(strings_in(params)) == ["x", "y", "z"]


def test_a_password_in_an_image_reference_appears_in_no_output(capsys):
    image = f"robot:{SECRET}@127.0.0.1:5000/kubeforge/op-bundle:v1"
    bundle = data_path("opm-testdata", "alpha", "action", "testdata", "foo-bundle-v0.2.0")
    result = run_module_in_process(bundle_image, {"path": str(bundle), "image": image}, capsys)
    assert result.get("failed") and "must not contain credentials" in result["msg"], result
    assert SECRET not in json.dumps(result), result
    assert "invocation" in result and result["invocation"]["module_args"]["image"] != image, result


KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "testbed", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
    "users": [
        {"name": "admin", "user": {"token": SECRET}},
        {"name": "cert", "user": {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZLS0t"}},
        {
            "name": "oidc",
            "user": {"auth-provider": {"name": "oidc", "config": {"id-token": "eyJ.id", "client-secret": "cs-1", "idp-issuer-url": "https://idp"}}},
        },
        {
            "name": "exec",
            "user": {"exec": {"command": "get-token", "args": ["--client-secret", "cs-2"], "env": [{"name": "TOKEN_SEED", "value": "seed-1"}]}},
        },
    ],
    "contexts": [{"name": "testbed", "context": {"cluster": "testbed", "user": "admin"}}],
    "current-context": "testbed",
}


def test_kubeconfig_secrets_are_the_users_credentials_only():
    assert sorted(kubeconfig_secrets(KUBECONFIG)) == sorted([SECRET, "S0VZLS0t", "eyJ.id", "cs-1", "--client-secret", "cs-2", "seed-1"])
    assert kubeconfig_secrets({"clusters": KUBECONFIG["clusters"]}) == []


def test_a_kubeconfig_dict_masks_its_secrets_and_nothing_else(capsys):
    """kubernetes.core#870: a no_log dict option masked `v1`, the cluster name and `True` in every output."""
    args = {"kubeconfig": KUBECONFIG, "namespace": "testbed", "package": "kube-demo", "catalog": "v1", "version": "0.0.2", "approval": "Automatic"}
    result = run_module_in_process(olm_operator, args, capsys)
    assert result.get("failed") and result["msg"].startswith("version pins the operator"), result
    shown = json.dumps(result)
    assert all(secret not in shown for secret in kubeconfig_secrets(KUBECONFIG)), shown
    module_args = result["invocation"]["module_args"]
    assert module_args["namespace"] == "testbed" and module_args["catalog"] == "v1", module_args
    assert module_args["kubeconfig"]["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:1", module_args


@pytest.mark.parametrize("module", [bundle_image, olm_cluster_catalog])
def test_a_password_in_an_image_reference_is_masked_even_when_ansible_refuses_the_arguments(capsys, module):
    """AnsibleModule's own validation fails (an unknown option) before run_module: its invocation still hides it."""
    args = {"path": "bundle", "name": "c", "image": f"me:{SECRET}@registry.example.com/c:v1", "not_an_option": 1}
    result = run_module_in_process(module, args, capsys)
    assert result.get("failed") and "not_an_option" in result["msg"], result
    assert SECRET not in json.dumps(result) and "registry.example.com/c:v1" in json.dumps(result), result
