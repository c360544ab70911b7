#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_operator
short_description: Install, upgrade or remove an operator through OLM v0, failing early with OLM's own reason
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Installs an operator from a CatalogSource through Operator Lifecycle Manager v0 (Subscription, InstallPlan,
    ClusterServiceVersion) and waits until its ClusterServiceVersion (CSV) is C(Succeeded). A Subscription state of
    C(AtLatestKnown) alone is not taken as installed.
  - Creates an OperatorGroup only when the namespace has none, choosing the install mode from the operator's
    C(installModes) (from the PackageManifest API when the cluster serves it); refuses a namespace with more than one.
  - Approves only InstallPlans whose CSVs are exactly the operator's own (plus dependencies OLM adds for it,
    unless O(approve_dependencies=false)). OLM plans a whole namespace at once, so a plan that also carries
    other Subscriptions' CSVs is reported and left unapproved, and so is a plan that takes the operator's CSV from
    another CatalogSource than the Subscription's (resolved before O(catalog) changed, to a mirror for example).
  - With O(version), pins the version (C(startingCSV) and Manual approval) and upgrades an installed operator
    one InstallPlan at a time along the channel's upgrade graph until that version; never past it.
  - 'Fails as soon as OLM reports a terminal problem, with OLM''s message - ResolutionFailed
    (ConstraintsNotSatisfiable), a failed bundle unpack or InstallPlan, a C(Failed) CSV (for example
    InstallCheckFailed, NoOperatorGroup, UnsupportedOperatorGroup), an unhealthy CatalogSource (also an image
    catalog whose registry pod cannot start - crash loop, image pull, container creation) - and when the
    operator''s pods cannot be created (the ReplicaSet''s FailedCreate message, for example a Pod Security
    admission rejection; an admission webhook the API server cannot call at all counts after 30 s, since the
    ReplicaSet controller retries), crash-loop or cannot pull their image (once the kubelet backs off), instead of
    waiting for OLM to fail the CSV. A failure found in the pods leads the message, followed by what OLM shows for the CSV (its
    phase and message). Two states OLM would wait on for good fail 30 s in - a CSV C(Pending) with
    C(RequirementsNotMet) (each requirement that is not present is named) and an operator pod the scheduler has not
    placed (the scheduler''s message).'
  - 'OLM v0.46.0 itself fails a CSV whose Deployment does not become ready (C(Failed), reason C(InstallCheckFailed))
    only once the CSV has been in phase C(Installing) for 5 minutes (message C(install timeout);
    C(pkg/controller/operators/olm/operator.go), counted from the CSV''s C(status.lastTransitionTime), which every
    phase change restarts, for example a return to C(InstallReady)), or once the Deployment reports
    C(ProgressDeadlineExceeded) after its C(progressDeadlineSeconds) (600 s unless the CSV''s Deployment spec sets
    it; message C(install failed: deployment ... not ready before timeout); C(pkg/controller/install/status_viewer.go)
    and C(deployment.go)). OLM retries the first at once (C(NeedsReinstall), then C(Installing) again, for another 5
    minutes), not the second; on the project''s testbed a crash-looping operator''s CSV was C(Failed) for a moment at 5
    minutes and for good at 10.'
  - Three transient states are waited past, not failed on - a ResolutionFailed recorded before the CatalogSource
    is C(READY) (OLM resolves a Subscription made with its catalog before connecting to it; a failure recorded with
    the catalog C(READY) stays final after a 5 s grace), a ResolutionFailed while the InstallPlan the module approved
    is installing (OLM resolves again meanwhile, for example about a dependency's CSV), and, with O(version), the
    InstallPlan of the next upgrade that OLM makes while the requested CSV installs (left unapproved).
  - O(state=absent) removes the operator in operator-sdk's cleanup order - Subscription, (optionally) operands
    and owned CRDs, CSV, then the OperatorGroup if this module created it and nothing else uses it.
  - Waiting uses the Kubernetes watch API on the namespace's Subscription, InstallPlans, CSVs, ReplicaSets and
    pods; there is no polling interval.
options:
  state:
    description:
      - V(present) installs or upgrades the operator; V(absent) removes it.
    type: str
    choices: [present, absent]
    default: present
  package:
    description:
      - Name of the operator's package in the catalog (the Subscription's C(spec.name)).
    type: str
    required: true
  namespace:
    description:
      - Namespace the operator is installed into (the Subscription's namespace). Created when missing (then named
        in RV(created)); O(state=absent) never deletes it, since other objects may live there.
    type: str
    required: true
  channel:
    description:
      - Channel to subscribe to. Without it OLM uses the package's default channel.
    type: str
  catalog:
    description:
      - Name of the CatalogSource that provides the package (the Subscription's C(source)). Required with
        O(state=present).
    type: str
    aliases: [source]
  catalog_namespace:
    description:
      - Namespace of the CatalogSource (the Subscription's C(sourceNamespace)). Defaults to O(namespace).
    type: str
    aliases: [source_namespace]
  subscription_name:
    description:
      - Name of the Subscription. Defaults to O(package).
    type: str
  version:
    description:
      - Version of the operator to install or upgrade to (the CSV's C(spec.version), for example V(0.0.2)).
      - For a new Subscription it becomes C(startingCSV) (the CSV name comes from the PackageManifest API, or
        C(<package>.v<version>) when the cluster does not serve it). Needs O(approval=Manual), the default
        with a version; O(approval=Automatic) with a version is refused (OLM would upgrade past it on its own).
      - When an older version is installed, the module approves one InstallPlan at a time along the upgrade
        graph until this version is installed. It fails when the next step would go past this version, and when
        a newer version is already installed (OLM does not downgrade).
      - Without it, the module installs what OLM resolves and, with O(approval=Manual), approves no upgrades.
      - Mutually exclusive with O(starting_csv).
    type: str
  starting_csv:
    description:
      - The CSV to install or upgrade to, by name (the Subscription's C(startingCSV), for example
        V(kube-demo.v0.0.2)), as an alternative to O(version) for those used to OLM's field or to
        C(redhatci.ocp)'s roles.
      - The module looks the name up in the channel's entries (the PackageManifest API) and then behaves exactly as
        with O(version) set to that CSV's version; a name the channel does not list is refused, naming the ones
        it does. Mutually exclusive with O(version).
    type: str
  approval:
    description:
      - The Subscription's C(installPlanApproval).
      - With V(Manual), OLM waits for approval of every InstallPlan; the module approves the ones that install
        this operator (first install, and upgrades up to O(version)) after checking their content.
      - Defaults to V(Manual) when O(version) or O(starting_csv) is set, else V(Automatic).
    type: str
    choices: [Automatic, Manual]
  target_namespaces:
    description:
      - Namespaces the operator watches, when the module creates the OperatorGroup. An empty list means all
        namespaces; the operator's own namespace alone means OwnNamespace.
      - Without it, the module picks OwnNamespace if the operator supports it (least privilege), else AllNamespaces.
      - When the namespace already has an OperatorGroup, the module checks that its targets equal these.
    type: list
    elements: str
  operator_group_name:
    description:
      - Name of the OperatorGroup the module creates when the namespace has none. Defaults to O(namespace).
    type: str
  operator_group_spec:
    description:
      - More of the C(spec) of the OperatorGroup the module creates - C(upgradeStrategy) (V(Default) or
        V(TechPreviewUnsafeFailForward)), C(serviceAccountName), C(selector) (a label selector choosing the target
        namespaces, instead of O(target_namespaces), which it cannot be combined with).
      - When the namespace already has an OperatorGroup, the module fails if that one differs in any of these fields
        (an OperatorGroup is shared by every operator in its namespace), and changes nothing.
    type: dict
  namespace_labels:
    description:
      - Labels O(namespace) gets - on creation, or added to (or changed on) the existing namespace; other labels are
        kept. For example Pod Security Admission levels or C(openshift.io/cluster-monitoring). RV(namespace_labels)
        returns the labels this run set.
    type: dict
  config:
    description:
      - The Subscription's C(spec.config) (env, resources, nodeSelector, tolerations, volumes, ...), passed as is.
      - OLM v0 applies it to the operator's Deployment only once the Subscription's C(installedCSV) names the CSV; a Deployment it
        created before that gets the config only when it becomes available. A pod that cannot start without its config (on the
        only nodes it tolerates, say) then stays without it, and the module fails naming that.
      - The module is done only when every pod of the operator carries the config; a pod with the config that
        cannot run (an image the node the config selects cannot pull, say) fails the module at once.
    type: dict
  approve_dependencies:
    description:
      - Whether an InstallPlan may also install the dependencies OLM resolved for this operator (CSVs that come
        with a new Subscription in the same plan). With V(false) such a plan is left unapproved.
      - V(false) needs O(approval=Manual), given or implied by O(version). With V(Automatic) OLM approves every
        plan itself, so the module refuses that combination.
      - V(false) is refused with O(wait=false) (InstallPlans are approved only while the module waits).
    type: bool
    default: true
  delete_crds_and_data:
    description:
      - With O(state=absent), also delete every custom resource of the operator's owned CRDs (in all namespaces,
        waiting while the operator processes their finalizers) and then the CRDs themselves.
      - With O(wait=true), the ClusterRoles and ClusterRoleBindings OLM created from the bundle and leaves behind
        (labelled C(olm.owner=<csv>)) are deleted too, once no namespace runs that CSV any more; an OLM v1
        ClusterExtension installing the same operator needs them gone.
      - B(This deletes user data.) OLM itself never deletes CRDs.
      - Named as in M(kubeforge.operators.olm_cluster_extension); the former name C(remove_crds) is an alias.
      - Refused with O(state=present) and with O(wait=false) (it would have no effect there).
    type: bool
    default: false
    aliases: [remove_crds]
  wait:
    description:
      - Wait until the operator's CSV is C(Succeeded) (or, for O(state=absent), until the CSV is gone).
      - Without waiting, nothing is approved.
    default: true
  wait_timeout:
    description:
      - Seconds to wait. On timeout the module fails with the Subscription state, the InstallPlan phase and the
        CSV phase and reason it saw last.
    default: 600
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.k8s_wait
attributes:
  check_mode:
    support: full
    details:
      - The module reads the cluster once, decides the writes a real run would make (namespace, OperatorGroup,
        Subscription) and the InstallPlan it would approve first, and reports them without sending any; nothing is
        approved or waited for. A real run executes the same decision, so both report the same objects.
      - A package the catalog does not serve fails in check mode as in a real run; while the CatalogSource does
        not exist or serves no package yet, the install is predicted, with a warning.
  diff_mode:
    support: full
  platform:
    platforms: posix
notes:
  - Dependencies OLM installs for the operator keep their own Subscriptions and are not removed with O(state=absent).
seealso:
  - module: kubeforge.operators.olm_operator_info
  - module: kubeforge.operators.olm_catalog_source
"""

EXAMPLES = r"""
- name: Install kube-demo 0.0.1 and keep it there
  kubeforge.operators.olm_operator:
    package: kube-demo
    channel: stable
    namespace: kube-demo
    catalog: kube-demo-catalog
    version: 0.0.1
    approval: Manual

- name: Upgrade it to 0.0.2 (one InstallPlan at a time)
  kubeforge.operators.olm_operator:
    package: kube-demo
    channel: stable
    namespace: kube-demo
    catalog: kube-demo-catalog
    version: 0.0.2
    approval: Manual

- name: Install the latest version and let OLM upgrade it, watching all namespaces
  kubeforge.operators.olm_operator:
    package: kube-demo
    namespace: operators
    catalog: operatorhubio-catalog
    catalog_namespace: olm
    approval: Automatic

- name: Remove it, with its CRDs and all their custom resources
  kubeforge.operators.olm_operator:
    state: absent
    package: kube-demo
    namespace: kube-demo
    delete_crds_and_data: true
"""

RETURN = r"""
subscription:
  description: The Subscription after the run (with O(state=present)).
  returned: state is present
  type: dict
csv:
  description: The installed ClusterServiceVersion (None before the first install completes).
  returned: state is present
  type: dict
installed_csv:
  description: The Subscription's C(status.installedCSV).
  returned: state is present
  type: str
  sample: kube-demo.v0.0.2
current_csv:
  description: The Subscription's C(status.currentCSV) (the CSV OLM is progressing to).
  returned: state is present
  type: str
version:
  description: The installed CSV's C(spec.version).
  returned: state is present
  type: str
  sample: 0.0.2
phase:
  description: The installed CSV's phase.
  returned: state is present
  type: str
  sample: Succeeded
approved_install_plans:
  description: InstallPlans this run approved, in order (one per upgrade step). Also returned on failure.
  returned: state is present
  type: list
  elements: str
created:
  description:
    - What this run created - C(namespace), C(operator_group), C(subscription) (names).
    - In check mode, what a real run would create (nothing is created); the diff then shows the namespace, the
      OperatorGroup (its C(targetNamespaces), so the install mode) and the Subscription it would create.
  returned: state is present
  type: dict
namespace_labels:
  description: The labels of O(namespace_labels) this run set (or, in check mode, would set).
  returned: when it set some
  type: dict
  sample: {"pod-security.kubernetes.io/enforce": "baseline"}
removed:
  description: What O(state=absent) removed - C(subscription), C(csv), C(operator_group), C(operands), C(crds),
    C(cluster_objects) (the ClusterRoles and ClusterRoleBindings OLM left, as V(Kind/name)).
  returned: state is absent
  type: dict
state:
  description:
    - What OLM showed at the end - C(subscription_state), C(subscription_conditions) (those with status True),
      C(installed_csv), C(current_csv), C(install_plan), C(install_plan_phase), C(csv_phase), C(csv_reason),
      C(csv_message).
    - The same keys are returned at the top level of a failure or timeout, with C(reason) (OLM's reason, or ours
      such as C(ForeignCSVsInInstallPlan)) and C(waiting_for) (on timeout).
  returned: when the module waited
  type: dict
duration:
  description:
    - Seconds the module spent; in a failure or timeout, the seconds until it failed (so a role's report can tell
      what it adds).
  returned: state is present, and in a failure
  type: float
refused:
  description:
    - V(true) when the module refused before its first write, so the run changed nothing; the message and C(reason)
      say why (for example C(ConstraintsNotSatisfiable) for a package the CatalogSource does not serve, or options
      that contradict each other).
  returned: in a failure, when it refused before any write
  type: bool
  sample: true
would_approve:
  description:
    - In check mode, the InstallPlan a real run would approve first (an upgrade with O(approval=Manual) whose
      InstallPlan is pending) - C(install_plan), C(csvs) (the CSVs it carries) and C(message)
      (V(would approve InstallPlan <name> (CSV <csv>\))). A real run approves one InstallPlan per upgrade step, so
      a pinned O(version) more than one step ahead needs more than this one.
  returned: in check mode, when an InstallPlan would be approved
  type: dict
  sample: {"install_plan": "install-abcde", "csvs": ["kube-demo.v0.0.2"], "message": "would approve InstallPlan install-abcde (CSV kube-demo.v0.0.2)"}
diff:
  description:
    - With C(--diff), C(before) and C(after) of what the run changed (or, in check mode, would change) - C(subscription)
      (C(apiVersion), C(kind), C(metadata) without server bookkeeping such as C(managedFields) and
      C(resourceVersion), and C(spec); never the status OLM writes), C(namespace) and C(operator_group) when they
      are created, C(namespace_labels) set, and C(install_plans) approved (C(approved) and C(csvs) of each).
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.operator import APPROVAL_UNUSED, UNINSTALL_UNUSED
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.operator import execute


def argspec():
    return {
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "package": {"type": "str", "required": True},
        "namespace": {"type": "str", "required": True},
        "channel": {"type": "str"},
        "catalog": {"type": "str", "aliases": ["source"]},
        "catalog_namespace": {"type": "str", "aliases": ["source_namespace"]},
        "subscription_name": {"type": "str"},
        "version": {"type": "str"},
        "starting_csv": {"type": "str"},
        "approval": {"type": "str", "choices": ["Automatic", "Manual"]},
        "target_namespaces": {"type": "list", "elements": "str"},
        "operator_group_name": {"type": "str"},
        "operator_group_spec": {"type": "dict"},
        "namespace_labels": {"type": "dict"},
        "config": {"type": "dict"},
        "approve_dependencies": {"type": "bool", "default": True},
        "delete_crds_and_data": {"type": "bool", "default": False, "aliases": ["remove_crds"]},
        "wait": {"type": "bool", "default": True},
        "wait_timeout": {"type": "int", "default": 600},
    }


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        required_if=[("state", "present", ("catalog",))],
        mutually_exclusive=[("version", "starting_csv")],
        supports_check_mode=True,
    )
    module.run(execute, unused=UNINSTALL_UNUSED + (APPROVAL_UNUSED,))


if __name__ == "__main__":
    main()
