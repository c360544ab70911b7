# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""catalog_diff: two catalogs (directories, or images pulled for the run) compared package by package."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.lookup import pulled_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.diff import diff_catalogs
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError


def execute(module):
    params = module.params
    result = dict(changed=False)
    with contextlib.ExitStack() as stack:
        paths = {}
        for side in ("old", "new"):
            if params[side] is not None:
                if not os.path.exists(params[side]):
                    raise FBCError("%s catalog %s does not exist" % (side, params[side]))
                paths[side] = params[side]
            else:
                paths[side], result[side + "_image"] = stack.enter_context(pulled_catalog(dict(params, source_image=params[side + "_image"])))
        result.update(diff_catalogs(paths["old"], paths["new"]))
    return result
