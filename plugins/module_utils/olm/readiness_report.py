# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade-readiness report of a fleet, pure: ``olm_upgrade_plan`` results, one per cluster -> a JSON document
and a Markdown table a person reads, one row per operator per cluster, blockers first.

``document(plans, target=None)`` takes ``[{"cluster": name, "plan": <olm_upgrade_plan result, or a failed one>}]``
in play order; ``markdown(document)`` is the same as text. Neither holds a timestamp: the same fleet state gives the
same bytes, so a rerun changes no file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt

VERDICTS = ("blocked", "needs_action", "ready")  # olm_upgrade_plan's, worst first
ERROR = "error"  # the plan could not be made for this cluster
UNKNOWN = "unknown"  # the fleet verdict when a cluster has no plan
CAUSE_MAX = 300
ACTION_TEXT = {
    "none": "none",
    "upgrade": "upgrade to {to_version}",
    "switch_channel": "switch to channel {to_channel}",
    "remove_or_replace": "remove or replace",
    "unknown": "unknown",
}
COLUMNS = (
    "cluster",
    "operator",
    "package",
    "installed",
    "channel",
    "max OpenShift",
    "blocks",
    "action",
    "path",
    "why",
)


def _text(value):
    return None if value is None else str(value)


def _operator_row(cluster, op):
    action = op.get("action") or {}
    return {
        "cluster": cluster,
        "generation": op.get("generation"),
        "namespace": op.get("namespace"),
        "name": op.get("name"),
        "package": op.get("package"),
        "channel": op.get("channel"),
        "installed_version": _text(op.get("installed_version")),
        "source": op.get("source"),
        "max_openshift_version": _text(op.get("max_openshift_version")),
        "blocks_upgrade": bool(op.get("blocks_upgrade")),
        "block_reason": op.get("block_reason"),
        "target_catalog": op.get("target_catalog"),
        "target_version": _text(op.get("target_version")),
        "path": [str(v) for v in op.get("path") or ()],
        "deprecations": list(op.get("deprecations") or ()),
        "action": {
            "kind": action.get("kind") or "unknown",
            "to_version": _text(action.get("to_version")),
            "to_channel": action.get("to_channel"),
            "reason": action.get("reason"),
        },
    }


def _rank(row):
    """Blockers first, then those needing an action, then the rest."""
    if row["blocks_upgrade"]:
        return 0
    return 1 if row["action"]["kind"] != "none" else 2


def document(plans, target=None):
    """The report of ``plans`` (a list of ``{"cluster", "plan"}``) for ``target`` (the plans' own when None)."""
    if not isinstance(plans, list) or not plans:
        raise InvalidInputError("plans must be a non-empty list of {cluster, plan}")
    clusters, rows, seen, targets = [], [], set(), set()
    for index, item in enumerate(plans):
        cluster, plan = (item or {}).get("cluster"), (item or {}).get("plan")
        if not cluster:
            raise InvalidInputError(f"plans[{index}] has no cluster")
        if cluster in seen:
            raise InvalidInputError(f"cluster {cluster} is listed twice in plans")
        seen.add(cluster)
        if not isinstance(plan, dict):
            raise InvalidInputError(f"plans[{index}] ({cluster}): plan must be an olm_upgrade_plan result (a dict)")
        if plan.get("failed") or plan.get("skipped") or plan.get("unreachable") or "verdict" not in plan:
            why = plan.get("msg") or ("skipped" if plan.get("skipped") else "no verdict in the result")
            clusters.append({"cluster": cluster, "verdict": ERROR, "blockers": [], "operators": 0, "error": excerpt(str(why), CAUSE_MAX)})
            continue
        if plan["verdict"] not in VERDICTS:
            raise InvalidInputError(f"plans[{index}] ({cluster}): unknown verdict {excerpt(str(plan['verdict']))} (expected {', '.join(VERDICTS)})")
        if plan.get("target"):
            targets.add(str(plan["target"]))
        operators = [_operator_row(cluster, op) for op in plan.get("operators") or ()]
        rows.extend(operators)
        clusters.append(
            {"cluster": cluster, "verdict": plan["verdict"], "blockers": list(plan.get("blockers") or ()), "operators": len(operators), "error": None}
        )
    if target is None:
        if len(targets) > 1:
            raise InvalidInputError(f"the plans are for different targets ({', '.join(sorted(targets))}): one report is for one target")
        target = next(iter(targets), None)
    order = {c["cluster"]: i for i, c in enumerate(clusters)}
    rows.sort(key=lambda r: (_rank(r), order[r["cluster"]], r["namespace"] or "", r["name"] or ""))
    verdicts = [c["verdict"] for c in clusters]
    if ERROR in verdicts:
        verdict = UNKNOWN
    else:
        verdict = next(v for v in VERDICTS if v in verdicts)
    counts = {}
    for entry in clusters:
        counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
    return {
        "target": target,
        "verdict": verdict,
        "counts": {v: counts[v] for v in (ERROR,) + VERDICTS if v in counts},
        "blocking_operators": sum(1 for r in rows if r["blocks_upgrade"]),
        "clusters": sorted(clusters, key=lambda c: (((ERROR,) + VERDICTS).index(c["verdict"]), order[c["cluster"]])),
        "operators": rows,
    }


