#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: requeue_after
short_description: Ask ansible-operator to reconcile the custom resource again after a period
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Returns RV(period), which ansible-operator reads from the task's result to schedule the next reconcile of the
    resource (C(reconcile.Result.RequeueAfter)). It does nothing else and needs no cluster access.
  - ansible-operator recognises the task by the module name it was B(written) with - only C(requeue_after) or
    C(operator_sdk.util.requeue_after), not C(kubeforge.operators.requeue_after). Call it by its short name, with
    C(kubeforge.operators) in the role's or play's C(collections) keyword (see the examples).
  - ansible-operator stops reading the run's events at this task - the tasks after it still run, but their failures
    no longer reach the resource. Make it the last task of the reconcile.
options:
  time:
    description:
      - The period, a Go duration as C(time.ParseDuration) reads it, such as V(30s), V(1m30s) or V(2h). Longer than
        zero and at most a day.
    type: str
    required: true
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
seealso:
  - module: kubeforge.operators.resource_status
  - name: ansible-operator's reconcile loop
    description: Where the period is read (C(internal/ansible/controller/reconcile.go)).
    link: https://github.com/operator-framework/ansible-operator-plugins/blob/main/internal/ansible/controller/reconcile.go
"""

EXAMPLES = r"""
# roles/<role>/meta/main.yml:  collections: [kubeforge.operators]
- name: Reconcile again in 10 seconds while the rollout is in progress
  requeue_after:  # noqa: fqcn[action] ansible-operator recognises only the short name
    time: 10s
  when: rollout.phase in ['canary', 'fast']
"""

RETURN = r"""
period:
  description: The period, as given; ansible-operator parses it with C(time.ParseDuration).
  returned: always
  type: str
  sample: 10s
seconds:
  description: The period in seconds.
  returned: always
  type: float
  sample: 10.0
"""


from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile.requeue import parse
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module


def execute(module):
    period = module.params["time"].strip()
    return {"changed": False, "period": period, "seconds": parse(period)}


def main():
    module = MaskingAnsibleModule(argument_spec={"time": {"type": "str", "required": True}}, supports_check_mode=True)
    run_module(module, execute)


if __name__ == "__main__":
    main()
