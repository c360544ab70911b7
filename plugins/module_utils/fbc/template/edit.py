# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Editing catalog templates the way the community-operators release automation does (operator-pipelines
``add_bundle_to_fbc``: BasicTemplate / SemverTemplate create and amend), plus removal and channel-head queries.

Templates are plain decoded documents (dicts); functions mutate them in place and return ``(template, changed)``.

YAML anchors and aliases: a decoded document no longer knows them, and PyYAML (the only YAML library we can count on)
cannot edit a document while keeping them, so writing an edited template back would silently expand every alias
into a copy (and drop the anchors). Rather than rewrite what the user wrote, :func:`check_template_rewritable`
refuses to rewrite a template that uses any; an edit that changes nothing never rewrites the file at all.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core; the modules report it missing
    yaml = None

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import ReleaseConfigError, decode_utf8
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import get_ci, go_fold_name
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import SCHEMA_BASIC
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.semver import SCHEMA_SEMVER
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import check_safe_name

SEMVER_CHANNELS = ("Candidate", "Fast", "Stable")


def yaml_anchor_names(text):
    """Names of the anchors (``&name``) and aliases (``*name``) a YAML text uses, in order of first use; ``[]`` for
    JSON, for text without any, or when the text does not scan as YAML (the loader reports that)."""
    if text is None or yaml is None:
        return []
    if isinstance(text, bytes):
        text = decode_utf8(text, error=ReleaseConfigError)
    if "&" not in text and "*" not in text:
        return []
    names = []
    try:
        for token in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)) and token.value not in names:
                names.append(token.value)
    except yaml.YAMLError:
        pass
    return names


def check_template_rewritable(text, source=None):
    """Refuse to rewrite a template whose text uses YAML anchors/aliases (PyYAML would expand them); ``text`` is the
    file content before the edit (None for a new template)."""
    names = yaml_anchor_names(text)
    if names:
        raise ReleaseConfigError(
            "%stemplate uses YAML anchors/aliases (%s): writing the edited template would expand them into copies, "
            "so it is left unchanged; edit it by hand or remove the anchors first"
            % ("%s: " % source if source else "", excerpt(", ".join("&" + n for n in names))))


def _require_str(kind, v, allow_empty=False):
    if not isinstance(v, str) or (not v and not allow_empty):
        raise ReleaseConfigError("%s must be a non-empty string" % kind)
    return v


def _channels_arg(channels):
    if isinstance(channels, str):
        channels = [channels]
    if not channels or not isinstance(channels, (list, tuple)):
        raise ReleaseConfigError("channels must be a non-empty list")
    for c in channels:
        _require_str("channel name", c)
    if len(set(channels)) != len(channels):
        raise ReleaseConfigError("channels must be unique: %s" % list(channels))
    return list(channels)


def channel_entry(csv_name, replaces=None, skips=None, skip_range=None):
    """The channel entry E = {name, replaces?, skips?, skipRange?} (release-config.yaml semantics)."""
    _require_str("bundle name", csv_name)
    e = {"name": csv_name}
    if replaces:
        e["replaces"] = _require_str("replaces", replaces)
    if skips:
        if not isinstance(skips, (list, tuple)) or not all(isinstance(s, str) and s for s in skips):
            raise ReleaseConfigError("skips must be a list of non-empty strings")
        e["skips"] = list(skips)
    if skip_range:
        e["skipRange"] = _require_str("skipRange", skip_range)
    return e


# --------------------------------------------------------------------------- basic

def new_basic_template(package, channels, image, entry, default_channel=None):
    """BasicTemplate.create: package, one channel per name with [entry], then the bundle."""
    check_safe_name("package", _require_str("package", package), ReleaseConfigError)
    channels = _channels_arg(channels)
    if default_channel is not None and default_channel not in channels:
        raise ReleaseConfigError("defaultChannel %s not found in channels %s" % (q(default_channel), channels))
    entries = [{"schema": "olm.package", "name": package, "defaultChannel": default_channel or channels[0]}]
    for c in channels:
        entries.append({"schema": "olm.channel", "name": c, "package": package, "entries": [dict(entry)]})
    entries.append({"schema": "olm.bundle", "image": image})
    return {"schema": SCHEMA_BASIC, "entries": entries}


def _basic_entries(template):
    if not isinstance(template, dict) or get_ci(template, "schema") != SCHEMA_BASIC:
        raise ReleaseConfigError("not a basic template (schema %s expected)" % q(SCHEMA_BASIC))
    entries = get_ci(template, "entries", nullable=True)
    if entries is None:
        entries = []
        template["entries"] = entries
    if not isinstance(entries, list):
        raise ReleaseConfigError("basic template entries must be a list")
    return entries


