# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Semver catalog template (``olm.semver``), port of operator-registry alpha/template/semver.

Two linking algorithms:

* default (opm v1.61+): "edge-scoped" linking across all generated channels (``link_edge_scoped``), plus the v1.65+
  package description/icon taken from the default channel head's CSV;
* ``opm_compat="v1.46"`` (opm v1.37 .. v1.56): per-channel "inchworm" linking (``link_inchworm``), the rendered
  bundle image must equal the template image, and the package has no description/icon.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    TYPE_CSV_METADATA,
    check_migrate_level,
    csv_from_bundle,
    migrate_bundle,
    wants_csv_metadata,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FbcTemplateError,
    TemplateParseError,
    TemplateSchemaError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_fold_name, json_kind
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.semver import SemverError, Version
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.semver import parse as parse_version
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import (
    call_renderer,
    check_safe_name,
    load_first_document,
)

SCHEMA = "olm.semver"
SCHEMA_SEMVER = SCHEMA
CANDIDATE, FAST, STABLE = "candidate", "fast", "stable"
ARCHETYPES = (CANDIDATE, FAST, STABLE)
CHANNEL_PRIORITIES = {CANDIDATE: 0, FAST: 1, STABLE: 2}
MAJOR, MINOR = "major", "minor"
STREAM_PRIORITIES = {MINOR: 2, MAJOR: 1, "": 0}
COMPAT_V1_46 = "v1.46"
_COMPAT_VALUES = (None, "", "default", "latest", COMPAT_V1_46, "1.46", "v1.46.0")

_PREFIX = "error unmarshaling JSON: while decoding JSON: json: "


class SemverTemplate:
    """Decoded ``olm.semver`` template."""

    __slots__ = ("schema", "generate_major", "generate_minor", "default_channel_type_preference", "bundles")

    def __init__(self, schema=SCHEMA, generate_major=False, generate_minor=False,
                 default_channel_type_preference="", bundles=None):
        self.schema = schema
        self.generate_major = generate_major
        self.generate_minor = generate_minor
        self.default_channel_type_preference = default_channel_type_preference
        self.bundles = bundles or {CANDIDATE: [], FAST: [], STABLE: []}

    def to_dict(self):
        """The template as a document (opm's documented CamelCase spelling)."""
        out = {"Schema": self.schema, "GenerateMajorChannels": self.generate_major,
               "GenerateMinorChannels": self.generate_minor}
        if self.default_channel_type_preference:
            out["DefaultChannelTypePreference"] = self.default_channel_type_preference
        for arch in ARCHETYPES:
            if self.bundles[arch]:
                out[arch.capitalize()] = {"Bundles": [{"Image": i} for i in self.bundles[arch]]}
        return out


def _strict_fields(obj, fields, struct):
    """Strict struct decode: returns {field: value}; unknown keys are fatal (DisallowUnknownFields). Keys match like
    encoding/json (golang.json.fold_matches: go_fold_name, last key wins); each is type-checked in input order. A
    null resets a slice and is a no-op for the other fields; a struct matched again is updated, not replaced."""
    out = {}
    lower = {go_fold_name(f): f for f in fields}
    for k, v in obj.items():
        if not isinstance(k, str):
            k = str(k)
        f = k if k in fields else lower.get(go_fold_name(k))
        if f is None:
            raise TemplateParseError(_PREFIX + "unknown field %s" % q(k))
        want = fields[f]
        if v is None:
            if want == "array":
                out[f] = None
            continue
        ok = {"string": lambda x: isinstance(x, str), "bool": lambda x: isinstance(x, bool),
              "object": lambda x: isinstance(x, dict), "array": lambda x: isinstance(x, list)}[want](v)
        if not ok:
            gotype = {"string": "string", "bool": "bool", "object": "semver.semverTemplateChannelBundles",
                      "array": "[]semver.semverTemplateBundleEntry"}[want]
            raise TemplateParseError(_PREFIX + "cannot unmarshal %s into Go struct field %s.%s of type %s"
                                     % (json_kind(v), struct, f, gotype))
        if want == "object" and isinstance(out.get(f), dict):
            merged = dict(out[f])
            for key, value in v.items():
                merged.pop(key, None)  # keep input order: the later key is decoded last
                merged[key] = value
            v = merged
        out[f] = v
    return out


