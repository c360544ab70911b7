#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_graph
short_description: Upgrade graph of a file-based catalog package as mermaid, and upgrade paths
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Returns the mermaid upgrade graph of a package of a file-based catalog, byte for byte what
    C(opm alpha render-graph -p <package> [--minimum-edge <bundle>]) prints.
  - Given O(from_version), also returns the shortest upgrade path from that version (or bundle name) to the head
    of the channel, following C(replaces), C(skips) and C(skipRange) like OLM.
  - Read-only. Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  path:
    description:
      - FBC directory or file.
    type: path
    required: true
    version_added: 0.1.0
  package:
    description:
      - Package to graph.
    type: str
    required: true
    version_added: 0.1.0
  channel:
    description:
      - Channel for RV(upgrade_path) and RV(head); the package's default channel when not set.
      - When set, RV(mermaid) only shows this channel (opm draws every channel of the package).
    type: str
    version_added: 0.1.0
  min_edge:
    description:
      - Bundle name to start the graph from (C(--minimum-edge)); older bundles and edges from them are omitted.
    type: str
    version_added: 0.1.0
  draw_v0_semantics:
    description:
      - Decorate the graph with OLM v0 semantics (skipped bundles, deprecations), C(--draw-v0-semantics).
        Defaults to V(false) like C(opm alpha render-graph).
    type: bool
    default: false
    version_added: 0.1.0
  from_version:
    description:
      - Installed version (for example V(0.5.0)) or bundle name to compute RV(upgrade_path) from. A version that
        is not in the channel starts from the bundles whose C(skipRange) covers it.
    type: str
    version_added: 0.1.0
seealso:
  - module: kubeforge.operators.catalog_validate
  - name: opm alpha render-graph
    description: The upstream command whose output RV(mermaid) reproduces.
    link: https://github.com/operator-framework/operator-registry
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Mermaid graph of kube-green
  kubeforge.operators.catalog_graph:
    path: catalogs/v4.20
    package: kube-green
  register: graph

- name: Write it to a markdown file
  ansible.builtin.copy:
    dest: docs/kube-green-graph.md
    content: "```mermaid\n{{ graph.mermaid }}```\n"
    mode: "0644"

- name: How does a 0.5.0 install reach the head of alpha?
  kubeforge.operators.catalog_graph:
    path: catalogs/v4.20/kube-green
    package: kube-green
    channel: alpha
    from_version: 0.5.0
  register: path

- name: Show the path
  ansible.builtin.debug:
    msg: "{{ path.upgrade_path | join(' -> ') }}"
"""

RETURN = r"""
mermaid:
  description: The mermaid graph text.
  returned: always
  type: str
  sample: "graph LR\n  %% package \"kube-green\"\n  subgraph \"kube-green\"\n ..."
channel:
  description: The channel used for RV(head) and RV(upgrade_path).
  returned: always
  type: str
  sample: alpha
head:
  description: The head bundle of RV(channel).
  returned: always
  type: str
  sample: kube-green.v0.7.1
channels:
  description: Every channel of the package with its head and bundle names.
  returned: always
  type: dict
  sample: {alpha: {head: kube-green.v0.7.1, bundles: [kube-green.v0.3.0, kube-green.v0.7.1]}}
upgrade_path:
  description: Bundle names from O(from_version) to the channel head, both included (the version string comes
    first when it is not a bundle of the channel); empty when O(from_version) is the head.
  returned: when O(from_version) is set
  type: list
  elements: str
  sample: [kube-green.v0.5.0, kube-green.v0.5.1, kube-green.v0.5.2, kube-green.v0.6.0]
warnings:
  description: Warnings opm prints to stderr (for example unparsable C(skipRange) values), issued as Ansible
    warnings.
  returned: when there are any
  type: list
  elements: str
  sample: []
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.graph import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module


def argspec():
    return dict(
        path=dict(type="path", required=True),
        package=dict(type="str", required=True),
        channel=dict(type="str"),
        min_edge=dict(type="str"),
        draw_v0_semantics=dict(type="bool", default=False),
        from_version=dict(type="str"),
    )


def main():
    module = MaskingAnsibleModule(argument_spec=argspec(), supports_check_mode=True)
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)])


if __name__ == "__main__":
    main()
