# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an operator installed through OLM v0 looks like, summarized from plain objects (pure).

``operator_summary`` turns a Subscription, its installed CSV, the namespace's InstallPlans and the package's
PackageManifest (all plain dicts, any of them missing) into the record ``olm_operator_info`` returns: the
Subscription's state and abnormal conditions, the installed CSV, the InstallPlans still waiting, the catalog's
channels and versions (as the OpenShift console reads them from the PackageManifest API), and the versions of the
subscribed channel newer than the installed one.

Rules (olm.md sections 1 and 2):

* Subscription conditions have abnormal-true polarity: every condition with status ``True`` is a problem or an
  install in progress, so those are reported with their reason and message.
* ``installed`` means the CSV is ``Succeeded``; ``AtLatestKnown`` alone only says the CSV exists.
* Copied CSVs (label ``olm.copiedFrom``) are not installations and are ignored.
* An InstallPlan belongs to a Subscription through its owner references (one plan may serve several
  Subscriptions of the namespace); it is pending until it is ``Complete`` or ``Failed``.
* PackageManifest channels come in catalog order and are reported sorted by name, so the output is stable.
* PackageManifest channel entries come in catalog order, not upgrade order: versions are sorted with blang/semver,
  like OLM's own version comparisons. Entries whose version does not parse are kept, after the others, and never
  counted as upgrades.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import is_copied_csv, metadata, spec, status

SUBSCRIPTION_KIND = "Subscription"

# InstallPlan phases before an end state (Complete, Failed); "" is a plan OLM has not reconciled yet.
PENDING_PLAN_PHASES = frozenset(("", "Planning", "RequiresApproval", "Installing"))

# PackageManifest labels packageserver sets from the CatalogSource (operator-lifecycle-manager
# pkg/package-server/provider/registry.go: newPackageManifest).
CATALOG_LABEL = "catalog"
CATALOG_NAMESPACE_LABEL = "catalog-namespace"


# ----------------------------------------------------------------------------------------------- Subscription


def find_subscriptions(subscriptions, package=None, name=None):
    """The Subscriptions among ``subscriptions`` for ``package`` and/or named ``name`` (sorted by name).

    With neither, all of them. A Subscription named ``name`` whose ``spec.name`` is not ``package`` raises
    ``ValueError``: the two options contradict each other.
    """
    found = []
    for sub in subscriptions or ():
        if name is not None and metadata(sub).get("name") != name:
            continue
        if package is not None and spec(sub).get("name") != package:
            if name is not None:
                raise InvalidInputError(f"Subscription {name} is for package {spec(sub).get('name')}, not {package}")
            continue
        found.append(sub)
    return sorted(found, key=lambda sub: metadata(sub).get("name") or "")


def abnormal_conditions(conditions):
    """The conditions whose status is ``True`` (abnormal-true polarity), as ``{type, reason, message}``."""
    return [
        {"type": cond.get("type"), "reason": cond.get("reason"), "message": cond.get("message")}
        for cond in conditions or ()
        if isinstance(cond, dict) and cond.get("status") == "True"
    ]


def subscription_summary(sub):
    """The fields of a Subscription a dashboard shows; None for no Subscription."""
    if sub is None:
        return None
    sub_spec, sub_status = spec(sub), status(sub)
    raw = [cond for cond in sub_status.get("conditions") or () if isinstance(cond, dict)]
    return {
        "name": metadata(sub).get("name"),
        "channel": sub_spec.get("channel"),
        "source": sub_spec.get("source"),
        "source_namespace": sub_spec.get("sourceNamespace"),
        "approval": sub_spec.get("installPlanApproval") or "Automatic",
        "starting_csv": sub_spec.get("startingCSV"),
        "state": sub_status.get("state") or None,
        "current_csv": sub_status.get("currentCSV") or None,
        "installed_csv": sub_status.get("installedCSV") or None,
        "install_plan": (sub_status.get("installPlanRef") or {}).get("name"),
        "conditions": abnormal_conditions(raw),
        "raw_conditions": raw,
    }


# ------------------------------------------------------------------------------------- ClusterServiceVersion


def csv_summary(csv):
    """Name, version, phase, reason, message and display name of a CSV; None for no CSV or a copied one."""
    if csv is None or is_copied_csv(csv):
        return None
    csv_status = status(csv)
    return {
        "name": metadata(csv).get("name"),
        "version": spec(csv).get("version"),
        "phase": csv_status.get("phase"),
        "reason": csv_status.get("reason"),
        "message": csv_status.get("message"),
        "display_name": spec(csv).get("displayName"),
    }


