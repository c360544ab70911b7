#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: scc
short_description: Create or remove a custom least-privilege SCC from a compact spec
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Creates, updates or deletes a custom OpenShift SecurityContextConstraints (SCC) described by a compact spec - a
    default SCC to start from (O(base), V(restricted-v2) unless set) and only what the custom SCC relaxes on top of
    it (O(add_capabilities), O(run_as_user), O(volumes), O(host_network), ...). The module renders the full
    C(security.openshift.io/v1) object (RV(definition)) and reports what differs from the base (RV(relaxations)).
  - The SCC always has C(priority) null, so SCC admission never prefers it by priority over C(restricted-v2) (the way
    C(anyuid), priority 10, captures every pod of a service account that may use it); it is picked only for pods that
    need what it adds. Grant its use with M(kubeforge.operators.scc_access), and pin workloads to it with
    O(kubeforge.operators.scc_access#module:pin_workloads).
  - O(for_workload) derives the spec instead - the least relaxation of C(restricted-v2) that admits the pods of one
    or more workloads (only the fields the pods force, RV(forced_by)), verified against the same admission checks
    that recommend default SCCs in M(kubeforge.operators.scc_access).
  - The module never creates, changes or deletes OpenShift's default SCCs (their names are refused), and only
    changes or deletes SCCs it created itself, which carry the label C(operators.kubeforge.io/created-by=kubeforge.operators.scc);
    an SCC of the same name without it is refused.
  - Server-side apply (field manager C(kubeforge), conflicts forced) - a second run with the same options reports
    C(changed=false), and fields the spec sets are reset when someone else changed them. The SCC's legacy C(users)
    and C(groups) lists are not part of the spec and left alone; grant through RBAC instead.
options:
  name:
    description:
      - Name of the custom SCC (a DNS subdomain). The names of OpenShift's default SCCs (V(restricted-v2),
        V(anyuid), V(privileged), ...) are refused.
    type: str
    required: true
  state:
    description:
      - V(present) creates or updates the SCC, V(absent) deletes it (only when this module created it).
      - With V(absent), O(base), O(description), O(for_workload) and the settings below are refused (they would
        have no effect).
    type: str
    choices: [present, absent]
    default: present
  base:
    description:
      - The default SCC whose settings the custom SCC starts from - V(restricted-v2) when not set. The options below
        change only what they name.
    type: str
    choices: [restricted-v2, nonroot-v2, hostnetwork-v2, anyuid, hostmount-anyuid, hostmount-anyuid-v2, hostnetwork, hostaccess, privileged]
  description:
    description: Text for the SCC's C(kubernetes.io/description) annotation.
    type: str
  add_capabilities:
    description:
      - Capabilities containers may add (C(allowedCapabilities)), as Kubernetes writes them (V(NET_ADMIN), without
        C(CAP_)); V(*) allows every capability. They are taken out of the base's C(requiredDropCapabilities) where
        it lists them by name.
    type: list
    elements: str
  run_as_user:
    description:
      - The C(runAsUser) strategy - a type (V(MustRunAs), V(MustRunAsRange), V(MustRunAsNonRoot), V(RunAsAny)) or
        a mapping C({type, uid}) for V(MustRunAs), C({type, uidRangeMin, uidRangeMax}) for V(MustRunAsRange)
        (without a range, the namespace's C(openshift.io/sa.scc.uid-range)).
    type: raw
  fs_group:
    description:
      - The C(fsGroup) strategy - V(MustRunAs) or V(RunAsAny), or a mapping C({type, ranges}) with C(ranges) a list
        of C({min, max}) (without ranges, the namespace's C(openshift.io/sa.scc.supplemental-groups)).
    type: raw
  supplemental_groups:
    description: The C(supplementalGroups) strategy, written like O(fs_group).
    type: raw
  selinux_context:
    description:
      - The C(seLinuxContext) strategy - V(MustRunAs) or V(RunAsAny), or a mapping C({type, seLinuxOptions}) with
        C(seLinuxOptions) of C(user), C(role), C(type), C(level).
    type: raw
  volumes:
    description:
      - Volume types to allow in addition to the base's (V(hostPath), V(nfs), V(iscsi), ...; V(*) for all).
        V(hostPath) also sets C(allowHostDirVolumePlugin).
    type: list
    elements: str
  host_network:
    description: Allow C(hostNetwork) (C(allowHostNetwork)). Not set - the base's value.
    type: bool
  host_ports:
    description: Allow host ports (C(allowHostPorts)). Not set - the base's value.
    type: bool
  host_pid:
    description: Allow C(hostPID) (C(allowHostPID)). Not set - the base's value.
    type: bool
  host_ipc:
    description: Allow C(hostIPC) (C(allowHostIPC)). Not set - the base's value.
    type: bool
  privileged:
    description:
      - Allow privileged containers (C(allowPrivilegedContainer)); implies O(allow_privilege_escalation=true), as
        Kubernetes refuses privileged containers that may not escalate. Not set - the base's value.
    type: bool
  allow_privilege_escalation:
    description: Allow C(allowPrivilegeEscalation=true) in containers. Not set - the base's value.
    type: bool
  read_only_root_filesystem:
    description: Require a read-only root filesystem (a restriction). Not set - the base's value.
    type: bool
  seccomp_profiles:
    description:
      - Seccomp profiles to allow in addition to the base's (V(runtime/default), V(unconfined),
        V(localhost/<path>), V(*)). The first profile is the one pods that set none get - the base's, or
        V(runtime/default) when the base lists none.
    type: list
    elements: str
  allowed_unsafe_sysctls:
    description: Unsafe sysctls (or patterns ending in C(*)) pods may set.
    type: list
    elements: str
  for_workload:
    description:
      - A workload (Deployment, DaemonSet, StatefulSet, ReplicaSet, Job, CronJob, Pod, a pod template or spec, or a
        ClusterServiceVersion) as a dict, or a list of them. The SCC becomes the least relaxation of
        C(restricted-v2) that admits all their pods - only the fields they force (RV(forced_by)). An explicit UID
        becomes a C(MustRunAsRange) of exactly the UIDs the pods name (V(RunAsAny) for root), an explicit fsGroup a
        C(MustRunAs) of exactly those groups, explicit SELinux options C(RunAsAny).
      - Cannot be combined with O(base) or the relaxation options.
    type: raw
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: The apply or delete is sent as a server-side dry run; RV(scc) is what the API server would store.
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - SCC admission exists only on OpenShift. A cluster that serves the SCC API from OpenShift's CRD alone (vanilla
    Kubernetes, the collection's testbed) stores the SCC but enforces nothing; the module warns. A cluster without
    the SCC API makes the module fail.
  - OpenShift's own SCC validation (strategy types, ID ranges, capabilities both allowed and dropped) runs in the
    OpenShift API server; the module checks the same rules before sending, so a CRD-only cluster does not accept
    what OpenShift would refuse.
  - Deleting an SCC leaves the ClusterRole C(system:openshift:scc:<name>) and bindings that
    M(kubeforge.operators.scc_access) created; revoke them first.
seealso:
  - module: kubeforge.operators.scc_access
"""

EXAMPLES = r"""
- name: Non-root pods that may bind low ports and renice, nothing else
  kubeforge.operators.scc:
    name: web-netbind
    add_capabilities: [NET_BIND_SERVICE, SYS_NICE]
    run_as_user: MustRunAsNonRoot

- name: A node agent - host network and ports, hostPath volumes, UIDs 1000-1999
  kubeforge.operators.scc:
    name: node-agent
    host_network: true
    host_ports: true
    volumes: [hostPath]
    run_as_user:
      type: MustRunAsRange
      uidRangeMin: 1000
      uidRangeMax: 1999

- name: Exactly what the DaemonSet needs on top of restricted-v2
  kubeforge.operators.scc:
    name: agent
    for_workload: "{{ lookup('ansible.builtin.file', 'agent-daemonset.yaml') | from_yaml }}"
  register: agent_scc

- name: Grant it to the DaemonSet's service account and pin the DaemonSet to it
  kubeforge.operators.scc_access:
    scc: agent
    service_accounts: [agents/agent]
    pin_workloads:
      - {kind: DaemonSet, name: agent, namespace: agents}

- name: Remove it again (only if this module created it)
  kubeforge.operators.scc:
    name: agent
    state: absent
"""

RETURN = r"""
name:
  description: Name of the SCC.
  returned: always
  type: str
scc:
  description: The SCC as the API server stores it after the run (in check mode, as it would); None when deleted.
  returned: always
  type: dict
definition:
  description: The full SCC object the compact spec renders to (what is applied), with C(priority) null.
  returned: state is present
  type: dict
  sample:
    apiVersion: security.openshift.io/v1
    kind: SecurityContextConstraints
    metadata:
      name: web-netbind
      labels: {operators.kubeforge.io/created-by: kubeforge.operators.scc}
      annotations: {operators.kubeforge.io/scc-base: restricted-v2}
    allowHostDirVolumePlugin: false
    allowHostIPC: false
    allowHostNetwork: false
    allowHostPID: false
    allowHostPorts: false
    allowPrivilegeEscalation: false
    allowPrivilegedContainer: false
    allowedCapabilities: [NET_BIND_SERVICE, SYS_NICE]
    allowedUnsafeSysctls: null
    defaultAddCapabilities: null
    defaultAllowPrivilegeEscalation: null
    forbiddenSysctls: null
    fsGroup: {type: MustRunAs}
    priority: null
    readOnlyRootFilesystem: false
    requiredDropCapabilities: [ALL]
    runAsUser: {type: MustRunAsNonRoot}
    seLinuxContext: {type: MustRunAs}
    seccompProfiles: [runtime/default]
    supplementalGroups: {type: RunAsAny}
    userNamespaceLevel: AllowHostLevel
    volumes: [configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected, secret]
spec:
  description: The validated compact spec (for O(for_workload), the derived one), with O(base) filled in.
  returned: state is present
  type: dict
  sample: {name: web-netbind, base: restricted-v2, add_capabilities: [NET_BIND_SERVICE, SYS_NICE], run_as_user: {type: MustRunAsNonRoot}}
relaxations:
  description:
    - The SCC fields that differ from the base SCC - C(field), the C(base) value and the custom C(value). Mostly
      relaxations; a restriction such as O(read_only_root_filesystem=true) is listed too.
  returned: state is present
  type: list
  elements: dict
  sample:
    - {field: allowedCapabilities, base: [NET_BIND_SERVICE], value: [NET_BIND_SERVICE, SYS_NICE]}
    - {field: runAsUser, base: {type: MustRunAsRange}, value: {type: MustRunAsNonRoot}}
forced_by:
  description: For O(for_workload) - each relaxed spec key and the pod spec fields that force it.
  returned: when for_workload is given and state is present
  type: dict
  sample: {host_network: [spec.hostNetwork], add_capabilities: ["spec.containers[0].securityContext.capabilities.add"]}
recommendation:
  description:
    - For O(for_workload) - the least-privileged default SCC that would admit the workloads (None if none does),
      for comparison with the custom SCC.
  returned: when for_workload is given and state is present
  type: str
  sample: privileged
diff:
  description: The SCC before and after.
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.recommend import DEFAULT_SCCS
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster.custom import execute

RELAXATIONS = (
    "add_capabilities",
    "run_as_user",
    "fs_group",
    "supplemental_groups",
    "selinux_context",
    "volumes",
    "host_network",
    "host_ports",
    "host_pid",
    "host_ipc",
    "privileged",
    "allow_privilege_escalation",
    "read_only_root_filesystem",
    "seccomp_profiles",
    "allowed_unsafe_sysctls",
)
UNUSED = (
    Unused(
        ("base", "description", "for_workload") + RELAXATIONS,
        lambda p: p["state"] == "present",
        "with state=absent (it deletes the SCC this module created)",
    ),
)


def argspec():
    return {
        "name": {"type": "str", "required": True},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "base": {"type": "str", "choices": [row["name"] for row in DEFAULT_SCCS]},
        "description": {"type": "str"},
        "add_capabilities": {"type": "list", "elements": "str"},
        "run_as_user": {"type": "raw"},
        "fs_group": {"type": "raw"},
        "supplemental_groups": {"type": "raw"},
        "selinux_context": {"type": "raw"},
        "volumes": {"type": "list", "elements": "str"},
        "host_network": {"type": "bool"},
        "host_ports": {"type": "bool"},
        "host_pid": {"type": "bool"},
        "host_ipc": {"type": "bool"},
        "privileged": {"type": "bool"},
        "allow_privilege_escalation": {"type": "bool"},
        "read_only_root_filesystem": {"type": "bool"},
        "seccomp_profiles": {"type": "list", "elements": "str"},
        "allowed_unsafe_sysctls": {"type": "list", "elements": "str"},
        "for_workload": {"type": "raw"},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
