"""create/apply/patch/delete helpers: (changed, before, after), dry_run=All in check mode, errors."""

import json

import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError, ForbiddenError, NotFoundError

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import objects
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError


def not_found():
    return NotFoundError(ApiException(status=404, reason="Not Found"))


class FakeResource:
    """Records calls as kubernetes.core's K8SClient makes them; returns canned responses."""

    kind = "ConfigMap"

    def __init__(self, existing=None, response=None, error=None):
        self.existing = existing
        self.response = response
        self.error = error
        self.calls = []

    def get(self, **params):
        self.calls.append(("get", params))
        if self.existing is None:
            raise not_found()
        return self.existing

    def _mutate(self, verb, params):
        self.calls.append((verb, params))
        if self.error is not None:
            raise self.error
        if verb == "create" and self.existing is not None:
            raise ConflictError(ApiException(status=409, reason="Conflict"))
        if verb == "patch" and self.existing is None:
            raise not_found()
        return self.response

    def create(self, definition, **params):
        return self._mutate("create", dict(params, body=definition))

    def apply(self, definition, **params):
        return self._mutate("apply", dict(params, body=definition))

    def patch(self, definition, **params):
        return self._mutate("patch", dict(params, body=definition))

    def delete(self, **params):
        return self._mutate("delete", params)

    def mutations(self):
        return [(verb, params) for verb, params in self.calls if verb != "get"]


def cm(data, rv="1", **metadata):
    meta = {"name": "cfg", "namespace": "ns", "resourceVersion": rv, "uid": "u-1"}
    meta.update(metadata)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


DEFINITION = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns"}, "data": {"a": "1"}}


@pytest.fixture(params=[False, True], ids=["apply-for-real", "check-mode"])
def dry_run(request):
    return request.param


def client(dry_run):
    return K8SClient(configuration=None, client=None, dry_run=dry_run)


def test_normalize_and_objects_differ_ignore_volatile_metadata():
    before = cm({"a": "1"}, rv="1", generation=1, managedFields=[{"manager": "x"}])
    after = cm({"a": "1"}, rv="2", generation=2, managedFields=[{"manager": "y"}])
    assert not objects.objects_differ(before, after)
    assert objects.objects_differ(before, cm({"a": "2"}))
    assert objects.objects_differ(None, after)
    assert before["metadata"]["resourceVersion"] == "1"  # normalize copies
    assert objects.normalize(None) is None


def test_create_when_absent(dry_run):
    resource = FakeResource(existing=None, response=cm({"a": "1"}, creationTimestamp="now"))
    result = objects.create_object(client(dry_run), resource, DEFINITION)
    assert result == (True, None, cm({"a": "1"}, creationTimestamp="now"))
    [(verb, params)] = resource.mutations()
    assert verb == "create" and params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run


def test_create_when_present_is_unchanged_and_reads_what_is_there(dry_run):
    """No GET first: the API server's 409 AlreadyExists says the object exists, then it is read."""
    resource = FakeResource(existing=cm({"a": "0"}))
    result = objects.create_object(client(dry_run), resource, DEFINITION)
    assert result.changed is False and result.before == result.after == cm({"a": "0"})
    assert [verb for verb, _params in resource.calls] == ["create", "get"]


@pytest.mark.parametrize(
    ("refusal", "existing"),
    [
        (ForbiddenError(ApiException(status=403, reason="Forbidden")), cm({"a": "0"})),  # least privilege: may read, not create
        (ForbiddenError(ApiException(status=403, reason="Forbidden")), None),
        (ApiException(status=422, reason="Unprocessable Entity"), cm({"a": "0"})),  # admission would reject the definition
        (ApiException(status=422, reason="Unprocessable Entity"), None),
    ],
    ids=["forbidden-existing", "forbidden-missing", "invalid-existing", "invalid-missing"],
)
def test_a_refused_create_leaves_an_existing_object_as_it_is(refusal, existing):
    """As before creates were sent without a GET first: an existing object is never an error, a missing one is."""
    resource = FakeResource(existing=existing, error=refusal)
    if existing is not None:
        assert objects.create_object(client(False), resource, DEFINITION) == (False, existing, existing)
    else:
        with pytest.raises(K8sError) as info:
            objects.create_object(client(False), resource, DEFINITION)
        assert info.value.status == refusal.status
    assert [verb for verb, _params in resource.calls] == ["create", "get"]


