"""What counts as a change of a server-side apply (k8s/objects.py ``applied_change``, seen through a CatalogSource), and
olm_cluster/catalog_source.py's option checks before any request.

The cluster behaviour (apply, dry run, waits, OLM's verdicts) is proven on the testbed in
tests/integration/olm/test_catalog_source.py; these cases are the pure comparison, including the OLM behaviour seen
there (OLM rewrites a CSV's spec with ``strategy: {}`` right after it is created).
"""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import objects
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
    assert objects.applied_change(copy.deepcopy(definition), before, after, glue.FIELD_MANAGER) is expected


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
