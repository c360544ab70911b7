# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A DaemonSet as a fleet rollout moves it: through daemonset_canary's rollout (targets.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as canary_core
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster import rollout as canary_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.args import rollout_defaults
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import gate as fleet_gate
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.targets import TargetError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import metadata, spec


class DaemonSet:
    """A DaemonSet moved to new images through ``daemonset_canary`` (one canary node first, then batches)."""

    kind = rec.KIND_DAEMONSET

    def __init__(self, module, params):
        self.client = module.client
        self.cluster = Cluster(self.client)
        self.name, self.namespace = params["name"], params["namespace"]
        self.images = params["images"] or {}
        self.params = params
        self.daemonset = None

    def record_namespace(self):
        return self.namespace

    def current_images(self):
        pod_spec = ((spec(self.daemonset).get("template") or {}).get("spec")) or {}
        containers = (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])
        return {c.get("name"): c.get("image") for c in containers if c.get("name") in self.images}

    def read(self, diagnose=True):
        self.daemonset = self.cluster.get("DaemonSet", self.name, self.namespace, "apps/v1")
        if self.daemonset is None:
            return False, None, None, None
        missing = sorted(set(self.images) - set(self.current_images()))
        if missing:
            raise TargetError(f"DaemonSet {self.namespace}/{self.name} has no container named {', '.join(missing)}")
        current = rec.target_text(self.kind, self.current_images())
        ready, _failed, message = fleet_gate.owner_state(self.kind, self.daemonset, self.current_images())
        phase = (metadata(self.daemonset).get("annotations") or {}).get(canary_core.PHASE)
        problem = None
        if phase and phase != canary_core.ROLLED_BACK:
            problem = f"a daemonset_canary rollout of it is {phase}"
        elif not ready:
            problem = message
        return True, current, None, problem

    def describe_catalog(self):
        return "no catalog (images)"

    def _canary(self, images, timeout, on_failure):
        params = dict(
            rollout_defaults(),
            **(self.params.get("canary") or {}),
            name=self.name,
            namespace=self.namespace,
            images=images,
            template=None,
            undo=False,
            pause_after_canary=False,
            wait=True,
            wait_timeout=timeout,
            operator_condition=None,
            operator_condition_namespace=None,
            canary_nodes=None,
            canary_node_selector=None,
            on_failure=on_failure,
        )
        try:
            return canary_cluster.run(self.client, params, False)
        finally:
            self.daemonset = self.cluster.get("DaemonSet", self.name, self.namespace, "apps/v1")

    def change(self, target, timeout):
        """daemonset_canary to the new images; with on_failure=rollback its own rollback (the previous revision's
        template) undoes a canary that fails."""
        return self._canary(target, timeout, self.params.get("on_failure") or "halt")

    def rollback(self, images, timeout):
        return self._canary(images, timeout, "halt")

    def gate_sources(self):
        owner = Source("owner", "apps/v1", "DaemonSet", self.namespace, self.name)
        return owner, [], None

    def diagnose(self):
        return [], ""