def parse_semver_template(data):
    """Parse/validate an ``olm.semver`` template (str/bytes or decoded dict) like opm ``readFile``."""
    if isinstance(data, (str, bytes)):
        doc = load_first_document(data)
    else:
        doc = data
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise TemplateParseError(_PREFIX + "cannot unmarshal %s into Go value of type semver.SemverTemplateData"
                                 % json_kind(doc))
    top = _strict_fields(doc, {"schema": "string", "generateMajorChannels": "bool", "generateMinorChannels": "bool",
                               "defaultChannelTypePreference": "string", "candidate": "object",
                               "fast": "object", "stable": "object"}, "SemverTemplateData")
    bundles = {}
    for arch in ARCHETYPES:
        images = []
        sec = top.get(arch)
        if sec is not None:
            inner = _strict_fields(sec, {"bundles": "array"}, "SemverTemplateData.%s" % arch)
            for entry in inner.get("bundles") or ():
                if entry is None:
                    images.append("")
                    continue
                if not isinstance(entry, dict):
                    raise TemplateParseError(_PREFIX + "cannot unmarshal %s into Go struct field "
                                             "SemverTemplateData.%s.bundles of type semver.semverTemplateBundleEntry"
                                             % (json_kind(entry), arch))
                e = _strict_fields(entry, {"image": "string"}, "SemverTemplateData.%s.bundles" % arch)
                images.append(e.get("image", ""))
        bundles[arch] = images
    schema = top.get("schema", "")
    if schema != SCHEMA:
        raise TemplateSchemaError("readFile: input file has unknown schema, should be %s" % q(SCHEMA))
    gmaj = top.get("generateMajorChannels", False)
    gmin = top.get("generateMinorChannels", False)
    if not gmaj and not gmin:
        gmin = True
    pref = top.get("defaultChannelTypePreference", "")
    if pref == "":
        pref = MINOR if gmin else MAJOR
    elif pref == MINOR:
        if not gmin:
            raise TemplateParseError("schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't "
                                     "make sense if not generating minor-version channels")
    elif pref == MAJOR:
        if not gmaj:
            raise TemplateParseError("schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't "
                                     "make sense if not generating major-version channels")
    else:
        raise TemplateParseError("unknown DefaultChannelTypePreference: %s\nValid values are 'major' or 'minor'"
                                 % q(pref))
    return SemverTemplate(schema, gmaj, gmin, pref, bundles)


def _is_v146(opm_compat):
    if opm_compat not in _COMPAT_VALUES:
        raise FbcTemplateError("unsupported opm_compat %s: use None (opm v1.61+) or 'v1.46'" % q(str(opm_compat)))
    return opm_compat in (COMPAT_V1_46, "1.46", "v1.46.0")


# --------------------------------------------------------------------------- versions

def _aggregate(errs):
    if len(errs) == 1:
        return errs[0]
    return "[" + ", ".join(errs) + "]"


def _strip_build(v):
    return str(Version(v.major, v.minor, v.patch, v.pre, ()))


