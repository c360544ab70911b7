"""The registry argspec matches the registry_auth doc fragment, is a fresh copy, and maps params to client kwargs."""

import yaml

from ansible_collections.kubeforge.operators.plugins.doc_fragments.registry_auth import ModuleDocFragment
from ansible_collections.kubeforge.operators.plugins.module_utils.oci import args
from ansible_collections.kubeforge.operators.plugins.modules import (
    catalog_image,
    catalog_release,
    catalog_render,
    fleet_rollout,
    olm_bundle_run,
    olm_cluster_extension,
    olm_upgrade_plan,
)


def test_fragment_documents_exactly_the_argspec():
    documented = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    spec = args.registry_argspec()
    assert list(documented) == list(spec) == list(args.REGISTRY_OPTION_NAMES)
    for name, option in spec.items():
        assert documented[name]["type"] == option["type"]
        assert documented[name].get("default") == option.get("default")
    assert spec["registry_password"]["no_log"] is True


def test_dict_fragment_documents_exactly_the_registry_auth_suboptions():
    documented = yaml.safe_load(ModuleDocFragment.DICT_OPTION)["options"]["registry_auth"]
    spec = args.registry_auth_argspec()
    assert documented["type"] == "dict"
    assert list(documented["suboptions"]) == list(spec)
    for name, option in spec.items():
        assert documented["suboptions"][name]["type"] == option["type"]
        assert documented["suboptions"][name].get("default") == option.get("default")


def test_argspec_is_a_fresh_copy():
    spec = args.registry_argspec()
    spec["timeout"]["default"] = 1
    spec.pop("ca_file")
    assert args.registry_argspec()["timeout"]["default"] == 60 and "ca_file" in args.registry_argspec()


def test_modules_use_the_shared_options():
    for module in (catalog_image, catalog_render, catalog_release):
        spec = module.argspec()
        assert dict((k, spec[k]) for k in args.REGISTRY_OPTION_NAMES) == args.registry_argspec()


def test_client_kwargs():
    params = dict(registry_username="u", registry_password="p", docker_config="/d", ca_file="/ca",
                  validate_certs=False, plain_http=True, timeout=5, unrelated=1)
    assert args.registry_client_kwargs(params) == dict(username="u", password="p", docker_config="/d", ca_file="/ca",
                                                       verify=False, plain_http=True, timeout=5)
    assert args.registry_client_kwargs(params, credentials=False) == dict(docker_config="/d", ca_file="/ca",
                                                                          verify=False, plain_http=True, timeout=5)
    # missing params get the argspec defaults
    assert args.registry_client_kwargs({}) == dict(username=None, password=None, docker_config=None, ca_file=None,
                                                   verify=True, plain_http=False, timeout=60)


def test_registry_auth_suboptions_are_the_options_without_their_prefix():
    suboptions = args.registry_auth_argspec()
    assert list(suboptions) == ["username", "password", "docker_config", "ca_file", "validate_certs", "plain_http", "timeout"]
    assert suboptions["password"]["no_log"] is True
    for module in (olm_bundle_run, olm_cluster_extension, fleet_rollout):
        assert module.argspec()["registry_auth"] == {"type": "dict", "options": suboptions}, module.__name__
    assert olm_upgrade_plan.argspec()["catalogs"]["options"]["registry_auth"] == {"type": "dict", "options": suboptions}
    # and back, under the names registry_client_kwargs reads; unset values left out
    params = args.registry_auth_params({"username": "u", "password": "p", "ca_file": None, "validate_certs": False})
    assert params == {"registry_username": "u", "registry_password": "p", "validate_certs": False}
    assert args.registry_client_kwargs(params)["username"] == "u" and args.registry_auth_params(None) == {}
