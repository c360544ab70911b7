# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one row per cluster, the waves Ansible's ``serial`` makes, a readable table and a JSON document.

``waves(clusters, serial)`` batches the clusters as ansible-core's PlaybookExecutor does (``serial`` items are counts
or percentages of all the play's hosts, at least 1, the last one repeated); ``document(rollout, rows, clusters,
serial)`` is the machine-readable report (every cluster of the rollout, also those the rollout never reached);
``table(document)`` is the same as a Markdown table a person reads, failures first in its headline.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt

# Results a report row shows: the record's, plus what happened in this run.
NOT_REACHED = "not_reached"  # the rollout stopped before this cluster's wave
SKIPPED = "skipped"  # done earlier (a rerun)
HALTED = "halted"  # refused: the rollout is halted by an earlier failure
BLOCKED = "blocked"  # its preflight failed: nothing touched
PLANNED = "planned"  # check mode
ORDER = ("failed", HALTED, BLOCKED, "unreachable", "in_progress", NOT_REACHED, PLANNED, "acknowledged", SKIPPED, "succeeded")
COLUMNS = (("cluster", "cluster"), ("wave", "wave"), ("from", "from"), ("to", "to"), ("result", "result"), ("duration_s", "duration (s)"), ("cause", "cause"))
CAUSE_MAX = 300


def _serial_item(value, total):
    text = str(value).strip()
    try:
        if text.endswith("%"):
            count = int(float(text[:-1]) / 100.0 * total)
        else:
            count = int(text)
    except ValueError:
        raise InvalidInputError(f"serial items are counts or percentages (1, 25%), not {excerpt(text)}") from None
    return max(1, count)


def waves(clusters, serial):
    """The batches ``serial`` makes of ``clusters`` (in play order), as Ansible makes them: a list of lists."""
    clusters = list(clusters)
    if not serial:
        return [clusters] if clusters else []
    items = list(serial) if isinstance(serial, (list, tuple)) else [serial]
    batches, index, at = [], 0, 0
    while at < len(clusters):
        size = _serial_item(items[min(index, len(items) - 1)], len(clusters))
        batches.append(clusters[at : at + size])
        at += size
        index += 1
    return batches


def wave_of(cluster, clusters, serial):
    """The 1-based wave of ``cluster``, or None when it is not one of ``clusters``."""
    for number, batch in enumerate(waves(clusters, serial), start=1):
        if cluster in batch:
            return number
    return None


def row(cluster, wave, result, record=None, cause=None, duration=None, came_from=None, to=None):
    record = record or {}
    cause = cause if cause is not None else record.get("cause")
    return {
        "cluster": cluster,
        "wave": wave,
        "from": came_from if came_from is not None else record.get("from"),
        "to": to if to is not None else record.get("target"),
        "result": result,
        "step": record.get("step"),
        "cause": excerpt(cause, CAUSE_MAX) if cause else None,
        "duration_s": duration,
        "rolled_back_to": record.get("rolled_back_to"),
        "started": record.get("started"),
        "finished": record.get("finished"),
    }


def document(rollout, rows, clusters, serial, generated=None):
    """The whole report: ``rows`` (this run's and earlier runs' rows by cluster) plus a NOT_REACHED row for every
    other cluster of ``clusters``, ordered by wave then play order."""
    by_cluster = {r["cluster"]: r for r in rows}
    batches = waves(clusters, serial)
    ordered = []
    for number, batch in enumerate(batches, start=1):
        for cluster in batch:
            ordered.append(by_cluster.pop(cluster, None) or row(cluster, number, NOT_REACHED, to=rollout.get("target")))
    ordered.extend(by_cluster[name] for name in sorted(by_cluster))  # rows of clusters no longer in the play
    counts = {}
    for entry in ordered:
        counts[entry["result"]] = counts.get(entry["result"], 0) + 1
    failed = [entry["cluster"] for entry in ordered if entry["result"] in ("failed", HALTED)]
    return {
        "rollout": rollout.get("id"),
        "kind": rollout.get("kind"),
        "name": rollout.get("name"),
        "target": rollout.get("target"),
        "generated": generated,
        "halted": bool(failed),
        "failed_clusters": failed,
        "counts": dict(sorted(counts.items(), key=lambda kv: ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER))),
        "waves": len(batches),
        "clusters": ordered,
    }


def _cell(value):
    if value is None or value == "":
        return "-"
    return str(value).replace("|", "\\|").replace("\n", " ")


def headline(doc):
    counts = ", ".join(f"{n} {result}" for result, n in doc["counts"].items()) or "no clusters"
    state = f"HALTED by {', '.join(doc['failed_clusters'])}" if doc["halted"] else "not halted"
    return f"Fleet rollout {doc['rollout']}: {counts}; {state}"


def table(doc):
    """The report as Markdown: a headline, then one row per cluster."""
    lines = [f"# {headline(doc)}", "", "| " + " | ".join(title for _key, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for entry in doc["clusters"]:
        lines.append("| " + " | ".join(_cell(entry.get(key)) for key, _title in COLUMNS) + " |")
    return "\n".join(lines) + "\n"