def _versions_from_channel(images, image_map, index, state, v146):
    """getVersionsFromChannel: bundle name -> Version for one archetype (template order kept)."""
    entries = {}
    for image in images:
        target = image if v146 else image_map.get(image, image)
        b = index.get(target)
        if b is None:
            raise FbcTemplateError("supplied bundle image name %s not found in rendered bundle images" % q(image))
        name = b.get("name") or ""
        pkgs = []
        for i, p in enumerate(b.get("properties") or ()):
            if not isinstance(p, dict):
                raise FbcTemplateError("parse properties for bundle %s: parse property[%d]: not an object"
                                       % (q(name), i))
            if p.get("type") == "olm.package":
                v = p.get("value")
                if not isinstance(v, dict):
                    raise FbcTemplateError("parse properties for bundle %s: parse property[%d] of type "
                                           "\"olm.package\": json: cannot unmarshal %s into Go value of type "
                                           "property.Package" % (q(name), i, json_kind(v)))
                pkgs.append(v)
        if len(pkgs) != 1:
            raise FbcTemplateError("bundle %s has multiple %s properties, expected exactly 1"
                                   % (q(name), q("olm.package")))
        ver = pkgs[0].get("version")
        ver = ver if isinstance(ver, str) else ""
        try:
            v = parse_version(ver)
        except SemverError as e:
            raise FbcTemplateError("bundle %s has invalid version %s: %s" % (q(name), q(ver), e)) from e
        pkg = pkgs[0].get("packageName")
        pkg = pkg if isinstance(pkg, str) else ""
        if state["pkg"] is not None:
            if pkg != state["pkg"]:
                raise FbcTemplateError("bundle %s does not belong to this package: %s" % (q(pkg), q(state["pkg"])))
        else:
            state["pkg"] = pkg
        if name in entries:
            raise FbcTemplateError("duplicate bundle name %s" % q(name))
        entries[name] = v
    # validateVersions / withoutBuildMetadataConflict
    seen = set()
    errs = []
    for v in entries.values():
        s = _strip_build(v)
        if s in seen:
            errs.append("bundle version %s cannot be compared to %s" % (q(str(v)), q(s)))
        seen.add(s)
    if errs:
        raise FbcTemplateError("encountered bundle versions which differ only by build metadata, which cannot be "
                               "ordered: %s" % _aggregate(errs))
    return entries


# --------------------------------------------------------------------------- channels

def channel_name(archetype, kind, version):
    if kind == MAJOR:
        return "%s-v%d" % (archetype, version.major)
    return "%s-v%d.%d" % (archetype, version.major, version.minor)


def _hwc_gt(h, ih, pref):
    if CHANNEL_PRIORITIES[h[0]] != CHANNEL_PRIORITIES[ih[0]]:
        return CHANNEL_PRIORITIES[h[0]] > CHANNEL_PRIORITIES[ih[0]]
    if h[2] != ih[2]:
        return h[2] > ih[2]
    if h[1] != ih[1]:
        if h[1] == pref:
            return True
        if ih[1] == pref:
            return False
        return STREAM_PRIORITIES[h[1]] > STREAM_PRIORITIES[ih[1]]
    return False


def generate_channels(versions, generate_major, generate_minor, preference, package, v146=False):
    """generateChannels + linkChannels. ``versions``: {archetype: {bundle name: Version}}.

    Returns ``(channels sorted by name, default channel name)``; channel entries are dicts.
    """
    hwc = (CANDIDATE, "", Version(0, 0, 0), "")
    channels = {}
    tuples = []
    kinds = ([MAJOR] if generate_major else []) + ([MINOR] if generate_minor else [])
    for arch in ARCHETYPES:
        bundles = versions.get(arch) or {}
        if not bundles:
            continue
        for name in sorted(bundles, key=bundles.__getitem__):
            ver = bundles[name]
            for kind in kinds:
                cname = channel_name(arch, kind, ver)
                ch = channels.get(cname)
                if ch is None:
                    ch = {"schema": "olm.channel", "name": cname, "package": package, "entries": []}
                    channels[cname] = ch
                    cand = (arch, kind, ver, cname)
                    if _hwc_gt(cand, hwc, preference):
                        hwc = cand
                entry = {"name": name}
                ch["entries"].append(entry)
                tuples.append((CHANNEL_PRIORITIES[arch], STREAM_PRIORITIES[kind], ver, entry))
    if v146:
        link_inchworm(channels.values(), versions_by_name={n: v for a in versions.values() for n, v in a.items()})
    else:
        link_edge_scoped(tuples)
    out = [channels[n] for n in sorted(channels)]
    return out, hwc[3]


