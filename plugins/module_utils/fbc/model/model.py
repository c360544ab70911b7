# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The typed catalog model with opm's validation messages: Package, Channel, Bundle, Model.

Ports operator-registry alpha/model/model.go (v1.71 behaviour): the types and their Validate methods (channel
heads, replaces chains, unique versions). Building a model is convert.py, validating a catalog validate.py, graph
queries graph.py, property decoding properties.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import PROPERTY_PACKAGE
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, ValidationTree
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.properties import ParsedProperties, parse_properties

ZERO_VERSION = semver.Version()


@dataclass(eq=False)
class Deprecation:
    message: str = ""

    def validate(self):
        return None if self.message else "message must be set"


@dataclass(eq=False)
class Icon:
    base64data: Optional[str] = None
    mediatype: str = ""


@dataclass(eq=False)
class RelatedImage:
    name: str = ""
    image: str = ""


@dataclass(eq=False)
class Bundle:
    """A bundle as a member of one channel (opm keeps one model.Bundle per channel entry)."""

    name: str = ""
    package: Optional["Package"] = None
    channel: Optional["Channel"] = None
    image: str = ""
    replaces: str = ""
    skips: List[str] = field(default_factory=list)
    skip_range: str = ""
    properties: List[Dict[str, Any]] = field(default_factory=list)
    related_images: List[RelatedImage] = field(default_factory=list)
    deprecation: Optional[Deprecation] = None
    object_count: int = 0
    version: semver.Version = ZERO_VERSION
    release: tuple = ()
    # property.Parse result for `properties` (set by convert_to_model; avoids parsing twice)
    parsed: Optional[ParsedProperties] = field(default=None, repr=False)

    def version_string(self):
        if self.release:
            return "%s-%s" % (self.version, ".".join(str(p) for p in self.release))
        return str(self.version)

    def normalized_name(self):
        if self.release:
            return "%s-v%s" % (self.package.name if self.package else "", self.version_string())
        return self.name

    def validate(self):
        result = ValidationTree("invalid bundle %s" % q(self.name))
        subs = result.sub_errors
        if self.name == "":
            subs.append("name must be set")
        if self.name != self.normalized_name():
            subs.append("name %s does not match normalized name %s" % (q(self.name), q(self.normalized_name())))
        if self.channel is None:
            subs.append("channel must be set")
        if self.package is None:
            subs.append("package must be set")
        if self.channel is not None and self.package is not None and self.package is not self.channel.package:
            subs.append("package does not match channel's package")
        props = self.parsed
        if props is None:
            try:
                props = parse_properties(self.properties)
            except FBCError as e:
                subs.append(str(e))
        for i, skip in enumerate(self.skips):
            if skip == "":
                subs.append("skip[%d] is empty" % i)
        if self.skip_range:
            try:
                semver.parse_range(self.skip_range)
            except semver.SemverError as e:
                subs.append("invalid skipRange %s: %s" % (q(excerpt(self.skip_range)), e))
        if props is not None and len(props.packages) != 1:
            subs.append("must be exactly one property with type %s" % q(PROPERTY_PACKAGE))
        if self.image == "" and self.object_count == 0:
            subs.append("bundle image must be set")
        if self.deprecation is not None and self.deprecation.validate():
            subs.append("invalid deprecation: %s" % self.deprecation.validate())
        if self.version.build and self.release:
            subs.append("cannot use build metadata in version with a release version")
        return result.or_none()

    def compare(self, other):
        """model.Bundle.Compare: version, then release (a release sorts after none)."""
        if self.name == other.name:
            return 0
        c = self.version.compare(other.version)
        if c:
            return c
        if self.release and not other.release:
            return 1
        if other.release and not self.release:
            return -1
        return semver.Version(pre=self.release).compare(semver.Version(pre=other.release))


