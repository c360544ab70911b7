# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a fleet rollout moves on one cluster, one class per kind: an OLM v0 operator (its Subscription, ``olm_v0.py``),
an OLM v1 ClusterExtension (``olm_v1.py``), or a DaemonSet (``daemonset.py``). Each reads what runs now (``read``),
makes the change through the layer of the module that owns it (``olm_operator``'s, ``olm_cluster_extension``'s,
``daemonset_canary``'s), moves back (``rollback``), names the objects its health gate watches (``gate_sources``) and
says why it fails (``diagnose``). Only the kind a run moves is imported: a module process pays for the code it uses.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec


class TargetError(KubeforgeError):
    """What the rollout moves cannot be read or moved here; the message says why."""


def lines(findings_summary):
    """olm_diagnose's summary lines as one line."""
    return "; ".join(line.strip() for line in findings_summary if line and line.strip())


def target_class(kind):
    """The class of ``kind`` (imported on use)."""
    if kind == rec.KIND_OLM_V0:
        from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.olm_v0 import OlmV0

        return OlmV0
    if kind == rec.KIND_OLM_V1:
        from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.olm_v1 import OlmV1

        return OlmV1
    from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.daemonset import DaemonSet

    return DaemonSet
