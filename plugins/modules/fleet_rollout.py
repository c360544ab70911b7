#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: fleet_rollout
short_description: One cluster's turn in a fleet rollout of an operator version or DaemonSet images, recorded on the cluster
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Moves one cluster of a fleet to the rollout's target and records what it did there, so that a fleet of clusters can
    be rolled on Ansible's own engine - one host per cluster (the inventory plugin P(kubeforge.operators.clusters#inventory)),
    waves from the play's C(serial) (a canary cluster first), the failure budget from C(max_fail_percentage). The
    role C(kubeforge.operators.fleet_rollout) and C(playbooks/fleet_rollout.yml) put it together.
  - 'What moves (O(kind)): V(olm_v0) - an operator installed through an OLM v0 Subscription, upgraded to O(version) as
    M(kubeforge.operators.olm_operator) does it (C(installPlanApproval=Manual), one InstallPlan at a time, only the
    operator''s own plans approved, failing early with OLM''s reason); V(olm_v1) - an OLM v1 ClusterExtension moved to
    O(version) (the same spec with the version pinned, applied as M(kubeforge.operators.olm_cluster_extension) applies
    it, waiting for operator-controller''s verdict); V(daemonset) - a DaemonSet moved to O(images) through
    M(kubeforge.operators.daemonset_canary) (one canary node first, then batches).'
  - 'A turn: read what runs and the cluster''s rollout record, then the preflight - the operator (or DaemonSet) is
    there, O(version) is offered by the cluster''s catalog (the Subscription''s channel in its CatalogSource, or the
    ClusterCatalogs catalogd serves) and is ahead of what runs, the operator is healthy now and the checks of
    M(kubeforge.operators.olm_diagnose) find no cause - then record C(in_progress), make the change, pass the health
    gate, and record C(succeeded).'
  - 'The health gate: the CSV (or ClusterExtension) at the target and C(Succeeded) (C(Installed)), the operator''s
    Deployments (a CSV''s install strategy; the Deployments labelled with the ClusterExtension as their owner) or the
    DaemonSet rolled out and available, each of O(gate_conditions), and - for O(soak_seconds) once all of that holds -
    no pod of them restarting, crash-looping or stuck pulling its image. A restart or a stuck container fails the gate
    at once.'
  - 'The record: a ConfigMap C(kubeforge-fleet-<olm|ce|ds>-<name>) in the operator''s namespace (the Subscription''s,
    the ClusterExtension''s C(spec.namespace), the DaemonSet''s; O(record_namespace) to choose another), labelled
    C(fleet.kubeforge.io/rollout) and C(fleet.kubeforge.io/result). A rollout is named by O(rollout_id), by default
    C(<name>@<target>).'
  - 'A rerun of the same rollout: a cluster whose record says C(succeeded) at the target is skipped without a write
    (C(changed=false)); one whose run was interrupted (C(in_progress)) resumes the change (its preflight health check
    is skipped: an operator half-way through its upgrade is not healthy); one whose record says C(failed) is refused
    - the rollout is halted there - naming the step and cause, until O(acknowledge=true) is given for it (it is then
    recorded C(acknowledged) and left as it is) or the target changes (a new rollout id).'
  - 'When the change or the gate fails, the cause (the failing module''s message, then the causes
    M(kubeforge.operators.olm_diagnose) names) is recorded and the module fails. O(on_failure=rollback) moves an
    OLM v1 ClusterExtension back to the version it came from (pinned; the move back is sent with
    C(upgradeConstraintPolicy=SelfCertified), since it is not an edge of the catalog''s upgrade graph, and the
    extension''s own policy is put back afterwards) and a DaemonSet back to its images (through
    M(kubeforge.operators.daemonset_canary)''s own rollback during the canary); OLM v0 cannot downgrade an installed
    operator (no InstallPlan goes back to an older CSV), so it halts and says so.'
  - With O(report_dir), every turn - succeeded, failed, refused, blocked, skipped, unreachable - writes this cluster's
    row to C(<report_dir>/clusters/<cluster>.json) and makes the fleet report again from all rows, C(report.json) and
    C(report.md), also when the rollout stops early (clusters it never reached are listed as C(not_reached)). The
    files are written on the host that runs the module (the controller, with the inventory plugin's
    C(ansible_connection=local)).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.registry_auth.dict_option
