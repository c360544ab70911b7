#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: scc_info
short_description: OpenShift SecurityContextConstraints and who may use each
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Reports SecurityContextConstraints (SCCs, C(security.openshift.io/v1)) with every subject that may use each -
    like C(oc adm policy who-can use scc/<name>), computed from the cluster's RBAC - the ServiceAccounts, users and
    groups of the RoleBindings and ClusterRoleBindings whose Role or ClusterRole allows the verb C(use) on the SCC
    (wildcards in verbs, API groups, resources included; C(resourceNames) respected), and of the SCC's own legacy
    C(users) and C(groups) lists.
  - A grant through a RoleBinding lets pods of that namespace use the SCC (RV(sccs[].who_may_use[].scope)); a
    ClusterRoleBinding or the SCC's lists, pods of every namespace.
  - Subjects that stand for every user or every service account (C(system:authenticated),
    C(system:serviceaccounts), C(system:serviceaccounts:<namespace>), ...) are marked RV(sccs[].who_may_use[].broad).
  - Read-only. One LIST of SCCs (or one GET with O(name)) and one LIST of each RBAC kind, cluster-wide.
options:
  name:
    description:
      - Name of the SCC to report. Without it, every SCC.
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: The module never changes anything; check mode runs it the same way.
  diff_mode:
    support: none
  platform:
    platforms: posix
notes:
  - Needs permission to list Roles, ClusterRoles, RoleBindings and ClusterRoleBindings of the whole cluster.
  - Fails with a clear message on a cluster without the SCC API (not OpenShift).
  - Group membership is not expanded (the API server does not list it); a group subject is reported as the group.
seealso:
  - module: kubeforge.operators.scc_access
  - module: kubeforge.operators.scc
"""

EXAMPLES = r"""
- name: Who may run pods as anyuid?
  kubeforge.operators.scc_info:
    name: anyuid
  register: anyuid

- name: Show them
  ansible.builtin.debug:
    msg: "{{ item.kind }} {{ item.namespace ~ '/' if item.namespace else '' }}{{ item.name }} in {{ item.scope }} via {{ item.via }}"
  loop: "{{ anyuid.sccs[0].who_may_use }}"
  loop_control:
    label: "{{ item.name }}"

- name: SCCs everyone may use - an audit finding
  kubeforge.operators.scc_info:
  register: all_sccs

- name: Fail on broad grants of relaxed SCCs
  ansible.builtin.assert:
    that: all_sccs.sccs | rejectattr('name', 'in', ['restricted', 'restricted-v2']) | selectattr('broad') | list | length == 0
"""

RETURN = r"""
sccs:
  description: One record per SCC, by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Name of the SCC.
      type: str
    priority:
      description: Its C(priority), or V(null).
      type: int
    default:
      description: Whether it is one of the SCCs OpenShift ships (never modified by this collection).
      type: bool
    created_by_kubeforge:
      description: Whether M(kubeforge.operators.scc) created it.
      type: bool
    broad:
      description: Whether any subject that may use it stands for every user or service account.
      type: bool
    who_may_use:
      description: The subjects that may use it, by kind, namespace and name.
      type: list
      elements: dict
      contains:
        kind:
          description: V(ServiceAccount), V(User) or V(Group).
          type: str
        name:
          description: The subject's name.
          type: str
        namespace:
          description: The ServiceAccount's namespace; V(null) for users and groups.
          type: str
        scope:
          description: V(cluster) (pods of every namespace), or the namespace whose pods may use it (a RoleBinding).
          type: str
        via:
          description: The grant, C(ClusterRoleBinding/<b> -> ClusterRole/<r>), C(RoleBinding/<ns>/<b> -> Role/<r>)
            (or C(-> ClusterRole/<r>)), V(SCC users) or V(SCC groups).
          type: str
        broad:
          description: Whether the subject stands for every user or service account.
          type: bool
    scc:
      description: The SCC object (without C(managedFields)).
      type: dict
  sample:
    - name: anyuid
      priority: 10
      default: true
      created_by_kubeforge: false
      broad: false
      who_may_use:
        - kind: ServiceAccount
          name: builder
          namespace: ci
          scope: ci
          via: "RoleBinding/ci/system:openshift:scc:anyuid -> ClusterRole/system:openshift:scc:anyuid"
          broad: false
duration:
  description: Seconds the module took.
  returned: always
  type: float
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster.info import execute


def argspec():
    return {"name": {"type": "str"}}


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute)


if __name__ == "__main__":
    main()
