# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module glue shared by the catalog modules (the FBC and OCI ones; the Kubernetes modules use k8s/module.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import OCIError


def run_and_report_errors(module, run_module, yaml_import_error=None):
    """Call ``run_module(module)``, turning the expected errors into ``module.fail_json``.

    ``yaml_import_error`` (``fbc.load.YAML_IMPORT_ERROR``, for modules that need PyYAML) fails first when set.
    Registry errors (:class:`OCIError`) add ``registry``, ``repository`` and ``status`` to the result; FBC,
    ``ValueError`` and ``OSError`` failures report their message only.
    """
    if yaml_import_error:
        module.fail_json(msg=missing_required_lib("PyYAML"), exception=yaml_import_error)
    try:
        run_module(module)
    except OCIError as e:
        module.fail_json(msg=str(e), registry=e.registry, repository=e.repository, status=e.status)
    except (FBCError, ValueError, OSError) as e:
        module.fail_json(msg=str(e))
