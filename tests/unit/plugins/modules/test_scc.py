"""scc module glue: options, and refusals that happen before any request (the client is never created: a client
factory that fails proves it). The module against the testbed is in tests/integration/scc/test_scc_module.py."""

import functools

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import module as kf_module
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import custom
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import recommend as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import custom as glue
from ansible_collections.kubeforge.operators.plugins.modules import scc, scc_access


def no_client(module):
    raise AssertionError("the module must fail before it talks to the cluster")


@pytest.fixture
def run(run_module, monkeypatch):
    monkeypatch.setattr(kf_module, "get_client", no_client)
    return functools.partial(run_module, scc)


def test_argspec_offers_every_spec_key_and_the_table_bases():
    spec = scc.argspec()
    assert set(custom.SPEC_KEYS) <= set(spec)
    assert spec["base"]["choices"] == [row["name"] for row in rec.DEFAULT_SCCS]
    assert "default" not in spec["base"]  # unset means restricted-v2, and lets for_workload tell it was not given
    assert all("default" not in spec[key] for key in custom.RELAXATION_KEYS)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"name": "anyuid"}, "anyuid is a default OpenShift SCC"),
        ({"name": "restricted-v3", "state": "absent"}, "restricted-v3 is a default OpenShift SCC"),
        ({"name": "x", "base": "anyuid", "for_workload": {"kind": "Pod", "spec": {"containers": []}}}, "do not combine it with base"),
        ({"name": "x", "host_network": True, "for_workload": {"kind": "Pod", "spec": {"containers": []}}}, "do not combine it with host_network"),
        ({"name": "x", "for_workload": "web"}, "for_workload must be a workload"),
        ({"name": "x", "run_as_user": {"type": "MustRunAsRange", "uidMin": 1}}, "option run_as_user has unknown keys uidMin"),
        ({"name": "x", "volumes": ["hostpath"]}, "volume type 'hostpath' is not an SCC volume type"),
        ({"name": "x", "base": "restricted-v3"}, "value of base must be one of"),
        ({"name": "Bad_Name"}, "is not a valid SCC name"),
    ],
)
def test_refused_before_any_request(run, args, message):
    result = run(args)
    assert result.get("failed") is True, result
    assert message in result["msg"]


def test_check_mode_refuses_the_same(run):
    result = run({"name": "privileged", "privileged": True}, check_mode=True)
    assert result["failed"] is True and "never creates, modifies or deletes default SCCs" in result["msg"]


def test_spec_from_params_keeps_only_set_options():
    params = {key: None for key in scc.argspec()}
    params.update(name="x", state="present", add_capabilities=["SYS_NICE"], host_network=False)
    assert glue.spec_from_params(params) == {"name": "x", "add_capabilities": ["SYS_NICE"], "host_network": False}
    spec, forced_by, recommendation = glue.plan(params)
    assert spec == {"name": "x", "base": "restricted-v2", "add_capabilities": ["SYS_NICE"], "host_network": False}
    assert (forced_by, recommendation) == (None, None)


def test_scc_access_pin_options(run_module, monkeypatch):
    monkeypatch.setattr(kf_module, "get_client", no_client)
    options = scc_access.argspec()["pin_workloads"]
    assert options["options"]["kind"]["choices"] == ["Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob"]
    bad_kind = run_module(scc_access, {"scc": "mine", "pin_workloads": [{"kind": "Pod", "name": "p", "namespace": "n"}]})
    assert bad_kind["failed"] is True and "kind" in bad_kind["msg"] and "Pod" in bad_kind["msg"]
