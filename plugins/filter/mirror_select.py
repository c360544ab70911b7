# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror_select filter (documentation in mirror_select.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.mirror_select import mirror_select


def _mirror_select(results, sources=None, cluster_extensions=True):
    try:
        return mirror_select(results, sources=sources, cluster_extensions=cluster_extensions)
    except InvalidInputError as exc:
        raise AnsibleFilterError(f"mirror_select: {exc}") from None


class FilterModule:
    def filters(self):
        return {"mirror_select": _mirror_select}