def _set_edges(entry, replaces, skips_set):
    if replaces:
        entry["replaces"] = replaces
    else:
        entry.pop("replaces", None)
    skips = sorted(skips_set - {replaces})
    if skips:
        entry["skips"] = skips


def link_edge_scoped(tuples):
    """opm v1.61+ linkChannels on (arch_priority, kind_priority, Version, entry) tuples (entries mutated)."""
    tuples.sort(key=lambda t: (t[0], t[1], t[2]))
    prev_zmax = ""
    cur_skips = set()
    for i in range(1, len(tuples)):
        pa, pk, pv, pe = tuples[i - 1]
        ca, ck, cv, _ce = tuples[i]
        arch_change = pa != ca
        kind_change = pk != ck
        x_change = pv.major != cv.major
        y_change = x_change or pv.minor != cv.minor
        if arch_change or kind_change or x_change or y_change:
            _set_edges(pe, prev_zmax, cur_skips)
        if arch_change or kind_change or x_change:
            cur_skips = set()
            prev_zmax = ""
        else:
            if y_change:
                prev_zmax = pe["name"]
            cur_skips.add(pe["name"])
    if len(tuples) > 1:
        pa, pk, pv, _pe = tuples[-2]
        la, lk, lv, le = tuples[-1]
        if pa == la and pk == lk and pv.major == lv.major:
            _set_edges(le, prev_zmax, cur_skips)


def link_inchworm(channels, versions_by_name):
    """opm v1.37..v1.56 (incl. v1.46.0) per-channel linking (entries mutated)."""
    for ch in channels:
        entries = ch["entries"]
        if not entries:
            continue
        runs = []
        for e in entries:
            v = versions_by_name[e["name"]]
            key = (v.major, v.minor)
            if runs and runs[-1][0] == key:
                runs[-1][1].append(e)
            else:
                runs.append((key, [e]))
        zmax = None
        for _key, members in runs:
            m = members[-1]
            skips = []
            if zmax is not None:
                skips.append(zmax["name"])
                m["replaces"] = zmax["name"]
            skips.extend(e["name"] for e in members[:-1])
            if skips:
                m["skips"] = skips
            zmax = m
        if len(entries) > 1:
            a = versions_by_name[entries[-2]["name"]]
            b = versions_by_name[entries[-1]["name"]]
            if a.minor != b.minor:
                entries[-1]["replaces"] = entries[-2]["name"]


# --------------------------------------------------------------------------- package metadata (v1.65+)

def _csv_of(bundle, csvs, sources):
    name = bundle.get("name")
    csv = csvs.get(name)
    if csv is None:
        csv = csv_from_bundle(bundle)
    if csv is None and sources and name in sources:
        csv = csv_from_bundle(sources[name])
    return csv


def _normalize_b64(data):
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return data
    return base64.b64encode(raw).decode("ascii")


def populate_package_metadata(package, channels, bundles, csvs, sources=None, lookup_packages=None):
    """Description and icon of the package from the CSV of the default channel's head (last entry).

    ``csvs`` maps bundle name -> CSV dict (opm's CsvJSON); ``sources`` optionally maps bundle name -> the bundle blob
    before migration (its olm.bundle.object properties still hold the CSV).

    Offline, the head may come from a catalog whose bundles carry no CSV (``olm.csv.metadata`` only, which has the
    description but no icon). Then ``lookup_packages`` (package name -> ``olm.package`` blob of the lookup catalog)
    supplies the icon opm would have taken from the CSV, and the description when olm.csv.metadata is absent too,
    so re-rendering a committed catalog from its template reproduces the committed package."""
    ch = next((c for c in channels if c["name"] == package.get("defaultChannel")), None)
    if ch is None or not ch["entries"]:
        return
    head = ch["entries"][-1]["name"]
    bundle = next((b for b in bundles if b.get("name") == head), None)
    if bundle is None:
        return
    csv = _csv_of(bundle, csvs, sources)
    if csv is None:
        # no CSV available offline: the description kept in olm.csv.metadata (no icon there), the icon of the
        # looked-up catalog's package
        known = (lookup_packages or {}).get(bundle.get("package") or package.get("name"))
        has_metadata = False
        for p in bundle.get("properties") or ():
            if p.get("type") == TYPE_CSV_METADATA and isinstance(p.get("value"), dict):
                has_metadata = True
                d = p["value"].get("description")
                if isinstance(d, str) and d:
                    package["description"] = d
        if isinstance(known, dict):
            if isinstance(known.get("icon"), dict) and known["icon"]:
                package["icon"] = dict(known["icon"])
            if not has_metadata and isinstance(known.get("description"), str) and known["description"]:
                package["description"] = known["description"]
        return
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    desc = spec.get("description")
    icons = spec.get("icon")
    old_desc = package.pop("description", None)
    if isinstance(icons, list) and icons and isinstance(icons[0], dict):
        ic = icons[0]
        icon = {}
        data = ic.get("base64data")
        if isinstance(data, str) and data:
            icon["base64data"] = _normalize_b64(data)
        if isinstance(ic.get("mediatype"), str) and ic["mediatype"]:
            icon["mediatype"] = ic["mediatype"]
        package["icon"] = icon
    if isinstance(desc, str) and desc:
        package["description"] = desc
    elif old_desc is not None:
        package["description"] = old_desc


