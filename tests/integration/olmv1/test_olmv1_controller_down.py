# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""olm_diagnose names an OLM v1 controller that is down where no Deployment shows it: the testbed runs
operator-controller as a process, frozen here (SIGSTOP, as a hung process is) while a ClusterExtension changes.

Exclusive: it freezes a testbed process every OLM v1 test uses."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from lib.polling import poll_until

pytestmark = [pytest.mark.testbed, pytest.mark.exclusive]

NAME = "kf-v1frozen"
GROUP, VERSION, PLURAL = "olm.operatorframework.io", "v1", "clusterextensions"


def _observed(custom):
    extension = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, NAME)
    return max([c.get("observedGeneration") or 0 for c in (extension.get("status") or {}).get("conditions") or []] or [0])


def test_diagnose_names_a_frozen_operator_controller(testbed, olmv1, run_module, api, kubeconfig):
    custom = k8s.CustomObjectsApi(api)
    extension = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterExtension",
        "metadata": {"name": NAME},
        "spec": {"namespace": NAME, "serviceAccount": {"name": "nobody"},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "kf-no-such-package"}}},
    }
    custom.create_cluster_custom_object(GROUP, VERSION, PLURAL, extension)
    try:
        poll_until(lambda: _observed(custom), 60, 0.5, "operator-controller to act on the ClusterExtension", until=lambda g: g >= 1)
        healthy = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension=NAME))
        assert not healthy.get("failed"), healthy
        assert "OLMv1ControllerUnavailable" not in [f["cause"] for f in healthy["findings"]], healthy["summary"]

        with testbed.hung("operator-controller"):
            custom.patch_cluster_custom_object(GROUP, VERSION, PLURAL, NAME, {"spec": {"source": {"catalog": {"version": "1.0.0"}}}})
            result = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension=NAME))
        assert not result.get("failed"), result
        found = [f for f in result["findings"] if f["cause"] == "OLMv1ControllerUnavailable"]
        assert found, result["summary"]
        assert f"operator-controller has not acted on generation 2 of ClusterExtension {NAME}" in found[0]["message"], found
        # let go, it catches up and the finding is gone
        poll_until(lambda: _observed(custom), 60, 0.5, "operator-controller to catch up", until=lambda g: g >= 2)
        again = run_module("olm_diagnose", dict(kubeconfig=kubeconfig, cluster_extension=NAME))
        assert "OLMv1ControllerUnavailable" not in [f["cause"] for f in again["findings"]], again["summary"]
    finally:
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, NAME)
        except ApiException as exc:
            if exc.status != 404:
                raise