def test_a_create_that_reaches_no_api_server_is_not_followed_by_a_read():
    resource = FakeResource(existing=cm({"a": "0"}), error=ConnectionRefusedError(111, "Connection refused"))
    with pytest.raises(K8sError, match="Connection refused"):
        objects.create_object(client(False), resource, DEFINITION)
    assert [verb for verb, _params in resource.calls] == ["create"]


def test_server_side_apply(dry_run):
    resource = FakeResource(existing=cm({"a": "0"}), response=cm({"a": "1"}, rv="2"))
    result = objects.apply_object(client(dry_run), resource, DEFINITION, field_manager="kubeforge", force_conflicts=True)
    assert result == (True, cm({"a": "0"}), cm({"a": "1"}, rv="2"))
    [(verb, params)] = resource.mutations()
    assert verb == "apply"
    assert params["server_side"] is True and params["field_manager"] == "kubeforge" and params["force_conflicts"] is True
    assert params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run


def test_apply_without_real_change_is_not_changed(dry_run):
    resource = FakeResource(existing=cm({"a": "1"}, rv="5"), response=cm({"a": "1"}, rv="6"))
    assert objects.apply_object(client(dry_run), resource, DEFINITION, field_manager="kubeforge").changed is False


def test_patch(dry_run):
    resource = FakeResource(existing=cm({"a": "0"}), response=cm({"a": "1"}, rv="2"))
    result = objects.patch_object(client(dry_run), resource, "cfg", {"data": {"a": "1"}}, namespace="ns")
    assert result.changed is True
    [(verb, params)] = resource.calls  # one request: no GET first
    assert params["content_type"] == "application/merge-patch+json"
    assert params["name"] == "cfg" and params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run


def test_patch_missing_object_is_404():
    resource = FakeResource(existing=None)
    with pytest.raises(K8sError) as info:
        objects.patch_object(client(False), resource, "cfg", {}, namespace="ns")
    assert info.value.status == 404
    assert "ConfigMap ns/cfg not found" in str(info.value)


def test_delete(dry_run):
    status = {"kind": "Status", "status": "Success"}
    resource = FakeResource(existing=cm({"a": "1"}), response=status)
    result = objects.delete_object(client(dry_run), resource, "cfg", namespace="ns", propagation_policy="Foreground")
    assert result == (True, cm({"a": "1"}), None)
    [(verb, params)] = resource.mutations()
    assert params["body"]["propagationPolicy"] == "Foreground"
    assert (params.get("dry_run") == "All") is dry_run


def test_delete_of_one_version_sends_the_precondition():
    resource = FakeResource(existing=cm({"a": "1"}), response={"kind": "Status", "status": "Success"})
    objects.delete_object(client(False), resource, "cfg", namespace="ns", resource_version="42")
    [(verb, params)] = resource.mutations()
    assert params["body"]["preconditions"] == {"resourceVersion": "42"} and "propagationPolicy" not in params["body"]


def test_delete_with_finalizers_returns_terminating_object():
    terminating = cm({"a": "1"}, deletionTimestamp="2026-11-21T00:00:00Z", finalizers=["x"])
    resource = FakeResource(existing=cm({"a": "1"}), response=terminating)
    assert objects.delete_object(client(False), resource, "cfg", namespace="ns").after == terminating


def test_delete_absent_is_unchanged():
    resource = FakeResource(existing=None)
    assert objects.delete_object(client(False), resource, "cfg", namespace="ns") == (False, None, None)
    assert resource.mutations() == []


def test_api_errors_carry_status_and_server_message():
    body = json.dumps({"kind": "Status", "message": 'configmaps "cfg" is forbidden', "code": 403})
    error = ApiException(status=403, reason="Forbidden")
    error.body = body
    resource = FakeResource(existing=None, error=error)
    with pytest.raises(K8sError) as info:
        objects.create_object(client(False), resource, DEFINITION)
    assert info.value.status == 403
    assert str(info.value) == 'Failed to create ConfigMap cfg: configmaps "cfg" is forbidden'


def test_to_dict():
    class Instance:
        def to_dict(self):
            return {"x": 1}

    assert objects.to_dict(Instance()) == {"x": 1}
    assert objects.to_dict(None) is None
    with pytest.raises(InvalidInputError, match="cannot convert"):  # a KubeforgeError; a ValueError for the watch's decoding guard
        objects.to_dict(42)
