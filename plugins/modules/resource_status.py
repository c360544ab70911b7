#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: resource_status
short_description: Set status conditions and fields of a custom resource, with Events on transitions
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Writes the C(status) subresource of one object, typically the custom resource an Ansible-based operator
    reconciles (pass the whole object ansible-operator gives the role, C(_<group>_<kind>)), replacing
    C(operator_sdk.util.k8s_status), which is unmaintained and not part of the C(ansible) package.
  - O(conditions) are merged by C(type) the way C(meta.SetStatusCondition) does it - C(lastTransitionTime) changes
    only when a condition's C(status) changes, conditions not named are kept - and are validated like
    C(metav1.Condition) (C(reason) in CamelCase, C(status) V(True), V(False) or V(Unknown)). Each written condition
    gets C(observedGeneration), and so does the status itself.
  - O(status) sets other top-level status fields, key by key. Fields are never removed.
  - Nothing is written when the status would not change, so a no-op reconcile costs one read. The patch is guarded
    by the object's C(resourceVersion) and retried on conflict.
  - With O(events=true), every condition whose C(status) or C(reason) changed is recorded as an Event on the object
    - type C(Warning) for C(Failed), C(Degraded) or C(Stalled) becoming V(True), C(Normal) otherwise.
options:
  resource:
    description:
      - The object whose status to write - a whole object (C(apiVersion), C(kind), C(metadata.name),
        C(metadata.namespace), C(metadata.generation)), or a mapping with C(api_version), C(kind), C(name),
        C(namespace) and optionally C(generation).
    type: dict
    required: true
  conditions:
    description:
      - Conditions to set, merged into C(status.conditions) by C(type). Each is a mapping with C(type) (such as
        V(Ready), V(Progressing) or V(Failed)), C(status) (V(True), V(False) or V(Unknown); a boolean is accepted),
        C(reason) (one CamelCase word - letters, digits, C(_), C(,), C(:)) and optionally C(message) (cut at 32768
        characters).
      - Checked before anything is sent, like the API server checks C(metav1.Condition).
    type: list
    elements: dict
    default: []
  status:
    description:
      - Other top-level status fields to set (each replaces the field of that name, a mapping with the keys it
        leaves out removed). Fields not named are kept; a null value is refused (the module never removes a field).
    type: dict
    default: {}
  observed_generation:
    description:
      - The generation the status describes. Defaults to C(metadata.generation) of O(resource) - the generation the
        reconcile started from, so a spec changed meanwhile is not reported as observed.
    type: int
  events:
    description: Record an Event on the object for every condition transition.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: The status patch is sent as a server-side dry run; no Events are recorded.
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - The object's CRD must enable the status subresource. The caller needs C(get) on the resource and C(patch) on its
    C(status) subresource, and C(create) on C(events) for O(events=true).
seealso:
  - module: kubeforge.operators.requeue_after
  - name: API conventions - typical status properties
    description: Kubernetes' conventions for conditions.
    link: https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties
"""

EXAMPLES = r"""
- name: Report success on the OperatorInstall being reconciled (ansible-operator passes the whole object)
  kubeforge.operators.resource_status:
    resource: "{{ _operators_kubeforge_io_operatorinstall }}"
    status:
      installedCSV: kube-demo.v0.0.2
    conditions:
      - type: Ready
        status: "True"
        reason: Installed
        message: kube-demo.v0.0.2 is Succeeded
      - type: Failed
        status: "False"
        reason: Installed

- name: Mark a resource named by its keys as failing
  kubeforge.operators.resource_status:
    resource:
      api_version: operators.kubeforge.io/v1alpha1
      kind: CanaryRollout
      name: node-agent
      namespace: kube-system
    conditions:
      - type: Failed
        status: "True"
        reason: Halted
        message: the canary pod crash-loops
"""

RETURN = r"""
status:
  description: The object's status after the run (in check mode, as the dry run returned it).
  returned: always
  type: dict
  sample: {"observedGeneration": 2, "conditions": [{"type": "Ready", "status": "True", "reason": "Installed",
           "message": "", "lastTransitionTime": "2026-11-24T01:02:03Z", "observedGeneration": 2}]}
transitions:
  description: Types of the conditions whose status or reason changed (or that are new).
  returned: always
  type: list
  elements: str
  sample: ["Ready"]
events:
  description: The Events recorded (C(type), C(reason), C(message)).
  returned: always
  type: list
  elements: dict
diff:
  description: The status before and after.
  returned: when changed and diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.reconcile_cluster.status import execute


def argspec():
    return {
        "resource": {"type": "dict", "required": True},
        # Keys checked by reconcile.conditions.validate ("message" cannot be an Ansible suboption name).
        "conditions": {"type": "list", "elements": "dict", "default": []},
        "status": {"type": "dict", "default": {}},
        "observed_generation": {"type": "int"},
        "events": {"type": "bool", "default": True},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute)


if __name__ == "__main__":
    main()
