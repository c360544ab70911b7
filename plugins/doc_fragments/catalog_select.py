# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

# The operator selection of catalog_render and catalog_mirror. Its argument spec is
# plugins/module_utils/catalog/args.py: select_argspec(); keep both in sync.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  select:
    description:
      - Keep only some operators of the catalog, with oc-mirror v2's selection rules (an ImageSetConfiguration's
        C(mirror.operators[]) entry) - the result is validated like C(opm validate).
      - Without O(select.packages), the head of every channel of every package (O(select.full=true) keeps the
        catalog whole). A package by name keeps the head of every one of its channels.
      - A version range keeps the part of a channel's C(replaces) chain that holds every bundle in the range (the
        in-range C(skips) of its entries too), so each kept version can upgrade to the newest kept one; C(skipRange)
        is not followed, and kept entries are copied unchanged (their C(replaces) may name a bundle that is gone, as
        OLM and opm accept). Bundles of no kept entry, and deprecations of what is gone, are left out.
      - Stricter than oc-mirror v2 - a package or channel the catalog does not have, and a listed channel a range
        leaves empty, are errors (oc-mirror ignores them).
    type: dict
    version_added: 0.1.0
    suboptions:
      full:
        description: With O(select.packages), every entry of their (listed) channels; without, the catalog whole.
        type: bool
        default: false
      packages:
        description: The packages to keep (C(packages[]) of oc-mirror).
        type: list
        elements: dict
        default: []
        suboptions:
          name:
            description: The package.
            type: str
            required: true
          default_channel:
            description: The default channel when the catalog's default is not among O(select.packages[].channels).
            type: str
          min_version:
            description:
              - Lowest version to keep (inclusive) in every kept channel of the package. A range without a prerelease
                part matches no prerelease version; build metadata is ignored. Not together with channel ranges.
              - Equal to O(select.packages[].max_version), exactly that one bundle.
            type: str
          max_version:
            description: Highest version to keep (inclusive), as O(select.packages[].min_version).
            type: str
          installed_version:
            description:
              - The version a cluster runs (RV(kubeforge.operators.olm_operator_info#module:operator.installed_version)) - every
                channel that has it also keeps the path from it to the newest kept entry, so the cluster can upgrade
                from the mirror. oc-mirror has no such option.
            type: str
          channels:
            description: The channels to keep (all when empty); each its head, or the entries of its version range.
            type: list
            elements: dict
            default: []
            suboptions:
              name:
                description: The channel.
                type: str
                required: true
              min_version:
                description: Lowest version to keep in this channel (inclusive).
                type: str
              max_version:
                description: Highest version to keep in this channel (inclusive).
                type: str
"""
