"""module_utils.credentials: the secrets of user info in image references, and the runner masking them in every
output of a real module run (its invocation.module_args included), as Ansible masks no_log values."""

import json

import pytest
from lib.runners import run_module_in_process
from testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import strings_in, userinfo_secrets
from ansible_collections.kubeforge.operators.plugins.modules import bundle_image

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
