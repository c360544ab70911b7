"""What counts as a change of a server-side apply (k8s/objects.py ``applied_change``, seen through a CatalogSource), and
olm_cluster/catalog_source.py's option checks before any request.

The cluster behaviour (apply, dry run, waits, OLM's verdicts) is proven on the testbed in
tests/integration/olm/test_catalog_source.py; these cases are the pure comparison, including the OLM behaviour seen
there (OLM rewrites a CSV's spec with ``strategy: {}`` right after it is created).
"""

import copy
import json

import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError
from lib.fakes import FakeModule

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import cluster as k8s_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import objects
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import catalog_source as glue
from ansible_collections.kubeforge.operators.plugins.modules import olm_catalog_source

DEFINITION = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "CatalogSource",
    "metadata": {"name": "c", "namespace": "olm"},
    "spec": {"sourceType": "grpc", "address": "127.0.0.1:1", "displayName": "C"},
}
OURS = {"f:spec": {"f:address": {}, "f:displayName": {}, "f:sourceType": {}}}


def stored(spec=None, status=None, owned="ours", others=(), rv="1", annotations=None):
    owned = OURS if owned == "ours" else owned
    metadata = {"name": "c", "namespace": "olm", "resourceVersion": rv, "managedFields": []}
    if owned is not None:
        metadata["managedFields"].append({"manager": "kubeforge", "operation": "Apply", "fieldsV1": owned})
    metadata["managedFields"].extend({"manager": m, "operation": "Update", "fieldsV1": f} for m, f in others)
    if annotations:
        metadata["annotations"] = annotations
    obj = {"apiVersion": DEFINITION["apiVersion"], "kind": "CatalogSource", "metadata": metadata, "spec": dict(spec or DEFINITION["spec"])}
    if status is not None:
        obj["status"] = status
    return obj


CSV_DEPLOYMENT = {"name": "d", "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}
CSV_DEFINITION = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "p", "namespace": "olm"},
    "spec": {"install": {"strategy": "deployment", "spec": {"deployments": [CSV_DEPLOYMENT]}}},
}


def csv(deployment, managers):
    return {
        "metadata": {"name": "p", "namespace": "olm", "managedFields": [{"manager": m, "fieldsV1": f} for m, f in managers]},
        "spec": {"install": {"strategy": "deployment", "spec": {"deployments": [deployment]}}},
        "status": {"phase": "Succeeded"},
    }


NORMALISED = dict(CSV_DEPLOYMENT, spec=dict(CSV_DEPLOYMENT["spec"], strategy={}))
CSV_OURS = {"f:spec": {"f:install": {"f:spec": {"f:deployments": {}}, "f:strategy": {}}}}
CSV_WITHOUT_DEPLOYMENTS = {"f:spec": {"f:install": {"f:spec": {}, "f:strategy": {}}}}

CASES = [
    ("created", DEFINITION, None, stored(), True),
    ("identical", DEFINITION, stored(), stored(rv="1"), False),
    ("status written by OLM meanwhile", DEFINITION, stored(), stored(status={"connectionState": {"lastObservedState": "READY"}}, rv="2"), False),
    ("annotation written by a controller", DEFINITION, stored(), stored(annotations={"x": "y"}, rv="2"), False),
    (
        "a value changed",
        dict(DEFINITION, spec=dict(DEFINITION["spec"], displayName="D")),
        stored(),
        stored(spec=dict(DEFINITION["spec"], displayName="D")),
        True,
    ),
    (
        "a field we owned is dropped",
        dict(DEFINITION, spec={"sourceType": "grpc", "address": "127.0.0.1:1"}),
        stored(),
        stored(spec={"sourceType": "grpc", "address": "127.0.0.1:1"}, owned={"f:spec": {"f:address": {}, "f:sourceType": {}}}),
        True,
    ),
    # first apply over an object someone else created with the same values: we only become co-owners
    ("co-ownership only", DEFINITION, stored(owned=None, others=[("kubectl", OURS)]), stored(others=[("kubectl", OURS)]), False),
    ("field owned by someone else, value forced", DEFINITION, stored(spec=dict(DEFINITION["spec"], address="x:2"), owned=None), stored(), True),
    # OLM normalises our deployment list (adds strategy: {}) and takes it over; re-applying takes it back
    (
        "OLM's normalised copy taken back",
        CSV_DEFINITION,
        csv(NORMALISED, [("kubeforge", CSV_WITHOUT_DEPLOYMENTS), ("olm", CSV_OURS)]),
        csv(CSV_DEPLOYMENT, [("kubeforge", CSV_OURS)]),
        False,
    ),
    (
        "a real change of the CSV",
        CSV_DEFINITION,
        csv(NORMALISED, [("kubeforge", CSV_OURS)]),
        csv(dict(CSV_DEPLOYMENT, name="e"), [("kubeforge", CSV_OURS)]),
        True,
    ),
    ("a list item dropped", {"spec": {"l": [1]}}, {"spec": {"l": [1, 2]}}, {"spec": {"l": [1]}}, True),
]


