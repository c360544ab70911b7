# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Status conditions of a custom resource, the way ``metav1.Condition`` and ``meta.SetStatusCondition`` keep them.

``plan(status, conditions, fields, generation, now)`` returns the status to write: conditions merged by ``type``
(``lastTransitionTime`` moves only when ``status`` changes), other fields replaced key by key, ``observedGeneration``
set; ``transitions`` names what changed, for Events. Validation follows the CRD schema of ``metav1.Condition``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.mergepatch import merge_patch

STATUSES = ("True", "False", "Unknown")
# metav1.Condition's validation (k8s.io/apimachinery/pkg/apis/meta/v1/types.go).
TYPE_PATTERN = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
TYPE_MAX = 316
REASON_PATTERN = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
REASON_MAX = 1024
MESSAGE_MAX = 32768
# Condition types whose True status is bad news: their transitions are recorded as Warning Events.
PROBLEM_TYPES = ("Failed", "Degraded", "Stalled")


class StatusError(KubeforgeError):
    """A condition or status field that the API server would refuse, or a status that cannot be written."""


def validate(condition):
    """A condition as ``{type, status, reason, message}`` after checking it like the CRD schema would."""
    if not isinstance(condition, dict):
        raise StatusError(f"a condition must be a mapping, got {excerpt(condition)}")
    unknown = sorted(set(condition) - {"type", "status", "reason", "message"})
    if unknown:
        raise StatusError(f"condition {condition.get('type')!r}: unknown keys {unknown} (type, status, reason, message)")
    kind = str(condition.get("type") or "")
    if not kind or len(kind) > TYPE_MAX or not TYPE_PATTERN.match(kind):
        raise StatusError(f"condition type {excerpt(kind)!r} is not a valid condition type (a qualified name, CamelCase by convention)")
    status = condition.get("status")
    if isinstance(status, bool):
        status = "True" if status else "False"
    if status not in STATUSES:
        raise StatusError(f"condition {kind}: status must be one of {', '.join(STATUSES)}, got {excerpt(status)!r}")
    reason = str(condition.get("reason") or "")
    if not reason or len(reason) > REASON_MAX or not REASON_PATTERN.match(reason):
        raise StatusError(
            f"condition {kind}: reason {excerpt(reason)!r} must be CamelCase: a letter, then letters, digits, '_', ',' or ':' (at most {REASON_MAX} characters)"
        )
    message = "" if condition.get("message") is None else str(condition.get("message"))
    if len(message) > MESSAGE_MAX:
        # Keep the start, where messages say what failed; the API server refuses longer ones.
        message = message[: MESSAGE_MAX - 20] + " … (cut)"
    return {"type": kind, "status": status, "reason": reason, "message": message}


def merge(current, wanted, now, generation=None):
    """The conditions after setting ``wanted`` (validated) on ``current``: replaced by type, others kept in order."""
    merged = [dict(c) for c in current or () if isinstance(c, dict)]
    for condition in wanted:
        new = dict(condition)
        index = next((i for i, c in enumerate(merged) if c.get("type") == new["type"]), None)
        old = merged[index] if index is not None else None
        keep_time = old is not None and old.get("status") == new["status"] and old.get("lastTransitionTime")
        new["lastTransitionTime"] = old["lastTransitionTime"] if keep_time else now
        if generation is not None:
            new["observedGeneration"] = generation
        if index is None:
            merged.append(new)
        else:
            merged[index] = new
    return merged


def plan(status, conditions=(), fields=None, generation=None, now=""):
    """The status to write: ``status`` with ``fields`` set key by key, ``conditions`` merged, ``observedGeneration``."""
    wanted = [validate(c) for c in conditions or ()]
    types = [c["type"] for c in wanted]
    duplicates = sorted({t for t in types if types.count(t) > 1})
    if duplicates:
        raise StatusError(f"conditions name the same type more than once: {', '.join(duplicates)}")
    fields = dict(fields or {})
    for reserved in ("conditions", "observedGeneration"):
        if reserved in fields:
            raise StatusError(f"status field {reserved!r} is set by the module (use the conditions and observed_generation options)")
    nulls = sorted(key for key, value in fields.items() if value is None)
    if nulls:
        raise StatusError(f"status field {', '.join(nulls)} is null: the module never removes status fields (a merge patch would)")
    after = copy.deepcopy(status or {})
    after.update(copy.deepcopy(fields))
    if wanted or after.get("conditions"):
        after["conditions"] = merge(after.get("conditions"), wanted, now, generation)
    if generation is not None:
        after["observedGeneration"] = generation
    return after


def transitions(before, after):
    """Conditions of ``after`` whose status or reason differ from ``before`` (or are new), in ``after``'s order."""
    old = {c.get("type"): c for c in (before or {}).get("conditions") or () if isinstance(c, dict)}
    changed = []
    for condition in (after or {}).get("conditions") or ():
        previous = old.get(condition.get("type"))
        if previous is None or (previous.get("status"), previous.get("reason")) != (condition.get("status"), condition.get("reason")):
            changed.append(condition)
    return changed


def event_type(condition):
    """``Warning`` for a problem condition that became True, ``Normal`` otherwise."""
    return "Warning" if condition.get("type") in PROBLEM_TYPES and condition.get("status") == "True" else "Normal"


def status_patch(before, after):
    """Merge patch turning status ``before`` into ``after``: top-level keys ``after`` no longer has are kept (never
    removed); a field set to a mapping replaces the old one, so its sub-keys left out are removed."""
    before = before or {}
    return {key: merge_patch(before.get(key), value) for key, value in (after or {}).items() if before.get(key) != value}
