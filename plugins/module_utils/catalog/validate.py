# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""catalog_validate: a catalog checked the way opm validate does, plus the community catalog's own rules when asked."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.release import catalog_version_of, community_checks
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import load_and_validate
from ansible_collections.kubeforge.operators.plugins.module_utils.options import OptionError


class CatalogInvalid(FBCError):
    """The catalog has problems and fail_on_invalid is set; the result fields go with the failure."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


OCP_VERSION = re.compile(r"v[0-9]+\.[0-9]+\Z")


def execute(module):
    params = module.params
    path = params["path"]
    if params["ocp_version"] is not None and not OCP_VERSION.match(params["ocp_version"]):
        raise OptionError(f"ocp_version must look like vX.Y, for example 'v4.20' (got {params['ocp_version']!r}; quote it in YAML)")
    if not os.path.exists(path):
        raise FBCError("path %s does not exist" % path)
    cfg, res = load_and_validate(path)
    result = dict(changed=False, valid=res.valid, errors=list(res.errors), opm_error=res.opm_error,
                  packages=res.packages, bundles=res.bundles)
    if params["community_checks"]:
        # nothing to check when the catalog could not even be loaded
        ocp = params["ocp_version"] or catalog_version_of(path)
        result["community_errors"] = community_checks(cfg, ocp, params["allowed_registries"]) if cfg else []
        result["errors"].extend(result["community_errors"])
        result["valid"] = not result["errors"]
    if not result["valid"] and params["fail_on_invalid"]:
        errors = result["errors"]
        raise CatalogInvalid("catalog %s is invalid (%d problem%s): %s" % (
            path, len(errors), "" if len(errors) == 1 else "s", res.opm_error or "; ".join(errors)), result)
    return result
