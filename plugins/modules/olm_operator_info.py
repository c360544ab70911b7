#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_operator_info
short_description: State of operators installed through OLM v0, with the versions their catalog offers
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Reports, for one operator, for every Subscription of a namespace or for every Subscription of the cluster, what
    Operator Lifecycle Manager v0 shows -
    the Subscription's state and its abnormal conditions, the installed ClusterServiceVersion (CSV), InstallPlans
    still waiting (for example for approval) and the CSVs they would install, and the channels and versions the
    catalog offers, with the versions of the subscribed channel newer than the installed one.
  - Catalog channels and versions come from the PackageManifest API (C(packages.operators.coreos.com/v1), served by
    OLM's packageserver), as the OpenShift console reads them. When the cluster does not serve that API, or it
    cannot be read, RV(operator.catalog) is V(null) and a warning says why; the rest is still reported.
  - When the discovery cache lists OLM v1 (C(olm.operatorframework.io/v1)), the ClusterExtensions that install into
    O(namespace) (every one without O(namespace); of O(package) when given) are reported too, as
    RV(cluster_extensions) (one cluster-wide LIST),
    unless only O(subscription_name) is given. Users who may not list ClusterExtensions get a warning instead.
  - Read-only, for dashboards and AWX surveys. A few API requests per run - one each for the Subscriptions, the CSVs
    and the InstallPlans of the namespace (or of the cluster), plus one PackageManifest request per operator.
options:
  namespace:
    description:
      - Namespace of the Subscriptions.
      - Without it, the Subscriptions of every namespace (of O(package) when given) are reported, as RV(operators);
        this needs permission to list Subscriptions, CSVs and InstallPlans cluster-wide, and O(subscription_name),
        O(catalog) and O(catalog_namespace) are refused.
    type: str
  package:
    description:
      - Package of the operator to report (the Subscription's C(spec.name)); the result is RV(operator), or
        RV(operators) (one per namespace that has it) without O(namespace).
      - Without it and without O(subscription_name), every Subscription of O(namespace) is reported, as RV(operators).
    type: str
  subscription_name:
    description:
      - Name of the Subscription to report; the result is RV(operator). Needs O(namespace).
      - Without it, the Subscription of O(namespace) whose C(spec.name) is O(package).
      - The module fails when both are set and this Subscription is for another package.
    type: str
    aliases: [name]
  catalog:
    description:
      - CatalogSource to read channels and versions from when O(package) has no Subscription in O(namespace). A
        Subscription's own C(source) always wins.
      - Without it, the only catalog that has the package is used; when several have it, RV(operator.catalog) is
        V(null) and a warning lists them (a catalog in O(namespace) itself is preferred, like OLM does).
      - Refused without O(package), like O(catalog_namespace) (a Subscription names its own catalog).
    type: str
  catalog_namespace:
    description:
      - Namespace of O(catalog), with the same rules.
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
  - Copied CSVs (label C(olm.copiedFrom)), which OLM puts into an operator's target namespaces, are not installations
    and are ignored.
  - RV(operator.available_upgrades) lists the channel's newer versions whatever the upgrade graph says; OLM reaches
    them one InstallPlan at a time (C(replaces), C(skips), C(skipRange)).
  - An InstallPlan belongs to every Subscription it has an owner reference to; OLM plans a namespace at once, so
    RV(operator.pending_install_plans[].csvs) may include other operators' CSVs, which approving it approves too.
seealso:
  - module: kubeforge.operators.olm_operator
  - name: OLM v0 Subscription and InstallPlan API
    description: The objects this module reads.
    link: https://github.com/operator-framework/api
"""

EXAMPLES = r"""
- name: Read the state of kube-demo
  kubeforge.operators.olm_operator_info:
    namespace: kube-demo
    package: kube-demo
  register: demo

- name: Show what a Manual upgrade would install
  ansible.builtin.debug:
    msg: >-
      {{ demo.operator.csv.version }} installed, upgrades {{ demo.operator.available_upgrades | join(', ') }},
      waiting plans {{ demo.operator.pending_install_plans | map(attribute='name') | join(', ') }}
  when: demo.operator.upgrade_available

- name: Every operator of a namespace, for a dashboard
  kubeforge.operators.olm_operator_info:
    namespace: openshift-operators
  register: all_operators

- name: Every operator of the cluster, with where each is installed
  kubeforge.operators.olm_operator_info:
  register: cluster_operators

- name: Where each operator runs
  ansible.builtin.debug:
    msg: "{{ cluster_operators.operators | map(attribute='namespace') | zip(cluster_operators.operators | map(attribute='package')) }}"

- name: Operators with problems
  ansible.builtin.debug:
    msg: "{{ item.package }}: {{ item.subscription.conditions | map(attribute='type') | join(', ') }}"
  loop: "{{ all_operators.operators | selectattr('subscription.conditions') }}"
  loop_control:
    label: "{{ item.package }}"

- name: Versions offered before installing (AWX survey choices)
  kubeforge.operators.olm_operator_info:
    namespace: kube-demo
    package: kube-demo
    catalog: kube-demo-catalog
  register: offer

- name: Survey choices from the default channel
  ansible.builtin.set_fact:
    version_choices: >-
      {{ (offer.operator.catalog.channels | selectattr('name', 'equalto', offer.operator.catalog.default_channel)
          | first).versions }}
  when: offer.operator.catalog is not none
"""

RETURN = r"""
operator:
  description:
    - The operator of O(package) or O(subscription_name) in O(namespace).
    - When the package has no Subscription, RV(operator.present) is V(false) and RV(operator.catalog) still shows
      what the catalog offers.
  returned: when O(namespace) and O(package) or O(subscription_name) are set
  type: dict
  contains:
    package:
      description: The package (the Subscription's C(spec.name)); V(null) when only O(subscription_name) was given
        and that Subscription does not exist.
      type: str
      sample: kube-demo
    namespace:
      description: The namespace (O(namespace)).
      type: str
      sample: kube-demo
    present:
      description: Whether a Subscription for the operator exists.
      type: bool
      sample: true
    subscription:
      description: The Subscription; V(null) when RV(operator.present) is V(false).
      type: dict
      contains:
        name:
          description: Name of the Subscription.
          type: str
          sample: kube-demo
        channel:
          description: Subscribed channel (C(spec.channel)); V(null) means the package's default channel.
          type: str
          sample: stable
        source:
          description: CatalogSource (C(spec.source)).
          type: str
          sample: kube-demo-catalog
        source_namespace:
          description: Namespace of the CatalogSource (C(spec.sourceNamespace)).
          type: str
          sample: kube-demo
        approval:
          description: C(spec.installPlanApproval), V(Automatic) or V(Manual).
          type: str
          sample: Manual
        starting_csv:
          description: C(spec.startingCSV).
          type: str
          sample: kube-demo.v0.0.1
        state:
          description: C(status.state) - V(UpgradePending), V(AtLatestKnown), V(UpgradeAvailable), V(UpgradeFailed),
            or V(null) before OLM has reconciled it. V(AtLatestKnown) only means that the CSV exists; see
            RV(operator.installed).
          type: str
          sample: UpgradePending
        current_csv:
          description: C(status.currentCSV), the CSV OLM is progressing to.
          type: str
          sample: kube-demo.v0.0.2
        installed_csv:
          description: C(status.installedCSV).
          type: str
          sample: kube-demo.v0.0.1
        install_plan:
          description: Name of the InstallPlan the Subscription refers to (C(status.installPlanRef)).
          type: str
          sample: install-pfk2t
        conditions:
          description:
            - The conditions with status C(True). Subscription conditions have abnormal-true polarity, so each is a
              problem or an install in progress - for example C(InstallPlanPending) (reason V(RequiresApproval)),
              C(ResolutionFailed), C(CatalogSourcesUnhealthy), C(BundleUnpackFailed), C(InstallPlanFailed) or a
              deprecation.
            - Empty when all is well.
          type: list
          elements: dict
          sample: [{type: InstallPlanPending, reason: RequiresApproval, message: null}]
        raw_conditions:
          description: All of C(status.conditions), as OLM wrote them.
          type: list
          elements: dict
    csv:
      description:
        - The installed CSV (the Subscription's C(status.installedCSV)); V(null) before it exists.
      type: dict
      contains:
        name:
          description: Name of the CSV.
          type: str
          sample: kube-demo.v0.0.1
        version:
          description: C(spec.version).
          type: str
          sample: 0.0.1
        phase:
          description: C(status.phase), for example V(Succeeded), V(Installing), V(Pending) or V(Failed).
          type: str
          sample: Succeeded
        reason:
          description: C(status.reason), for example V(InstallSucceeded) or V(RequirementsNotMet).
          type: str
          sample: InstallSucceeded
        message:
          description: C(status.message).
          type: str
          sample: install strategy completed with no errors
        display_name:
          description: C(spec.displayName).
          type: str
          sample: Kube Demo
    installed:
      description: Whether the installed CSV is C(Succeeded).
      type: bool
      sample: true
    installed_version:
      description: The installed version (the CSV's C(spec.version), or the catalog's version of
        RV(operator.subscription.installed_csv) when the CSV cannot be read); V(null) when nothing is installed.
      type: str
      sample: 0.0.1
    pending_install_plans:
      description: The Subscription's InstallPlans that are not C(Complete) or C(Failed), oldest first.
      type: list
      elements: dict
      contains:
        name:
          description: Name of the InstallPlan.
          type: str
          sample: install-pfk2t
        phase:
          description: C(status.phase) - V(RequiresApproval), V(Installing), V(Planning), or an empty string before
            OLM has reconciled it.
          type: str
          sample: RequiresApproval
        approved:
          description: C(spec.approved).
          type: bool
          sample: false
        approval:
          description: C(spec.approval), V(Automatic) or V(Manual).
          type: str
          sample: Manual
        csvs:
          description: The CSVs the plan installs (C(spec.clusterServiceVersionNames)); approving the plan
            approves all of them.
          type: list
          elements: str
          sample: [kube-demo.v0.0.2]
    catalog:
      description:
        - The package in the catalog, from the PackageManifest API; V(null) when that API is not served or cannot
          be read (a warning says why), or when the catalog does not have the package.
      type: dict
      contains:
        package:
          description: The package name.
          type: str
          sample: kube-demo
        default_channel:
          description: The package's default channel.
          type: str
          sample: stable
        catalog_source:
          description: Name of the CatalogSource.
          type: str
          sample: kube-demo-catalog
        catalog_source_namespace:
          description: Namespace of the CatalogSource.
          type: str
          sample: kube-demo
        catalog_source_display_name:
          description: The CatalogSource's C(spec.displayName).
          type: str
          sample: kube-demo test catalog
        provider:
          description: The operator's provider, the PackageManifest's C(status.provider.name) (which packageserver
            copies from a channel head's CSV, the default channel's when the package has one).
          type: str
          sample: kubeforge
        channels:
          description: The package's channels, in name order.
          type: list
          elements: dict
          contains:
            name:
              description: Channel name.
              type: str
              sample: stable
            current_csv:
              description: The channel head.
              type: str
              sample: kube-demo.v0.0.2
            current_version:
              description: Version of the channel head.
              type: str
              sample: 0.0.2
            versions:
              description: The versions of the channel, oldest first (semantic version order).
              type: list
              elements: str
              sample: [0.0.1, 0.0.2]
            entries:
              description: The bundles of the channel with their versions, in the order of RV(operator.catalog.channels[].versions).
              type: list
              elements: dict
              sample: [{name: kube-demo.v0.0.1, version: 0.0.1}, {name: kube-demo.v0.0.2, version: 0.0.2}]
    available_upgrades:
      description:
        - Versions of the subscribed channel (the default channel when the Subscription names none) newer than
          RV(operator.installed_version), oldest first.
        - Empty when nothing is installed or the catalog is unknown.
      type: list
      elements: str
      sample: [0.0.2]
    upgrade_available:
      description: Whether RV(operator.available_upgrades) is not empty, or OLM already progresses to a CSV other
        than the installed one (C(currentCSV) differs from C(installedCSV)), which it can tell without the catalog.
      type: bool
      sample: true
operators:
  description: One record per Subscription of O(namespace) (of every namespace without it, of O(package) when given),
    in namespace and Subscription name order, each with the fields of RV(operator).
  returned: when neither O(package) nor O(subscription_name) is set, or without O(namespace)
  type: list
  elements: dict
  sample: [{package: kube-demo, present: true, installed: true, upgrade_available: false}]
cluster_extensions:
  description:
    - The OLM v1 ClusterExtensions whose C(spec.namespace) is O(namespace) (all of them without O(namespace); those
      whose package is O(package) when given), by name.
  returned: when the discovery cache lists C(olm.operatorframework.io/v1) and ClusterExtensions may be listed, unless
    only O(subscription_name) is set
  type: list
  elements: dict
  contains:
    name:
      description: Name of the ClusterExtension.
      type: str
    package:
      description: Its package.
      type: str
    namespace:
      description: Its install namespace.
      type: str
    version_constraint:
      description: C(spec.source.catalog.version); V(null) when not set.
      type: str
    channels:
      description: C(spec.source.catalog.channels).
      type: list
      elements: str
    upgrade_constraint_policy:
      description: V(CatalogProvided) or V(SelfCertified).
      type: str
    installed_bundle:
      description: Name of the installed bundle; V(null) before one is installed.
      type: str
    installed_version:
      description: Its version.
      type: str
    installed:
      description: Whether operator-controller reports the current generation installed (C(Installed=True),
        C(Progressing=True/Succeeded)).
      type: bool
    conditions:
      description: The C(Installed) and C(Progressing) conditions (C(status), C(reason), C(message), and C(current)
        - whether they describe the current generation).
      type: dict
  sample:
    - name: kube-demo
      package: kube-demo
      namespace: kube-demo
      version_constraint: ">=0.0.1 <0.1.0"
      channels: []
      upgrade_constraint_policy: CatalogProvided
      installed_bundle: kube-demo.v0.0.2
      installed_version: 0.0.2
      installed: true
      conditions:
        Installed: {status: "True", reason: Succeeded, message: Installed bundle ... successfully, current: true}
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (
    Unused(
        ("catalog", "catalog_namespace"),
        lambda p: p["package"],
        "without package (they choose the catalog of a package that has no Subscription; a Subscription names its own)",
    ),
)


def argspec():
    return dict(
        namespace=dict(type="str"),
        package=dict(type="str"),
        subscription_name=dict(type="str", aliases=["name"]),
        catalog=dict(type="str"),
        catalog_namespace=dict(type="str"),
    )


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
