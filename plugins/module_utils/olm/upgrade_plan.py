# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrade readiness of installed operators for a target OpenShift version (``olm_upgrade_plan``'s pure core).

OLM's own rule, as operator-lifecycle-manager v0.46.0 ``pkg/controller/operators/openshift/helpers.go`` has it:

* ``maxOpenShiftVersion(csv)``: the ``olm.maxOpenShiftVersion`` property of the CSV's ``operatorframework.io/properties``
  annotation (``projection.PropertyListFromPropertiesAnnotation``: values are ``json.RawMessage``, so a string keeps
  its quotes, which ``strings.Trim(value, "\\"")`` removes); no annotation or no property means no limit; two
  properties, an empty value, a value ``semver.ParseTolerant`` refuses, or one with more than ``<major>.<minor>`` are
  errors - and an error blocks (OLM fails closed);
* ``incompatibleOperators``: every CSV that is not copied (``IsCopied``), whose maximum normalised
  (``normalizeOCPVersion``: 4.23 is 5.0) is below the next minor of the running cluster (``nextY``);
* ``skews.String`` / ``skew.String``: the ClusterOperator ``Upgradeable=False`` message
  (``ClusterOperatorReconciler.setUpgradeable``, reason ``IncompatibleOperatorsInstalled``).

OLM compares against the NEXT minor of the cluster it runs on; this module compares against the user's target
(``openshift_version``), the release OLM would call "next" on the cluster one minor below it: ``threshold()``.

On top of that, per operator, the target catalog (a typed FBC model, ``fbc.model``): whether it has the package and
channel, the upgrade path from the installed version (``fbc.model.graph.upgrade_path``: replaces, skips, skipRange -
catalog_graph's semantics) to the first version whose maximum allows the target, the ``olm.deprecations`` the model
attached, one action and the overall verdict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_fold_name, go_marshal, go_sort_key, json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.graph import upgrade_path

PROPERTIES_ANNOTATION = "operatorframework.io/properties"  # projection.PropertiesAnnotationKey
MAX_OPENSHIFT_VERSION = "olm.maxOpenShiftVersion"  # MaxOpenShiftVersionProperty
COPIED_LABEL = "olm.copiedFrom"  # v1alpha1.CopiedLabelKey
OPERATOR_NAMESPACE_ANNOTATION = "olm.operatorNamespace"  # v1alpha1.OperatorGroupNamespaceAnnotationKey
CSV_REASON_COPIED = "Copied"  # v1alpha1.CSVReasonCopied
INCOMPATIBLE_OPERATORS_INSTALLED = "IncompatibleOperatorsInstalled"

ACTION_KINDS = ("none", "upgrade", "switch_channel", "remove_or_replace", "unknown")
VERDICTS = ("ready", "needs_action", "blocked")


class _Unmarshal(Exception):
    """encoding/json's error text while decoding the properties annotation (caught in this module)."""


# ---------------------------------------------------------------- blang/semver and OLM's version helpers


def parse_tolerant(text):
    """blang/semver v4 ``ParseTolerant``: trims spaces and a leading ``v``, drops leading zeroes, fills a short
    version with ``.0``; raises ``semver.SemverError`` with blang's error text."""
    s = text.strip()
    s = s[1:] if s.startswith("v") else s
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in "0123456789":
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise semver.SemverError("Short version cannot contain PreRelease/Build meta data")
        parts.extend(["0"] * (3 - len(parts)))
    return semver.parse(".".join(parts))


def normalize(version):
    """``normalizeOCPVersion``: ``(major, minor)``, with OCP 4.23 mapped to 5.0 (the same release)."""
    if (version.major, version.minor) == (4, 23):
        return (5, 0)
    return (version.major, version.minor)


def threshold(target):
    """The ``nextY`` OLM compares maxima with on the cluster one minor below ``target`` (a ``(major, minor)``).

    On 4.22 OLM's next minor is 4.23 (not normalised: ``nextY(normalizeOCPVersion(current))``), which is also the
    one upgrade to 5.0; so both targets 4.23 and 5.0 compare against 4.23. Any other target is its own next minor.
    """
    return (4, 23) if target in ((4, 23), (5, 0)) else target


def parse_target(text):
    """``(normalised (major, minor), threshold)`` of the user's ``openshift_version`` (``4.21`` or ``4.21.3``)."""
    try:
        version = parse_tolerant(str(text))
    except semver.SemverError as exc:
        raise InvalidInputError("openshift_version %r is not a version: %s" % (str(text)[:80], exc)) from None
    target = normalize(version)
    return target, threshold(target)


def version_text(pair):
    return "%d.%d" % pair


# ---------------------------------------------------------------- properties annotation (projection)


def _raw_members(text, start):
    """``[(key, raw value text)]`` of the JSON object starting at ``text[start]`` (valid JSON), in input order."""
    decoder = json.JSONDecoder()
    members = []
    i = _skip(text, start + 1)
    if text[i] == "}":
        return members
    while True:
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, i) + 1  # the colon
        i = _skip(text, i)
        _value, end = decoder.raw_decode(text, i)
        members.append((key, text[i:end]))
        i = _skip(text, end)
        if text[i] == "}":
            return members
        i = _skip(text, i + 1)


def _raw_elements(text, start):
    """``[raw element text]`` of the JSON array starting at ``text[start]`` (valid JSON)."""
    decoder = json.JSONDecoder()
    elements = []
    i = _skip(text, start + 1)
    if text[i] == "]":
        return elements
    while True:
        _value, end = decoder.raw_decode(text, i)
        elements.append((i, text[i:end]))
        i = _skip(text, end)
        if text[i] == "]":
            return elements
        i = _skip(text, i + 1)


def _skip(text, i):
    while text[i] in " \t\r\n":
        i += 1
    return i


def _last_folded(members, field):
    """The raw value encoding/json decodes into the struct field ``field``: the last key that matches it exactly
    or case-insensitively (``decodeState.object``), or None."""
    found = None
    for key, raw in members:
        if key == field or go_fold_name(key) == field:
            found = raw
    return found


def annotation_properties(annotation):
    """``projection.PropertyListFromPropertiesAnnotation``: ``[(type, raw value text)]`` of an annotation.

    Raises ``_Unmarshal`` with the text OLM wraps (``failed to unmarshal properties annotation: %w``). Type errors
    use encoding/json's ``UnmarshalTypeError`` wording, the first in input order (decoding goes on after one); a
    syntax error is reported with Python's description of it, not Go's (OLM writes this annotation itself).
    """
    try:
        doc = json.loads(annotation)
        text = annotation.strip()
    except ValueError as exc:
        raise _Unmarshal("failed to unmarshal properties annotation: %s" % exc) from None
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise _Unmarshal(
            "failed to unmarshal properties annotation: json: cannot unmarshal %s into Go value of type projection.propertiesAnnotation" % json_kind(doc)
        )
    raw_list = _last_folded(_raw_members(text, 0), "properties")
    if raw_list is None or raw_list == "null":
        return []
    if not raw_list.startswith("["):
        raise _Unmarshal(
            "failed to unmarshal properties annotation: json: cannot unmarshal %s into Go struct field "
            "propertiesAnnotation.properties of type []projection.property" % json_kind(json.loads(raw_list))
        )
    result = []
    first_error = None
    for _pos, raw in _raw_elements(raw_list, 0):
        if raw == "null":
            result.append(("", ""))
            continue
        if not raw.startswith("{"):
            first_error = first_error or (
                "json: cannot unmarshal %s into Go struct field propertiesAnnotation.properties of type projection.property" % json_kind(json.loads(raw))
            )
            continue
        members = _raw_members(raw, 0)
        typ = ""
        for key, value in members:
            if key == "type" or go_fold_name(key) == "type":
                decoded = json.loads(value)
                if decoded is None:
                    continue
                if not isinstance(decoded, str):
                    first_error = first_error or ("json: cannot unmarshal %s into Go struct field property.properties.type of type string" % json_kind(decoded))
                    continue
                typ = decoded
        result.append((typ, _last_folded(members, "value") or ""))
    if first_error:
        raise _Unmarshal("failed to unmarshal properties annotation: %s" % first_error)
    return result


def catalog_properties(properties):
    """``[(type, raw value text)]`` of a catalog bundle's properties, as OLM projects them into the CSV annotation
    (the value marshalled back to JSON)."""
    return [(p.get("type") or "", go_marshal(p.get("value"), sort_keys=True) if "value" in p else "") for p in properties or () if isinstance(p, dict)]


def max_openshift_version(properties):
    """``maxOpenShiftVersion`` over ``[(type, raw value)]``: ``(declared, version, error)``.

    ``declared`` is the value as written (quotes trimmed), None without the property or with two; ``version`` the
    ``(major, minor)`` maximum or None; ``error`` OLM's error text or None. No property: ``(None, None, None)``.
    """
    values = [raw for typ, raw in properties if typ == MAX_OPENSHIFT_VERSION]
    if not values:
        return None, None, None
    if len(values) > 1:
        return None, None, 'defining more than one "%s" property is not allowed' % MAX_OPENSHIFT_VERSION
    value = values[0].strip('"')  # "Account for any additional quoting"
    if value == "":
        return value, None, 'value cannot be "" (an empty string)'
    try:
        version = parse_tolerant(value)
    except semver.SemverError as exc:
        return value, None, 'failed to parse "%s" as semver: %s' % (value, exc)
    truncated = semver.Version(version.major, version.minor)
    if version != truncated:  # blang's EQ: build metadata does not count
        return value, None, ("property %s must specify only <major>.<minor> version, got invalid value %s" % (MAX_OPENSHIFT_VERSION, version))
    return value, (version.major, version.minor), None


def csv_max_openshift_version(csv):
    """``maxOpenShiftVersion(csv)`` read from the CSV's properties annotation: ``(declared, version, error)``."""
    annotation = ((csv.get("metadata") or {}).get("annotations") or {}).get(PROPERTIES_ANNOTATION)
    if annotation is None:
        return None, None, None
    try:
        properties = annotation_properties(annotation)
    except _Unmarshal as exc:
        return None, None, str(exc)
    return max_openshift_version(properties)


def csv_package(csv):
    """``(package, version)`` of the CSV's ``olm.package`` property, or ``(None, None)``."""
    annotation = ((csv.get("metadata") or {}).get("annotations") or {}).get(PROPERTIES_ANNOTATION)
    if annotation is None:
        return None, None
    try:
        properties = annotation_properties(annotation)
    except _Unmarshal:
        return None, None
    for typ, raw in properties:
        if typ == "olm.package":
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value.get("packageName"), value.get("version")
    return None, None


def is_copied(csv):
    """``ClusterServiceVersion.IsCopied``: reason ``Copied``, an ``olm.operatorNamespace`` annotation naming another
    namespace, or the ``olm.copiedFrom`` label."""
    meta = csv.get("metadata") or {}
    if (csv.get("status") or {}).get("reason") == CSV_REASON_COPIED:
        return True
    annotations = meta.get("annotations") or {}
    if OPERATOR_NAMESPACE_ANNOTATION in annotations and meta.get("namespace") != annotations[OPERATOR_NAMESPACE_ANNOTATION]:
        return True
    return COPIED_LABEL in (meta.get("labels") or {})


def blocks(version, error, limit):
    """OLM's verdict for one CSV: an error blocks (fail closed), no maximum never does, else ``max < nextY``."""
    if error is not None:
        return True
    if version is None:
        return False
    return normalize(semver.Version(*version)) < limit


def skew_line(namespace, name, version, error):
    """``skew.String``: the line of OLM's Upgradeable message for one blocking CSV; a cluster-scoped OLM v1
    ClusterExtension (``namespace`` None) is named alone, in the same words."""
    ref = name if namespace is None else "%s/%s" % (namespace, name)
    if error is not None:
        return "- %s has invalid %s properties: %s" % (ref, MAX_OPENSHIFT_VERSION, error)
    return "- maximum supported OCP version for %s is %s" % (ref, version_text(version))


def upgradeable_message(lines_with_errors):
    """``skews.String``: OLM's message from ``[(line, is_error)]`` in OLM's list order (error lines first in that
    order, the others after them in reverse order - OLM's "partial order"). OLM lists CSVs from its informer cache,
    whose order is not defined: compare the lines, not their order."""
    errors = [line for line, is_error in lines_with_errors if is_error]
    others = [line for line, is_error in lines_with_errors if not is_error]
    return "ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:\n%s" % "\n".join(errors + others[::-1])


def olm_condition(operators):
    """The ClusterOperator ``Upgradeable`` condition OLM would set for the v0 rows of ``operators`` (after its own
    upgrade finished): ``{status, reason, message}``."""
    lines = [(op["block_reason"], op["_error"]) for op in operators if op["generation"] == "v0" and op["blocks_upgrade"]]
    if not lines:
        return {"status": "True", "reason": None, "message": None}
    return {"status": "False", "reason": INCOMPATIBLE_OPERATORS_INSTALLED, "message": upgradeable_message(lines)}


# ---------------------------------------------------------------- the target catalog


def _deprecations(pkg, channel_names, bundle_name):
    """The package's, the channels' (in the order given) and the bundle's deprecations, in that order."""
    found = []
    if pkg is None:
        return found
    if pkg.deprecation is not None:
        found.append({"scope": "package", "name": pkg.name, "message": pkg.deprecation.message})
    for channel_name in channel_names:
        channel = pkg.channels.get(channel_name)
        if channel is not None and channel.deprecation is not None:
            found.append({"scope": "channel", "name": channel.name, "message": channel.deprecation.message})
    for ch in pkg.channels.values():
        bundle = ch.bundles.get(bundle_name) if bundle_name else None
        if bundle is not None and bundle.deprecation is not None:
            found.append({"scope": "bundle", "name": bundle.name, "message": bundle.deprecation.message})
            break
    return found


def catalog_bundle(model, package, name=None, version=None):
    """The model's bundle of ``package`` named ``name`` (else of ``version``), or None."""
    pkg = model.get(package) if model is not None and package else None
    if pkg is None:
        return None
    for ch in sorted(pkg.channels.values(), key=lambda c: go_sort_key(c.name)):
        for bundle in ch.bundles.values():
            if (name and bundle.name == name) or (not name and version and str(bundle.version) == str(version)):
                return bundle
    return None


def _allows(bundle, limit):
    _declared, version, error = max_openshift_version(catalog_properties(bundle.properties))
    return not blocks(version, error, limit)


def _path_in_channel(model, package, channel, start, limit):
    """``(versions from start to the first bundle that allows the target, target version)`` or None."""
    ch = model[package].channels[channel]
    try:
        names = upgrade_path(model, package, start, channel)
    except FBCError:
        return None
    versions = []
    for i, name in enumerate(names):
        bundle = ch.bundles.get(name)
        versions.append(bundle.version_string() if bundle is not None else name)
        if i and bundle is not None and _allows(bundle, limit):
            return versions, bundle.version_string()
    return None


def _action(kind, to_version=None, to_channel=None, reason=None):
    return {"kind": kind, "to_version": to_version, "to_channel": to_channel, "reason": reason}


def plan_operator(installed, model, limit, target_text):
    """One row of RV(operators) for an installed operator and its target catalog model (None when not given).

    ``installed``: {generation, namespace, name, package, channel, installed_version, source, bundle,
    properties_known, declared, version, error}: ``version``/``error`` from ``max_openshift_version``;
    ``properties_known`` False when the installed bundle's properties could not be found (OLM v1 without catalog);
    OLM v1 rows also have ``channels`` (every channel ``spec.source.catalog.channels`` names: their deprecations count).
    """
    package, channel = installed["package"], installed["channel"]
    known = installed["properties_known"]
    blocking = known and blocks(installed["version"], installed["error"], limit)
    row = {
        "generation": installed["generation"],
        "namespace": installed["namespace"],
        "name": installed["name"],
        "package": package,
        "channel": channel,
        "installed_version": installed["installed_version"],
        "source": installed["source"],
        "max_openshift_version": installed["declared"],
        "blocks_upgrade": bool(blocking),
        "block_reason": None,
        "target_catalog": None,
        "target_version": None,
        "path": [],
        "deprecations": [],
        "action": _action("none"),
        "_error": installed["error"] is not None,
    }
    if blocking:
        row["block_reason"] = skew_line(installed["namespace"], installed["name"], installed["version"], installed["error"])
    pkg = model.get(package) if model is not None and package else None
    channel_name = channel or (pkg.default_channel.name if pkg is not None and pkg.default_channel else None)
    if model is not None:
        row["target_catalog"] = {"package": pkg is not None, "channel": pkg is not None and channel_name in pkg.channels}
        # OLM v1 (operator-controller's SetDeprecationStatus): only the channels spec.source.catalog.channels names
        # count - without one it resolves from every channel, not the default one
        if installed["generation"] == "v1":
            deprecated_channels = installed.get("channels") or []
        else:
            deprecated_channels = [channel_name] if channel_name else []
        row["deprecations"] = _deprecations(pkg, deprecated_channels, installed.get("bundle"))
    if model is not None and pkg is None:
        row["action"] = _action("remove_or_replace", reason="the target catalog has no package %s" % package)
        return row
    if not known:
        row["action"] = _action(
            "unknown",
            reason="the installed bundle's properties are not known: give the catalog of %s in catalogs" % (installed["source"] or "its ClusterCatalog"),
        )
        return row
    if model is None:
        if blocking:
            row["action"] = _action("unknown", reason="no target catalog was given for %s" % (installed["source"] or "this operator's catalog"))
        return row
    start = installed["installed_version"]
    if not blocking:
        if channel_name not in pkg.channels:
            to = pkg.default_channel.name if pkg.default_channel else None
            row["action"] = _action("switch_channel", to_channel=to, reason="the target catalog has no channel %s in package %s" % (channel_name, package))
        return row
    # a blocker: the first version that allows the target, in its channel, else in another channel
    candidates = [channel_name] if channel_name in pkg.channels else []
    if pkg.default_channel is not None and pkg.default_channel.name not in candidates:
        candidates.append(pkg.default_channel.name)
    candidates.extend(sorted((c for c in pkg.channels if c not in candidates), key=go_sort_key))
    for candidate in candidates:
        found = _path_in_channel(model, package, candidate, start, limit) if start else None
        if found is None:
            continue
        row["path"], row["target_version"] = found
        if candidate == channel_name:
            row["action"] = _action("upgrade", to_version=found[1], reason="%s allows OpenShift %s" % (found[1], target_text))
        else:
            row["action"] = _action(
                "switch_channel",
                to_version=found[1],
                to_channel=candidate,
                reason="channel %s reaches %s, which allows OpenShift %s" % (candidate, found[1], target_text),
            )
        return row
    row["action"] = _action(
        "remove_or_replace", reason="no version of package %s reachable from %s in the target catalog allows OpenShift %s" % (package, start, target_text)
    )
    return row


def verdict(operators):
    """``blocked`` when a blocker has no way forward, ``needs_action`` when an action is due, else ``ready``."""
    if any(op["blocks_upgrade"] and op["action"]["kind"] in ("remove_or_replace", "unknown") for op in operators):
        return "blocked"
    if any(op["action"]["kind"] != "none" for op in operators):
        return "needs_action"
    return "ready"


def plan(installed_rows, models, target_version):
    """The module's result minus ``changed``: ``{operators, blockers, verdict, target, olm_condition}``.

    ``installed_rows``: the ``installed`` dicts of ``plan_operator`` with a ``catalog`` key naming their entry of
    ``models`` ({catalog key: model}) or None.
    """
    target, limit = parse_target(target_version)
    target_text = version_text(target)
    rows = [plan_operator(row, models.get(row.get("catalog")) if row.get("catalog") is not None else None, limit, target_text) for row in installed_rows]
    rows.sort(key=lambda r: (not r["blocks_upgrade"], r["namespace"] or "", r["name"] or ""))
    condition = olm_condition(rows)
    blockers = ["%s/%s" % (r["namespace"], r["name"]) for r in rows if r["generation"] == "v0" and r["blocks_upgrade"]]
    result = {"operators": rows, "blockers": blockers, "verdict": verdict(rows), "target": target_text, "olm_condition": condition}
    for row in rows:
        del row["_error"]
    return result
