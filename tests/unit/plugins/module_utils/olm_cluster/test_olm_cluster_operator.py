"""olm_cluster.operator: since when the Subscription's CatalogSource counts as READY (see olm.operator's grace for a
resolution that failed before the catalog was served)."""

import time

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import parse_time
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as glue

ADDRESS = "127.0.0.1:50051"
OLD_CONNECT = "2026-11-27T11:44:23Z"


def snapshot(state=None, last_connect=OLD_CONNECT):
    source = {"metadata": {"name": "cat"}, "spec": {"sourceType": "grpc", "address": ADDRESS}, "status": {}}
    if state:
        source["status"]["connectionState"] = {"address": ADDRESS, "lastObservedState": state, "lastConnect": last_connect}
    return {"catalog": {"cat": source}}


def test_ready_at_first_sight_counts_from_its_last_connection():
    assert glue.catalog_ready_since(snapshot("READY"), "cat", {}) == parse_time(OLD_CONNECT)


def test_ready_after_this_run_saw_it_not_ready_counts_from_then():
    """OLM stamps lastConnect when it starts connecting; on a busy OLM, READY came 28 s later."""
    seen = {}
    assert glue.catalog_ready_since(snapshot(), "cat", seen) is None
    assert glue.catalog_ready_since(snapshot("CONNECTING"), "cat", seen) is None
    before = time.time()
    since = glue.catalog_ready_since(snapshot("READY"), "cat", seen)
    assert since >= before > parse_time(OLD_CONNECT)
    # Later snapshots keep the moment READY was first seen.
    assert glue.catalog_ready_since(snapshot("READY"), "cat", seen) == since


def test_an_unreadable_catalog_counts_as_ready_long_ago():
    assert glue.catalog_ready_since({"catalog": None}, "cat", {}) == 0.0


@pytest.mark.parametrize(
    "options, text",
    [
        ({"version": "0.0.2", "approval": "Automatic"}, "version pins the operator, which needs approval=Manual"),
        ({"starting_csv": "kube-demo.v0.0.2", "approval": "Automatic"}, "starting_csv pins the operator, which needs approval=Manual"),
        ({"approve_dependencies": False, "approval": "Automatic"}, "approve_dependencies=false needs approval=Manual"),
    ],
)
def test_options_that_would_have_no_effect_are_refused_before_any_request(options, text):
    """OLM approves every InstallPlan itself under Automatic approval: neither a pin nor a dependency veto holds."""
    params = dict({"namespace": "demo", "package": "kube-demo", "catalog": "cat"}, **options)
    with pytest.raises(glue.OperatorError, match=text):
        glue.install(None, params, check_mode=False, wait=True, timeout=10)
