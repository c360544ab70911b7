# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""catalog_render: a catalog (from a template, a directory or an image) rendered to files, one per OpenShift version
when asked, through the one file-output service."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.validation import check_type_path

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.lookup import build_lookup, cleanup_lookup, pulled_catalog, puller_factory
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.outputs import (
    catalog_outputs,
    dest_is_directory,
    opm_compat_arg,
    plan_fanout,
    render_outputs,
    write_outputs,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import check_migrate_level
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_catalog import render_catalog_file
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError, decode_utf8
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import SCHEMA_BASIC, detect_template_schema
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput, read_bytes


def execute(module):
    if not module.params["source_image"]:
        return render(module, module.params)
    with pulled_catalog(module.params) as (path, image):
        result = render(module, dict(module.params, source=path))
    result["source_image"] = image
    return result


def render(module, params):
    if params["migrate_levels"] and not params["ocp_versions"]:
        raise PublishError("migrate_levels requires ocp_versions")
    fanout = None
    if params["ocp_versions"]:
        fanout = plan_fanout(params["ocp_versions"], params["migrate_level"], params["migrate_levels"])
    with FileOutput(check_mode=module.check_mode, diff=module._diff) as output:
        if params["source"]:
            if not os.path.exists(params["source"]):
                raise PublishError("source %s not found" % params["source"])
            if not fanout and not dest_is_directory(params["dest"], fanout) \
                    and check_migrate_level(params["migrate_level"]) == "none" and params["select"] is None:
                result = render_source_to_file(params, output)
            else:
                warnings = []
                files, renders = catalog_outputs(params["source"], params["dest"], output_format=params["format"],
                                                 migrate_level=params["migrate_level"], fanout=fanout, select=params["select"],
                                                 warnings=warnings)
                result = stage_files(params, output, files, renders, pulled=[])
                result["warnings"] = list(dict.fromkeys(warnings))
        else:
            template = read_bytes(params["template"])
            if template is None:
                raise PublishError("template %s not found" % params["template"])
            template = decode_utf8(template, params["template"])
            if params["opm_compat"] != "current" and detect_template_schema(template) == SCHEMA_BASIC:
                raise PublishError(f"opm_compat={params['opm_compat']} only changes semver templates; {params['template']} is a basic template")
            # the values are paths: expand them like type="path" options (the dict itself cannot declare a value type)
            bundle_images = dict((str(k), check_type_path(v)) for k, v in params["bundle_images"].items())
            lookup, state = build_lookup(params["bundle_lookup"], bundle_images=bundle_images,
                                         puller_factory=puller_factory(params))
            try:
                files, renders = render_outputs(template, lookup, params["dest"], output_format=params["format"],
                                                migrate_level=params["migrate_level"],
                                                opm_compat=opm_compat_arg(params["opm_compat"]), fanout=fanout)
            finally:
                cleanup_lookup(state)
            result = stage_files(params, output, files, renders, pulled=list(state["pulled"]))
        output.commit()
    result.update(changed=output.changed, changed_files=list(output.changed_paths))
    if module._diff:
        result["diff"] = output.diffs
    return result


def stage_files(params, output, files, renders, pulled):
    write_outputs(files, output, params["format"])
    packages = sorted(set(p for r in renders for p in r["packages"]))
    bundles = sorted(set(b for r in renders for b in r["bundles"]))
    return dict(dest=params["dest"], files=[f[0] for f in files], packages=packages, bundles=bundles,
                renders=renders, pulled=pulled)


def render_source_to_file(params, output):
    """One output file from an existing catalog, streamed into the staged file (file by file on every CPU for big
    trees, so the output is never held in memory)."""
    dest = params["dest"]
    _changed, packages, bundles = render_catalog_file(params["source"], dest, output, params["format"])
    render = {"ocp_version": None, "migrate_level": "none", "files": [dest], "packages": packages,
              "bundles": bundles}
    return dict(dest=dest, files=[dest], packages=packages, bundles=bundles, renders=[render], pulled=[])
