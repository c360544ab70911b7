# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report on the controller: each cluster's row in ``<dir>/clusters/<cluster>.json``, and the whole
report made again from them in ``<dir>/report.json`` and ``<dir>/report.md`` after every cluster's turn.

Clusters of one wave run side by side (forks): a lock file serialises the remaking, and every file is written through
the file-output service (exclusive temp file, fsync, atomic rename), so a reader, or a run killed half-way, never sees
half a report. The report stays right when the run stops early (a halted canary: the rows of the clusters it never
reached say so).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fcntl
import json
import os
import re
import time

from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import report as core
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time

CLUSTERS_DIR = "clusters"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
LOCK = ".report.lock"
_UNSAFE = re.compile(r"[^A-Za-z0-9._@-]+")


def cluster_file(directory, cluster):
    return os.path.join(directory, CLUSTERS_DIR, _UNSAFE.sub("_", cluster).lstrip(".") + ".json")


def _rows(directory, rollout_id):
    """The rows of rollout ``rollout_id`` (a directory used for an earlier rollout keeps its rows apart)."""
    rows = []
    folder = os.path.join(directory, CLUSTERS_DIR)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        if name.endswith(".json") and not name.startswith("."):
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    row = json.load(handle)
            except (OSError, ValueError):
                continue  # a row another run is writing (it is renamed into place whole) or a stray file
            if isinstance(row, dict) and row.get("cluster") and row.get("rollout") == rollout_id:
                rows.append(row)
    return rows


def write(directory, rollout, row, clusters, serial, check_mode=False):
    """Write this cluster's ``row`` and the report made from every row; returns ``(document, markdown, changed)``.
    In check mode nothing is written: the report is made from the rows there are plus this one."""
    directory = os.path.abspath(directory)
    row = dict(row, rollout=rollout["id"])
    if check_mode:
        rows = [r for r in _rows(directory, rollout["id"]) if r["cluster"] != row["cluster"]] + [row]
        doc = core.document(rollout, rows, clusters, serial, generated=format_time(time.time()))
        return doc, core.table(doc), False
    os.makedirs(os.path.join(directory, CLUSTERS_DIR), exist_ok=True)
    with open(os.path.join(directory, LOCK), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with FileOutput() as out:
                changed = out.write(cluster_file(directory, row["cluster"]), json.dumps(row, indent=2, sort_keys=True) + "\n")
                out.commit()
            doc = core.document(rollout, _rows(directory, rollout["id"]), clusters, serial, generated=format_time(time.time()))
            markdown = core.table(doc)
            with FileOutput() as out:
                out.write(os.path.join(directory, REPORT_JSON), json.dumps(doc, indent=2) + "\n")
                out.write(os.path.join(directory, REPORT_MD), markdown)
                out.commit()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return doc, markdown, changed
