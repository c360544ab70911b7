# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One cluster's part of a fleet rollout, as a pure decision: ``next_step(desired, observed) -> Action``.

The fleet itself is Ansible's: the inventory holds the clusters, ``serial`` makes the waves (a canary cluster first),
``max_fail_percentage`` is the failure budget. What is decided here is what a cluster does when its turn comes, from
its rollout record (``record.py``) and what the cluster shows now:

- a failed record of the same rollout halts: nothing more is touched until the failure is acknowledged (then the
  cluster is recorded ``acknowledged`` and skipped) or the target changes (a new rollout id);
- a succeeded record at the target, or an acknowledged one, is skipped without a write (``changed=false``);
- an in-progress record (the run was interrupted) resumes the change, without the health preflight (an operator
  half-way through its upgrade is not healthy);
- otherwise the preflight must pass - the operator installed, the target offered by the cluster's catalog and ahead
  of what runs, the operator healthy now with no known failure - then the change starts.

After a failed change or health gate, ``on_failure`` decides: ``halt`` records the failure; ``rollback`` also moves an
OLM v1 extension back to the version it came from (pinned) and a DaemonSet back to its images; OLM v0 cannot
downgrade an installed operator (no InstallPlan goes back), so it halts and says so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec

# desired: kind, rollout (id), target (a version, or a DaemonSet's {container: image}), acknowledge (bool),
# on_failure ("halt" or "rollback")
Desired = namedtuple("Desired", ["kind", "rollout", "target", "acknowledge", "on_failure"])
# observed: record (dict or None), installed (the operator or DaemonSet is there), current (its version, or images),
# offered (versions its catalog offers in upgrade order; None where there is no catalog to ask), problem (why it is
# not healthy now, or None)
Observed = namedtuple("Observed", ["record", "installed", "current", "offered", "problem"])
Action = namedtuple("Action", ["kind", "message", "path"])
Action.__new__.__defaults__ = ("", None)

REFUSE = "refuse"  # halted by an earlier failure of this rollout: fail without a write
ACKNOWLEDGE = "acknowledge"  # record the user's acknowledgement of that failure, then skip
SKIP = "skip"  # done (or acknowledged) earlier: no write
BLOCKED = "blocked"  # the preflight failed: nothing was touched
START = "start"  # record in_progress, change, gate
RESUME = "resume"  # an interrupted run's change, again (the change steps are idempotent)

HALT = "halt"
ROLLBACK = "rollback"
ON_FAILURE = (HALT, ROLLBACK)


def _parse(version):
    try:
        return semver.parse(version or "")
    except semver.SemverError:
        return None


def upgrade_path(offered, current, target):
    """The versions an upgrade from ``current`` steps through to ``target``, in the catalog's upgrade order
    (``offered``), ``target`` last: ``[]`` when ``current`` is ``target``; None when ``target`` is not offered after
    ``current``."""
    if current == target:
        return []
    if target not in (offered or ()):
        return None
    now, goal = _parse(current), _parse(target)
    if now is not None and goal is not None and goal <= now:
        return None
    path = []
    for version in offered[offered.index(current) + 1 if current in offered else 0 :]:
        parsed = _parse(version)
        if now is not None and parsed is not None and parsed <= now:
            continue
        path.append(version)
        if version == target:
            return path
    return None


def is_version(text):
    """True for one version (``0.2.0``), False for a range (``>=0.2.0 <0.4.0``)."""
    return _parse(text) is not None


def resolve_range(offered, matches):
    """The newest of ``offered`` (upgrade order) that ``matches`` (a version range's predicate), or None: the version
    an OLM v1 extension given a range moves to."""
    found = [version for version in offered or () if matches(version)]
    return found[-1] if found else None


def _halt_message(desired, record):
    step = record.get("step") or rec.STEP_CHANGE
    cause = record.get("cause") or "no cause recorded"
    return (
        f"rollout {desired.rollout} halted here: it failed at step {step}: {cause}. Nothing more is changed until the failure is "
        "acknowledged (acknowledge=true for this cluster) or the target changes"
    )


def next_step(desired, observed):
    """What this cluster does for ``desired`` given ``observed``."""
    record = observed.record or {}
    same = record.get("rollout") == desired.rollout
    result = record.get("result") if same else None
    if result == rec.FAILED:
        if desired.acknowledge:
            return Action(ACKNOWLEDGE, f"the failure of rollout {desired.rollout} here is acknowledged: this cluster is left as it is")
        return Action(REFUSE, _halt_message(desired, record))
    if result == rec.ACKNOWLEDGED:
        return Action(SKIP, f"the failure of rollout {desired.rollout} here was acknowledged: this cluster is left as it is")
    current = observed.current
    if result == rec.SUCCEEDED and current == rec.target_text(desired.kind, desired.target):
        return Action(SKIP, f"rollout {desired.rollout} is done here", [])
    what = "the DaemonSet" if desired.kind == rec.KIND_DAEMONSET else "the operator"
    if not observed.installed:
        return Action(BLOCKED, f"{what} is not installed here: a fleet rollout moves what runs (install it first)")
    if desired.kind == rec.KIND_DAEMONSET:
        path = [] if current == rec.target_text(desired.kind, desired.target) else [rec.target_text(desired.kind, desired.target)]
    else:
        path = _version_path(desired, observed)
        if isinstance(path, Action):
            return path
    if result == rec.IN_PROGRESS:
        return Action(RESUME, f"resuming rollout {desired.rollout}, interrupted at step {record.get('step') or rec.STEP_CHANGE}", path)
    if observed.problem:
        return Action(BLOCKED, f"{what} is not healthy before the change: {observed.problem}")
    return Action(START, f"{current} -> {rec.target_text(desired.kind, desired.target)}" if path else f"already at {current}", path)


def _version_path(desired, observed):
    if observed.offered is None:
        return [] if observed.current == desired.target else [desired.target]
    path = upgrade_path(observed.offered, observed.current, desired.target)
    if path is not None:
        return path
    offered = ", ".join(observed.offered) or "none"
    if desired.target not in observed.offered:
        return Action(BLOCKED, f"version {desired.target} is not offered by this cluster's catalog (versions: {offered})")
    return Action(
        BLOCKED,
        f"version {desired.target} is not ahead of the installed {observed.current} (versions in upgrade order: {offered})"
        + ("; OLM v0 cannot downgrade an installed operator" if desired.kind == rec.KIND_OLM_V0 else ""),
    )


def after_failure(desired, came_from):
    """``(ROLLBACK, to)`` or ``(HALT, why not rolled back or "")`` once the change or the gate failed."""
    if desired.on_failure != ROLLBACK:
        return HALT, ""
    if desired.kind == rec.KIND_OLM_V0:
        return HALT, "on_failure=rollback: OLM v0 cannot downgrade an installed operator (no InstallPlan goes back to an older CSV); halted instead"
    if not came_from:
        return HALT, "on_failure=rollback: the version it came from is not known; halted instead"
    return ROLLBACK, came_from