def add_bundle(template, image, csv_name, channels, replaces=None, skips=None, skip_range=None, package=None,
               default_channel=None):
    """Add a bundle to a basic template (create it when ``template`` is None).

    Amend semantics: missing channels are appended as ``{schema, name, package, entries: []}``; the bundle
    ``{schema: olm.bundle, image}`` is appended unless an entry with that image exists; the entry is appended to each
    listed channel unless an identical entry is already there. Package and defaultChannel are left untouched.
    """
    _require_str("image", image)
    check_safe_name("bundle", csv_name, ReleaseConfigError)
    entry = channel_entry(csv_name, replaces, skips, skip_range)
    channels = _channels_arg(channels)
    if template is None:
        if package is None:
            raise ReleaseConfigError("package is required to create a basic template")
        return new_basic_template(package, channels, image, entry, default_channel), True
    entries = _basic_entries(template)
    if package is None:
        pkgs = [e for e in entries if isinstance(e, dict) and get_ci(e, "schema") == "olm.package"]
        package = get_ci(pkgs[0], "name") if pkgs else None
        if not package:
            raise ReleaseConfigError("package is required: the template has no olm.package entry")
    check_safe_name("package", package, ReleaseConfigError)
    changed = False
    by_name = {}
    for e in entries:
        if isinstance(e, dict) and get_ci(e, "schema") == "olm.channel":
            by_name.setdefault(get_ci(e, "name"), e)
    for c in channels:
        if c not in by_name:
            ch = {"schema": "olm.channel", "name": c, "package": package, "entries": []}
            entries.append(ch)
            by_name[c] = ch
            changed = True
    if not any(isinstance(e, dict) and get_ci(e, "schema") == "olm.bundle" and get_ci(e, "image") == image
               for e in entries):
        entries.append({"schema": "olm.bundle", "image": image})
        changed = True
    for c in channels:
        ch = by_name[c]
        ch_entries = get_ci(ch, "entries", nullable=True)
        if ch_entries is None:
            ch_entries = []
            ch["entries"] = ch_entries
        if entry not in ch_entries:
            ch_entries.append(dict(entry))
            changed = True
    return template, changed


def remove_bundle(template, image=None, name=None, relink=True):
    """Remove a bundle (by image and/or bundle name) from a basic template.

    Channel entries named ``name`` are removed; with ``relink`` an entry that replaced the removed one inherits its
    ``replaces`` so the upgrade chain stays connected. Returns ``(template, changed)``.
    """
    if image is None and name is None:
        raise ReleaseConfigError("remove_bundle needs an image or a bundle name")
    entries = _basic_entries(template)
    changed = False
    keep = []
    for e in entries:
        if isinstance(e, dict) and get_ci(e, "schema") == "olm.bundle" and image is not None \
                and get_ci(e, "image") == image:
            changed = True
            continue
        keep.append(e)
    if name is not None:
        for e in keep:
            if not (isinstance(e, dict) and get_ci(e, "schema") == "olm.channel"):
                continue
            ch_entries = get_ci(e, "entries", nullable=True) or []
            removed = [x for x in ch_entries if isinstance(x, dict) and x.get("name") == name]
            if not removed:
                continue
            changed = True
            new_entries = [x for x in ch_entries if not (isinstance(x, dict) and x.get("name") == name)]
            if relink:
                inherited = removed[0].get("replaces")
                for x in new_entries:
                    if isinstance(x, dict) and x.get("replaces") == name:
                        if inherited:
                            x["replaces"] = inherited
                        else:
                            x.pop("replaces", None)
            e["entries"] = new_entries
    entries[:] = keep
    return template, changed


def channel_heads(template, channel):
    """Names of the entries of ``channel`` that no other entry of the channel replaces or skips."""
    entries = _basic_entries(template)
    chans = [e for e in entries if isinstance(e, dict) and get_ci(e, "schema") == "olm.channel"
             and get_ci(e, "name") == channel]
    if not chans:
        raise ReleaseConfigError("channel %s not found in template" % q(channel))
    names = []
    referenced = set()
    for ch in chans:
        for x in get_ci(ch, "entries", nullable=True) or ():
            if not isinstance(x, dict):
                continue
            names.append(x.get("name"))
            if x.get("replaces"):
                referenced.add(x["replaces"])
            referenced.update(s for s in (x.get("skips") or ()) if isinstance(s, str))
    return [n for n in names if n not in referenced]


def latest_in_channel(template, channel):
    """The single head of a channel of a basic template (the bundle a new release should replace)."""
    heads = channel_heads(template, channel)
    if not heads:
        raise ReleaseConfigError("no channel head found in channel %s" % q(channel))
    if len(heads) > 1:
        raise ReleaseConfigError("multiple channel heads found in channel %s: %s" % (q(channel), ", ".join(heads)))
    return heads[0]


# --------------------------------------------------------------------------- semver

def add_bundle_semver(template, image, channels):
    """SemverTemplate create/amend: ``channels`` in Candidate|Fast|Stable (case-sensitive keys, as the pipeline)."""
    _require_str("image", image)
    channels = _channels_arg(channels)
    for c in channels:
        if c not in SEMVER_CHANNELS:
            raise ReleaseConfigError("semver channel %s must be one of %s" % (q(c), ", ".join(SEMVER_CHANNELS)))
    if template is None:
        template = {"Schema": SCHEMA_SEMVER, "GenerateMajorChannels": True, "GenerateMinorChannels": True}
        for c in channels:
            template[c] = {"Bundles": [{"Image": image}]}
        return template, True
    if not isinstance(template, dict) or get_ci(template, "schema") != SCHEMA_SEMVER:
        raise ReleaseConfigError("not a semver template (schema %s expected)" % q(SCHEMA_SEMVER))
    changed = False
    for c in channels:
        sec = template.get(c)
        if not isinstance(sec, dict):
            sec = {"Bundles": []}
            template[c] = sec
            changed = True
        bundles = sec.get("Bundles")
        if bundles is None:
            bundles = []
            sec["Bundles"] = bundles
        if {"Image": image} not in bundles:
            bundles.append({"Image": image})
            changed = True
    return template, changed


def remove_bundle_semver(template, image):
    """Remove an image from every archetype of a semver template."""
    changed = False
    for k, sec in list(template.items()):
        if not isinstance(sec, dict) or not isinstance(k, str) or go_fold_name(k) not in ("candidate", "fast", "stable"):
            continue
        bundles = get_ci(sec, "bundles", nullable=True) or []
        keep = [b for b in bundles if not (isinstance(b, dict) and get_ci(b, "image") == image)]
        if len(keep) != len(bundles):
            bundles[:] = keep
            changed = True
    return template, changed
