"""scc_cluster/custom.py: what the testbed cannot show - a cluster without the SCC API (the testbed serves the CRD)
gets a clear error after one discovery refresh; and the option mix for_workload refuses. The module against the
testbed is in tests/integration/scc/test_scc_module.py."""

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import custom
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import custom as glue


def test_a_cluster_without_the_scc_api_fails_clearly():
    dyn = FakeDynamicClient(served=())  # discovery knows no security.openshift.io kinds
    with pytest.raises(custom.CustomSCCError) as info:
        glue.require_scc_api(Cluster(dyn))
    assert "this cluster has no SecurityContextConstraints API (security.openshift.io/v1)" in str(info.value)
    assert "SCCs exist only on OpenShift" in str(info.value)
    # Looked up, again after a refresh, and once more after the API server said it is ready (k8s.client.find_resource).
    assert dyn.resources.lookups == [("security.openshift.io/v1", "SecurityContextConstraints")] * 3 and dyn.resources.invalidations == 2
    assert dyn.requests == [("discovery", "GET", "/readyz", None)]


@pytest.mark.parametrize("extra", [{"base": "nonroot-v2"}, {"volumes": ["nfs"]}, {"privileged": False}])
def test_for_workload_takes_no_hand_written_relaxation(extra):
    params = dict({key: None for key in custom.SPEC_KEYS}, name="x", for_workload={"containers": [{"name": "c"}]}, **extra)
    with pytest.raises(custom.CustomSCCError, match="do not combine it with " + sorted(extra)[0]):
        glue.plan(params)


def test_for_workload_plan_returns_the_evidence():
    params = dict({key: None for key in custom.SPEC_KEYS}, name="x", description="d", for_workload={"containers": [{"name": "c"}], "hostIPC": True})
    spec, forced_by, recommendation = glue.plan(params)
    assert spec == {"name": "x", "base": "restricted-v2", "description": "d", "host_ipc": True}
    assert forced_by == {"host_ipc": ["spec.hostIPC"]} and recommendation == "hostaccess"
