# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An OLM v0 operator as a fleet rollout moves it: upgraded the way olm_operator upgrades (targets.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.targets import TargetError, lines
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as diagnose_v0
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import info as olm_info
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import csv_deployment_names
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import diagnose as diagnose_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as olm_operator
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import group_version_served, operator_info

OPERATORS_API = "operators.coreos.com/v1alpha1"


class OlmV0:
    """An operator installed through an OLM v0 Subscription: ``name`` is its package, ``namespace`` the
    Subscription's."""

    kind = rec.KIND_OLM_V0

    def __init__(self, module, params):
        client = module.client
        self.client = client
        self.cluster = olm_operator.Cluster(client)
        self.package, self.namespace = params["name"], params["namespace"]
        self.params = params
        self.info = None

    def record_namespace(self):
        return self.namespace

    def read(self, diagnose=True):
        """``(installed, current version, versions offered in upgrade order, problem)``; with ``diagnose``,
        olm_diagnose's checks find the problem of an operator whose CSV says it is installed."""
        served, why = group_version_served(self.client, OPERATORS_API)
        if not served:
            raise TargetError(f"OLM v0 is not installed on this cluster ({why}): no Subscription can be moved here")
        self.info = operator_info(self.client, self.namespace, package=self.package)["operator"]
        sub, csv = self.info.get("subscription"), self.info.get("csv")
        if sub is None:
            return False, None, None, None
        channel = olm_info.find_channel(self.info.get("catalog"), sub.get("channel"))
        offered = list(channel["versions"]) if channel else []
        if not self.info.get("catalog"):
            offered = []
        problem = None
        if not self.info.get("installed"):
            problem = f"CSV {(csv or {}).get('name') or sub.get('installed_csv') or '-'} is {(csv or {}).get('phase') or 'not installed'}"
        elif diagnose:
            causes, summary = self.diagnose()
            if causes:
                problem = f"olm_diagnose: {summary}"
        return True, self.info.get("installed_version"), offered, problem

    def describe_catalog(self):
        sub = self.info.get("subscription") or {}
        return f"channel {sub.get('channel') or 'default'} of CatalogSource {sub.get('source_namespace') or self.namespace}/{sub.get('source')}"

    def change(self, version, timeout):
        sub = self.info["subscription"]
        params = {
            "namespace": self.namespace,
            "package": self.package,
            "subscription_name": sub["name"],
            "catalog": sub["source"],
            "catalog_namespace": sub.get("source_namespace") or self.namespace,
            "channel": sub.get("channel"),
            "version": version,
            "approval": "Manual",
            "approve_dependencies": self.params.get("approve_dependencies", True),
        }
        result = olm_operator.install(self.cluster, params, False, True, timeout)
        self.installed_csv = result.get("installed_csv")
        return result

    def rollback(self, version, timeout):
        raise TargetError("OLM v0 cannot downgrade an installed operator")

    def gate_sources(self):
        csv_name = getattr(self, "installed_csv", None) or (self.info.get("subscription") or {}).get("installed_csv")
        csv = get_object(self.client, self.cluster.resource("ClusterServiceVersion", OPERATORS_API), csv_name, self.namespace) if csv_name else None
        owner = Source("owner", OPERATORS_API, "ClusterServiceVersion", self.namespace, csv_name)
        return owner, csv_deployment_names(csv) if csv else None, None

    def diagnose(self):
        snapshot, _notes = diagnose_cluster.read_snapshot(self.cluster, self.namespace, self.package, events=20)
        findings = diagnose_v0.diagnose(snapshot)
        causes = sorted({f.cause for f in findings})
        return causes, lines(diagnose_v0.summary(findings, self.namespace, self.package)) if causes else ""
