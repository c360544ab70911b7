"""olm_operator while the API server cannot call an admission webhook: the testbed's SCC admission webhook (OpenShift's
plugin, failurePolicy Fail for pods) is stopped while OLM creates kube-demo's Deployment. The ReplicaSet controller
then reports ReplicaFailure ("failed calling webhook ... connection refused") and retries; the module waits through it
and succeeds once the webhook serves again, as it did not before (it failed at once; CI met it when the restart test
restarted the webhook after OLM, warm ci4). A webhook that answers and refuses still fails at once
(test_operator.py's Pod Security case)."""

import json
import time

import pytest
from kubernetes import client
from lib.olm_catalog import CATALOG
from lib.polling import poll_until
from lib.runners import start_module_subprocess
from testbed import scc_admission

# It stops a webhook every pod in the main cluster passes through.
pytestmark = [pytest.mark.testbed, pytest.mark.exclusive]


def replica_failures(apps, namespace):
    return [c.message for rs in apps.list_namespaced_replica_set(namespace).items for c in rs.status.conditions or [] if c.type == "ReplicaFailure"]


def test_install_waits_through_an_admission_webhook_the_api_server_cannot_call(testbed, api, kubeconfig, catalog_ns, tmp_path):
    apps = client.AppsV1Api(api)
    args = {"kubeconfig": kubeconfig, "namespace": catalog_ns, "package": "kube-demo", "catalog": CATALOG, "channel": "stable", "wait_timeout": 240}
    with testbed.stopped(scc_admission.NAME):
        proc = start_module_subprocess(tmp_path, "olm_operator", args)
        failures = poll_until(lambda: replica_failures(apps, catalog_ns), 120, 0.5, "the ReplicaSet's ReplicaFailure", until=bool)
        assert "failed calling webhook" in failures[0], failures
        time.sleep(3)  # the module has read the failure (it reads every change at once) and must still wait
        assert proc.poll() is None, proc.communicate()
    out, err = proc.communicate(timeout=300)
    result = json.loads(out)
    assert not result.get("failed"), (result.get("msg"), err)
    assert result["installed_csv"] == "kube-demo.v0.0.2", result
    assert not replica_failures(apps, catalog_ns)  # the controller created the pods and dropped the condition
