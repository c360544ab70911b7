"""olm_operator on installs OLM keeps waiting on for good, against the testbed's real OLM v0 and kube-scheduler: the
module fails once the state has outlasted its grace period (30 s), with OLM's or the scheduler's own words, instead of
waiting out ``wait_timeout``.

- kube-needsapi: its CSV names a native API no cluster serves; OLM's resolver plans it anyway and the CSV stays
  Pending/RequirementsNotMet.
- kube-toobig: its operator's pod asks for 1000 CPUs; the scheduler never places it. (A Subscription ``config``
  with a nodeSelector no node has would not do: OLM applies the config only to a Deployment that became available.)

Both installs run at once (one waits while the other does), each in a namespace of its own.
"""

import json
import time

import pytest
from lib.olm_catalog import CATALOG, make_catalog
from lib.runners import start_module_subprocess

pytestmark = pytest.mark.testbed

WAIT_TIMEOUT = 240


def _install(package, namespace, kubeconfig, **args):
    return dict(kubeconfig=kubeconfig, namespace=namespace, package=package, catalog=CATALOG, channel="stable", wait_timeout=WAIT_TIMEOUT, **args)


@pytest.fixture
def second_ns(api, custom, namespace, testbed):
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = namespace[:50] + "-b"
    core.create_namespace({"metadata": {"name": name}})
    make_catalog(custom, name, testbed.catalog_address)
    yield name
    core.delete_namespace(name)


def test_installs_olm_would_wait_on_for_good_fail_after_the_grace_period(run_module, kubeconfig, catalog_ns, second_ns, tmp_path):
    started = time.monotonic()
    unschedulable = start_module_subprocess(tmp_path, "olm_operator", _install("kube-toobig", second_ns, kubeconfig))
    try:
        needs_api = run_module("olm_operator", _install("kube-needsapi", catalog_ns, kubeconfig))
        out, err = unschedulable.communicate(timeout=WAIT_TIMEOUT + 60)
    finally:
        unschedulable.kill()
    elapsed = time.monotonic() - started

    assert needs_api["failed"] and needs_api["reason"] == "RequirementsNotMet", needs_api
    assert "kube-needsapi.v0.1.0 phase Pending: requirements not met" in needs_api["msg"], needs_api["msg"]
    assert "Missing v1.nowhere.kubeforge.io (nowhere.kubeforge.io/v1) NotPresent: Native API does not exist" in needs_api["msg"], needs_api["msg"]
    assert needs_api["csv_phase"] == "Pending"

    result = json.loads(out or "{}")
    assert result.get("failed") and result.get("reason") == "Unschedulable", (result, err[-2000:])
    assert "pod kube-toobig-controller-manager-" in result["msg"] and "has not been scheduled for" in result["msg"], result["msg"]
    assert "Insufficient cpu" in result["msg"] and result["csv_phase"] == "Installing", result["msg"]

    # the grace period, not the wait_timeout, ended both waits
    assert elapsed < WAIT_TIMEOUT / 2, elapsed