attributes:
  check_mode:
    support: full
    details:
      - Reads and decides only - the plan (RV(plan)) names the action, the current version, the target and the upgrade
        path - and writes nothing anywhere (no record, no report file). A cluster whose API server cannot be reached is
        reported (RV(reachable=false), a warning) instead of failing, so that a plan over the fleet shows every
        cluster.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  cluster:
    description:
      - This cluster's name in the record and the fleet report - the inventory host, C(inventory_hostname).
    type: str
    required: true
  kind:
    description: What moves (see the description).
    type: str
    choices: [olm_v0, olm_v1, daemonset]
    required: true
  name:
    description:
      - V(olm_v0) - the operator's package (its Subscription's C(spec.name)); V(olm_v1) - the ClusterExtension's
        name; V(daemonset) - the DaemonSet's name.
    type: str
    required: true
  namespace:
    description:
      - The Subscription's namespace (O(kind=olm_v0)) or the DaemonSet's (O(kind=daemonset)). Not used for V(olm_v1)
        (the ClusterExtension says it).
    type: str
  version:
    description:
      - The version to move to (a CSV's C(spec.version), a bundle's version), with O(kind=olm_v0) and O(kind=olm_v1).
    type: str
  images:
    description:
      - Container name to new image, with O(kind=daemonset).
    type: dict
  rollout_id:
    description:
      - The rollout's name in the records; by default C(<name>@<version>) (for a DaemonSet C(<name>@<container>=<image>,...)).
      - One rollout, one target - a new target is a new rollout, which an earlier rollout's failure does not halt.
    type: str
  on_failure:
    description:
      - V(halt) records the failure and fails. V(rollback) also moves back (see the description); with
        O(kind=olm_v0) it halts and says that OLM v0 cannot downgrade.
    type: str
    choices: [halt, rollback]
    default: halt
  acknowledge:
    description:
      - Acknowledge an earlier failure of this rollout on this cluster - it is recorded C(acknowledged) and the cluster
        is left as it is - so that the rollout may go on to the other clusters. Has no effect where the rollout did
        not fail.
    type: bool
    default: false
  preflight_diagnosis:
    description:
      - Whether the preflight of a turn also runs M(kubeforge.operators.olm_diagnose)'s checks (a dozen reads) on an operator
        whose CSV or ClusterExtension says it is installed. The role's turn leaves them to its plan, which ran them for
        every cluster just before; the turn still checks that the operator is installed and healthy. Check mode always
        runs them.
    type: bool
    default: true
  soak_seconds:
    description:
      - Seconds the operator must stay healthy after the change (no restart, no crash loop, everything available)
        before the gate passes.
    type: int
    default: 0
  gate_timeout:
    description:
      - Seconds the operator may take to become healthy after the change (then O(soak_seconds) more for the soak),
        before the gate fails.
    type: int
    default: 300
  gate_conditions:
    description:
      - More checks of the gate - objects that must have a status condition, for example an operand the operator
        manages. Each must hold (after the change and during the soak) for the gate to pass.
    type: list
    elements: dict
    suboptions:
      api_version:
        description: API version of the object.
        type: str
        required: true
      kind:
        description: Kind of the object.
        type: str
        required: true
      name:
        description: Name of the object.
        type: str
        required: true
      namespace:
        description: Namespace of the object (none for a cluster-scoped one).
        type: str
      type:
        description: The condition's C(type).
        type: str
        required: true
      status:
        description: The condition's C(status) wanted.
        type: str
        default: "True"
  wait_timeout:
    description:
      - Seconds the change itself may take (the upgrade, the ClusterExtension's verdict, the DaemonSet's rollout).
    type: int
    default: 600
  record_namespace:
    description:
      - Namespace of the record's ConfigMap, instead of the operator's (it must exist).
    type: str
  approve_dependencies:
    description:
      - With O(kind=olm_v0) - whether an InstallPlan may also install the dependencies OLM resolved (as
        M(kubeforge.operators.olm_operator)'s option).
    type: bool
    default: true
  catalogd_ca_cert:
    description:
      - With O(kind=olm_v1) - the CA certificate file of catalogd's serving certificate, for reading the versions the
        ClusterCatalogs offer where catalogd is not reached through the API server's service proxy (as
        M(kubeforge.operators.olm_cluster_catalog_info)'s option).
    type: path
  canary:
    description:
      - With O(kind=daemonset) - the pace and thresholds of the canary rollout (M(kubeforge.operators.daemonset_canary)'s
        options of the same names).
    type: dict
    suboptions:
      batch:
        description: Nodes updated at once after the canary passed.
        type: str
        default: 10%
      canary_timeout:
        description: Seconds the canary pod may take to become available.
        type: int
        default: 300
      rollout_timeout:
        description: Seconds the batches may take.
        type: int
        default: 1800
      crash_restarts:
        description: Restarts of a new pod in C(CrashLoopBackOff) that fail the rollout.
        type: int
        default: 3
      canary_ready_seconds:
        description: Seconds the canary pod must have been Ready.
        type: int
        default: 5
  report_dir:
    description:
      - Directory of the fleet report (created when missing). See the description.
    type: path
  clusters:
    description:
      - Every cluster of the rollout, in play order (C(ansible_play_hosts_all)), for the report's rows of clusters the
        rollout never reached and for the wave numbers.
    type: list
    elements: str
  serial:
    description:
      - The play's C(serial) (a count, a percentage, or a list of them), to number this cluster's wave the way Ansible
        batched it.
    type: raw
  wave:
    description:
      - This cluster's wave, instead of the one O(clusters) and O(serial) give.
    type: int
notes:
  - O(registry_auth) - With O(kind=olm_v1), when M(kubeforge.operators.olm_cluster_extension) created the extension's
    installer ServiceAccount - how the catalog and bundle images are read to derive its RBAC again for the new
    version, as that module's O(kubeforge.operators.olm_cluster_extension#module:registry_auth).
    O(registry_auth.username) is for the registries of the selected ClusterCatalogs' images.
  - Run it once per cluster, with the cluster's kubeconfig and context (the inventory plugin sets them as host
    variables; C(module_defaults) of the group C(kubeforge.operators.operators) passes them to every module).
  - 'Permissions: those of the module that makes the change (M(kubeforge.operators.olm_operator),
    M(kubeforge.operators.olm_cluster_extension), M(kubeforge.operators.daemonset_canary)), read access to pods,
    Deployments and events there, and get/create/patch of ConfigMaps in the record''s namespace.'
