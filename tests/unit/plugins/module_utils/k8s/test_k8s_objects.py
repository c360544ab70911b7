"""create/apply/patch/delete helpers: (changed, before, after), dry_run=All in check mode, errors.

kubernetes.core's own K8SClient over lib.fakes.FakeDynamicClient: the requests are the ones kubernetes.core sends
(``dry_run`` added in check mode), answered as the API server answers them.
"""

import json

import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ForbiddenError
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import objects
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError


def cm(data, rv="1", **metadata):
    meta = {"name": "cfg", "namespace": "ns", "resourceVersion": rv, "uid": "u-1"}
    meta.update(metadata)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


DEFINITION = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns"}, "data": {"a": "1"}}


@pytest.fixture(params=[False, True], ids=["apply-for-real", "check-mode"])
def dry_run(request):
    return request.param


def config_maps(*stored, failures=()):
    """A fake API server storing ``stored`` ConfigMaps; its next writes fail with ``failures``."""
    fake = FakeDynamicClient({"ConfigMap": list(stored)}, served={("v1", "ConfigMap")})
    fake.failures["ConfigMap"] = list(failures)
    return fake


def client(fake, dry_run=False):
    return K8SClient(configuration=None, client=fake, dry_run=dry_run)


def resource(fake):
    return fake.resources.get("v1", "ConfigMap")


def mutations(fake):
    return [(verb, params) for verb, _kind, params in fake.calls if verb != "GET"]


def test_normalize_and_objects_differ_ignore_volatile_metadata():
    before = cm({"a": "1"}, rv="1", generation=1, managedFields=[{"manager": "x"}])
    after = cm({"a": "1"}, rv="2", generation=2, managedFields=[{"manager": "y"}])
    assert not objects.objects_differ(before, after)
    assert objects.objects_differ(before, cm({"a": "2"}))
    assert objects.objects_differ(None, after)
    assert before["metadata"]["resourceVersion"] == "1"  # normalize copies
    assert objects.normalize(None) is None


def test_create_when_absent(dry_run):
    fake = config_maps()
    result = objects.create_object(client(fake, dry_run), resource(fake), DEFINITION)
    assert result == (True, None, DEFINITION)
    [(verb, params)] = mutations(fake)
    assert verb == "CREATE" and params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run
    assert fake.objects["ConfigMap"] == ([] if dry_run else [DEFINITION])


def test_create_when_present_is_unchanged_and_reads_what_is_there(dry_run):
    """No GET first: the API server's 409 AlreadyExists says the object exists, then it is read."""
    fake = config_maps(cm({"a": "0"}))
    result = objects.create_object(client(fake, dry_run), resource(fake), DEFINITION)
    assert result.changed is False and result.before == result.after == cm({"a": "0"})
    assert [verb for verb, _kind, _params in fake.calls] == ["CREATE", "GET"]


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
    fake = config_maps(*[existing] if existing else [], failures=[refusal])
    if existing is not None:
        assert objects.create_object(client(fake), resource(fake), DEFINITION) == (False, existing, existing)
    else:
        with pytest.raises(K8sError) as info:
            objects.create_object(client(fake), resource(fake), DEFINITION)
        assert info.value.status == refusal.status
    assert [verb for verb, _kind, _params in fake.calls] == ["CREATE", "GET"]


def test_a_create_that_reaches_no_api_server_is_not_followed_by_a_read():
    fake = config_maps(cm({"a": "0"}), failures=[ConnectionRefusedError(111, "Connection refused")])
    with pytest.raises(K8sError, match="Connection refused"):
        objects.create_object(client(fake), resource(fake), DEFINITION)
    assert [verb for verb, _kind, _params in fake.calls] == ["CREATE"]


