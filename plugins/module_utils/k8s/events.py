# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""core/v1 Events the modules record about the objects they act on (what ``kubectl describe`` lists)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time

COMPONENT = "kubeforge.operators"
# The API server refuses longer messages.
MESSAGE_MAX = 1024


def event_body(involved, event_type, reason, message, when):
    """An Event about ``involved`` (an object with apiVersion, kind and metadata) at ``when`` (epoch seconds)."""
    meta = involved.get("metadata") or {}
    now = format_time(when)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta.get("namespace") or "default"},
        "involvedObject": {
            key: value
            for key, value in (
                ("apiVersion", involved["apiVersion"]),
                ("kind", involved["kind"]),
                ("name", meta["name"]),
                ("namespace", meta.get("namespace")),
                ("uid", meta.get("uid")),
                ("resourceVersion", meta.get("resourceVersion")),
            )
            if value is not None
        },
        "type": event_type,
        "reason": reason,
        "message": message[:MESSAGE_MAX],
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": COMPONENT,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
