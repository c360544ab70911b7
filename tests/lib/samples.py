# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Samples shared by unit tests: the committed FBC conformance data and a pod as a real kubelet reports a crash loop."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from lib.testdata import data_path


def shared_conformance_data():
    """The FBC conformance data committed under ``tests/data`` (see tests/data/README.md; located by
    ``tests/lib/testdata.py``); fails, never skips, when it is missing."""
    return data_path()


def real_kubelet_crash_loop_pod(owner_replicaset="kube-demo-controller-manager-abc"):
    """A pod status as a real kubelet reports a crash loop between restarts (kubelet v1.35.4, containerd 1.6.20,
    runc 1.1.5; recorded on the testbed's real node from an image whose program exits 1): ``terminated``/Error with
    the restart count growing, never ``waiting: CrashLoopBackOff``."""
    terminated = {"exitCode": 1, "reason": "Error", "startedAt": "2026-11-27T14:36:32Z", "finishedAt": "2026-11-27T14:36:32Z"}
    return {
        "metadata": {"name": "crash", "ownerReferences": [{"kind": "ReplicaSet", "name": owner_replicaset, "controller": True}]},
        "spec": {"nodeName": "vm", "restartPolicy": "Always"},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
                {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"},
                {"type": "PodScheduled", "status": "True"},
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": False,
                    "restartCount": 3,
                    "started": False,
                    "lastState": {"terminated": dict(terminated, startedAt="2026-11-27T14:36:04Z", finishedAt="2026-11-27T14:36:04Z")},
                    "state": {"terminated": terminated},
                }
            ],
        },
    }
