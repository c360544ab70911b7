# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What changed between two file-based catalogs: packages, channels, bundles, default channels, channel heads,
deprecations and ``olm.maxOpenShiftVersion``.

No operator-registry counterpart (opm's old ``alpha diff`` computed a catalog to mirror, not a report); it follows
opm's pipeline all the same: each side is loaded (declcfg), converted to the model with opm's ConvertToModel
(model/convert.py: its errors stop the diff, naming the side) and reduced to a plain summary (``catalog_summary``),
and two summaries are compared (``diff_summaries``). Channel heads are the model's ``Channel.head()``; a channel
without exactly one head (an invalid catalog opm validate would refuse) has no head (None) and a warning. Every
list is sorted (Go byte order of package, then channel or bundle names), so the result is deterministic.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_marshal, go_sort_key

PROPERTY_MAX_OCP = "olm.maxOpenShiftVersion"
# names listed per line of the human summary before "..."
SUMMARY_NAMES = 5


def _max_ocp(properties):
    """The bundle's olm.maxOpenShiftVersion: None (absent), the value as text (a string as is, any other value as
    Go's json.Marshal writes it: what OLM reads once it trims the quotes, olm/upgrade_plan.py's ``declared``), or a
    list of them when the property is repeated (OLM refuses that)."""
    values = []
    for prop in properties or ():
        if prop.get("type") == PROPERTY_MAX_OCP:
            value = prop.get("value")
            values.append(value if isinstance(value, str) else go_marshal(value, sort_keys=True))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _message(deprecation):
    return None if deprecation is None else deprecation.message


def catalog_summary(model):
    """A model reduced to what the diff compares, as plain data.

    ``{package: {"default_channel": name or None, "deprecation": message or None,
    "channels": {name: {"head": name or None, "head_error": text or None, "deprecation": message or None,
    "bundles": set of names}}, "bundles": {name: {"deprecation": message or None, "max_ocp": see _max_ocp}}}}``
    """
    out = {}
    for pkg in model.values():
        channels = {}
        bundles = {}
        for ch in pkg.channels.values():
            head = head_error = None
            if ch.bundles:
                try:
                    head = ch.head().name
                except FBCError as e:
                    head_error = str(e)
            channels[ch.name] = {"head": head, "head_error": head_error, "deprecation": _message(ch.deprecation), "bundles": set(ch.bundles)}
            for b in ch.bundles.values():
                if b.name not in bundles:
                    bundles[b.name] = {"deprecation": _message(b.deprecation), "max_ocp": _max_ocp(b.properties)}
        out[pkg.name] = {
            "default_channel": pkg.default_channel.name if pkg.default_channel is not None else None,
            "deprecation": _message(pkg.deprecation),
            "channels": channels,
            "bundles": bundles,
        }
    return out


def _sorted(names):
    return sorted(names, key=go_sort_key)


def _deprecations(summary):
    """{(package, schema, name): message} of every deprecated package, channel and bundle."""
    out = {}
    for pname, pkg in summary.items():
        if pkg["deprecation"] is not None:
            out[(pname, SCHEMA_PACKAGE, "")] = pkg["deprecation"]
        for cname, ch in pkg["channels"].items():
            if ch["deprecation"] is not None:
                out[(pname, SCHEMA_CHANNEL, cname)] = ch["deprecation"]
        for bname, b in pkg["bundles"].items():
            if b["deprecation"] is not None:
                out[(pname, SCHEMA_BUNDLE, bname)] = b["deprecation"]
    return out


_SCHEMA_ORDER = {SCHEMA_PACKAGE: 0, SCHEMA_CHANNEL: 1, SCHEMA_BUNDLE: 2}


def _deprecation_key(key):
    return (go_sort_key(key[0]), _SCHEMA_ORDER[key[1]], go_sort_key(key[2]))


def _deprecation_diff(old, new):
    old_d, new_d = _deprecations(old), _deprecations(new)

    def entry(key, **messages):
        return dict({"package": key[0], "schema": key[1], "name": key[2]}, **messages)

    added = [entry(k, message=new_d[k]) for k in sorted(set(new_d) - set(old_d), key=_deprecation_key)]
    removed = [entry(k, message=old_d[k]) for k in sorted(set(old_d) - set(new_d), key=_deprecation_key)]
    changed = [entry(k, old_message=old_d[k], new_message=new_d[k]) for k in sorted(set(old_d) & set(new_d), key=_deprecation_key) if old_d[k] != new_d[k]]
    return {"added": added, "removed": removed, "changed": changed}


def _channels_of(pkg, bundle):
    return _sorted(c for c, ch in pkg["channels"].items() if bundle in ch["bundles"])


def _max_ocp_of(pkg, bundle):
    b = pkg["bundles"].get(bundle) if bundle is not None else None
    return b["max_ocp"] if b is not None else None


def diff_summaries(old, new):
    """Compare two ``catalog_summary`` results; returns the machine-readable diff (see the catalog_diff module's
    RETURN for the shape), without the human summary (``summary_lines``)."""
    packages_added = _sorted(set(new) - set(old))
    packages_removed = _sorted(set(old) - set(new))
    both = _sorted(set(old) & set(new))
    channels = {"added": [], "removed": []}
    bundles = {"added": [], "removed": []}
    channel_bundles = {"added": [], "removed": []}
    default_channels, heads = [], []
    max_bundles, max_heads = [], []
    warnings = []

    for side, summary in (("old", old), ("new", new)):
        for pname in _sorted(summary):
            for cname in _sorted(summary[pname]["channels"]):
                err = summary[pname]["channels"][cname]["head_error"]
                if err:
                    warnings.append("%s catalog: package %s channel %s: %s" % (side, pname, cname, err))

    # packages only on one side: everything in them is added/removed with them
    for names, summary, key in ((packages_added, new, "added"), (packages_removed, old, "removed")):
        for pname in names:
            pkg = summary[pname]
            channels[key].extend({"package": pname, "channel": c} for c in _sorted(pkg["channels"]))
            bundles[key].extend({"package": pname, "bundle": b, "channels": _channels_of(pkg, b)} for b in _sorted(pkg["bundles"]))

    for pname in both:
        o, n = old[pname], new[pname]
        if o["default_channel"] != n["default_channel"]:
            default_channels.append({"package": pname, "old": o["default_channel"], "new": n["default_channel"]})
        channels["added"].extend({"package": pname, "channel": c} for c in _sorted(set(n["channels"]) - set(o["channels"])))
        channels["removed"].extend({"package": pname, "channel": c} for c in _sorted(set(o["channels"]) - set(n["channels"])))
        bundles["added"].extend({"package": pname, "bundle": b, "channels": _channels_of(n, b)} for b in _sorted(set(n["bundles"]) - set(o["bundles"])))
        bundles["removed"].extend({"package": pname, "bundle": b, "channels": _channels_of(o, b)} for b in _sorted(set(o["bundles"]) - set(n["bundles"])))
        for bname in _sorted(set(o["bundles"]) & set(n["bundles"])):
            before, after = o["bundles"][bname]["max_ocp"], n["bundles"][bname]["max_ocp"]
            if before != after:
                max_bundles.append({"package": pname, "bundle": bname, "old": before, "new": after})
        for cname in _sorted(set(o["channels"]) & set(n["channels"])):
            oc, nc = o["channels"][cname], n["channels"][cname]
            channel_bundles["added"].extend({"package": pname, "channel": cname, "bundle": b} for b in _sorted(nc["bundles"] - oc["bundles"]))
            channel_bundles["removed"].extend({"package": pname, "channel": cname, "bundle": b} for b in _sorted(oc["bundles"] - nc["bundles"]))
            if oc["head"] != nc["head"]:
                heads.append({"package": pname, "channel": cname, "old": oc["head"], "new": nc["head"]})
            before, after = _max_ocp_of(o, oc["head"]), _max_ocp_of(n, nc["head"])
            if before != after:
                max_heads.append({"package": pname, "channel": cname, "old_head": oc["head"], "new_head": nc["head"], "old": before, "new": after})

    for part, field in ((channels, "channel"), (bundles, "bundle")):
        for key in ("added", "removed"):
            part[key].sort(key=lambda x, f=field: (go_sort_key(x["package"]), go_sort_key(x[f])))
    result = {
        "packages": {"added": packages_added, "removed": packages_removed},
        "channels": channels,
        "bundles": bundles,
        "channel_bundles": channel_bundles,
        "default_channels": default_channels,
        "heads": heads,
        "olm_deprecations": _deprecation_diff(old, new),
        "max_openshift_versions": {"bundles": max_bundles, "heads": max_heads},
        "totals": {"old": _totals(old), "new": _totals(new)},
        "warnings": warnings,
    }
    result["differs"] = bool(
        packages_added
        or packages_removed
        or default_channels
        or heads
        or max_bundles
        or max_heads
        or any(part["added"] or part["removed"] for part in (channels, bundles, channel_bundles))
        or any(result["olm_deprecations"].values())
    )
    return result


def _totals(summary):
    return {
        "packages": len(summary),
        "channels": sum(len(p["channels"]) for p in summary.values()),
        "bundles": sum(len(p["bundles"]) for p in summary.values()),
    }


def _shown(value):
    return "none" if value is None else value


def _names(items, limit=SUMMARY_NAMES):
    shown = list(items[:limit])
    if len(items) > limit:
        shown.append("... %d more" % (len(items) - limit))
    return ", ".join(shown)


def _counted(label, added, removed, describe):
    text = "%s: %d added, %d removed" % (label, len(added), len(removed))
    parts = []
    if added:
        parts.append("+ " + _names([describe(x) for x in added]))
    if removed:
        parts.append("- " + _names([describe(x) for x in removed]))
    return text + (" (%s)" % "; ".join(parts) if parts else "")


def summary_lines(result):
    """A few lines a person reads: one per kind of change, with counts and the first few names."""
    t = result["totals"]
    lines = [
        "old: %(packages)d packages, %(channels)d channels, %(bundles)d bundles" % t["old"]
        + "; new: %(packages)d packages, %(channels)d channels, %(bundles)d bundles" % t["new"]
    ]
    if not result["differs"]:
        return lines + ["no differences in packages, channels, bundles, default channels, heads, deprecations or maxOpenShiftVersion"]
    lines.append(_counted("packages", result["packages"]["added"], result["packages"]["removed"], str))
    lines.append(_counted("channels", result["channels"]["added"], result["channels"]["removed"], lambda c: "%(package)s/%(channel)s" % c))
    lines.append(_counted("bundles", result["bundles"]["added"], result["bundles"]["removed"], lambda b: b["bundle"]))
    if result["default_channels"]:
        lines.append(
            "default channels: %d changed (%s)"
            % (
                len(result["default_channels"]),
                _names(["%s: %s -> %s" % (d["package"], _shown(d["old"]), _shown(d["new"])) for d in result["default_channels"]]),
            )
        )
    if result["heads"]:
        lines.append(
            "channel heads: %d moved (%s)"
            % (len(result["heads"]), _names(["%s/%s: %s -> %s" % (h["package"], h["channel"], _shown(h["old"]), _shown(h["new"])) for h in result["heads"]]))
        )
    dep = result["olm_deprecations"]
    if dep["added"] or dep["removed"] or dep["changed"]:
        lines.append(
            "deprecations: %d added, %d removed, %d changed (%s)"
            % (
                len(dep["added"]),
                len(dep["removed"]),
                len(dep["changed"]),
                _names(
                    [
                        "%s%s %s" % (d["package"], "" if d["schema"] == SCHEMA_PACKAGE else "/" + d["name"], d["schema"])
                        for d in dep["added"] + dep["removed"] + dep["changed"]
                    ]
                ),
            )
        )
    mx = result["max_openshift_versions"]
    if mx["bundles"] or mx["heads"]:
        lines.append(
            "maxOpenShiftVersion: changed on %d bundles, %d channel heads (%s)"
            % (
                len(mx["bundles"]),
                len(mx["heads"]),
                _names(
                    ["%s/%s: %s -> %s" % (h["package"], h["channel"], _shown(h["old"]), _shown(h["new"])) for h in mx["heads"]]
                    + ["%s: %s -> %s" % (b["bundle"], _shown(b["old"]), _shown(b["new"])) for b in mx["bundles"]]
                ),
            )
        )
    return lines


def summarize_config(cfg, side="catalog"):
    """ConvertToModel of a loaded DeclarativeConfig, reduced to ``catalog_summary``; a conversion error names the
    side (``old catalog: ...``). The model is dropped before returning."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import gc_paused
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import _unlink

    with gc_paused():
        try:
            model = convert_to_model(cfg, validate=False)
        except FBCError as e:
            raise FBCError("%s: %s" % (side, e)) from None
        summary = catalog_summary(model)
    _unlink(model)
    return summary


def diff_configs(old_cfg, new_cfg):
    """The diff of two loaded DeclarativeConfigs, with its ``summary`` lines."""
    result = diff_summaries(summarize_config(old_cfg, "old catalog"), summarize_config(new_cfg, "new catalog"))
    result["summary"] = summary_lines(result)
    return result


def diff_catalogs(old_path, new_path):
    """Load two catalogs (directories or files, like ``opm render``) one after the other and diff them; only one
    loaded catalog is held at a time. Load errors name the side."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load

    summaries = []
    for side, path in (("old catalog", old_path), ("new catalog", new_path)):
        try:
            # serially: with parser processes (workers=None) a 205 MiB YAML pair diffed in 20 s instead of 23 s, but
            # the second side's workers were forked from a parent still holding the first side's freed memory, and
            # the run peaked at 1.3 GiB (opm rendering both: 0.67 GiB; serially 0.55 GiB)
            cfg = load(path, workers=1)
        except FBCError as e:
            raise FBCError("%s: %s" % (side, e)) from None
        summaries.append(summarize_config(cfg, side))
        del cfg
    result = diff_summaries(*summaries)
    result["summary"] = summary_lines(result)
    return result
