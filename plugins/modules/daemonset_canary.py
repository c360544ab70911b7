#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: daemonset_canary
short_description: Roll a new pod template out to a DaemonSet through one canary node first, resumably
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Updates the pod template of a DaemonSet the way KubeVirt upgrades virt-handler. One guarded patch sets the new
    template together with C(maxUnavailable=1), so the DaemonSet controller replaces the pod of one node only (the
    canary). Once a pod of the new revision is available, the rollout continues in batches of O(batch) nodes; when
    every node runs the new revision, the original C(updateStrategy) is restored.
  - A new pod in C(CrashLoopBackOff) with O(crash_restarts) restarts or more, a pod stuck pulling its image
    (C(ErrImagePull) or C(ImagePullBackOff), the reasons the kubelet alternates), a container that cannot be
    created, or O(canary_timeout) / O(rollout_timeout) expiring fail the rollout. With O(on_failure=halt),
    C(maxUnavailable) stays 1 and the failing pod is unavailable, so no other node is touched; with
    O(on_failure=rollback), the template of the previous ControllerRevision is applied again (like C(kubectl rollout
    undo)) and the strategy is restored. The halt's message names the ways on - a fixed template, O(undo=true), or
    O(on_failure=rollback) with the same template.
  - A DaemonSet on a single node (C(desiredNumberScheduled) 1) is warned of when the rollout starts - its canary is
    the whole DaemonSet, so no node keeps the previous revision while the canary is judged.
  - The progress is kept in C(operators.kubeforge.io/canary-*) annotations of the DaemonSet, so a run that was
    interrupted, or a run with O(wait=false) (one step per run, for operator reconciles), is resumed by the next run.
    Every patch is a JSON patch guarded by the DaemonSet's C(resourceVersion); when someone else changed the
    DaemonSet meanwhile, the module reads it again and decides again.
  - Every step is recorded as a core/v1 Event on the DaemonSet (source component C(kubeforge.operators)).
  - Inside an operator installed by OLM, O(operator_condition) keeps the operator's OperatorCondition at
    C(Upgradeable=False) while the rollout runs or is halted.
