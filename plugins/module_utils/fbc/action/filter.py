# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Select operators of a catalog as oc-mirror v2 does (its ImageSetConfiguration ``mirror.operators[]``), pure.

oc-mirror v2 hands the selection to github.com/sherine-k/catalog-filter (v0.0.5); this is the same selection:

- no packages: the head of every channel of every package (``full``: the catalog unchanged);
- a package by name: the head of every one of its channels (not only the default channel's);
- ``channels``: only those channels; their heads, or with a version range the entries that range needs;
- ``min_version``/``max_version`` (inclusive, Masterminds semantics: a range without a prerelease part matches no
  prerelease; build metadata is ignored) on a channel, or on the package for all its kept channels (not both);
  ``min_version == max_version`` selects that one bundle;
- ``full`` with packages: every entry of their (listed) channels;
- ``default_channel`` names the new default when the catalog's default channel is not kept;
- ``installed_version`` (what a cluster runs, read with olm_operator_info): each channel that has it keeps the path
  from it to the newest kept entry (oc-mirror has no such option; heads-only mirrors strand installed operators).

A version range keeps the contiguous part of the channel's ``replaces`` chain that holds every bundle in range (each
chain node's in-range ``skips`` with it), so every kept version can upgrade to the newest kept one; ``skipRange`` is
not followed (catalog-filter's rule). Kept entries are copied unchanged: their ``replaces``/``skips``/``skipRange``
may name bundles that are gone, which OLM and opm accept. Bundles not in a kept entry, and deprecations of bundles
and channels that are gone, are dropped.

Where this differs from oc-mirror v2, deliberately: a package or channel the catalog does not have, and a listed
channel that a range leaves empty, are errors (oc-mirror v2 ignores the first two silently; v1 refused them too);
the result is validated like ``opm validate``; an exact version picks deterministically.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config

PACKAGE_PROPERTY = "olm.package"


class FilterError(FBCError):
    """A selection that cannot be applied to the catalog (or is invalid in itself)."""


def _names(items, limit=20):
    names = sorted(items)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ------------------------------------------------------------------------------------------- the selection


def _version(text, where):
    try:
        return semver.parse(text)
    except semver.SemverError as exc:
        raise FilterError(f"{where}: {text!r} is not a semantic version: {exc}") from None


def _named(items, what):
    """``items`` (dicts), each with a name and no name twice; ``what`` names them in the errors."""
    seen = set()
    for index, item in enumerate(items or ()):
        name = item.get("name")
        if not name:
            raise FilterError(f"{what}[{index}] has no name")
        if name in seen:
            raise FilterError(f"{what} {name} is listed twice")
        seen.add(name)
    return list(items or ())


def check_selection(selection):
    """Refuse a selection that is invalid in itself (oc-mirror's config validation); returns it normalised:
    ``{"full": bool, "packages": [{"name", "default_channel", "min_version", "max_version", "channels": [...]}]}``."""
    full = bool(selection.get("full"))
    packages = []
    for package in _named(selection.get("packages"), "package"):
        name = package["name"]
        channels = _named(package.get("channels"), f"package {name}: channel")
        entry = {
            "name": name,
            "default_channel": package.get("default_channel"),
            "min_version": package.get("min_version"),
            "max_version": package.get("max_version"),
            "installed_version": package.get("installed_version"),
            "channels": channels,
        }
        if entry["installed_version"]:
            _version(entry["installed_version"], f"package {name} installed_version")
        for where, item in [(f"package {name}", entry)] + [(f"package {name} channel {c['name']}", c) for c in channels]:
            for bound in ("min_version", "max_version"):
                if item.get(bound):
                    _version(item[bound], f"{where} {bound}")
        package_range = entry["min_version"] or entry["max_version"]
        if package_range and any(c.get("min_version") or c.get("max_version") for c in channels):
            raise FilterError(f"package {name}: a version range on the package and on its channels cannot be combined")
        if full and (package_range or any(c.get("min_version") or c.get("max_version") for c in channels)):
            raise FilterError(f"package {name}: full=true cannot be combined with a version range")
        packages.append(entry)
    return {"full": full, "packages": packages}


class VersionRange:
    """``>=min <=max`` with Masterminds' rules: build metadata is ignored, and a version with a prerelease part
    only matches when a bound has one."""

    def __init__(self, min_version=None, max_version=None):
        self.low = semver.parse(min_version) if min_version else None
        self.high = semver.parse(max_version) if max_version else None
        self.allows_prerelease = bool((self.low and self.low.pre) or (self.high and self.high.pre))
        self.text = " ".join(t for t in (f">={min_version}" if min_version else "", f"<={max_version}" if max_version else "") if t)

    def exact(self):
        return self.low is not None and self.high is not None and self.low.compare(self.high) == 0

    def __call__(self, version):
        if version is None or (version.pre and not self.allows_prerelease):
            return False
        if self.low is not None and version.compare(self.low) < 0:
            return False
        return self.high is None or version.compare(self.high) <= 0


# ------------------------------------------------------------------------------------------- the catalog


def bundle_version(blob):
    """The ``olm.package`` property's version of a bundle blob, parsed (None when absent or not semver)."""
    for prop in blob.get("properties") or ():
        if prop.get("type") == PACKAGE_PROPERTY:
            try:
                return semver.parse(str((prop.get("value") or {}).get("version")))
            except semver.SemverError:
                return None
    return None


def channel_head(channel):
    """The entry of ``channel`` nothing else replaces or skips (opm's Channel.Head); FilterError otherwise."""
    entries = channel.get("entries") or []
    if not entries:
        raise FilterError(f"package {channel.get('package')} channel {channel.get('name')}: the channel has no entries")
    incoming = set()
    for entry in entries:
        if entry.get("replaces"):
            incoming.add(entry["replaces"])
        incoming.update(entry.get("skips") or ())
    heads = [entry for entry in entries if entry.get("name") not in incoming]
    if len(heads) != 1:
        found = ", ".join(sorted(e.get("name") for e in heads)) or "none"
        raise FilterError(f"package {channel.get('package')} channel {channel.get('name')}: expected one channel head, found {found}")
    return heads[0]


def replaces_chain(channel):
    """The channel's entries from its head down its ``replaces`` links (a cycle is an error)."""
    by_name = {entry.get("name"): entry for entry in channel.get("entries") or ()}
    chain, node = [], channel_head(channel)
    while node is not None:
        if node in chain:
            raise FilterError(f"package {channel.get('package')} channel {channel.get('name')}: the upgrade graph has a cycle")
        chain.append(node)
        node = by_name.get(node.get("replaces"))
    return chain


def entries_in_range(channel, versions, in_range):
    """catalog-filter's rule: the contiguous part of the replaces chain holding every bundle in range, each kept chain
    node with its in-range skips. ``versions``: bundle name -> parsed version. Returns entries (may be empty)."""
    chain = replaces_chain(channel)
    by_name = {entry.get("name"): entry for entry in channel.get("entries") or ()}
    counts, credited, total = [0] * len(chain), set(), 0
    for position in range(len(chain) - 1, -1, -1):  # bottom-up: a skipped bundle counts for the lowest node skipping it
        node = chain[position]
        for name in [node.get("name")] + list(node.get("skips") or ()):
            if name not in credited and in_range(versions.get(name)):
                credited.add(name)
                total += 1
        counts[position] = total
    if not total:
        return []
    head = max(position for position in range(len(chain)) if counts[position] == total)  # the lowest with the count
    tail = next((position for position in range(head, len(chain)) if counts[position] == 0), len(chain))
    kept = []
    for node in chain[head:tail]:
        kept.append(node)
        for skipped in node.get("skips") or ():
            if skipped in by_name and in_range(versions.get(skipped)) and by_name[skipped] not in kept:
                kept.append(by_name[skipped])
    order = {id(entry): index for index, entry in enumerate(channel.get("entries") or ())}
    return sorted(kept, key=lambda entry: order[id(entry)])


def _from_installed(bounds, installed, channel, versions):
    """The range widened down to the version a cluster runs, when the channel has it: the kept entries then hold the
    path from it to the newest kept one (for a heads-only selection, from it up to the head)."""
    if not installed:
        return bounds
    wanted = semver.parse(installed)
    if not any(versions.get(e.get("name")) is not None and versions[e.get("name")].compare(wanted) == 0 for e in channel.get("entries") or ()):
        return bounds
    low = bounds[0]
    if low is None or semver.parse(low).compare(wanted) > 0:
        low = installed
    return low, bounds[1]


def _exact(package, channel, version_range, versions):
    wanted = version_range.low
    matches = sorted(name for name, version in versions.items() if version is not None and version.compare(wanted) == 0)
    entries = [entry for entry in channel.get("entries") or () if entry.get("name") in matches]
    if not entries:
        where = f"channel {channel.get('name')} of package {package}"
        raise FilterError(f"version {version_range.low} is not in {where}" + (f" (bundles with it: {_names(matches)})" if matches else ""))
    return entries[:1]


def filter_catalog(cfg, selection):
    """``(the filtered DeclarativeConfig, warnings)`` for ``selection`` (see module docstring); FilterError when the
    selection names what the catalog lacks or the result is not a valid catalog."""
    selection = check_selection(selection)
    if not selection["packages"] and selection["full"]:
        return copy.deepcopy(cfg), []
    listed = {p["name"]: p for p in selection["packages"]}
    known = {p.get("name") for p in cfg.packages}
    missing = sorted(set(listed) - known)
    if missing:
        raise FilterError(f"package {', '.join(missing)} is not in the catalog (it has {_names(known)})")
    wanted_packages = set(listed) if listed else known
    channels_of = {}
    for channel in cfg.channels:
        channels_of.setdefault(channel.get("package"), []).append(channel)
    versions_of = {}
    for blob in cfg.bundles:
        versions_of.setdefault(blob.get("package"), {})[blob.get("name")] = bundle_version(blob)

    out = DeclarativeConfig()
    warnings = []
    kept_channels = set()
    for package in (p for p in cfg.packages if p.get("name") in wanted_packages):
        name = package["name"]
        spec = listed.get(name) or {"channels": [], "min_version": None, "max_version": None, "default_channel": None}
        own = {c.get("name"): c for c in channels_of.get(name, [])}
        chosen = {c["name"]: c for c in spec["channels"]}
        absent = sorted(set(chosen) - set(own))
        if absent:
            raise FilterError(f"package {name} has no channel {', '.join(absent)} (its channels: {_names(own)})")
        default = spec.get("default_channel") or package.get("defaultChannel")
        if spec.get("default_channel") and spec["default_channel"] not in (chosen or own):
            raise FilterError(f"package {name}: default_channel {spec['default_channel']} is not among the channels kept")
        if chosen and default not in chosen:
            raise FilterError(
                f"package {name}: its default channel {package.get('defaultChannel')} is not kept; set default_channel to one of {_names(chosen)}"
            )
        for channel_name, channel in own.items():
            if chosen and channel_name not in chosen:
                continue
            item = chosen.get(channel_name) or {}
            bounds = (
                (item.get("min_version"), item.get("max_version"))
                if (item.get("min_version") or item.get("max_version"))
                else (
                    spec.get("min_version"),
                    spec.get("max_version"),
                )
            )
            if not selection["full"]:
                bounds = _from_installed(bounds, spec.get("installed_version"), channel, versions_of.get(name, {}))
            if selection["full"]:
                entries = list(channel.get("entries") or ())
            elif bounds[0] or bounds[1]:
                version_range = VersionRange(*bounds)
                if version_range.exact():
                    entries = _exact(name, channel, version_range, versions_of.get(name, {}))
                else:
                    entries = entries_in_range(channel, versions_of.get(name, {}), version_range)
                if not entries:
                    if channel_name in chosen or channel_name == default:
                        raise FilterError(f"package {name} channel {channel_name}: no bundle in version range {version_range.text}")
                    warnings.append(f"package {name} channel {channel_name}: no bundle in version range {version_range.text}; the channel is left out")
                    continue
            else:
                entries = [channel_head(channel)]
            out.channels.append(dict(copy.deepcopy(channel), entries=copy.deepcopy(entries)))
            kept_channels.add((name, channel_name))
        out.packages.append(dict(copy.deepcopy(package), defaultChannel=default))

    kept_bundles = {(c["package"], e["name"]) for c in out.channels for e in c["entries"]}
    out.bundles = sorted(
        (copy.deepcopy(b) for b in cfg.bundles if (b.get("package"), b.get("name")) in kept_bundles), key=lambda b: (b.get("package"), b.get("name"))
    )
    for deprecation in cfg.deprecations:
        if deprecation.get("package") not in wanted_packages:
            continue
        entries = []
        for entry in deprecation.get("entries") or ():
            reference = entry.get("reference") or {}
            schema, ref_name = reference.get("schema"), reference.get("name")
            if schema == "olm.bundle" and (deprecation["package"], ref_name) not in kept_bundles:
                continue
            if schema == "olm.channel" and (deprecation["package"], ref_name) not in kept_channels:
                continue
            entries.append(copy.deepcopy(entry))
        if entries:
            out.deprecations.append(dict(copy.deepcopy(deprecation), entries=entries))
    out.others = [copy.deepcopy(o) for o in cfg.others if not o.get("package") or o.get("package") in wanted_packages]

    result = validate_config(out)
    if not result.valid:
        raise FilterError("the filtered catalog is not valid: " + "; ".join(excerpt(e) for e in result.errors[:5]))
    return out, warnings
