# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OperatorCondition ``Upgradeable`` kept in step with a canary rollout: reads and guarded JSON patches around
the pure ``canary.condition.plan``.

An operator's service account may get, update and patch its own OperatorCondition (the Role OLM's
OperatorCondition controller creates for it, limited to that one name), so this uses GET and PATCH only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as upgradeable
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object, patch_object

# The namespace of the pod the module runs in (operator-lib's GetOperatorNamespace reads the same file).
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class OperatorConditionError(KubeforgeError):
    """The OperatorCondition cannot be read or set."""


def operator_namespace(params, path=None):
    """``operator_condition_namespace``, else the namespace of the pod the module runs in (an Ansible operator)."""
    if params.get("operator_condition_namespace"):
        return params["operator_condition_namespace"]
    path = path or SERVICE_ACCOUNT_NAMESPACE
    try:
        with open(path, encoding="utf-8") as handle:
            namespace = handle.read().strip()
    except OSError:
        namespace = ""
    if not namespace:
        raise OperatorConditionError(
            f"operator_condition {params.get('operator_condition')!r} needs operator_condition_namespace: the module does not run in a pod "
            f"({path} is not readable), so the operator's namespace is unknown"
        )
    return namespace


class UpgradeableSync:
    """Sets the ``Upgradeable`` condition of one OperatorCondition for the rollout of one DaemonSet.

    ``sync(phase, failure)`` reads the OperatorCondition and patches it when the condition has to change; it asks
    again only when the wanted condition differs from the last one it made sure of, so a watch loop costs nothing
    between phases. ``changed`` tells whether a patch was sent (a server-side dry run in check mode).
    """

    def __init__(self, cluster, name, namespace, ds_namespace, ds_name, clock=time.time):
        self.cluster = cluster
        self.client = cluster.client
        self.name, self.namespace = name, namespace
        self.ds_namespace, self.ds_name = ds_namespace, ds_name
        self.clock = clock
        self.changed = False
        self.condition = None
        self._resource = None
        self._settled = None

    def resource(self):
        if self._resource is None:
            try:
                self._resource = self.cluster.resource(upgradeable.KIND, upgradeable.API_VERSION)
            except K8sError as exc:
                raise OperatorConditionError(
                    f"operator_condition needs OLM's OperatorCondition API ({upgradeable.API_VERSION}), which this cluster does not serve: {exc}"
                ) from exc
        return self._resource

    def sync(self, phase, failure=None):
        wanted = upgradeable.wanted(self.ds_namespace, self.ds_name, phase, failure)
        if wanted == self._settled:
            return
        resource = self.resource()

        def attempt():
            obj = get_object(self.client, resource, self.name, self.namespace)
            if obj is None:
                raise OperatorConditionError(
                    f"OperatorCondition {self.namespace}/{self.name} not found (operator_condition names the OperatorCondition OLM made "
                    "for the operator: OPERATOR_CONDITION_NAME in its pods)"
                )
            patch, entry = upgradeable.plan(obj, self.ds_namespace, self.ds_name, phase, self.clock(), failure)
            if patch is not None:
                patch_object(self.client, resource, self.name, patch, self.namespace, patch_type="json")
                self.changed = True
            return entry

        # an API server restart is the rollout's to ride out (its watch loop decides again), not this write's
        self.condition = retry_guarded(attempt, f"OperatorCondition {self.namespace}/{self.name}", error=OperatorConditionError, ride_out_restarts=False)
        self._settled = wanted

    def result(self):
        return {
            "name": self.name,
            "namespace": self.namespace,
            "changed": self.changed,
            "upgradeable": upgradeable.public(self.condition),
        }
