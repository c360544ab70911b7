#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: pod_security
short_description: Set a namespace's Pod Security Admission levels, see which running pods they would reject, undo it
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Sets the C(pod-security.kubernetes.io/<mode>) and C(<mode>-version) labels of a namespace for the modes
    C(enforce), C(audit) and C(warn), and on OpenShift the C(security.openshift.io/scc.podSecurityLabelSync) label
    (without V(false) there, OpenShift's label syncer owns the Pod Security labels and may overwrite them).
  - Reports the running pods that the new C(enforce) level would reject, as the API server's Pod Security admission
    lists them when a namespace's level changes (its HTTP warnings). In check mode this comes from a server-side
    dry run, so nothing changes. With O(fail_on_violations=true) the module refuses such a change.
  - The labels the namespace had before the module first changed them are kept in the annotation
    C(operators.kubeforge.io/pod-security-previous); O(state=absent) restores exactly those and removes the
    annotation.
  - Labels the options leave unset are not touched.
options:
  namespace:
    description: The namespace.
    type: str
    required: true
  state:
    description:
      - V(present) sets the labels given (at least one level, version or O(label_sync) is required); V(absent)
        restores the labels recorded before the first change, and refuses the levels, versions, O(label_sync) and
        O(fail_on_violations) (they would have no effect).
    type: str
    choices: [present, absent]
    default: present
  enforce:
    description: Level of the C(enforce) mode (pods that violate it are rejected).
    type: str
    choices: [privileged, baseline, restricted]
  enforce_version:
    description: Policy version of C(enforce), V(latest) or V(v1.<minor>).
    type: str
  audit:
    description: Level of the C(audit) mode (violations are recorded in the audit log).
    type: str
    choices: [privileged, baseline, restricted]
  audit_version:
    description: Policy version of C(audit), V(latest) or V(v1.<minor>).
    type: str
  warn:
    description: Level of the C(warn) mode (violations are returned to clients as warnings).
    type: str
    choices: [privileged, baseline, restricted]
  warn_version:
    description: Policy version of C(warn), V(latest) or V(v1.<minor>).
    type: str
  label_sync:
    description:
      - Sets C(security.openshift.io/scc.podSecurityLabelSync) to V(true) or V(false). On OpenShift, V(false) keeps
        the label syncer from overwriting the labels set here. Unset leaves the label as it is.
    type: bool
  fail_on_violations:
    description:
      - Refuse a change that running pods violate (checked with a server-side dry run first); the labels stay as
        they were and the pods are returned in RV(violations). Check mode refuses it the same way.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: The label change is sent as a server-side dry run, which also returns the pods it would reject.
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - Pod Security admission judges pods, not service accounts, so a relaxed level applies to every workload of the
    namespace. On OpenShift, grant an SCC to the service account instead where possible.
seealso:
  - name: Pod Security Admission
    description: Kubernetes documentation of the labels and levels.
    link: https://kubernetes.io/docs/concepts/security/pod-security-admission/
"""

EXAMPLES = r"""
- name: Enforce baseline, warn and audit at restricted, and keep OpenShift's syncer away
  kubeforge.operators.pod_security:
    namespace: kube-demo
    enforce: baseline
    enforce_version: latest
    warn: restricted
    audit: restricted
    label_sync: false

- name: Tighten to restricted only if nothing running would be rejected
  kubeforge.operators.pod_security:
    namespace: kube-demo
    enforce: restricted
    fail_on_violations: true

- name: Put the labels back as they were
  kubeforge.operators.pod_security:
    namespace: kube-demo
    state: absent
"""

RETURN = r"""
namespace:
  description: The namespace.
  returned: always
  type: str
labels:
  description: The namespace's Pod Security labels (and the OpenShift sync label) after the run.
  returned: always
  type: dict
  sample: {"pod-security.kubernetes.io/enforce": "baseline"}
violations:
  description:
    - Running pods the new C(enforce) level would reject, as the API server named them (C(pod) or
      C(pod (and N other pods))), with the reasons.
  returned: always
  type: dict
  sample: {"priv": "privileged (container \"c\" must not set securityContext.privileged=true)"}
messages:
  description: Other Pod Security warnings of the API server for this change.
  returned: always
  type: list
  elements: str
diff:
  description: The Pod Security labels before and after.
  returned: when changed and diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster.pod_security import execute

LEVELS = ["privileged", "baseline", "restricted"]


UNUSED = (
    Unused(
        ("enforce", "enforce_version", "audit", "audit_version", "warn", "warn_version", "label_sync", "fail_on_violations"),
        lambda p: p["state"] == "present",
        "with state=absent (it restores the labels recorded before the first change)",
    ),
)


def argspec():
    return {
        "namespace": {"type": "str", "required": True},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "enforce": {"type": "str", "choices": LEVELS},
        "enforce_version": {"type": "str"},
        "audit": {"type": "str", "choices": LEVELS},
        "audit_version": {"type": "str"},
        "warn": {"type": "str", "choices": LEVELS},
        "warn_version": {"type": "str"},
        "label_sync": {"type": "bool"},
        "fail_on_violations": {"type": "bool", "default": False},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