@dataclass(eq=False)
class Channel:
    name: str = ""
    package: Optional["Package"] = None
    bundles: Dict[str, Bundle] = field(default_factory=dict)
    deprecation: Optional[Deprecation] = None
    properties: Optional[List[Dict[str, Any]]] = None

    def head(self):
        """Channel.Head: the one entry nothing replaces or skips; raises FBCError otherwise."""
        incoming = set()
        for b in self.bundles.values():
            if b.replaces:
                incoming.add(b.replaces)
            incoming.update(b.skips)
        heads = [b for b in self.bundles.values() if b.name not in incoming]
        if not heads:
            raise FBCError("no channel head found in graph")
        if len(heads) > 1:
            raise FBCError("multiple channel heads found in graph: %s"
                           % ", ".join(sorted((h.name for h in heads), key=go_sort_key)))
        return heads[0]

    def validate_replaces_chain(self):
        """validateReplacesChain (v1.58+: a skipped replaces target ends the walk). Returns a message or None."""
        try:
            head = self.head()
        except FBCError as e:
            return str(e)
        skipped = set()
        for b in self.bundles.values():
            skipped.update(b.skips)
        walk = []
        position = {}
        chain = {head.name}
        cur = head
        while cur is not None:
            if cur.name not in position:
                position[cur.name] = len(walk)
                walk.append(cur.name)
            if cur.replaces in skipped:
                break
            if cur.replaces in chain:
                # opm prints the walk from the repeated node back to itself
                start = position.get(cur.replaces, len(walk))
                return "detected cycle in replaces chain of upgrade graph: %s" % " -> ".join(
                    walk[start:] + [cur.replaces])
            chain.add(cur.replaces)
            cur = self.bundles.get(cur.replaces)
        stranded = [n for n in self.bundles if n not in chain and n not in skipped]
        if stranded:
            return "channel contains one or more stranded bundles: %s" % ", ".join(sorted(stranded, key=go_sort_key))
        return None

    def validate(self):
        result = ValidationTree("invalid channel %s" % q(self.name))
        subs = result.sub_errors
        if self.name == "":
            subs.append("channel name must not be empty")
        if self.package is None:
            subs.append("package must be set")
        if not self.bundles:
            subs.append("channel must contain at least one bundle")
        else:
            err = self.validate_replaces_chain()
            if err:
                subs.append(err)
        for key, b in self.bundles.items():
            if key != b.name:
                subs.append("bundle key %s does not match bundle name %s" % (q(key), q(b.name)))
            err = b.validate()
            if err is not None:
                subs.append(err)
            if b.channel is not self:
                subs.append("bundle %s not correctly linked to parent channel" % q(b.name))
        if self.deprecation is not None and self.deprecation.validate():
            subs.append("invalid deprecation: %s" % self.deprecation.validate())
        return result.or_none()


@dataclass(eq=False)
class Package:
    name: str = ""
    description: str = ""
    icon: Optional[Icon] = None
    default_channel: Optional[Channel] = None
    channels: Dict[str, Channel] = field(default_factory=dict)
    deprecation: Optional[Deprecation] = None

    def _unique_versions_error(self):
        by_version = {}
        for ch in self.channels.values():
            for b in ch.bundles.values():
                by_version.setdefault(b.version_string(), set()).add(b.name)
        errs = []
        for v in sorted(by_version, key=go_sort_key):
            names = by_version[v]
            if len(names) > 1:
                errs.append("{%s: [%s]}" % (v, ", ".join(sorted(names, key=go_sort_key))))
        if errs:
            return "duplicate versions found in bundles: [%s]" % " ".join(errs)
        return None

    def validate(self):
        result = ValidationTree("invalid package %s" % q(self.name))
        subs = result.sub_errors
        if self.name == "":
            subs.append("package name must not be empty")
        if self.default_channel is None:
            subs.append("default channel must be set")
        if not self.channels:
            subs.append("package must contain at least one channel")
        found_default = False
        for key, ch in self.channels.items():
            if key != ch.name:
                subs.append("channel key %s does not match channel name %s" % (q(key), q(ch.name)))
            err = ch.validate()
            if err is not None:
                subs.append(err)
            if ch is self.default_channel:
                found_default = True
            if ch.package is not self:
                subs.append("channel %s not correctly linked to parent package" % q(ch.name))
        err = self._unique_versions_error()
        if err:
            subs.append(err)
        if self.default_channel is not None and not found_default:
            subs.append("default channel %s not found in channels list" % q(self.default_channel.name))
        if self.deprecation is not None and self.deprecation.validate():
            subs.append("invalid deprecation: %s" % self.deprecation.validate())
        return result.or_none()


class Model(dict):
    """model.Model: package name -> Package."""

    def validate(self):
        """Return opm's aggregated ValidationTree, or None when the model is valid."""
        result = ValidationTree("invalid index")
        for name, pkg in self.items():
            if name != pkg.name:
                result.sub_errors.append("package key %s does not match package name %s" % (q(name), q(pkg.name)))
            err = pkg.validate()
            if err is not None:
                result.sub_errors.append(err)
        return result.or_none()

    def bundle_count(self):
        names = set()
        for pkg in self.values():
            for ch in pkg.channels.values():
                for b in ch.bundles:
                    names.add((pkg.name, b))
        return len(names)