options:
  name:
    description: Name of the DaemonSet.
    type: str
    required: true
  namespace:
    description: Namespace of the DaemonSet.
    type: str
    required: true
  template:
    description:
      - The complete new pod template (C(spec.template)).
      - Mutually exclusive with O(images). One of the two is required, unless O(undo=true).
    type: dict
  images:
    description:
      - Container name to new image, applied to the DaemonSet's current pod template (containers and init
        containers).
      - Mutually exclusive with O(template).
    type: dict
  batch:
    description:
      - How many nodes may be updated at once after the canary passed (the C(maxUnavailable) of the fast phase), as
        a number of nodes (V(3)) or a percentage of the scheduled nodes, rounded up (V(10%)).
      - A run with another value during the fast phase applies it from then on.
    type: str
    default: "10%"
  canary_timeout:
    description: Seconds the canary pod may take to become available before the rollout fails.
    type: int
    default: 300
  rollout_timeout:
    description: Seconds the fast phase may take until every node runs the new revision before the rollout fails.
    type: int
    default: 1800
  crash_restarts:
    description: A new pod in C(CrashLoopBackOff) with at least this many container restarts fails the rollout.
    type: int
    default: 3
  canary_ready_seconds:
    description:
      - Seconds the canary pod must have been Ready without a break before the canary passes (the DaemonSet's
        C(minReadySeconds) counts when it is longer).
      - Without a readiness probe a container that crashes right after it starts is Ready for a moment on every start,
        so V(0) may pass a crash-looping canary.
    type: int
    default: 5
  on_failure:
    description:
      - V(halt) leaves the DaemonSet with C(maxUnavailable=1) and the new template, one node running the failing
        revision, and fails (RV(phase=halted)); a later run with a fixed template starts a new rollout, a run with
        O(undo=true) rolls the halted rollout back (and succeeds), and a run with O(on_failure=rollback) and the same
        template rolls it back too (and fails, RV(phase=rolledback)).
      - V(rollback) applies the previous revision's template again, waits for it on every node, restores the
        strategy and fails (RV(phase=rolledback)). A rollback (or an O(undo)) whose pods do not come up either -
        they crash-loop O(crash_restarts) times, or it is not complete within O(rollout_timeout) - fails with
        C(RollbackStuck) and stays in phase C(rollingback).
    type: str
    choices: [halt, rollback]
    default: halt
  canary_nodes:
    description:
      - Node-selective mode. The canary pods are the ones on these nodes. The first patch sets
        C(updateStrategy=OnDelete), the module deletes the old pods of these nodes, waits for their new pods and
        then deletes the old pods of the other nodes in batches of O(batch).
      - Every canary node must run an available pod of the new revision before the rollout goes on, so nodes of the
        list that run no pod of the DaemonSet when the rollout starts are left out (the start message names them);
        when none runs one, the module fails before changing anything.
      - Without it (and without O(canary_node_selector)), the controller picks the canary node (RollingUpdate with
        C(maxUnavailable=1)).
      - The canary nodes are fixed when a rollout starts. A run that gives other nodes (or any, to a rollout that
        started without them) while that rollout is in progress is refused; run with the nodes it started with, or
        with O(undo=true) and start again.
      - Mutually exclusive with O(canary_node_selector).
    type: list
    elements: str
  canary_node_selector:
    description:
      - Node-selective mode with the canary nodes chosen by labels - a Kubernetes label selector in its string form,
        for example V(zone=a,canary=true), V(canary notin (no\)) or V(!node-role.kubernetes.io/control-plane).
      - When a rollout starts, the module lists the nodes matching it and takes those that run a pod of the DaemonSet
        as the canary nodes (as if they were given in O(canary_nodes)). The names are kept in the DaemonSet's
        C(operators.kubeforge.io/canary-nodes) annotation, so a resumed rollout uses the same nodes; labelling other
        nodes later does not change a rollout in progress.
      - The module fails before changing anything when the selector is malformed, empty, or matches no node that
        runs a pod of the DaemonSet.
      - Mutually exclusive with O(canary_nodes).
    type: str
  undo:
    description:
      - Undo the canary rollout in progress, paused or halted - C(kubectl rollout undo) for it. The module applies the
        template of the previous ControllerRevision (the newest one before the current template) again, with
        C(maxUnavailable=1), waits until every node runs it, restores the original C(updateStrategy) and removes the
        rollout's annotations, so a later run of either template starts afresh. The run succeeds (RV(phase=done)).
      - When a rollout replaced an unfinished one, the previous revision is the unfinished one's template, not the
        one before both.
      - After a rollout that O(on_failure=rollback) rolled back (RV(phase=rolledback)), it only removes the record of
        the failed template (which otherwise refuses that template until it changes).
      - Without a rollout in progress it changes nothing. O(template) and O(images) are refused with it.
    type: bool
    default: false
  pause_after_canary:
    description:
      - Stop once the canary passed (C(updateStrategy=OnDelete) meanwhile, RV(phase=paused)); a later run with
        V(false) continues.
      - Given to a rollout already past its canary (the fast phase), it pauses the rollout where it stands, the same
        way.
    type: bool
    default: false
  wait:
    description:
      - Wait until the rollout is done (or failed).
      - With V(false), the module carries out one step and returns; RV(phase) tells where the rollout stands, and
        running it again continues.
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds to wait with O(wait=true). On timeout the module fails with the state it saw last; the rollout is left
        as it stands (the DaemonSet controller goes on at its current C(maxUnavailable)) - run the module again to
        follow it, or with O(undo=true) to roll it back. Shorter than O(canary_timeout), it is warned of - the wait
        could end before the canary's own timeout halts or rolls back a canary that never becomes ready.
      - Refused with O(wait=false) when it differs from the default (nothing is waited for).
    type: int
    default: 3600
  operator_condition:
    description:
      - Name of the OperatorCondition (C(operators.coreos.com/v2)) of the operator running the rollout, for use inside
        an Ansible operator installed by OLM v0 - OLM sets the environment variable E(OPERATOR_CONDITION_NAME) in the
        operator's pods, so pass V({{ lookup('ansible.builtin.env', 'OPERATOR_CONDITION_NAME') }}).
      - While the rollout runs (phases V(canary), V(fast), V(paused), V(rollingback)) and when it is halted, the
        module sets the condition C(Upgradeable=False) in the OperatorCondition's C(spec.conditions), reason
        C(CanaryRolloutInProgress), with a message naming the DaemonSet and the phase. OLM then keeps a new version of
        the operator from replacing this one (its CSV stays C(Pending), reason C(OperatorConditionNotUpgradeable))
        until the rollout is over - the practice of KubeVirt's hyperconverged-cluster-operator.
      - Once the rollout is done or rolled back, the module sets C(Upgradeable=True) (reason
        C(CanaryRolloutCompleted) or C(CanaryRolledBack)) rather than removing the entry, because OLM copies
        C(spec.conditions) to C(status.conditions) and never removes an entry there.
      - Only the C(Upgradeable) condition is changed, with a JSON patch guarded by the OperatorCondition's
        C(resourceVersion); other conditions and C(spec.overrides) are kept. An C(Upgradeable=False) set by someone
        else (the operator itself, the rollout of another DaemonSet) is left as it is and never turned C(True); roll
        several DaemonSets of one operator out one after the other.
      - Needs C(get) and C(patch) on the OperatorCondition, which the Role OLM creates for the operator's service
        account grants.
    type: str
  operator_condition_namespace:
    description:
      - Namespace of O(operator_condition) (the operator's namespace).
      - Default - the namespace of the pod the module runs in (read from
        C(/var/run/secrets/kubernetes.io/serviceaccount/namespace), as operator-lib does); outside a pod the module
        fails and asks for this option.
    type: str
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details:
      - The next patch is sent as a server-side dry run; C(changed) predicts whether a run would change anything.
        Nothing is waited for.
  diff_mode:
    support: full
    details: The pod template and update strategy before and after.
  platform:
    platforms: posix
notes:
  - Changing the template of a DaemonSet during a rollout by other means makes the module stop with an error
    rather than continue with a template it did not check.
seealso:
  - name: DaemonSet rolling updates
    description: Kubernetes documentation of DaemonSet update strategies.
    link: https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/
"""

EXAMPLES = r"""
- name: Roll the agent image out, one canary node first, then 10% of the nodes at a time
  kubeforge.operators.daemonset_canary:
    name: node-agent
    namespace: kube-system
    images:
      agent: registry.example.com/agent:v2

- name: Roll back automatically when the canary fails
  kubeforge.operators.daemonset_canary:
    name: node-agent
    namespace: kube-system
    images:
      agent: registry.example.com/agent:v3
    batch: "25%"
    canary_timeout: 120
    on_failure: rollback

- name: Canary on the nodes labelled canary=true in zone a, then pause for a look
  kubeforge.operators.daemonset_canary:
    name: node-agent
    namespace: kube-system
    images:
      agent: registry.example.com/agent:v2
    canary_node_selector: topology.kubernetes.io/zone=a,canary=true
    pause_after_canary: true

- name: One step per run (an operator reconcile), OLM upgrades of the operator blocked meanwhile
  kubeforge.operators.daemonset_canary:
    name: node-agent
    namespace: kube-system
    images:
      agent: registry.example.com/agent:v2
    wait: false
    operator_condition: "{{ lookup('ansible.builtin.env', 'OPERATOR_CONDITION_NAME') }}"
  register: step
  until: step.phase == "done"
  retries: 60
  delay: 5

- name: Undo a halted (or paused, or running) canary rollout - the previous revision everywhere again
  kubeforge.operators.daemonset_canary:
    name: node-agent
    namespace: kube-system
    undo: true
"""

RETURN = r"""
phase:
  description:
    - Where the rollout stands after the run. V(done) (every node runs the template, strategy restored; after
      O(undo=true), the previous revision runs again and no rollout annotation is left), V(canary), V(fast),
      V(rollingback) (in progress, with O(wait=false)), V(paused), V(halted) or V(rolledback).
  returned: always
  type: str
  sample: done
daemonset:
  description: The DaemonSet, trimmed to C(name), C(namespace), C(generation), C(strategy) and its canary annotations.
  returned: always
  type: dict
  sample: {"name": "node-agent", "namespace": "kube-system", "generation": 4, "annotations": {},
           "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}}
desired_number_scheduled:
  description: C(status.desiredNumberScheduled) of the DaemonSet.
  returned: always
  type: int
updated_number_scheduled:
  description: C(status.updatedNumberScheduled) of the DaemonSet.
  returned: always
  type: int
number_available:
  description: C(status.numberAvailable) of the DaemonSet.
  returned: always
  type: int
revision_hash:
  description: The C(controller-revision-hash) of the DaemonSet's current template.
  returned: always
  type: str
events:
  description: The Events the run recorded on the DaemonSet, in order (C(type), C(reason), C(message)).
  returned: always
  type: list
  elements: dict
failure:
  description: Why the rollout failed (also in C(msg) when the module fails).
  returned: always
  type: str
message:
  description: What the last step did or waits for.
  returned: always
  type: str
canary_nodes:
  description:
    - The canary nodes of a node-selective rollout (O(canary_nodes), or the nodes O(canary_node_selector) matched when
      the rollout started), as recorded on the DaemonSet; in check mode, the ones the first patch would record.
      Empty otherwise.
  returned: always
  type: list
  elements: str
  sample: ["worker-3", "worker-7"]
operator_condition:
  description: The OperatorCondition of O(operator_condition) after the run.
  returned: when O(operator_condition) is set
  type: dict
  contains:
    name:
      description: Its name.
      type: str
      returned: always
    namespace:
      description: Its namespace.
      type: str
      returned: always
    changed:
      description: Whether the run changed it (in check mode - would change it).
      type: bool
      returned: always
    upgradeable:
      description:
        - Its C(Upgradeable) entry in C(spec.conditions) (C(status), C(reason), C(message), C(lastTransitionTime)), or
          V(null) when it has none.
      type: dict
      returned: always
      sample: {"status": "False", "reason": "CanaryRolloutInProgress", "lastTransitionTime": "2026-11-23T15:33:10Z",
               "message": "DaemonSet kube-system/node-agent: canary rollout in phase fast"}
duration:
  description: Seconds the run took.
  returned: always
  type: float
diff:
  description: The pod template and update strategy before and after.
  returned: when changed and diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.args import rollout_options
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.rollout import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (Unused(("wait_timeout",), lambda p: p["wait"], "with wait=false (the module takes one step and returns)"),)


def argspec():
    return {
        "name": {"type": "str", "required": True},
        "namespace": {"type": "str", "required": True},
        "template": {"type": "dict"},
        "images": {"type": "dict"},
        **rollout_options(),
        "on_failure": {"type": "str", "choices": ["halt", "rollback"], "default": "halt"},
        "canary_nodes": {"type": "list", "elements": "str"},
        "canary_node_selector": {"type": "str"},
        "pause_after_canary": {"type": "bool", "default": False},
        "undo": {"type": "bool", "default": False},
        "wait": {"type": "bool", "default": True},
        "wait_timeout": {"type": "int", "default": 3600},
        "operator_condition": {"type": "str"},
        "operator_condition_namespace": {"type": "str"},
    }


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        mutually_exclusive=[("template", "images"), ("canary_nodes", "canary_node_selector")],
        required_by={"operator_condition_namespace": "operator_condition"},
        supports_check_mode=True,
    )
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