# ---------------------------------------------------------------------------------------------- InstallPlans


def plan_belongs_to(plan, sub):
    """True if ``plan`` is one of ``sub``'s InstallPlans: an owner reference to it (by UID when both have one)."""
    sub_meta = metadata(sub)
    for ref in metadata(plan).get("ownerReferences") or ():
        if not isinstance(ref, dict) or ref.get("kind") != SUBSCRIPTION_KIND:
            continue
        if ref.get("uid") and sub_meta.get("uid"):
            if ref.get("uid") == sub_meta.get("uid"):
                return True
        elif ref.get("name") == sub_meta.get("name"):
            return True
    return False


def plan_pending(plan):
    return (status(plan).get("phase") or "") in PENDING_PLAN_PHASES


def pending_install_plans(plans, sub):
    """``sub``'s InstallPlans that are not ``Complete`` or ``Failed``, oldest first (by ``spec.generation``)."""
    if sub is None:
        return []
    own = [plan for plan in plans or () if plan_belongs_to(plan, sub) and plan_pending(plan)]
    own.sort(key=lambda plan: (spec(plan).get("generation") or 0, metadata(plan).get("name") or ""))
    return [
        {
            "name": metadata(plan).get("name"),
            "phase": status(plan).get("phase") or "",
            "approved": bool(spec(plan).get("approved")),
            "approval": spec(plan).get("approval"),
            "csvs": list(spec(plan).get("clusterServiceVersionNames") or ()),
        }
        for plan in own
    ]


# --------------------------------------------------------------------------------------------- PackageManifest


def catalog_labels(source, source_namespace):
    """The label selector of the PackageManifests of one CatalogSource (None parts are left out)."""
    parts = []
    if source:
        parts.append(f"{CATALOG_LABEL}={source}")
    if source_namespace:
        parts.append(f"{CATALOG_NAMESPACE_LABEL}={source_namespace}")
    return ",".join(parts)


def _catalog_ref(manifest):
    labels = metadata(manifest).get("labels") or {}
    pm_status = status(manifest)
    return (
        pm_status.get("catalogSource") or labels.get(CATALOG_LABEL),
        pm_status.get("catalogSourceNamespace") or labels.get(CATALOG_NAMESPACE_LABEL),
    )


def select_package_manifest(manifests, package, source=None, source_namespace=None, namespace=None):
    """Pick the PackageManifest of ``package`` from ``source``/``source_namespace``; ``(manifest, warning)``.

    Without a source (no Subscription and none given), the only catalog that has the package is taken; among
    several, the one in ``namespace`` itself if it is the only one there (OLM prefers catalogs in the
    Subscription's namespace), else none, with a warning naming the candidates.
    """
    candidates = []
    for manifest in manifests or ():
        if metadata(manifest).get("name") != package and status(manifest).get("packageName") != package:
            continue
        cat_name, cat_namespace = _catalog_ref(manifest)
        if source and cat_name != source:
            continue
        if source_namespace and cat_namespace != source_namespace:
            continue
        candidates.append(manifest)
    if len(candidates) == 1:
        return candidates[0], None
    if not candidates:
        return None, None
    local = [m for m in candidates if _catalog_ref(m)[1] == namespace]
    if len(local) == 1:
        return local[0], None
    names = ", ".join(sorted(f"{ns}/{name}" for name, ns in (_catalog_ref(m) for m in candidates)))
    return None, f"package {package} is in {len(candidates)} catalogs ({names}); set catalog and catalog_namespace to choose one"


def _version_key(indexed):
    index, version = indexed
    try:
        return (0, semver.parse(version or ""), index)
    except semver.SemverError:
        return (1, index, index)


def _sorted_entries(entries):
    """Channel entries sorted by version (blang/semver order); unparsable versions last, in catalog order."""
    pairs = [(entry.get("name"), entry.get("version") or "") for entry in entries or () if isinstance(entry, dict)]
    order = sorted(enumerate(version for _name, version in pairs), key=_version_key)
    return [{"name": pairs[index][0], "version": pairs[index][1]} for index, _version in order]