def test_server_side_apply(dry_run):
    fake = config_maps(cm({"a": "0"}))
    result = objects.apply_object(client(fake, dry_run), resource(fake), DEFINITION, field_manager="kubeforge", force_conflicts=True)
    assert result.changed is True and result.before == cm({"a": "0"}) and result.after["data"] == {"a": "1"}
    [(verb, params)] = mutations(fake)
    assert verb == "APPLY"
    assert params["server_side"] is True and params["field_manager"] == "kubeforge" and params["force_conflicts"] is True
    assert params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run
    assert fake.stored("ConfigMap", "cfg")["data"] == ({"a": "0"} if dry_run else {"a": "1"})


def test_apply_without_real_change_is_not_changed(dry_run):
    fake = config_maps(cm({"a": "1"}, rv="5"))
    result = objects.apply_object(client(fake, dry_run), resource(fake), DEFINITION, field_manager="kubeforge")
    assert result.changed is False and result.after["metadata"]["resourceVersion"] != "5"


def test_patch(dry_run):
    fake = config_maps(cm({"a": "0"}))
    result = objects.patch_object(client(fake, dry_run), resource(fake), "cfg", {"data": {"a": "1"}}, namespace="ns")
    assert result.changed is True and result.after["data"] == {"a": "1"}
    [(verb, _kind, params)] = fake.calls  # one request: no GET first
    assert verb == "PATCH" and params["content_type"] == "application/merge-patch+json"
    assert params["name"] == "cfg" and params["namespace"] == "ns"
    assert (params.get("dry_run") == "All") is dry_run


def test_patch_missing_object_is_404():
    fake = config_maps()
    with pytest.raises(K8sError) as info:
        objects.patch_object(client(fake), resource(fake), "cfg", {}, namespace="ns")
    assert info.value.status == 404
    assert "ConfigMap ns/cfg not found" in str(info.value)


def test_delete(dry_run):
    fake = config_maps(cm({"a": "1"}))
    result = objects.delete_object(client(fake, dry_run), resource(fake), "cfg", namespace="ns", propagation_policy="Foreground")
    assert result == (True, cm({"a": "1"}), None)
    [(verb, params)] = mutations(fake)
    assert verb == "DELETE" and params["body"]["propagationPolicy"] == "Foreground"
    assert (params.get("dry_run") == "All") is dry_run
    assert len(fake.objects["ConfigMap"]) == (1 if dry_run else 0)


def test_delete_of_one_version_sends_the_precondition():
    fake = config_maps(cm({"a": "1"}, rv="42"))
    assert objects.delete_object(client(fake), resource(fake), "cfg", namespace="ns", resource_version="42").changed is True
    [(verb, params)] = mutations(fake)
    assert params["body"]["preconditions"] == {"resourceVersion": "42"} and "propagationPolicy" not in params["body"]


def test_a_delete_of_another_version_is_refused_and_deletes_nothing():
    fake = config_maps(cm({"a": "1"}, rv="43"))
    with pytest.raises(K8sError) as info:
        objects.delete_object(client(fake), resource(fake), "cfg", namespace="ns", resource_version="42")
    assert info.value.status == 409 and fake.stored("ConfigMap", "cfg")["data"] == {"a": "1"}


def test_delete_with_finalizers_returns_terminating_object():
    fake = config_maps(cm({"a": "1"}, finalizers=["x"]))
    after = objects.delete_object(client(fake), resource(fake), "cfg", namespace="ns").after
    assert after["metadata"]["deletionTimestamp"] and after == fake.stored("ConfigMap", "cfg")


def test_delete_absent_is_unchanged():
    fake = config_maps()
    assert objects.delete_object(client(fake), resource(fake), "cfg", namespace="ns") == (False, None, None)
    assert mutations(fake) == []


def test_api_errors_carry_status_and_server_message():
    body = json.dumps({"kind": "Status", "message": 'configmaps "cfg" is forbidden', "code": 403})
    error = ApiException(status=403, reason="Forbidden")
    error.body = body
    fake = config_maps(failures=[error])
    with pytest.raises(K8sError) as info:
        objects.create_object(client(fake), resource(fake), DEFINITION)
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
