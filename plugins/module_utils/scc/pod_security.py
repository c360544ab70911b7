# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod Security Admission labels of a namespace, and how to undo them (pure).

The levels and label keys are Kubernetes' (``pod-security.kubernetes.io/<mode>`` and ``<mode>-version``). On
OpenShift the label syncer owns these labels unless ``security.openshift.io/scc.podSecurityLabelSync`` is
``"false"`` (scc.md section 6), so setting them there usually goes with that label. The labels a namespace had
before our first change are kept in one annotation, so that ``state=absent`` restores exactly them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError

LABEL_PREFIX = "pod-security.kubernetes.io/"
MODES = ("enforce", "audit", "warn")
LEVELS = ("privileged", "baseline", "restricted")
SYNC_LABEL = "security.openshift.io/scc.podSecurityLabelSync"
PREVIOUS_ANNOTATION = "operators.kubeforge.io/pod-security-previous"

_VERSION = re.compile(r"^(latest|v1\.[0-9]+)$")


class PodSecurityError(InvalidInputError):
    """A level or version the Pod Security admission would not understand."""


def managed_keys():
    """Every label key this module may set."""
    keys = [LABEL_PREFIX + mode for mode in MODES] + [LABEL_PREFIX + mode + "-version" for mode in MODES]
    return keys + [SYNC_LABEL]


def wanted_labels(levels, versions, label_sync=None):
    """The labels for ``levels`` / ``versions`` (``{mode: value or None}``; None leaves a label as it is)."""
    labels = {}
    for mode in MODES:
        level = (levels or {}).get(mode)
        if level is not None:
            if level not in LEVELS:
                raise PodSecurityError(f"{mode}: {level!r} is not a Pod Security level ({', '.join(LEVELS)})")
            labels[LABEL_PREFIX + mode] = level
        version = (versions or {}).get(mode)
        if version is not None:
            if not _VERSION.match(str(version)):
                raise PodSecurityError(f"{mode}_version: {version!r} is neither 'latest' nor 'v1.<minor>'")
            labels[LABEL_PREFIX + mode + "-version"] = str(version)
    if label_sync is not None:
        labels[SYNC_LABEL] = "true" if label_sync else "false"
    return labels


def label_changes(current, wanted):
    """``{key: new value}`` of ``wanted`` labels that differ from ``current`` (a merge patch's labels)."""
    current = current or {}
    return {key: value for key, value in wanted.items() if current.get(key) != value}


def record_previous(current_labels, annotations, keys):
    """The annotation value that records the namespace's labels before our first change, or None if recorded.

    Keys that were absent are recorded as null, so that restoring removes them.
    """
    if PREVIOUS_ANNOTATION in (annotations or {}):
        return None
    current_labels = current_labels or {}
    return json.dumps({key: current_labels.get(key) for key in sorted(keys)}, sort_keys=True)


def restore_patch(annotations):
    """The merge patch that puts back the recorded labels and drops the record; None when nothing is recorded."""
    recorded = (annotations or {}).get(PREVIOUS_ANNOTATION)
    if recorded is None:
        return None
    try:
        previous = json.loads(recorded)
    except ValueError as exc:
        raise PodSecurityError(f"annotation {PREVIOUS_ANNOTATION} is not JSON: {exc}") from exc
    if not isinstance(previous, dict) or not all(key in managed_keys() for key in previous):
        raise PodSecurityError(f"annotation {PREVIOUS_ANNOTATION} does not hold Pod Security labels; not restoring")
    return {"metadata": {"labels": dict(previous), "annotations": {PREVIOUS_ANNOTATION: None}}}


_WARNING = re.compile(r'^\s*\d{3}\s+\S+\s+"(?P<text>.*)"\s*$')


def warning_texts(headers):
    """The texts of HTTP ``Warning`` headers (``299 - "text"``), unquoted."""
    texts = []
    for header in headers or ():
        match = _WARNING.match(header)
        text = match.group("text") if match else header
        texts.append(text.replace('\\"', '"'))
    return texts


def violations(warnings):
    """Pod Security warnings about existing pods: ``(summary lines, {pod name: reasons})``.

    The API server answers a namespace change that tightens ``enforce`` with one warning naming the level and one
    per pod (or group of pods) ``name: reasons``.
    """
    pods, other = {}, []
    for text in warnings:
        if text.startswith("existing pods in namespace"):
            other.append(text)
            continue
        name, sep, reasons = text.partition(": ")
        name = name.strip()
        # "pod: reasons" or "pod (and 2 other pods): reasons"; anything else is a plain message
        if sep and name and (" " not in name or "(and " in name):
            pods[name] = reasons.strip()
        else:
            other.append(text)
    return other, pods