seealso:
  - module: kubeforge.operators.olm_operator
  - module: kubeforge.operators.olm_cluster_extension
  - module: kubeforge.operators.daemonset_canary
  - module: kubeforge.operators.olm_diagnose
"""

EXAMPLES = r"""
- name: Plan - every cluster's current version, the target and the path there (writes nothing)
  kubeforge.operators.fleet_rollout:
    cluster: "{{ inventory_hostname }}"
    kind: olm_v0
    name: kube-fleet
    namespace: kube-fleet
    version: 0.2.0
  check_mode: true
  register: plan

- name: Upgrade this cluster's operator, then gate on its health for two minutes
  kubeforge.operators.fleet_rollout:
    cluster: "{{ inventory_hostname }}"
    kind: olm_v0
    name: kube-fleet
    namespace: kube-fleet
    version: 0.2.0
    soak_seconds: 120
    report_dir: "{{ playbook_dir }}/fleet-report"
    clusters: "{{ ansible_play_hosts_all }}"
    serial: "{{ fleet_waves }}"

- name: Move an OLM v1 extension, rolling back to the version it came from when the gate fails
  kubeforge.operators.fleet_rollout:
    cluster: "{{ inventory_hostname }}"
    kind: olm_v1
    name: kube-fleet
    version: 0.3.0
    on_failure: rollback

- name: A new node agent image, through a canary node on each cluster
  kubeforge.operators.fleet_rollout:
    cluster: "{{ inventory_hostname }}"
    kind: daemonset
    name: node-agent
    namespace: kube-system
    images:
      agent: registry.example.com/node-agent:v2
    canary:
      batch: 25%

- name: Acknowledge the failure on this cluster, so that the rollout goes on elsewhere
  kubeforge.operators.fleet_rollout:
    cluster: "{{ inventory_hostname }}"
    kind: olm_v0
    name: kube-fleet
    namespace: kube-fleet
    version: 0.3.0
    acknowledge: true
"""

RETURN = r"""
cluster:
  description: O(cluster).
  returned: always
  type: str
  sample: member-1
rollout_id:
  description: The rollout's id.
  returned: always
  type: str
  sample: kube-fleet@0.2.0
result:
  description:
    - 'This turn''s outcome: V(succeeded), V(skipped) (done earlier), V(acknowledged), V(failed) (the change or the
      gate failed), V(halted) (refused: an earlier failure of this rollout here), V(blocked) (the preflight failed,
      nothing was touched), V(unreachable), or V(planned) (check mode, the cluster would move).'
  returned: always
  type: str
  sample: succeeded
from_version:
  description: What ran before the change - the installed version, or the DaemonSet's C(container=image) pairs.
  returned: when the cluster could be read
  type: str
  sample: 0.1.0
to_version:
  description: The target, as text.
  returned: always
  type: str
  sample: 0.2.0
path:
  description: The versions the upgrade steps through, the target last (empty when already there).
  returned: when the cluster could be read and the preflight passed
  type: list
  elements: str
  sample: ["0.2.0"]
wave:
  description: This cluster's wave (1 for the first batch of the play).
  returned: when O(wave) or O(clusters) is given
  type: int
  sample: 1
plan:
  description: In check mode, what the cluster would do.
  returned: check mode
  type: dict
  contains:
    action:
      description: V(start), V(resume), V(skip), V(acknowledge), V(refuse) or V(blocked).
      type: str
    message:
      description: Why, in words.
      type: str
    current:
      description: What runs now.
      type: str
    target:
      description: The target.
      type: str
    path:
      description: The versions the upgrade would step through.
      type: list
      elements: str
    catalog:
      description: Where the versions were looked up.
      type: str
  sample: {"action": "start", "message": "0.1.0 -> 0.2.0", "current": "0.1.0", "target": "0.2.0", "path": ["0.2.0"],
           "catalog": "channel stable of CatalogSource kube-fleet/fleet"}
