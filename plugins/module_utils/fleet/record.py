# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fleet rollout's record on one cluster: what the rollout did there, kept where it survives the controller.

A rollout is one operator (or DaemonSet) moving to one target; its id names both (``kube-fleet@0.2.0``). Each cluster
keeps its own record of the rollout in a ConfigMap in the operator's namespace (``record_name``): the rollout id, the
version it came from, the step it reached (``in_progress``), and how it ended (``succeeded``, ``failed`` with the
cause, or ``acknowledged`` by the user after a failure). A rerun reads the record first: a cluster done for the same
rollout is skipped without a write, a failed one halts the rollout until the failure is acknowledged or the target
changes (a new rollout id). The record is JSON under one data key; labels and annotations repeat its headline for
``kubectl get configmaps -l fleet.kubeforge.io/rollout``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt

KIND_OLM_V0 = "olm_v0"
KIND_OLM_V1 = "olm_v1"
KIND_DAEMONSET = "daemonset"
KINDS = (KIND_OLM_V0, KIND_OLM_V1, KIND_DAEMONSET)
# The short form of each kind in the record's name.
_KIND_NAMES = {KIND_OLM_V0: "olm", KIND_OLM_V1: "ce", KIND_DAEMONSET: "ds"}

IN_PROGRESS = "in_progress"
SUCCEEDED = "succeeded"
FAILED = "failed"
ACKNOWLEDGED = "acknowledged"
RESULTS = (IN_PROGRESS, SUCCEEDED, FAILED, ACKNOWLEDGED)

# Steps a record names: where an in-progress rollout is, or where a failed one failed.
STEP_PREFLIGHT = "preflight"
STEP_CHANGE = "change"
STEP_GATE = "gate"
STEP_ROLLBACK = "rollback"
STEP_DONE = "done"

DATA_KEY = "rollout.json"
LABEL_RECORD = "fleet.kubeforge.io/rollout"
LABEL_RESULT = "fleet.kubeforge.io/result"
ANNOTATION_ROLLOUT = "fleet.kubeforge.io/rollout-id"
MANAGED_BY = {"app.kubernetes.io/managed-by": "kubeforge.operators"}
# Kubernetes object names (DNS subdomain) and label values.
_NAME_MAX = 253
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9._-]+")
_ROLLOUT_ID_MAX = 200
# Fields a record may hold, and which of them are text.
FIELDS = (
    "rollout",
    "kind",
    "name",
    "namespace",
    "target",
    "from",
    "result",
    "step",
    "cause",
    "causes",
    "diagnosis",
    "wave",
    "started",
    "finished",
    "rolled_back_to",
    "acknowledged",
)


def rollout_id(kind, name, target):
    """The default id of a rollout: what moves and where to (``kube-fleet@0.2.0``; a DaemonSet's images sorted)."""
    if kind == KIND_DAEMONSET:
        return f"{name}@{target_text(kind, target)}"
    return f"{name}@{target}"


def target_text(kind, target):
    """The target as one line of text: a version, or a DaemonSet's ``container=image`` pairs."""
    if kind == KIND_DAEMONSET and isinstance(target, dict):
        return ",".join(f"{container}={image}" for container, image in sorted(target.items()))
    return str(target)


def check_rollout_id(value):
    if not value or len(value) > _ROLLOUT_ID_MAX or any(ch in value for ch in "\r\n"):
        raise InvalidInputError(f"rollout_id must be one line of 1 to {_ROLLOUT_ID_MAX} characters, not {excerpt(value)}")
    return value


def record_name(kind, name):
    """The ConfigMap holding the record of ``kind`` ``name`` (one per operator or DaemonSet, whatever the target)."""
    base = f"kubeforge-fleet-{_KIND_NAMES[kind]}-{name}".lower()
    if len(base) <= _NAME_MAX:
        return base
    digest = hashlib.sha256(base.encode("utf-8")).hexdigest()[:10]
    return f"{base[: _NAME_MAX - 11]}-{digest}"


def label_value(text):
    """``text`` as a label value (63 characters at most, a hash where it had to be cut)."""
    value = _LABEL_VALUE.sub("_", text).strip("._-")
    if len(value) <= 63:
        return value
    return value[:52].strip("._-") + "-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def decode(configmap):
    """The record a ConfigMap holds (a dict of FIELDS), or None for no ConfigMap; a record that cannot be read is an
    error naming the ConfigMap (a rerun must not guess what an earlier run did)."""
    if configmap is None:
        return None
    meta = configmap.get("metadata") or {}
    text = (configmap.get("data") or {}).get(DATA_KEY)
    where = f"ConfigMap {meta.get('namespace')}/{meta.get('name')}"
    try:
        record = json.loads(text or "")
    except ValueError:
        raise InvalidInputError(f"{where} holds no readable fleet rollout record under {DATA_KEY}: delete it or repair it") from None
    if not isinstance(record, dict) or record.get("result") not in RESULTS or not record.get("rollout"):
        raise InvalidInputError(f"{where} holds no readable fleet rollout record under {DATA_KEY}: delete it or repair it")
    return {key: record.get(key) for key in FIELDS if record.get(key) is not None}


def configmap(namespace, name, record):
    """The ConfigMap that holds ``record``."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(MANAGED_BY, **{LABEL_RECORD: label_value(record["rollout"]), LABEL_RESULT: record["result"]}),
            "annotations": {ANNOTATION_ROLLOUT: record["rollout"]},
        },
        "data": {DATA_KEY: json.dumps({key: record[key] for key in FIELDS if record.get(key) is not None}, sort_keys=True)},
    }


def updated(record, **changes):
    """A copy of ``record`` with ``changes`` (None removes a field)."""
    new = dict(record or {})
    for key, value in changes.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
    return new
