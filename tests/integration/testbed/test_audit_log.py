"""The audit log counts the API requests of the bench user, and only those."""

import json
import os
import time

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.polling import poll_until
from testbed.kube import api_client

pytestmark = pytest.mark.testbed


def _settled(testbed, offset, namespace, count, timeout=15):
    """The bench requests into `namespace` after `offset`, once at least `count` are logged.

    Events are written after the response. Only this test's namespace counts: a benchmark may use the bench
    user at the same time.
    """

    def ours():
        return [r for r in testbed.audit_requests(offset) if f"/namespaces/{namespace}/" in r[1]]

    poll_until(ours, timeout, 0.2, f"{count} requests into {namespace} in the audit log", until=lambda requests: len(requests) >= count)
    time.sleep(1)  # anything logged late would show up now and break the exact count below
    return ours()


def test_bench_requests_are_counted_exactly(api, namespace, testbed):
    bench = api_client(testbed.state["bench_kubeconfig"])
    admin_core = client.CoreV1Api(api)
    core = client.CoreV1Api(bench)
    name = "bench-" + os.urandom(3).hex()
    offset = testbed.audit_offset()
    try:
        with pytest.raises(ApiException) as missing:
            core.read_namespaced_config_map(name, namespace)
        assert missing.value.status == 404
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name}, "data": {"k": "v"}})
        # The admin's requests are not in the log.
        admin_core.read_namespaced_config_map(name, namespace)
        admin_core.list_namespaced_config_map(namespace)
        core.list_namespaced_config_map(namespace, watch=True, timeout_seconds=1, _preload_content=False).read()
    finally:
        bench.close()

    requests = _settled(testbed, offset, namespace, 3)

    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert [(verb, uri.split("?")[0], code) for verb, uri, code in requests] == [
        ("get", f"{base}/{name}", 404),
        ("create", base, 201),
        ("watch", base, 200),
    ]
    assert "watch=true" in requests[2][1]


def test_bench_kubeconfig_is_in_the_ansible_vars(testbed):
    variables = json.loads((testbed.run_dir / "ansible-vars.json").read_text())
    assert variables["testbed_bench_kubeconfig"] == testbed.state["bench_kubeconfig"]
    assert os.stat(variables["testbed_bench_kubeconfig"]).st_mode & 0o077 == 0
    assert variables["testbed_audit_log"] == testbed.state["audit_log"]
    assert (testbed.olm_manifests_dir() / "olm.yaml").is_file()
    assert variables["testbed_olm_manifests_dir"] == str(testbed.olm_manifests_dir())
