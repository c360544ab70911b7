# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an InstallPlan would install, read before approving it (pure).

OLM generates one InstallPlan per namespace resolution: it carries the CSVs of every Subscription that changed,
and approving it approves all of them (olm.md section 2 item 5). ``classify_plan`` splits the plan's CSVs into
the one our Subscription asked for, dependencies OLM pulls in for it (a Subscription step that does not exist
yet), and CSVs of other Subscriptions, which we must never approve on their behalf.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import spec, status

PlanContent = namedtuple("PlanContent", ["own", "dependencies", "foreign"])

CSV_KIND = "ClusterServiceVersion"
SUBSCRIPTION_KIND = "Subscription"


def plan_csvs(ip):
    """``spec.clusterServiceVersionNames`` as a list."""
    return list(spec(ip).get("clusterServiceVersionNames") or [])


def requires_approval(ip):
    return status(ip).get("phase") == "RequiresApproval" and not spec(ip).get("approved")


def _steps(ip):
    return [step for step in status(ip).get("plan") or [] if isinstance(step, dict)]


def _manifest(step):
    manifest = (step.get("resource") or {}).get("manifest")
    if not manifest:
        return None
    try:
        return json.loads(manifest)
    except ValueError:
        return None


def plan_csv_versions(ip):
    """``{csv name: spec.version}`` for the CSV steps whose manifest is in the plan (empty before Planning)."""
    versions = {}
    for step in _steps(ip):
        resource = step.get("resource") or {}
        if resource.get("kind") != CSV_KIND:
            continue
        manifest = _manifest(step) or {}
        version = (manifest.get("spec") or {}).get("version")
        if version:
            versions[resource.get("name")] = version
    return versions


def new_subscription_csvs(ip):
    """CSVs resolved for Subscriptions the plan would create (dependencies OLM adds)."""
    csvs = set()
    for step in _steps(ip):
        resource = step.get("resource") or {}
        if resource.get("kind") == SUBSCRIPTION_KIND and step.get("status") in ("NotPresent", "Unknown"):
            csvs.add(step.get("resolving"))
    return csvs


def csv_catalogs(ip, csv):
    """The CatalogSources ``(name, namespace)`` the plan takes ``csv`` from: its steps' ``sourceName`` and
    ``sourceNamespace``, and its bundle lookups' ``catalogSourceRef`` (before the steps are filled in)."""
    found = set()
    for step in _steps(ip):
        resource = step.get("resource") or {}
        if step.get("resolving") == csv and resource.get("sourceName"):
            found.add((resource.get("sourceName"), resource.get("sourceNamespace")))
    for lookup in status(ip).get("bundleLookups") or []:
        ref = (lookup or {}).get("catalogSourceRef") or {}
        if lookup.get("identifier") == csv and ref.get("name"):
            found.add((ref.get("name"), ref.get("namespace")))
    return found


def classify_plan(ip, own_csv):
    """Split the plan's CSVs into ``PlanContent(own, dependencies, foreign)`` (sorted lists)."""
    names = plan_csvs(ip)
    created = new_subscription_csvs(ip)
    own = [n for n in names if n == own_csv]
    dependencies = sorted(n for n in names if n != own_csv and n in created)
    foreign = sorted(n for n in names if n != own_csv and n not in created)
    return PlanContent(own, dependencies, foreign)