def _cell(value):
    if value is None or value == "" or value == []:
        return "-"
    return str(value).replace("|", "\\|").replace("\n", " ")


def action_text(action):
    kind = action.get("kind") or "unknown"
    text = ACTION_TEXT.get(kind, kind).format(to_version=action.get("to_version") or "?", to_channel=action.get("to_channel") or "?")
    if kind == "switch_channel" and action.get("to_version"):
        text += f" ({action['to_version']})"
    return text


def _why(row):
    """OLM's words for a block (its skew line without the list dash), the action's reason, the deprecations."""
    parts = []
    if row["block_reason"]:
        parts.append(row["block_reason"][2:] if row["block_reason"].startswith("- ") else row["block_reason"])
    if row["action"]["reason"]:
        parts.append(row["action"]["reason"])
    parts.extend(f"deprecated {d.get('scope')} {d.get('name')}: {d.get('message')}" for d in row["deprecations"])
    return excerpt("; ".join(parts), CAUSE_MAX) if parts else None


def headline(doc):
    counts = ", ".join(f"{n} {verdict}" for verdict, n in doc["counts"].items())
    return f"Upgrade readiness for OpenShift {doc['target'] or '?'}: {doc['verdict']} ({counts}; {doc['blocking_operators']} blocking operator(s))"


def markdown(doc):
    """The report as Markdown: a headline, the clusters' verdicts, then one row per operator per cluster."""
    lines = [f"# {headline(doc)}", "", "| cluster | verdict | blockers | operators | error |", "|---|---|---|---|---|"]
    for entry in doc["clusters"]:
        lines.append(
            "| " + " | ".join(_cell(v) for v in (entry["cluster"], entry["verdict"], ", ".join(entry["blockers"]), entry["operators"], entry["error"])) + " |"
        )
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in doc["operators"]:
        operator = f"{row['namespace']}/{row['name']}" if row["namespace"] else f"{row['name']} (OLM v1)"
        cells = (
            row["cluster"],
            operator,
            row["package"],
            row["installed_version"],
            row["channel"],
            row["max_openshift_version"],
            "yes" if row["blocks_upgrade"] else "no",
            action_text(row["action"]),
            " -> ".join(row["path"]),
            _why(row),
        )
        lines.append("| " + " | ".join(_cell(v) for v in cells) + " |")
    if not doc["operators"]:
        lines.append("| " + " | ".join(["-"] * len(COLUMNS)) + " |")
    return "\n".join(lines) + "\n"