reachable:
  description: False when the cluster's API server could not be reached (check mode reports it instead of failing).
  returned: when the cluster was asked
  type: bool
record:
  description:
    - The rollout record on this cluster after the turn (C(rollout), C(kind), C(name), C(namespace), C(target), C(from),
      C(result), C(step), C(cause), C(causes), C(diagnosis), C(wave), C(started), C(finished), C(rolled_back_to),
      C(acknowledged)).
  returned: when the cluster could be read
  type: dict
  sample: {"rollout": "kube-fleet@0.2.0", "result": "succeeded", "step": "done", "from": "0.1.0", "target": "0.2.0", "wave": 1,
           "started": "2026-11-29T10:00:00Z", "finished": "2026-11-29T10:00:12Z"}
record_namespace:
  description: Namespace of the record's ConfigMap.
  returned: when the cluster could be read
  type: str
cause:
  description: Why the turn failed, was refused or blocked (the failing step's message; the module's C(msg) adds RV(diagnosis)).
  returned: on failure
  type: str
diagnosis:
  description: What M(kubeforge.operators.olm_diagnose) found after a failure, as one line (bounded).
  returned: on failure of the change or the gate, when it found something
  type: str
causes:
  description: The causes M(kubeforge.operators.olm_diagnose) named after a failure (for example V(CrashLoop)).
  returned: on failure of the change or the gate
  type: list
  elements: str
rolled_back_to:
  description: The version (or images) the cluster was moved back to after a failure, with O(on_failure=rollback).
  returned: when rolled back
  type: str
change:
  description:
    - What the change step reported (C(installed_csv), C(version), C(approved_install_plans), C(installed_version),
      C(duration)).
  returned: when a change was made
  type: dict
gate:
  description: The health gate's verdict, in words.
  returned: when the gate passed
  type: str
  sample: healthy for 30 s
report:
  description:
    - The fleet report made after this turn (with O(report_dir)) - its C(path), whether it is C(halted), the
      C(failed_clusters) and the C(counts) by result.
  returned: with O(report_dir)
  type: dict
report_markdown:
  description: The fleet report as a Markdown table (with O(report_dir)).
  returned: with O(report_dir)
  type: str
duration:
  description: Seconds the turn took.
  returned: always
  type: float
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.args import rollout_options
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.rollout import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (
    Unused(("namespace",), lambda p: p["kind"] != "olm_v1", "with kind=olm_v1 (the ClusterExtension names its namespace)"),
    Unused(("approve_dependencies",), lambda p: p["kind"] == "olm_v0", "except with kind=olm_v0"),
    Unused(("catalogd_ca_cert", "registry_auth"), lambda p: p["kind"] == "olm_v1", "except with kind=olm_v1"),
    Unused(("canary",), lambda p: p["kind"] == "daemonset", "except with kind=daemonset"),
    Unused(("serial",), lambda p: p["clusters"] and p["wave"] is None, "without clusters, or with wave (it numbers the waves)"),
)


def argspec():
    return {
        "cluster": {"type": "str", "required": True},
        "kind": {"type": "str", "required": True, "choices": ["olm_v0", "olm_v1", "daemonset"]},
        "name": {"type": "str", "required": True},
        "namespace": {"type": "str"},
        "version": {"type": "str"},
        "images": {"type": "dict"},
        "rollout_id": {"type": "str"},
        "on_failure": {"type": "str", "choices": ["halt", "rollback"], "default": "halt"},
        "acknowledge": {"type": "bool", "default": False},
        "preflight_diagnosis": {"type": "bool", "default": True},
        "soak_seconds": {"type": "int", "default": 0},
        "gate_timeout": {"type": "int", "default": 300},
        "gate_conditions": {
            "type": "list",
            "elements": "dict",
            "options": {
                "api_version": {"type": "str", "required": True},
                "kind": {"type": "str", "required": True},
                "name": {"type": "str", "required": True},
                "namespace": {"type": "str"},
                "type": {"type": "str", "required": True},
                "status": {"type": "str", "default": "True"},
            },
        },
        "wait_timeout": {"type": "int", "default": 600},
        "record_namespace": {"type": "str"},
        "approve_dependencies": {"type": "bool", "default": True},
        "catalogd_ca_cert": {"type": "path"},
        "registry_auth": {"type": "dict", "options": registry_auth_argspec()},
        "canary": {"type": "dict", "options": rollout_options()},
        "report_dir": {"type": "path"},
        "clusters": {"type": "list", "elements": "str"},
        "serial": {"type": "raw"},
        "wave": {"type": "int"},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