@pytest.mark.parametrize("case, definition, before, after, expected", CASES, ids=[row[0] for row in CASES])
def test_applied_change(case, definition, before, after, expected):
    assert objects.applied_change(copy.deepcopy(definition), before, after, k8s_cluster.FIELD_MANAGER) is expected


def test_public_drops_managed_fields_only():
    obj = stored()
    out = glue.public(obj)
    assert "managedFields" not in out["metadata"] and out["metadata"]["name"] == "c" and out["spec"] == obj["spec"]
    assert "managedFields" in obj["metadata"]  # the input is not modified
    assert glue.public(None) is None


@pytest.mark.parametrize(
    "args, fragment",
    [
        (dict(address="127.0.0.1:1", update_interval="10m"), "update_interval is only valid with image"),
        (dict(image="quay.io/x/c:v1", update_interval="ten minutes"), "Go duration"),
        (dict(address="127.0.0.1"), "host:port"),
        (dict(address="127.0.0.1:1", image="quay.io/x/c:v1"), "mutually exclusive"),
    ],
)
def test_invalid_options_fail_before_contacting_a_cluster(run_module, args, fragment):
    # no kubeconfig, no cluster: the failure must come from the option checks
    result = run_module(olm_catalog_source, dict(args, name="c", namespace="olm", host="https://127.0.0.1:9", wait=True))
    assert result["failed"] is True and fragment in result["msg"], result


# ------------------------------------------------------------------------ force_conflicts, option to request


class ApplyRecorder:
    """A CatalogSource resource as kubernetes.core's K8SClient calls it: records applies, answers or refuses them."""

    kind = "CatalogSource"

    def __init__(self, error=None):
        self.error = error
        self.applies = []

    def get(self, **params):
        raise NotFoundError(ApiException(status=404, reason="Not Found"))

    def apply(self, definition, **params):
        self.applies.append(params)
        if self.error is not None:
            raise self.error
        return dict(definition, metadata=dict(definition["metadata"], resourceVersion="1"))


def catalog_source_module(resource, **params):
    """What olm_cluster.catalog_source reads of a KubeforgeModule; params start from the module's own defaults."""
    return FakeModule(
        {"name": "c", "namespace": "olm", "address": "127.0.0.1:1", "wait": False, "wait_timeout": 120, **params},
        argument_spec=olm_catalog_source.argspec(),
        client=K8SClient(configuration=None, client=None, dry_run=False),
        resources={("CatalogSource", "operators.coreos.com/v1alpha1"): resource},
    )


def conflict(managers):
    """The API server's answer to a server-side apply that would change fields other managers own."""
    conflicts = "".join(f'conflict with "{m}" using operators.coreos.com/v1alpha1: .spec.displayName' for m in managers)
    message = f"Apply failed with {len(managers)} conflict: {conflicts}"
    error = ApiException(status=409, reason="Conflict")
    error.body = json.dumps({"kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409, "message": message})
    return ConflictError(error), message


def test_force_conflicts_is_off_by_default():
    assert olm_catalog_source.argspec()["force_conflicts"] == {"type": "bool", "default": False}
    resource = ApplyRecorder()
    result = glue.execute(catalog_source_module(resource))
    assert result["changed"] is True
    [params] = resource.applies
    assert params["force_conflicts"] is False
    assert params["server_side"] is True and params["field_manager"] == k8s_cluster.FIELD_MANAGER


def test_force_conflicts_true_reaches_the_request():
    resource = ApplyRecorder()
    glue.execute(catalog_source_module(resource, force_conflicts=True))
    assert [params["force_conflicts"] for params in resource.applies] == [True]


@pytest.mark.parametrize("force", [False, True])
def test_apply_helper_passes_force_conflicts(force):
    resource = ApplyRecorder()
    client = K8SClient(configuration=None, client=None, dry_run=False)
    changed, before, after = k8s_cluster.apply(client, resource, copy.deepcopy(DEFINITION), force_conflicts=force)
    assert (changed, before, after["spec"]) == (True, None, DEFINITION["spec"])
    assert resource.applies[0]["force_conflicts"] is force
    k8s_cluster.apply(client, resource, copy.deepcopy(DEFINITION))
    assert resource.applies[1]["force_conflicts"] is False  # the helper's default


def test_a_conflict_fails_with_the_servers_message_and_names_the_option():
    error, message = conflict(["marketplace-operator"])
    with pytest.raises(K8sError) as info:
        glue.execute(catalog_source_module(ApplyRecorder(error=error), display_name="Mine"))
    assert info.value.status == 409
    text = str(info.value)
    assert text.startswith(f"Failed to apply CatalogSource c: {message}")
    assert '"marketplace-operator"' in text and ".spec.displayName" in text
    assert "olm/c" in text and "force_conflicts=true" in text


def test_other_api_errors_are_not_called_conflicts():
    error = ApiException(status=403, reason="Forbidden")
    error.body = json.dumps({"kind": "Status", "message": 'catalogsources.operators.coreos.com "c" is forbidden', "code": 403})
    with pytest.raises(K8sError) as info:
        glue.execute(catalog_source_module(ApplyRecorder(error=error)))
    assert info.value.status == 403
    assert "force_conflicts" not in str(info.value) and "is forbidden" in str(info.value)