# --------------------------------------------------------------------------- render

def render_semver_template(data, renderer, migrate_level=None, opm_compat=None, strict_names=True):
    """Render an ``olm.semver`` template with ``renderer(image) -> DeclarativeConfig``."""
    v146 = _is_v146(opm_compat)
    level = check_migrate_level(migrate_level)
    try:
        sv = parse_semver_template(data) if not isinstance(data, SemverTemplate) else data
    except FbcTemplateError as e:
        raise type(e)("render: unable to read file: %s" % e) from e
    order = []
    seen = set()
    for arch in ARCHETYPES:
        for img in sv.bundles[arch]:
            if img not in seen:
                seen.add(img)
                order.append(img)
    out = DeclarativeConfig()
    image_map = {}
    csvs = {}
    sources = {}
    lookup_packages = {}
    for img in order:
        c = call_renderer(renderer, img)
        for name, p in (getattr(c, "lookup_packages", None) or {}).items():
            lookup_packages.setdefault(name, p)
        if not v146 and len(c.bundles) != 1:
            raise FbcTemplateError("bundle reference %s resulted in %d bundles, expected 1" % (q(img), len(c.bundles)))
        ccsv = getattr(c, "csv_json", None) or {}
        if wants_csv_metadata(level):
            migrated = []
            for b in c.bundles:
                m = migrate_bundle(b, ccsv.get(b.get("name")))
                if m is not b:
                    sources[b.get("name")] = b  # shared with the renderer, no copy
                migrated.append(m)
            c.bundles = migrated
        if c.bundles:
            image_map[img] = c.bundles[0].get("image", "")
        csvs.update(ccsv)
        out.merge(c)
    if not out.bundles:
        raise FbcTemplateError("render: no bundles specified or no bundles could be rendered")
    index = {}
    for b in out.bundles:
        index.setdefault(b.get("image", ""), b)
    state = {"pkg": None}
    versions = {}
    try:
        for arch in ARCHETYPES:
            versions[arch] = _versions_from_channel(sv.bundles[arch], image_map, index, state, v146)
    except FbcTemplateError as e:
        raise FbcTemplateError("render: unable to post-process bundle info: %s" % e) from e
    pkg = state["pkg"] or ""
    if strict_names:
        check_safe_name("package", pkg)
    if state["pkg"] is not None:
        out.packages.append({"schema": "olm.package", "name": pkg, "defaultChannel": ""})
    channels, default = generate_channels(versions, sv.generate_major, sv.generate_minor,
                                          sv.default_channel_type_preference, pkg, v146=v146)
    out.channels = channels
    if out.packages:
        out.packages[0]["defaultChannel"] = default
        if not v146:
            populate_package_metadata(out.packages[0], channels, out.bundles, csvs, sources, lookup_packages)
    out.csv_json = csvs
    return out
