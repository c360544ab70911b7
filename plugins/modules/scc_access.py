#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: scc_access
short_description: Grant or revoke the use of an OpenShift SCC to service accounts, users or groups, least privilege first
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Grants the C(use) of a SecurityContextConstraints (SCC) the way C(oc adm policy add-scc-to-user/-group) does in
    OpenShift 4, through RBAC - the ClusterRole C(system:openshift:scc:<scc>) (created when missing) and a
    RoleBinding of the same name in the namespace, or a ClusterRoleBinding only with O(cluster_wide=true).
  - O(state=absent) removes only the named subjects; the binding goes when it is empty, as with oc. An SCC that no
    longer exists only has its binding cleaned up (with a warning). Optionally the
    subjects are also taken out of the SCC's legacy C(users)/C(groups) lists, with a guarded patch that fails
    rather than overwrite a concurrent change. SCC objects are never changed otherwise.
  - Refuses broad subjects (C(system:authenticated), C(system:unauthenticated), C(system:serviceaccounts),
    C(system:serviceaccounts:<namespace>), C(system:anonymous)) unless O(allow_broad_subjects=true).
  - O(for_workload) names the least-privileged default SCC that would admit a workload's pods and the fields that
    force it (RV(recommendation)); without O(scc) that SCC is granted, so C(nonroot-v2) is granted where it is
    enough instead of C(anyuid).
  - O(pin_workloads) pins workloads to the SCC with the C(openshift.io/required-scc) annotation on their pod
    templates (OpenShift 4.14+ then tries only that SCC for their pods, so a broader SCC the service account may also
    use, such as C(anyuid) with priority 10, cannot take them); O(state=absent) removes the annotation where it names
    this SCC.
  - OpenShift is detected by API discovery (its aggregated C(project.openshift.io)/C(route.openshift.io) APIs),
    not by the SCC API alone, which a CRD can provide. On other clusters the module fails clearly, or with
    O(fallback=pod_security) sets the equivalent Pod Security level on the namespace instead (and says so).
