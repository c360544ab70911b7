# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The withdrawn_grants filter (documentation in withdrawn_grants.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.scc.access import withdrawn_grants


class FilterModule:
    def filters(self):
        return {"withdrawn_grants": withdrawn_grants}
