# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ConvertToModel: a DeclarativeConfig turned into the typed model, with opm's exact messages.

Ports operator-registry alpha/declcfg/declcfg_to_model.go (v1.71 behaviour). `convert_to_model(cfg)` stops at the
first sequential problem like opm; passing a list as `collect` records every sequential problem instead and keeps
going where that is meaningful.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import (
    PROPERTY_BUNDLE_OBJECT,
    PROPERTY_PACKAGE,
    SCHEMA_BUNDLE,
    SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import MESSAGE_LIMIT, ConvertError, FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.fmt import v_package_scoped_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import (
    ImageReferenceError,
    parse_normalized_named,
    shown_reference,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.model import (
    ZERO_VERSION,
    Bundle,
    Channel,
    Deprecation,
    Icon,
    Model,
    Package,
    RelatedImage,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.properties import parse_properties, parse_release

_DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
                      "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def dns1123_label_errors(value):
    """k8s validation.IsDNS1123Label."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_DNS1123_LABEL_MSG)
    return errs


class _Sink:
    """Either raises at the first problem (opm) or records every problem (collect mode).

    beyond_opm collects problems found by checks opm skips (its E1 quirk), which must never be taken for
    the error opm itself would print.
    """

    def __init__(self, collect, beyond_opm=None):
        self.collect = collect
        self.beyond_opm = beyond_opm

    def error(self, message):
        if self.collect is None:
            raise ConvertError(message)
        self.collect.append(excerpt(message, MESSAGE_LIMIT))

    def extra(self, message):
        message = excerpt(message, MESSAGE_LIMIT)
        if self.collect is not None:
            self.collect.append(message)
            if self.beyond_opm is not None:
                self.beyond_opm.add(message)


def _missing_bundles_message(pkg_name, entries):
    return "no olm.bundle blobs found in package %s for olm.channel entries [%s]" % (
        q(pkg_name), " ".join(sorted(entries, key=go_sort_key)))


def convert_to_model(cfg, collect=None, validate=True, beyond_opm=None):
    """declcfg.ConvertToModel, in opm's passes: packages, channels, bundles (then the entries without one and the
    default channels), deprecations. Returns a Model.

    collect=None: raise ConvertError at the first sequential problem, then ValidationTree from model validation
    (exactly opm's behaviour). collect=list: append every sequential problem message and continue; model
    validation is then left to the caller (validate=False is implied). beyond_opm (a set) receives the
    collected messages opm itself would not produce (entries without bundles in non-last channels).
    """
    sink = _Sink(collect, beyond_opm)
    model = Model()
    default_channels = _packages_pass(cfg, model, sink)
    last_channel_entries, all_channel_entries = _channels_pass(cfg, model, default_channels, sink)
    package_bundles = _bundles_pass(cfg, model, last_channel_entries, all_channel_entries, sink)
    for pkg_name, entries in last_channel_entries.items():
        if entries:
            sink.error(_missing_bundles_message(pkg_name, entries))
    _synthesise_default_channels(model, default_channels)
    _deprecations_pass(cfg, model, package_bundles, sink)

    # opm only checks the last channel of each package above; report the entries of the other channels too,
    # after opm's own checks (model validation would otherwise only say "bundle image must be set")
    for pkg_name, entries in all_channel_entries.items():
        reported = last_channel_entries.get(pkg_name) or {}
        rest = [e for e in entries if e not in reported]
        if rest:
            sink.extra(_missing_bundles_message(pkg_name, rest))

    if collect is None and validate:
        err = model.validate()
        if err is not None:
            raise err
    return model


def _packages_pass(cfg, model, sink):
    """The olm.package blobs into ``model``; returns {package: its defaultChannel's name}."""
    default_channels = {}
    for p in cfg.packages:
        name = p.get("name") or ""
        if name == "":
            sink.error("config contains package with no name")
            continue
        if name in model:
            sink.error("duplicate package %s" % q(name))
            continue
        errs = dns1123_label_errors(name)
        if errs:
            sink.error("invalid package name %s: [%s]" % (q(name), " ".join(errs)))
        icon = p.get("icon")
        model[name] = Package(
            name=name, description=p.get("description") or "",
            icon=Icon(icon.get("base64data"), icon.get("mediatype") or "") if icon is not None else None)
        default_channels[name] = p.get("defaultChannel") or ""

    return default_channels


def _channels_pass(cfg, model, default_channels, sink):
    """The olm.channel blobs into their packages (entries as bundles without content yet); returns the entries of
    each package's last channel and of all its channels, {package: {entry name: None}}, that no bundle has filled yet."""
    # opm's quirk: this map is overwritten per channel, so only the last channel of a package is checked later.
    last_channel_entries = {}
    all_channel_entries = {}
    for c in cfg.channels:
        pkg_name = c.get("package") or ""
        ch_name = c.get("name") or ""
        mpkg = model.get(pkg_name)
        if mpkg is None:
            sink.error("unknown package %s for channel %s" % (q(pkg_name), q(ch_name)))
            continue
        if ch_name == "":
            sink.error("package %s contains channel with no name" % q(pkg_name))
            continue
        if ch_name in mpkg.channels:
            sink.error("package %s has duplicate channel %s" % (q(pkg_name), q(ch_name)))
            continue
        mch = Channel(name=ch_name, package=mpkg, properties=c.get("properties"))
        entries = {}
        for e in c.get("entries") or ():
            ename = e.get("name") or ""
            if ename in mch.bundles:
                sink.error("invalid package %s, channel %s: duplicate entry %s" % (q(pkg_name), q(ch_name), q(ename)))
                continue
            entries[ename] = None
            mch.bundles[ename] = Bundle(name=ename, package=mpkg, channel=mch, replaces=e.get("replaces") or "",
                                        skips=list(e.get("skips") or ()), skip_range=e.get("skipRange") or "")
        last_channel_entries[pkg_name] = entries
        all_channel_entries.setdefault(pkg_name, {}).update(entries)
        mpkg.channels[ch_name] = mch
        if default_channels.get(pkg_name) == ch_name:
            mpkg.default_channel = mch

    return last_channel_entries, all_channel_entries


def _bundles_pass(cfg, model, last_channel_entries, all_channel_entries, sink):
    """The olm.bundle blobs into the channel entries of their name (the entries filled are taken out of the two
    maps); returns {package: the names of its bundles}."""
    package_bundles = {}
    for b in cfg.bundles:
        pkg_name = b.get("package") or ""
        b_name = b.get("name") or ""
        if pkg_name == "":
            sink.error("package name must be set for bundle %s" % q(b_name))
            continue
        mpkg = model.get(pkg_name)
        if mpkg is None:
            sink.error("unknown package %s for bundle %s" % (q(pkg_name), q(b_name)))
            continue
        seen = package_bundles.setdefault(pkg_name, set())
        if b_name in seen:
            sink.error("package %s has duplicate bundle %s" % (q(pkg_name), q(b_name)))
            continue
        seen.add(b_name)

        properties = b.get("properties") or []
        props, version, release = _bundle_properties(b, pkg_name, b_name, properties, sink)

        last = last_channel_entries.get(pkg_name)
        if last is not None:
            last.pop(b_name, None)
        all_entries = all_channel_entries.get(pkg_name)
        if all_entries is not None:
            all_entries.pop(b_name, None)
        related = [RelatedImage(r.get("name") or "", r.get("image") or "") for r in b.get("relatedImages") or ()]
        object_count = props.bundle_objects if props is not None else sum(
            1 for p in properties if p.get("type") == PROPERTY_BUNDLE_OBJECT)
        found = False
        for mch in mpkg.channels.values():
            mb = mch.bundles.get(b_name)
            if mb is not None:
                found = True
                mb.image = b.get("image") or ""
                mb.properties = properties
                mb.related_images = related
                mb.object_count = object_count
                mb.version = version
                mb.release = release
                mb.parsed = props
        if not found:
            sink.error("package %s, bundle %s not found in any channel entries" % (q(pkg_name), q(b_name)))

    return package_bundles


def _bundle_properties(b, pkg_name, b_name, properties, sink):
    """A bundle's parsed properties, version and release, each problem reported to ``sink`` as opm words it;
    ``(None, 0.0.0, ())`` parts where they could not be read."""
    version, release = ZERO_VERSION, ()
    props = None
    try:
        props = parse_properties(properties)
    except FBCError as e:
        sink.error("parse properties for bundle %s: %s" % (q(b_name), e))
    if props is not None:
        if len(props.packages) != 1:
            sink.error("package %s bundle %s must have exactly 1 %s property, found %d"
                       % (q(pkg_name), q(b_name), q(PROPERTY_PACKAGE), len(props.packages)))
        else:
            pkg_prop = props.packages[0]
            if pkg_name != pkg_prop["packageName"]:
                sink.error("package %s does not match %s property %s"
                           % (q(pkg_name), q(PROPERTY_PACKAGE), q(pkg_prop["packageName"])))
            image = b.get("image") or ""
            if image:
                try:
                    parse_normalized_named(image)
                except ImageReferenceError as e:
                    sink.error("package %s bundle %s image: invalid image pull spec %s: %s"
                               % (q(pkg_name), q(b_name), q(shown_reference(image)), e))
            for i, rel in enumerate(b.get("relatedImages") or ()):
                rel_image = rel.get("image") or ""
                if rel_image:
                    try:
                        parse_normalized_named(rel_image)
                    except ImageReferenceError as e:
                        sink.error("package %s bundle %s relatedImages[%d].image: invalid image pull spec %s: %s"
                                   % (q(pkg_name), q(b_name), i, q(shown_reference(rel_image)), e))
            try:
                version = semver.parse(pkg_prop["version"])
            except semver.SemverError as e:
                sink.error("error parsing bundle %s version %s: %s" % (q(b_name), q(pkg_prop["version"]), e))
            if pkg_prop["release"]:
                try:
                    release = parse_release(pkg_prop["release"])
                except semver.SemverError as e:
                    sink.error("error parsing bundle %s release version %s: %s"
                               % (q(b_name), q(pkg_prop["release"]), e))
    return props, version, release


def _synthesise_default_channels(model, default_channels):
    """A package whose defaultChannel names no channel gets an empty one of that name, as opm does."""
    for mpkg in model.values():
        dc_name = default_channels.get(mpkg.name, "")
        if dc_name and mpkg.default_channel is None:
            # opm synthesises an empty channel, which model validation then reports
            dch = Channel(name=dc_name, package=mpkg)
            mpkg.default_channel = dch
            mpkg.channels[dc_name] = dch


def _deprecations_pass(cfg, model, package_bundles, sink):
    """The olm.deprecations blobs onto the packages, channels and bundles they name."""
    deprecated_packages = set()
    for i, d in enumerate(cfg.deprecations):
        pkg_name = d.get("package") or ""
        if pkg_name == "":
            sink.error("package name must be set for deprecation item %d" % i)
            continue
        mpkg = model.get(pkg_name)
        if mpkg is None:
            sink.error("cannot apply deprecations to an unknown package %s" % q(pkg_name))
            continue
        if pkg_name in deprecated_packages:
            sink.error("expected a maximum of one deprecation per package: %s" % q(pkg_name))
            continue
        deprecated_packages.add(pkg_name)
        references = set()
        for j, entry in enumerate(d.get("entries") or ()):
            ref = entry.get("reference") or {}
            schema = ref.get("schema") or ""
            ref_name = ref.get("name") or ""
            if schema == "":
                sink.error("schema must be set for deprecation entry [%d] for package %s" % (j, q(pkg_name)))
                continue
            key = (schema, ref_name)
            if key in references:
                sink.error("duplicate deprecation entry %s for package %s" % (v_package_scoped_reference(ref), q(pkg_name)))
                continue
            references.add(key)
            message = entry.get("message") or ""
            if schema == SCHEMA_BUNDLE:
                if ref_name not in package_bundles.get(pkg_name, ()):
                    sink.error("cannot deprecate bundle %s for package %s: bundle not found"
                               % (q(ref_name), q(pkg_name)))
                    continue
                for mch in mpkg.channels.values():
                    mb = mch.bundles.get(ref_name)
                    if mb is not None:
                        mb.deprecation = Deprecation(message)
            elif schema == SCHEMA_CHANNEL:
                ch = mpkg.channels.get(ref_name)
                if ch is None:
                    sink.error("cannot deprecate channel %s for package %s: channel not found"
                               % (q(ref_name), q(pkg_name)))
                    continue
                ch.deprecation = Deprecation(message)
            elif schema == SCHEMA_PACKAGE:
                if ref_name != "":
                    sink.error("package name must be empty for deprecated package %s (specified %s)"
                               % (q(pkg_name), q(ref_name)))
                    continue
                mpkg.deprecation = Deprecation(message)
            else:
                sink.error("cannot deprecate object %s referenced by entry %d for package %s: object schema unknown"
                           % (v_package_scoped_reference(ref), j, q(pkg_name)))