options:
  scc:
    description: Name of the SCC. Defaults to the recommendation for O(for_workload).
    type: str
  state:
    description: V(present) grants, V(absent) revokes.
    type: str
    choices: [present, absent]
    default: present
  service_accounts:
    description: Service accounts as V(namespace/name) (or V(name) with O(namespace)).
    type: list
    elements: str
    default: []
  users:
    description: User names.
    type: list
    elements: str
    default: []
  groups:
    description: Group names.
    type: list
    elements: str
    default: []
  namespace:
    description:
      - Namespace of the RoleBinding (and of service accounts given without one). Defaults to the namespace of the
        service accounts when they all share one.
    type: str
  cluster_wide:
    description: Grant through a ClusterRoleBinding (every namespace) instead of a RoleBinding.
    type: bool
    default: false
  allow_broad_subjects:
    description: Allow subjects that stand for every user or service account (see the description).
    type: bool
    default: false
  remove_from_scc_lists:
    description:
      - With O(state=absent), also remove the subjects from the SCC's legacy C(users)/C(groups) lists.
      - Refused with O(state=present) (it would have no effect).
    type: bool
    default: false
  for_workload:
    description:
      - A workload (Deployment, DaemonSet, StatefulSet, Job, CronJob, Pod), a pod template or spec, or a
        ClusterServiceVersion, as a dict. The module reports the least-privileged default SCC that admits its pods.
      - Explicit UIDs, groups and SELinux levels are checked against the ranges of the namespace the pods run in (its
        C(openshift.io/sa.scc.uid-range), C(supplemental-groups) and C(mcs) annotations), as admission checks them.
        That namespace is the workload's C(metadata.namespace), else O(namespace), else that of the service accounts
        when they are all in one. Without a readable namespace an explicit value counts as outside its range.
      - With O(state=absent) it needs O(scc) (today's recommendation need not be the SCC granted before).
    type: dict
  fallback:
    description:
      - What to do on a cluster that is not OpenShift. V(none) fails (or, when only an SCC CRD is installed, stores
        the grant with a warning); V(pod_security) sets the namespace's Pod Security C(enforce) level that admits
        what the SCC admits (V(baseline) for C(anyuid), V(privileged) for C(privileged)); a level the namespace has
        that admits more is kept (the level is shared by every workload there). O(state=absent) restores the labels
        the namespace had before the first change.
    type: str
    choices: [none, pod_security]
    default: none
  pin_workloads:
    description:
      - Workloads whose pod template gets the annotation C(openshift.io/required-scc) set to O(scc) (O(state=present))
        or removed where it names O(scc) (O(state=absent); a pin to another SCC is left alone).
      - A workload already pinned to another SCC is refused (unpin it first); a missing workload fails the task
        before anything is granted.
      - Changing the pod template rolls the workload - Deployments, DaemonSets and StatefulSets replace their pods;
        ReplicaSets and CronJobs use the annotation for new pods only; a Job's template cannot change once the Job
        exists (the API server refuses, so pin Jobs in their manifest).
      - With service accounts given, the module warns when a workload's pods run as a service account this task does
        not grant the SCC to (OpenShift would reject them).
      - Without O(service_accounts), O(users) or O(groups) only the pins change.
    type: list
    elements: dict
    default: []
    suboptions:
      kind:
        description: Kind of the workload.
        type: str
        required: true
        choices: [Deployment, DaemonSet, StatefulSet, ReplicaSet, Job, CronJob]
      name:
        description: Name of the workload.
        type: str
        required: true
      namespace:
        description: Namespace of the workload; defaults to O(namespace).
        type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: Creates, patches and deletes are server-side dry runs.
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - SCC admission exists only on OpenShift. On other clusters (for example with the SCC CRD installed for tests)
    the RBAC grant and the pin annotation are stored but nothing enforces them.
seealso:
  - module: kubeforge.operators.pod_security
  - module: kubeforge.operators.scc
"""

EXAMPLES = r"""
- name: Let Istio's sidecar injector run as any UID (what oc adm policy add-scc-to-user anyuid does)
  kubeforge.operators.scc_access:
    scc: anyuid
    service_accounts:
      - istio-system/istio-ingressgateway-service-account

- name: Grant the least-privileged SCC the DaemonSet needs
  kubeforge.operators.scc_access:
    for_workload: "{{ lookup('ansible.builtin.file', 'agent-daemonset.yaml') | from_yaml }}"
    service_accounts:
      - agents/agent

- name: Grant a custom SCC and pin the Deployment to it, so anyuid cannot take its pods
  kubeforge.operators.scc_access:
    scc: web-netbind
    service_accounts:
      - web/frontend
    pin_workloads:
      - kind: Deployment
        name: frontend
        namespace: web

- name: Take the grant back, also from the SCC's legacy users list
  kubeforge.operators.scc_access:
    scc: anyuid
    state: absent
    remove_from_scc_lists: true
    service_accounts:
      - istio-system/istio-ingressgateway-service-account
"""

RETURN = r"""
scc:
  description: The SCC granted or revoked.
  returned: always
  type: str
binding:
  description: The RoleBinding or ClusterRoleBinding after the run (C(kind), C(name), C(namespace), C(subjects)); None when removed.
  returned: when subjects were given on OpenShift or with the SCC API
  type: dict
created_cluster_role:
  description: Name of the ClusterRole the module created.
  returned: when created
  type: str
removed_from_scc_lists:
  description: Entries removed from the SCC's legacy lists.
  returned: state is absent
  type: list
  elements: str
recommendation:
  description:
    - The least-privileged default SCC for O(for_workload) (C(scc)), why the less privileged ones do not fit
      (C(reasons), C(rejected)) and the fields that force it (C(fields)).
  returned: when for_workload is given
  type: dict
openshift:
  description: Whether the cluster is OpenShift (by API discovery).
  returned: when subjects were given
  type: bool
fallback:
  description: The Pod Security labels set instead of an SCC grant (C(namespace), C(enforce), C(labels), C(violations)).
  returned: when fallback=pod_security was used
  type: dict
pinned:
  description:
    - One entry per O(pin_workloads) workload - C(kind), C(name), C(namespace), the C(previous) value of the
      C(openshift.io/required-scc) annotation, the value after the run (C(required_scc); in check mode, what it would
      be) and whether it C(changed).
  returned: when pin_workloads is given
  type: list
  elements: dict
  sample: [{kind: Deployment, name: frontend, namespace: web, previous: null, required_scc: web-netbind, changed: true}]
diff:
  description: The binding (or the namespace's Pod Security labels) before and after, and the workloads' pins (C(pinned)).
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.pin import PIN_KINDS
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster.access import execute

PIN_OPTIONS = {
    "kind": {"type": "str", "required": True, "choices": list(PIN_KINDS)},
    "name": {"type": "str", "required": True},
    "namespace": {"type": "str"},
}


UNUSED = (
    Unused(("remove_from_scc_lists",), lambda p: p["state"] == "absent", "with state=present (it takes subjects out on revoke)"),
    Unused(
        ("for_workload",),
        lambda p: p["state"] == "present" or p["scc"],
        "with state=absent unless scc is set (today's recommendation need not be the SCC granted before)",
    ),
)


def argspec():
    return {
        "scc": {"type": "str"},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "service_accounts": {"type": "list", "elements": "str", "default": []},
        "users": {"type": "list", "elements": "str", "default": []},
        "groups": {"type": "list", "elements": "str", "default": []},
        "namespace": {"type": "str"},
        "cluster_wide": {"type": "bool", "default": False},
        "allow_broad_subjects": {"type": "bool", "default": False},
        "remove_from_scc_lists": {"type": "bool", "default": False},
        "for_workload": {"type": "dict"},
        "fallback": {"type": "str", "choices": ["none", "pod_security"], "default": "none"},
        "pin_workloads": {"type": "list", "elements": "dict", "default": [], "options": PIN_OPTIONS},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