def _unique(items):
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def catalog_summary(manifest):
    """Channels (by name, with versions in upgrade order), default channel and catalog of a PackageManifest.

    None for no PackageManifest. ``provider`` is the manifest's ``status.provider.name`` (packageserver copies it
    from a channel head's CSV, the default channel's when it has one).
    """
    if manifest is None:
        return None
    pm_status = status(manifest)
    cat_name, cat_namespace = _catalog_ref(manifest)
    channels = []
    for channel in pm_status.get("channels") or ():
        if not isinstance(channel, dict):
            continue
        entries = _sorted_entries(channel.get("entries"))
        channels.append(
            {
                "name": channel.get("name"),
                "current_csv": channel.get("currentCSV"),
                "current_version": (channel.get("currentCSVDesc") or {}).get("version"),
                "versions": _unique(entry["version"] for entry in entries if entry["version"]),
                "entries": entries,
            }
        )
    return {
        "package": pm_status.get("packageName") or metadata(manifest).get("name"),
        "default_channel": pm_status.get("defaultChannel"),
        "catalog_source": cat_name,
        "catalog_source_namespace": cat_namespace,
        "catalog_source_display_name": pm_status.get("catalogSourceDisplayName") or None,
        "provider": (pm_status.get("provider") or {}).get("name"),
        "channels": sorted(channels, key=lambda chan: chan["name"] or ""),
    }


# -------------------------------------------------------------------------------------------------- upgrades


def _parse(version):
    try:
        return semver.parse(version or "")
    except semver.SemverError:
        return None


def installed_version(csv, installed_csv, catalog):
    """The installed version: the CSV's ``spec.version``, else the catalog entry named ``installed_csv``."""
    if csv and csv.get("version"):
        return csv["version"]
    if installed_csv and catalog:
        for channel in catalog["channels"]:
            for entry in channel["entries"]:
                if entry["name"] == installed_csv and entry["version"]:
                    return entry["version"]
    return None


def find_channel(catalog, channel_name):
    """The channel ``channel_name`` of a catalog summary (the default channel when None); None if absent."""
    if not catalog:
        return None
    wanted = channel_name or catalog.get("default_channel")
    for channel in catalog["channels"]:
        if channel["name"] == wanted:
            return channel
    return None


def available_upgrades(catalog, channel_name, version):
    """Versions of the channel newer than ``version``, oldest first; empty when either is unknown."""
    channel = find_channel(catalog, channel_name)
    current = _parse(version)
    if channel is None or current is None:
        return []
    newer = []
    for candidate in channel["versions"]:
        parsed = _parse(candidate)
        if parsed is not None and parsed > current:
            newer.append(candidate)
    return newer


# ------------------------------------------------------------------------------------------------- the record


def operator_summary(package, namespace, subscription=None, csv=None, install_plans=(), package_manifest=None):
    """The ``olm_operator_info`` record of one operator: ``(record, warnings)``.

    ``subscription`` (None when the package is not subscribed), ``csv`` (the installed CSV, or None),
    ``install_plans`` (every InstallPlan of the namespace: the Subscription's own are picked here) and
    ``package_manifest`` (already selected for the Subscription's catalog, or None) are plain dicts.
    """
    warnings = []
    sub = subscription_summary(subscription)
    installed_csv = csv_summary(csv)
    if installed_csv is not None and sub and installed_csv["name"] != sub["installed_csv"]:
        installed_csv = None  # not the CSV the Subscription installed
    catalog = catalog_summary(package_manifest)
    channel_name = (sub or {}).get("channel")
    version = installed_version(installed_csv, (sub or {}).get("installed_csv"), catalog)
    upgrades = available_upgrades(catalog, channel_name, version) if sub else []
    if sub and catalog and find_channel(catalog, channel_name) is None:
        wanted = channel_name or catalog.get("default_channel")
        warnings.append(f"{package}: channel {wanted} is not in catalog {catalog['catalog_source_namespace']}/{catalog['catalog_source']}")
    pending_upgrade = bool(sub and sub["installed_csv"] and sub["current_csv"] and sub["current_csv"] != sub["installed_csv"])
    record = {
        "package": package,
        "namespace": namespace,
        "present": sub is not None,
        "subscription": sub,
        "csv": installed_csv,
        "installed": bool(installed_csv and installed_csv["phase"] == "Succeeded"),
        "installed_version": version,
        "pending_install_plans": pending_install_plans(install_plans, subscription),
        "catalog": catalog,
        "available_upgrades": upgrades,
        "upgrade_available": bool(upgrades) or pending_upgrade,
    }
    return record, warnings
