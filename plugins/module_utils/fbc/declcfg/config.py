# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declarative config: the File-Based Catalog objects as loaded, before conversion to the typed model.

Mirrors operator-registry's alpha/declcfg.DeclarativeConfig. Each object is a JSON-shaped dict:

- packages/channels/bundles/deprecations hold only the fields of opm's Go structs, under their canonical JSON
  names (as opm's typed decode, unknown fields are dropped; optional fields may be absent);
- others holds every object of an unknown schema verbatim.

Nested mappings loaded from files have sorted keys (opm re-encodes blobs from Go maps); objects built in code
may use any order and the JSON writer keeps it (opm keeps struct order for freshly rendered values).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import get_ci, go_sort_key

SCHEMA_PACKAGE = "olm.package"
SCHEMA_CHANNEL = "olm.channel"
SCHEMA_BUNDLE = "olm.bundle"
SCHEMA_DEPRECATIONS = "olm.deprecations"

PROPERTY_PACKAGE = "olm.package"
PROPERTY_BUNDLE_OBJECT = "olm.bundle.object"
PROPERTY_CSV_METADATA = "olm.csv.metadata"


def package_property(bundle):
    """The value of the bundle's single olm.package property, or None when missing/duplicated/not an object."""
    found = None
    for prop in bundle.get("properties") or ():
        if prop.get("type") == PROPERTY_PACKAGE:
            if found is not None:
                return None
            found = prop.get("value")
    return found if isinstance(found, dict) else None


class DeclarativeConfig:
    """All FBC objects of a catalog, grouped by schema (order of appearance kept inside each group).

    A plain class rather than a dataclass: importing dataclasses (and inspect) costs more start-up time than
    rendering a small catalog.
    """

    FIELDS = ("packages", "channels", "bundles", "deprecations", "others")

    def __init__(self, packages=None, channels=None, bundles=None, deprecations=None, others=None):
        self.packages = [] if packages is None else packages
        self.channels = [] if channels is None else channels
        self.bundles = [] if bundles is None else bundles
        self.deprecations = [] if deprecations is None else deprecations
        self.others = [] if others is None else others

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    __hash__ = None  # mutable, compared by value

    def __repr__(self):
        return "DeclarativeConfig(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in self.FIELDS)

    def is_empty(self):
        return not (self.packages or self.channels or self.bundles or self.deprecations or self.others)

    def package_names(self):
        """Sorted names of every package referenced by any object (opm's configsByPackage key set)."""
        names = set()
        for p in self.packages:
            names.add(p.get("name") or "")
        for c in self.channels:
            names.add(c.get("package") or "")
        for b in self.bundles:
            names.add(b.get("package") or "")
        for d in self.deprecations:
            names.add(d.get("package") or "")
        for o in self.others:
            pkg = get_ci(o, "package")  # Meta.Package (see write.meta_str)
            names.add(pkg if isinstance(pkg, str) else "")
        names.discard("")
        return sorted(names, key=go_sort_key)

    def restricted_to(self, names):
        """A DeclarativeConfig of the objects of the packages in ``names`` only (the same objects, not copies)."""
        names = set(names)

        def other_package(o):
            pkg = get_ci(o, "package")
            return pkg if isinstance(pkg, str) else ""

        return DeclarativeConfig(
            packages=[p for p in self.packages if (p.get("name") or "") in names],
            channels=[c for c in self.channels if (c.get("package") or "") in names],
            bundles=[b for b in self.bundles if (b.get("package") or "") in names],
            deprecations=[d for d in self.deprecations if (d.get("package") or "") in names],
            others=[o for o in self.others if other_package(o) in names],
        )

    def merge(self, other):
        self.packages.extend(other.packages)
        self.channels.extend(other.channels)
        self.bundles.extend(other.bundles)
        self.deprecations.extend(other.deprecations)
        self.others.extend(other.others)
