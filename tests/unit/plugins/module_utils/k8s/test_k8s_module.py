"""KubeforgeModule (argspec composition, lazy client, run/exit/fail) and failure_from_exception."""


import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from kubernetes.client.rest import ApiException
from lib.fakes import FakeModule, ModuleExit

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import module as kf_module
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.args import AUTH_OPTION_NAMES
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import failure_from_exception


def make(**kwargs):
    return kf_module.KubeforgeModule(module_class=FakeModule, **kwargs)


def test_argspec_includes_auth_and_optionally_wait():
    module = make(argument_spec={"name": {"required": True}}, wait=True, supports_check_mode=True)
    spec = module._module.init_kwargs["argument_spec"]
    assert set(AUTH_OPTION_NAMES) <= set(spec)
    assert {"name", "wait", "wait_timeout"} <= set(spec)
    assert module._module.init_kwargs["supports_check_mode"] is True
    assert "wait" not in make(argument_spec={})._module.init_kwargs["argument_spec"]


def test_client_is_created_once_with_the_module(monkeypatch):
    created = []
    monkeypatch.setattr(kf_module, "get_client", lambda module: created.append(module) or "client")
    module = make()
    assert module.client == "client" and module.client == "client"
    assert created == [module]


def test_dry_run_follows_check_mode():
    module = make()
    assert module.dry_run is False
    module._module.check_mode = True
    assert module.dry_run is True


def test_run_exits_with_result():
    with pytest.raises(ModuleExit) as info:
        make().run(lambda m: {"changed": True, "result": {"a": 1}})
    assert info.value.kind == "exit"
    assert info.value.result == {"changed": True, "result": {"a": 1}}


def test_run_passes_warnings_to_module_warn():
    module = make()
    with pytest.raises(ModuleExit) as info:
        module.run(lambda m: {"warnings": ["careful"]})
    assert info.value.result == {"changed": False}
    assert module._module.warnings == ["careful"]


def test_run_maps_timeout_to_failure_with_partial_result():
    def execute(module):
        raise ResourceTimeoutError("Timed out", last_object={"status": {"phase": "Installing"}}, duration=3.5)

    with pytest.raises(ModuleExit) as info:
        make().run(execute)
    out = info.value.result
    assert info.value.kind == "fail"
    assert out["msg"] == "Timed out"
    assert out["result"] == {"status": {"phase": "Installing"}}
    assert out["duration"] == 3.5
    assert "ResourceTimeoutError" in out["exception"]


def test_failure_from_api_exception():
    error = ApiException(status=409, reason="Conflict")
    error.body = '{"kind": "Status", "message": "the object has been modified"}'
    failure = failure_from_exception(error)
    assert failure["msg"] == "the object has been modified"
    assert failure["status"] == 409 and failure["reason"] == "Conflict"


@pytest.mark.parametrize("exc", [K8sError("boom", status=500), CoreException("boom"), ValueError("boom")])
def test_failure_from_other_exceptions(exc):
    failure = failure_from_exception(exc)
    assert failure["msg"] == "boom"
    assert "reason" not in failure


def test_run_merges_partial_results_of_errors():
    def execute(module):
        raise K8sError("nope", result={"changed": False})

    with pytest.raises(ModuleExit) as info:
        make().run(execute)
    assert info.value.result["msg"] == "nope" and info.value.result["changed"] is False
