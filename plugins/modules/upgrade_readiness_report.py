#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: upgrade_readiness_report
short_description: Write the upgrade-readiness report of one cluster or a fleet
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Takes the results of M(kubeforge.operators.olm_upgrade_plan), one per cluster, and writes the report a person
    reads, C(<dest>/report.md) (a Markdown table, one row per operator per cluster, blockers first, then the operators
    that need an action), and the same as JSON, C(<dest>/report.json).
  - A cluster whose plan failed (or was skipped) is listed with the error, and makes the fleet's RV(verdict)
    V(unknown).
  - The files hold no timestamp, so a run over an unchanged fleet changes nothing. They are written through the
    collection's file-output service (staged, compared, fsync, atomic rename).
  - Runs on the controller and needs no cluster access; C(playbooks/upgrade_readiness.yml) plans every cluster and
    then calls it once.
options:
  plans:
    description:
      - One item per cluster, in the order the report lists them.
    type: list
    elements: dict
    required: true
    suboptions:
      cluster:
        description: The cluster's name in the report (the inventory host, C(inventory_hostname)).
        type: str
        required: true
      plan:
        description:
          - The registered result of M(kubeforge.operators.olm_upgrade_plan) for this cluster - also a failed one
            (with C(ignore_errors) or C(failed_when)).
        type: dict
        required: true
  target:
    description:
      - The target OpenShift version the headline names.
      - Taken from the plans' RV(kubeforge.operators.olm_upgrade_plan#module:target) when not given; plans for
        different targets are then refused.
    type: str
  dest:
    description: The directory of C(report.md) and C(report.json), created when missing.
    type: path
    required: true
attributes:
  check_mode:
    support: full
    details: Nothing is written; C(changed) says whether a file would change.
  diff_mode:
    support: full
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubeforge.operators.olm_upgrade_plan
"""

EXAMPLES = r"""
- name: Plan this cluster's operators for OpenShift 4.21
  kubeforge.operators.olm_upgrade_plan:
    openshift_version: "4.21"
  register: plan

- name: Write its report
  kubeforge.operators.upgrade_readiness_report:
    plans:
      - cluster: production
        plan: "{{ plan }}"
    dest: "{{ playbook_dir }}/readiness-report"
  register: report

- name: Show it
  ansible.builtin.debug:
    msg: "{{ report.report_markdown.splitlines() }}"

# A fleet: each cluster's play keeps {cluster: inventory_hostname, plan: plan} as the fact readiness_item, then once:
- name: Write the fleet's report
  kubeforge.operators.upgrade_readiness_report:
    plans: "{{ ansible_play_hosts_all | map('extract', hostvars, 'readiness_item') }}"
    dest: "{{ playbook_dir }}/readiness-report"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
verdict:
  description:
    - The fleet's verdict, the worst of the clusters' - V(blocked) (a blocker has no path or no catalog),
      V(needs_action) (every blocker has a path), V(ready), or V(unknown) when a cluster has no plan.
  returned: always
  type: str
  sample: needs_action
report:
  description:
    - The report, as written to C(report.json) - C(target), C(verdict), C(counts) (clusters per verdict),
      C(blocking_operators), C(clusters) (C(cluster), C(verdict), C(blockers), C(operators), C(error); worst first) and
      C(operators) (one row per operator per cluster, blockers first - C(cluster), C(generation), C(namespace),
      C(name), C(package), C(channel), C(installed_version), C(source), C(max_openshift_version), C(blocks_upgrade),
      C(block_reason), C(target_version), C(path), C(deprecations), C(action)).
  returned: always
  type: dict
  sample:
    target: "4.21"
    verdict: needs_action
    counts: {needs_action: 1}
    blocking_operators: 1
    clusters: [{cluster: production, verdict: needs_action, blockers: [kube-demo/kube-demo.v0.0.1], operators: 1, error: null}]
    operators: [{cluster: production, namespace: kube-demo, name: kube-demo.v0.0.1, blocks_upgrade: true}]
report_markdown:
  description: The report as written to C(report.md).
  returned: always
  type: str
paths:
  description: The files of the report.
  returned: always
  type: dict
  contains:
    markdown:
      description: The Markdown report.
      type: str
      sample: readiness-report/report.md
    json:
      description: The JSON report.
      type: str
      sample: readiness-report/report.json
"""

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import readiness_report
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

REPORT_MD = "report.md"
REPORT_JSON = "report.json"


def argspec():
    return dict(
        plans=dict(
            type="list",
            elements="dict",
            required=True,
            options=dict(cluster=dict(type="str", required=True), plan=dict(type="dict", required=True)),
        ),
        target=dict(type="str"),
        dest=dict(type="path", required=True),
    )


def execute(module):
    params = module.params
    doc = readiness_report.document(params["plans"], target=params["target"])
    text = readiness_report.markdown(doc)
    directory = os.path.abspath(params["dest"])
    paths = {"markdown": os.path.join(directory, REPORT_MD), "json": os.path.join(directory, REPORT_JSON)}
    with FileOutput(check_mode=module.check_mode, diff=module._diff) as output:
        output.write(paths["markdown"], text)
        output.write(paths["json"], json.dumps(doc, indent=2, sort_keys=True) + "\n")
        output.commit()
    result = {"changed": output.changed, "verdict": doc["verdict"], "report": doc, "report_markdown": text, "paths": paths}
    if module._diff:
        result["diff"] = output.diffs
    return result


def main():
    module = MaskingAnsibleModule(argument_spec=argspec(), supports_check_mode=True)
    run_module(module, execute)


if __name__ == "__main__":
    main()
