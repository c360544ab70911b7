# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a container does not run: the one table of the kubelet's container failure reasons (pure).

Every module that judges pods reads containers through this table - olm_operator, olm_install, olm_catalog_source and
olm_bundle_run (``olm/status.py``), olm_diagnose (``olm/diagnose.py``) and daemonset_canary (``canary/rollout.py``,
``canary/observe.py``) - so they agree on what a stuck container is. The kubelet alternates some reasons: a pull that fails is
``ErrImagePull``, and until the next attempt ``ImagePullBackOff``; both are the same failure (one kind, below), so a
reader that looks once names it whichever it sees. How many restarts make a crash loop, and whether a failed attempt
counts before the kubelet backs off, are each caller's thresholds (``stuck``).

Imports nothing: the pure cores under ``olm/`` and ``canary/`` import it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

# Kinds of failure: what a reason means, whichever of its reasons the kubelet shows at the moment.
IMAGE_PULL = "ImagePull"
CRASH_LOOP = "CrashLoop"
CREATE = "CreateContainer"

# The kubelet's waiting reasons of a container that does not resolve by itself (kubelet: pkg/kubelet/images/types.go,
# pkg/kubelet/container/sync_result.go, pkg/kubelet/kuberuntime), with their kind and what they mean. before_backoff:
# the reason of one failed attempt, shown until the kubelet's next sync shows its back-off (a pull fails: ErrImagePull,
# a moment later ImagePullBackOff until the next attempt, then ErrImagePull again if that fails too).
ContainerFailure = namedtuple("ContainerFailure", ["reason", "kind", "before_backoff", "words"])
CONTAINER_FAILURES = (
    ContainerFailure("ErrImagePull", IMAGE_PULL, True, "the image cannot be pulled (the last pull failed)"),
    ContainerFailure("ImagePullBackOff", IMAGE_PULL, False, "the image cannot be pulled (the kubelet backs off before pulling again)"),
    ContainerFailure("InvalidImageName", IMAGE_PULL, False, "the image reference cannot be parsed"),
    ContainerFailure("ErrImageNeverPull", IMAGE_PULL, False, "imagePullPolicy Never, and the image is not on the node"),
    ContainerFailure("ImageInspectError", IMAGE_PULL, False, "the node's image cannot be inspected"),
    ContainerFailure("CrashLoopBackOff", CRASH_LOOP, False, "the container exits and is restarted with back-off"),
    ContainerFailure("CreateContainerConfigError", CREATE, False, "the container's configuration cannot be made (a missing Secret, ConfigMap or key)"),
    ContainerFailure("CreateContainerError", CREATE, False, "the runtime cannot create the container"),
)
FAILURE_OF = {row.reason: row for row in CONTAINER_FAILURES}
IMAGE_PULL_REASONS = frozenset(row.reason for row in CONTAINER_FAILURES if row.kind == IMAGE_PULL)


def kind_of(reason):
    """The kind of a waiting reason (IMAGE_PULL, CRASH_LOOP, CREATE), or None for a reason that resolves by itself
    (``ContainerCreating``, ``PodInitializing``) or none."""
    row = FAILURE_OF.get(reason)
    return row.kind if row else None


def stuck(reason, restarts, crash_restarts, wait_for_backoff=False):
    """Whether a container waiting with ``reason`` after ``restarts`` restarts counts as stuck: every reason of the
    table does, a crash loop only from ``crash_restarts`` restarts on (the caller's threshold). ``wait_for_backoff``:
    a module that waits and watches (olm_operator) counts a failed attempt only once the kubelet backs off - a moment
    later - rather than on one attempt a retry may still fix; a diagnosis that reads once counts both (its verdict
    must not depend on the moment it looks)."""
    row = FAILURE_OF.get(reason)
    if row is None or (wait_for_backoff and row.before_backoff):
        return False
    if row.kind == CRASH_LOOP:
        return (restarts or 0) >= crash_restarts
    return True


def last_termination(container):
    """The container's latest termination (``state.terminated``, else ``lastState.terminated``) as a dict, or {}."""
    return ((container or {}).get("state") or {}).get("terminated") or ((container or {}).get("lastState") or {}).get("terminated") or {}


def describe_exit(terminated):
    """``exit code 1 (Error)`` for a termination dict; '' for none."""
    if not terminated:
        return ""
    return f"exit code {terminated.get('exitCode')} ({terminated.get('reason') or 'Error'})"


def container_waiting(container, done_on_exit_0=False):
    """The container status's ``waiting`` state, or what it stands for: between the restarts of a crash loop a real
    kubelet (v1.35.4 with containerd 1.6, seen on the testbed's real node) keeps reporting the last termination
    (``terminated``: reason Error with a non-zero exit code, or Completed for a program that exits 0) and never
    ``waiting: CrashLoopBackOff``. A container that runs for good (restartPolicy Always: an operator's, a DaemonSet's)
    that exits after a restart crashes; ``done_on_exit_0``: an init container or a Job's, for which exit code 0 is
    success."""
    state = (container or {}).get("state") or {}
    waiting = state.get("waiting") or {}
    if waiting.get("reason"):
        return waiting
    terminated = state.get("terminated") or {}
    code = terminated.get("exitCode")
    if terminated and (container.get("restartCount") or 0) > 0 and (code not in (None, 0) or not done_on_exit_0):
        exited = f"exited with code {code} ({terminated.get('reason') or 'Error'})"
        return {"reason": "CrashLoopBackOff", "message": f"{exited}, restarted with back-off"}
    return {}
