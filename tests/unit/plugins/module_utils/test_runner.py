"""module_utils.runner: the one module contract and its error mapping table."""

import gc

import pytest
from kubernetes.client.rest import ApiException
from lib.fakes import FakeModule, ModuleExit

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, LoadError
from ansible_collections.kubeforge.operators.plugins.module_utils.git import GitError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import AuthenticationError, OCIError
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import (
    MESSAGE_LIMIT,
    failure_from_exception,
    run_module,
)


def _api_error():
    error = ApiException(status=409, reason="Conflict")
    error.body = '{"kind": "Status", "message": "the object has been modified"}'
    return error


@pytest.mark.parametrize("exc,fields", [
    (LoadError("bad", path="/c/x.yaml"), {"msg": "/c/x.yaml: bad"}),
    (AuthenticationError("denied", registry="r.example", repository="a/b", status=401),
     {"msg": "denied", "registry": "r.example", "repository": "a/b", "status": 401}),
    (OCIError("no registry"), {"msg": "no registry"}),
    (K8sError("gone", status=404), {"msg": "gone", "status": 404}),
    (ResourceTimeoutError("Timed out", last_object={"a": 1}, duration=2.0),
     {"msg": "Timed out", "result": {"a": 1}, "duration": 2.0}),
    (GitError("git push failed (exit 1): x"), {"msg": "git push failed (exit 1): x"}),
    (_api_error(), {"msg": "the object has been modified", "status": 409, "reason": "Conflict"}),
    (ValueError("bad value"), {"msg": "bad value"}),
    (FileNotFoundError(2, "No such file or directory", "/x"), {"msg": "[Errno 2] No such file or directory: '/x'"}),
    (KeyError("k"), {"msg": "KeyError: 'k'"}),
])
def test_failure_table(exc, fields):
    failure = failure_from_exception(exc)
    exception = failure.pop("exception")
    assert failure == fields
    assert exception.endswith("%s: %s\n" % (type(exc).__name__, fields["msg"]))


def test_every_domain_error_has_one_root():
    for cls in (FBCError, OCIError, K8sError, GitError):
        assert issubclass(cls, KubeforgeError)


def test_messages_and_tracebacks_are_bounded():
    huge = "x" * (16 << 20)
    failure = failure_from_exception(ValueError(huge))
    assert len(failure["msg"]) < MESSAGE_LIMIT + 100 and len(failure["exception"]) < MESSAGE_LIMIT + 2000
    assert failure["msg"].endswith("(%d more characters)" % (len(huge) - MESSAGE_LIMIT))
    assert excerpt("abc", 2) == "ab… (1 more characters)" and excerpt("ab", 2) == "ab"


def test_run_module_exits_with_result_and_warnings():
    module = FakeModule()
    with pytest.raises(ModuleExit):
        run_module(module, lambda m: {"x": 1, "warnings": ["w1"]})
    assert module.exited == {"x": 1, "changed": False} and module.warnings == ["w1"]


def test_run_module_puts_what_exists_before_it_out_of_the_collectors_reach():
    gc.unfreeze()
    alive = [object(), {"k": [1]}]
    with pytest.raises(ModuleExit):
        run_module(FakeModule(), lambda m: {})
    assert gc.get_freeze_count() > 0
    assert not any(obj is alive[1] for obj in gc.get_objects())  # frozen objects are not listed among the tracked ones
    gc.unfreeze()


def test_run_module_sends_warnings_of_a_failure_to_warn():
    module = FakeModule()

    def execute(m):
        raise KubeforgeError("refused", result={"partial": 1, "warnings": ["careful"]})

    with pytest.raises(ModuleExit):
        run_module(module, execute)
    assert module.failed["msg"] == "refused" and module.failed["partial"] == 1
    assert "warnings" not in module.failed and module.warnings == ["careful"]


@pytest.mark.parametrize("diff_mode, kept", [(True, True), (False, False)])
def test_run_module_returns_diff_only_in_diff_mode(diff_mode, kept):
    module = FakeModule()
    module._diff = diff_mode
    with pytest.raises(ModuleExit):
        run_module(module, lambda m: {"changed": True, "diff": {"before": {}, "after": {"a": 1}}})
    assert ("diff" in module.exited) is kept and module.exited["changed"] is True


def test_run_module_fails_from_exception_and_missing_library():
    module = FakeModule()

    def execute(m):
        raise FBCError("broken")

    with pytest.raises(ModuleExit):
        run_module(module, execute)
    assert module.failed["msg"] == "broken" and module.exited is None
    module = FakeModule()
    with pytest.raises(ModuleExit):
        run_module(module, execute, requirements=[("PyYAML", "Traceback: no yaml")])
    assert "PyYAML" in module.failed["msg"] and module.failed["exception"] == "Traceback: no yaml"
