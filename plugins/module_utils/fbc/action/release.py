# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the community-operators(-prod) FBC release process (operator-pipelines ``add_bundle_to_fbc``,
``fbc/render_catalogs.sh``, static checks): ci.yaml ``fbc`` section, release-config.yaml, per-OCP-version render
plan and migrate level (catalogs >= v4.17 use ``bundle-object-to-csv-metadata``).

No I/O except :func:`load_template_file` (reads one template file).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    MIGRATE_BUNDLE_OBJECT_TO_CSV_METADATA,
    MIGRATE_NONE,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FbcTemplateError,
    ReleaseConfigError,
    TemplateParseError,
    decode_utf8,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import (
    SEMVER_CHANNELS,
    add_bundle,
    add_bundle_semver,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import (
    TEMPLATE_TYPES as _SCHEMA_OF_TYPE,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import (
    TEMPLATES,
    render_template,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import (
    check_safe_name,
    load_first_document,
)

DEFAULT_BUNDLE_REGISTRY = "quay.io/community-operator-pipeline-prod"
ALLOWED_BUNDLE_REGISTRIES = ("quay.io/community-operator-pipeline-prod/", "quay.io/openshift-community-operators/")
# ci.yaml catalog_mapping type (a template schema) -> template kind, for the schemas we render
TEMPLATE_TYPES = {schema: kind for kind, schema in _SCHEMA_OF_TYPE.items() if schema in TEMPLATES}
PROMOTION_STRATEGIES = ("review-needed", "always", "never")
_CATALOG_RE = re.compile(r"^v\d+\.\d+$")


def _doc(data, what):
    if isinstance(data, (str, bytes)):
        try:
            data = load_first_document(data)
        except FbcTemplateError as e:
            raise ReleaseConfigError("%s: %s" % (what, e)) from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ReleaseConfigError("%s must be a mapping" % what)
    return data


def _str_list(v, what):
    if isinstance(v, str) or not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ReleaseConfigError("%s must be a list of non-empty strings" % what)
    return list(v)


# --------------------------------------------------------------------------- catalogs

def is_catalog_v4_17_plus(catalog):
    """operatorcert.utils.is_catalog_v4_17_plus: ``vX.Y`` with (X, Y) >= (4, 17)."""
    if not isinstance(catalog, str) or not _CATALOG_RE.match(catalog):
        return False
    major, minor = (int(x) for x in catalog[1:].split("."))
    return (major, minor) >= (4, 17)


def migrate_level_for_catalog(catalog):
    """The ``--migrate-level`` the pipeline uses for an OCP catalog."""
    return MIGRATE_BUNDLE_OBJECT_TO_CSV_METADATA if is_catalog_v4_17_plus(catalog) else MIGRATE_NONE


def check_catalog_name(catalog):
    check_safe_name("catalog", catalog, ReleaseConfigError)
    if not _CATALOG_RE.match(catalog):
        raise ReleaseConfigError("invalid catalog name %s: expected vX.Y" % q(catalog))
    return catalog


# --------------------------------------------------------------------------- ci.yaml

class CatalogMapping:
    __slots__ = ("template_name", "type", "catalog_names")

    def __init__(self, template_name, type, catalog_names):  # noqa: A002 - ci.yaml field name
        self.template_name = template_name
        self.type = type
        self.catalog_names = catalog_names

    @property
    def template_type(self):
        """``basic`` / ``semver`` (the render-template TYPE argument)."""
        try:
            return TEMPLATE_TYPES[self.type]
        except KeyError:
            raise ReleaseConfigError("Unknown template type '%s' in ci.yaml." % self.type) from None

    def to_dict(self):
        return {"template_name": self.template_name, "type": self.type, "catalog_names": list(self.catalog_names)}

    def __repr__(self):
        return "CatalogMapping(%r)" % (self.to_dict(),)

    def __eq__(self, other):
        return isinstance(other, CatalogMapping) and self.to_dict() == other.to_dict()


class FbcConfig:
    __slots__ = ("enabled", "version_promotion_strategy", "catalog_mapping")

    def __init__(self, enabled, version_promotion_strategy, catalog_mapping):
        self.enabled = enabled
        self.version_promotion_strategy = version_promotion_strategy
        self.catalog_mapping = catalog_mapping

    def mapping_for_template(self, template_name):
        for m in self.catalog_mapping:
            if m.template_name == template_name:
                return m
        raise ReleaseConfigError("Template mapping not found for '%s' in ci.yaml." % template_name)

    def mapping_for_catalog(self, catalog):
        for m in self.catalog_mapping:
            if catalog in m.catalog_names:
                return m
        return None

    @property
    def catalogs(self):
        out = []
        for m in self.catalog_mapping:
            out.extend(c for c in m.catalog_names if c not in out)
        return out


def parse_ci_fbc(ci):
    """Parse the ``fbc`` section of an operator's ci.yaml (str/bytes/dict). Raises ReleaseConfigError."""
    ci = _doc(ci, "ci.yaml")
    fbc = ci.get("fbc")
    if fbc is None:
        return FbcConfig(False, None, [])
    if not isinstance(fbc, dict):
        raise ReleaseConfigError("ci.yaml: 'fbc' must be a mapping")
    enabled = fbc.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ReleaseConfigError("ci.yaml: fbc.enabled must be a boolean")
    strategy = fbc.get("version_promotion_strategy")
    if strategy is not None and strategy not in PROMOTION_STRATEGIES:
        raise ReleaseConfigError("ci.yaml: fbc.version_promotion_strategy must be one of %s"
                                 % ", ".join(PROMOTION_STRATEGIES))
    mappings = []
    raw = fbc.get("catalog_mapping") or []
    if not isinstance(raw, list):
        raise ReleaseConfigError("ci.yaml: fbc.catalog_mapping must be a list")
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise ReleaseConfigError("ci.yaml: fbc.catalog_mapping[%d] must be a mapping" % i)
        name = m.get("template_name")
        if not isinstance(name, str) or not name:
            raise ReleaseConfigError("ci.yaml: fbc.catalog_mapping[%d].template_name is required" % i)
        check_safe_name("template", name, ReleaseConfigError)
        ttype = m.get("type")
        if ttype not in TEMPLATE_TYPES:
            raise ReleaseConfigError("Unknown template type '%s' in ci.yaml." % ttype)
        cats = m.get("catalog_names", m.get("catalogs_names"))
        cats = _str_list(cats, "ci.yaml: fbc.catalog_mapping[%d].catalog_names" % i)
        for c in cats:
            check_catalog_name(c)
        mappings.append(CatalogMapping(name, ttype, cats))
    return FbcConfig(enabled, strategy, mappings)


def check_catalog_usage(fbc_config):
    """Static check ``check_catalog_usage_ci_config``: a catalog is mapped to at most one template.

    Returns the list of error messages (empty when fine)."""
    users = {}
    for m in fbc_config.catalog_mapping:
        for c in m.catalog_names:
            users.setdefault(c, [])
            if m.template_name not in users[c]:
                users[c].append(m.template_name)
    return ["Operator's 'ci.yaml' contains multiple templates '%s' for the same catalog '%s'." % (
        "[" + ", ".join("'%s'" % t for t in templates) + "]", c)
        for c, templates in users.items() if len(templates) > 1]


# --------------------------------------------------------------------------- render plan

class RenderTask:
    """One ``opm alpha render-template`` invocation writing ``catalogs/<catalog>/<operator>/catalog.yaml``."""

    __slots__ = ("operator", "catalog", "template_name", "template_type", "template_path", "output_path",
                 "migrate_level")

    def __init__(self, operator, catalog, template_name, template_type, template_path, output_path, migrate_level):
        self.operator = operator
        self.catalog = catalog
        self.template_name = template_name
        self.template_type = template_type
        self.template_path = template_path
        self.output_path = output_path
        self.migrate_level = migrate_level

    @property
    def render_key(self):
        """Identical opm commands are run once (the pipeline caches by command)."""
        return (self.template_type, self.template_path, self.migrate_level)

    def opm_args(self):
        args = ["alpha", "render-template", self.template_type, "-o", "yaml", self.template_path]
        if self.migrate_level != MIGRATE_NONE:
            args.extend(["--migrate-level", self.migrate_level])
        return args

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self):
        return "RenderTask(%r)" % (self.to_dict(),)


def render_plan(fbc_config, operator, operator_dir=None, catalogs_dir="catalogs", catalogs=None):
    """Render tasks for every catalog of every mapping (optionally only ``catalogs``), in mapping order.

    ``operator_dir`` defaults to ``operators/<operator>``; template paths are ``<operator_dir>/catalog-templates/
    <template_name>``.
    """
    check_safe_name("operator", operator, ReleaseConfigError)
    operator_dir = operator_dir if operator_dir is not None else os.path.join("operators", operator)
    tasks = []
    for m in fbc_config.catalog_mapping:
        ttype = m.template_type
        for c in m.catalog_names:
            if catalogs is not None and c not in catalogs:
                continue
            tasks.append(RenderTask(operator, c, m.template_name, ttype,
                                    os.path.join(operator_dir, "catalog-templates", m.template_name),
                                    os.path.join(catalogs_dir, c, operator, "catalog.yaml"),
                                    migrate_level_for_catalog(c)))
    return tasks


# --------------------------------------------------------------------------- release-config.yaml

_RC_TOP = ("catalog_templates", "merge")
_RC_ITEM = ("template_name", "channels", "defaultChannel", "replaces", "skips", "skipRange")


def parse_release_config(data):
    """Validate release-config.yaml against operator-pipelines' release-config-schema.json."""
    rc = _doc(data, "release-config.yaml")
    for k in rc:
        if k not in _RC_TOP:
            raise ReleaseConfigError("release-config.yaml: Additional properties are not allowed (%s was unexpected)"
                                     % q(str(k)))
    if "merge" in rc and not isinstance(rc["merge"], bool):
        raise ReleaseConfigError("release-config.yaml: 'merge' must be a boolean")
    items = rc.get("catalog_templates")
    if not isinstance(items, list) or not items:
        raise ReleaseConfigError("release-config.yaml: 'catalog_templates' is a required non-empty list")
    out = []
    for i, it in enumerate(items):
        where = "release-config.yaml: catalog_templates[%d]" % i
        if not isinstance(it, dict):
            raise ReleaseConfigError("%s must be a mapping" % where)
        for k in it:
            if k not in _RC_ITEM:
                raise ReleaseConfigError("%s: Additional properties are not allowed (%s was unexpected)"
                                         % (where, q(str(k))))
        name = it.get("template_name")
        if not isinstance(name, str) or not name:
            raise ReleaseConfigError("%s: 'template_name' is required" % where)
        check_safe_name("template", name, ReleaseConfigError)
        channels = _str_list(it.get("channels"), where + ".channels")
        if not channels or len(set(channels)) != len(channels):
            raise ReleaseConfigError("%s.channels must be a non-empty list of unique names" % where)
        item = {"template_name": name, "channels": channels}
        for k in ("defaultChannel", "replaces", "skipRange"):
            if it.get(k) is not None:
                if not isinstance(it[k], str) or not it[k]:
                    raise ReleaseConfigError("%s.%s must be a non-empty string" % (where, k))
                item[k] = it[k]
        if it.get("skips") is not None:
            skips = _str_list(it["skips"], where + ".skips")
            if len(set(skips)) != len(skips):
                raise ReleaseConfigError("%s.skips must be unique" % where)
            item["skips"] = skips
        out.append(item)
    if len({repr(sorted(x.items())) for x in out}) != len(out):
        raise ReleaseConfigError("release-config.yaml: catalog_templates items must be unique")
    return {"catalog_templates": out, "merge": rc.get("merge")}


_CSV_NAME_VERSION_RE = re.compile(r"\.v(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)\Z")


def _strip_v(version):
    return version[1:] if version[:1] in ("v", "V") and version[1:2].isdigit() else version


def check_release_version(version, csv):
    """Refuse a release ``version`` (the ``operators/<pkg>/<version>`` directory and bundle tag) that disagrees with
    the bundle's CSV: its ``spec.version``, else (no spec.version) the ``.v<semver>`` suffix of its name. A leading
    ``v`` on either side is ignored. Returns the CSV version; raises ReleaseConfigError naming both values."""
    csv = csv if isinstance(csv, dict) else {}
    meta = csv.get("metadata") if isinstance(csv.get("metadata"), dict) else {}
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    csv_version = spec.get("version")
    where = "spec.version"
    if not isinstance(csv_version, str) or not csv_version:
        m = _CSV_NAME_VERSION_RE.search(name)
        if m is None:
            raise ReleaseConfigError("bundle CSV %s has no spec.version to check version %s against"
                                     % (q(excerpt(name)), q(excerpt(version))))
        csv_version, where = m.group(1), "name"
    if _strip_v(version) != _strip_v(csv_version):
        raise ReleaseConfigError("version %s does not match the bundle: its CSV %s has %s %s"
                                 % (q(excerpt(version)), q(excerpt(name)), where,
                                    q(excerpt(csv_version if where == "spec.version" else name))))
    return csv_version


def bundle_pullspec(operator, version, registry=DEFAULT_BUNDLE_REGISTRY):
    """Bundle image of a released operator version: ``<registry>/<operator>:<version>``."""
    check_safe_name("operator", operator, ReleaseConfigError)
    check_safe_name("version", version, ReleaseConfigError)
    return "%s/%s:%s" % (registry.rstrip("/"), operator, version)


def check_bundle_registry(image, allowed=ALLOWED_BUNDLE_REGISTRIES):
    """Static check: catalog bundle images must start with an allowed registry prefix."""
    return any(image.startswith(p) for p in allowed)


def apply_release_config(release_config, fbc_config, templates, operator, bundle_image, csv_name, warnings=None):
    """add_bundle_to_fbc, steps 1-4, on in-memory templates.

    ``warnings``: a list that gets a note for each release-config key a semver template does not use (the
    pipeline drops ``replaces``, ``skips``, ``skipRange`` and ``defaultChannel`` there silently).

    ``templates`` maps template_name -> decoded template document (None/missing = not created yet); it is updated in
    place. Returns ``(changed template names, render tasks of every mapped catalog of the touched templates,
    sorted catalogs to validate)``.
    """
    check_safe_name("operator", operator, ReleaseConfigError)
    rc = release_config if isinstance(release_config, dict) and "catalog_templates" in release_config \
        and all(isinstance(x, dict) for x in release_config.get("catalog_templates") or ()) \
        else parse_release_config(release_config)
    changed = []
    touched = []
    for item in rc["catalog_templates"]:
        name = item["template_name"]
        mapping = fbc_config.mapping_for_template(name)
        channels = item["channels"]
        dc = item.get("defaultChannel")
        if dc is not None and dc not in channels:
            raise ReleaseConfigError("defaultChannel '%s' not found in '%s'. Available channels: %s"
                                     % (dc, name, "[" + ", ".join("'%s'" % c for c in channels) + "]"))
        ttype = mapping.template_type
        current = templates.get(name)
        if ttype == "basic":
            new, did = add_bundle(current, bundle_image, csv_name, channels, replaces=item.get("replaces"),
                                  skips=item.get("skips"), skip_range=item.get("skipRange"), package=operator
                                  if current is None else None, default_channel=dc)
        else:
            for c in channels:
                if c not in SEMVER_CHANNELS:
                    raise ReleaseConfigError("semver channel %s must be one of %s"
                                             % (q(c), ", ".join(SEMVER_CHANNELS)))
            ignored = [k for k in ("replaces", "skips", "skipRange", "defaultChannel") if item.get(k)]
            if ignored and warnings is not None:
                warnings.append("release-config: %s of template %s %s no effect: a semver template derives the upgrade edges "
                                "and the default channel from the versions (the community pipeline ignores them too)"
                                % (", ".join(ignored), name, "has" if len(ignored) == 1 else "have"))
            new, did = add_bundle_semver(current, bundle_image, channels)
        templates[name] = new
        if did and name not in changed:
            changed.append(name)
        if name not in touched:
            touched.append(name)
    tasks = []
    seen = set()
    for m in fbc_config.catalog_mapping:
        if m.template_name not in touched:
            continue
        for t in render_plan(FbcConfig(True, None, [m]), operator):
            if t.catalog not in seen:
                seen.add(t.catalog)
                tasks.append(t)
    return changed, tasks, sorted(seen)


def render_tasks(tasks, templates, renderer, opm_compat=None):
    """Render every task (``opm alpha render-template <type> -o yaml <template> [--migrate-level ...]``).

    ``templates`` maps template_name -> template document (dict) or text; ``renderer(image) -> DeclarativeConfig``
    is the bundle renderer (e.g. a BundleLookup). Identical commands are rendered once. Returns a list of
    ``(task, DeclarativeConfig)`` in task order (configs of identical commands are shared).
    """
    cache = {}
    out = []
    for t in tasks:
        if t.template_name not in templates or templates[t.template_name] is None:
            raise ReleaseConfigError("template %s not found" % q(t.template_name))
        key = (t.template_type, t.template_name, t.migrate_level)
        if key not in cache:
            data = templates[t.template_name]
            if isinstance(data, bytes):
                data = decode_utf8(data, t.template_path, TemplateParseError)
            cache[key] = render_template(data, renderer, template_type=t.template_type,
                                         migrate_level=t.migrate_level, opm_compat=opm_compat)
        out.append((t, cache[key]))
    return out


def load_template_file(path):
    """Read a template file (None when missing)."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return load_first_document(f.read(), source=path)
