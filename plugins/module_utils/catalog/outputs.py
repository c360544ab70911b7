# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a render writes: per-OpenShift-version fan-out (and its migrate levels), the output layout (one file,
or opm's WriteFS per-package layout) and the per-render summaries the modules return."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import filter_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    check_migrate_level,
    migrate,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import (
    check_catalog_name,
    migrate_level_for_catalog,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import (
    fs_layout,
    write_file,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    PublishError,
    ReleaseConfigError,
    WriteError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import render_template

OPM_COMPAT_CURRENT = "current"


def plan_fanout(ocp_versions, migrate_level=None, migrate_levels=None):
    """[(ocp_version, migrate_level)] for each OpenShift catalog version (``vX.Y``), in the given order.

    Per version: ``migrate_levels[version]`` if set, else ``migrate_level`` if set, else the community pipeline rule
    (``bundle-object-to-csv-metadata`` for v4.17 and later, ``none`` below).
    """
    migrate_levels = dict(migrate_levels or {})
    seen = []
    for v in ocp_versions:
        if not isinstance(v, str):
            raise PublishError("ocp_versions entries must be strings like 'v4.17' (got %r)" % (v,))
        try:
            check_catalog_name(v)
        except ReleaseConfigError as e:
            raise PublishError("%s (quote OpenShift versions in YAML, for example 'v4.20')" % e) from None
        if v not in seen:
            seen.append(v)
    for k in migrate_levels:
        if k not in seen:
            raise PublishError("migrate_levels key %s is not in ocp_versions" % k)
    out = []
    for v in seen:
        if v in migrate_levels:
            level = check_migrate_level(migrate_levels[v])
        elif migrate_level is not None:
            level = check_migrate_level(migrate_level)
        else:
            level = migrate_level_for_catalog(v)
        out.append((v, level))
    return out


def opm_compat_arg(value):
    return None if value in (None, "", OPM_COMPAT_CURRENT) else value


def summarize(cfg):
    """(sorted package names, sorted bundle names) of a DeclarativeConfig."""
    pkgs = cfg.package_names()
    bundles = sorted({b.get("name") or "" for b in cfg.bundles} - {""}, key=go_sort_key)
    return pkgs, bundles


def write_outputs(files, output, output_format="yaml"):
    """Stage every planned ``(path, config)`` in ``output`` (a files.FileOutput) with declcfg.write.write_file, the
    writer declcfg.write.write_fs uses, so opm's byte-for-byte parity tests cover what the modules write."""
    for path, cfg in files:
        write_file(cfg, path, output_format, output=output)


def dest_is_directory(dest, fanout):
    return bool(fanout) or dest.endswith(os.sep) or dest.endswith("/") or os.path.isdir(dest)


def render_outputs(template_data, renderer, dest, output_format="yaml", migrate_level=None, opm_compat=None,
                   fanout=None):
    """Render a template and plan its output files. Returns ``(files, renders)``.

    ``files``: [(path, DeclarativeConfig)], written by :func:`write_outputs`. ``renders``: one dict per rendered catalog (ocp_version, migrate_level, files,
    packages, bundles). With ``fanout`` ([(ocp, level)]) the layout is <dest>/<ocp>/<pkg>/catalog.<ext>; else
    ``dest`` is one file, or a directory (existing, or ending with a slash) getting <dest>/<pkg>/catalog.<ext>.
    """
    def rendered(level):
        return render_template(template_data, renderer, migrate_level=level, opm_compat=opm_compat)

    return _plan_outputs(rendered, dest, output_format, migrate_level, fanout)


def catalog_outputs(source, dest, output_format="yaml", migrate_level=None, fanout=None, select=None, warnings=None):
    """Like render_outputs for an existing catalog (directory or file): opm render SOURCE [--migrate-level]; with
    ``select`` only the operators oc-mirror's selection keeps (``fbc.action.filter``; its warnings appended to
    ``warnings``)."""
    def rendered(level):
        cfg = core_load.load(source)
        if select is not None:
            cfg, notes = filter_catalog(cfg, select)
            if warnings is not None:
                warnings.extend(notes)
        return migrate(cfg, level)

    return _plan_outputs(rendered, dest, output_format, migrate_level, fanout)


def _plan_outputs(render, dest, output_format, migrate_level, fanout):
    if output_format not in ("yaml", "json"):
        raise WriteError("invalid output format %s" % json.dumps(output_format))
    cache = {}

    def rendered(level):
        if level not in cache:
            cache[level] = render(level)
        return cache[level]

    files = []
    renders = []
    if fanout:
        for ocp, level in fanout:
            cfg = rendered(level)
            these = fs_layout(cfg, os.path.join(dest, ocp), output_format)
            pkgs, bundles = summarize(cfg)
            renders.append({"ocp_version": ocp, "migrate_level": level, "files": [f[0] for f in these],
                            "packages": pkgs, "bundles": bundles})
            files.extend(these)
    else:
        level = check_migrate_level(migrate_level)
        cfg = rendered(level)
        if dest_is_directory(dest, fanout):
            these = fs_layout(cfg, dest, output_format)
        else:
            these = [(dest, cfg)]
        pkgs, bundles = summarize(cfg)
        renders.append({"ocp_version": None, "migrate_level": level, "files": [f[0] for f in these],
                        "packages": pkgs, "bundles": bundles})
        files.extend(these)
    return files, renders
