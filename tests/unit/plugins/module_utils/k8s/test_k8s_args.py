"""The auth argspec is kubernetes.core's, and the doc fragments document exactly what the argspecs expose."""

import pytest
import yaml
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

from ansible_collections.kubeforge.operators.plugins.doc_fragments.k8s_auth import ModuleDocFragment as AuthFragment
from ansible_collections.kubeforge.operators.plugins.doc_fragments.k8s_wait import ModuleDocFragment as WaitFragment
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import args


def test_documented_names_match_kubernetes_core():
    # Fails when kubernetes.core adds/removes an auth option: update AUTH_OPTION_NAMES and the k8s_auth fragment.
    assert set(args.AUTH_OPTION_NAMES) == set(AUTH_ARG_SPEC)


def test_auth_argspec_is_a_deep_copy_of_kubernetes_core():
    spec = args.auth_argspec()
    for name, option in spec.items():
        expected = dict(AUTH_ARG_SPEC[name])
        if name in args.SECRET_OPTIONS:
            expected["no_log"] = True
        assert option == expected
    spec["proxy_headers"]["options"]["user_agent"]["type"] = "int"
    spec["validate_certs"]["aliases"].append("mutated")
    assert AUTH_ARG_SPEC["proxy_headers"]["options"]["user_agent"].get("type") == "str"
    assert "mutated" not in AUTH_ARG_SPEC["validate_certs"]["aliases"]
    assert args.auth_argspec() == args.auth_argspec() and args.auth_argspec() is not args.auth_argspec()


@pytest.mark.parametrize("name", ["kubeconfig", "api_key", "password"])
def test_secrets_are_no_log(name):
    assert args.auth_argspec()[name]["no_log"] is True


def test_proxy_header_secrets_are_no_log():
    options = args.auth_argspec()["proxy_headers"]["options"]
    assert options["proxy_basic_auth"]["no_log"] is True
    assert options["basic_auth"]["no_log"] is True


def test_module_argspec_combines_and_module_options_win():
    own = {"name": {"type": "str", "required": True}, "wait": {"type": "bool", "default": True}}
    spec = args.module_argspec(own, auth=True, wait=True)
    assert set(args.AUTH_OPTION_NAMES) <= set(spec)
    assert spec["wait"] == {"type": "bool", "default": True}
    assert spec["wait_timeout"] == {"type": "int", "default": 120}
    assert spec["name"] == own["name"] and spec["name"] is not own["name"]
    assert set(args.module_argspec(own, auth=False)) == {"name", "wait"}


def _doc_options(fragment):
    return yaml.safe_load(fragment.DOCUMENTATION)["options"]


def _spec_type(option):
    return option.get("type", "str")


def _assert_doc_matches_spec(doc, spec):
    assert set(doc) == set(spec)
    for name, option in spec.items():
        documented = doc[name]
        assert documented["type"] == _spec_type(option), name
        assert sorted(documented.get("aliases", [])) == sorted(option.get("aliases", [])), name
        assert documented.get("elements") == option.get("elements"), name
        assert documented.get("default") == option.get("default"), name
        assert documented.get("choices") == option.get("choices"), name
        assert documented["description"], name
        if "options" in option:
            _assert_doc_matches_spec(documented["suboptions"], option["options"])
        else:
            assert "suboptions" not in documented, name


def test_k8s_auth_fragment_documents_the_auth_argspec():
    _assert_doc_matches_spec(_doc_options(AuthFragment), args.auth_argspec())


def test_k8s_wait_fragment_documents_the_wait_argspec():
    _assert_doc_matches_spec(_doc_options(WaitFragment), args.wait_argspec())


@pytest.mark.parametrize("fragment", [AuthFragment, WaitFragment])
def test_fragments_use_semantic_markup_only(fragment):
    # Old-style I()/C() references to options should be O()/V(); C() stays allowed for literal code.
    assert "I(" not in fragment.DOCUMENTATION
