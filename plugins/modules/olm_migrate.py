#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_migrate
short_description: Move an operator installed by OLM v0 to OLM v1 (ClusterExtension) in place, and back
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Moves the operator that OLM v0 installed for the Subscription of O(package) in O(namespace) to a
    C(ClusterExtension) of OLM v1 (operator-controller v1.5.1) at the same version, keeping its CRDs, custom
    resources, their data and the running operator. Nothing is deleted and re-created - OLM v1 adopts the objects
    OLM v0 made.
  - "Eligibility first, before any write: the module reads the Subscription, the CSV, the OperatorGroup, the
    InstallPlans, the OperatorCondition, the copied CSVs, the CSVs that depend on the operator, every object of the
    OLM v1 release and the bundle of the installed version from the serving ClusterCatalogs, and refuses with every
    reason found (rules E1 to E14: an install mode other than C(AllNamespaces), dependencies, APIServices, webhooks,
    an OperatorCondition in use, a Subscription or CSV not at rest, a catalog that does not serve the installed
    version, an object another owner controls, a CRD the bundle's would not replace safely, a Deployment that differs
    from the bundle's, dependents). Check mode returns that verdict and the exact plan and writes nothing."
  - "The move, in this order: the backup of every object touched into O(backup_dir); the record (a ConfigMap nothing
    owns, C(olm-migrate-<subscription>) in O(namespace)); the Subscription's C(installPlanApproval) set to C(Manual);
    Helm's ownership keys (label C(app.kubernetes.io/managed-by=Helm), annotations C(meta.helm.sh/release-name) and
    C(meta.helm.sh/release-namespace)) on every object of the release that exists; the installer ServiceAccount with
    least-privilege RBAC; the ClusterExtension pinned to the installed version (server-side apply, field manager
    C(kubeforge)); the wait for C(Installed) at that version, each adopted object then controlled by the
    ClusterExtension; the Subscription deleted; OLM v0's owner labels removed from the cluster-scoped objects; the
    CSV deleted (its own RBAC, OperatorCondition and copies go with it, the adopted objects only lose its
    reference); OLM v0's remaining marks and the C(Operator) object removed; the OperatorGroup deleted when asked."
  - The record holds the plan and the last step done, so a run killed at any step resumes after it when run again,
    and a run after the move changes nothing.
  - If the ClusterExtension does not reach C(Installed) at the installed version within O(wait_timeout), or
    operator-controller reports a failure no retry fixes, the module rolls back - the installer's bindings removed, the
    ClusterExtension deleted with propagation C(Orphan) (never its CRDs) while a finalizer of the module
    (C(operators.kubeforge.io/olm-migrate-rollback)) holds it until OLM v1's references, labels and Helm's keys are
    off every adopted object (an adoption still in flight could otherwise leave a reference that makes the garbage
    collector delete a CRD once the ClusterExtension is gone), the objects OLM v1 created and its release Secrets
    deleted, the installer objects deleted, the Subscription's approval restored - and fails saying so. OLM v0 never
    stopped managing the operator until then.
options:
  package:
    description:
      - The operator's package (the Subscription's C(spec.name)).
    type: str
    required: true
  namespace:
    description:
      - The namespace of the operator's Subscription (and CSV), which becomes the ClusterExtension's C(spec.namespace).
    type: str
    required: true
  extension_name:
    description:
      - Name of the ClusterExtension to create (also the name of the Helm release operator-controller makes).
      - Defaults to O(package).
    type: str
  catalog:
    description:
      - The ClusterCatalog that serves the installed version; the ClusterExtension selects it by its
        C(olm.operatorframework.io/metadata.name) label.
      - Default - the serving ClusterCatalogs are searched (their images are read) and the first that has the
        installed version, by name, is selected.
    type: str
  service_account:
    description:
      - The installer ServiceAccount in O(namespace), created with the least-privilege RBAC derived from the bundle
        (get and patch on every adopted object included). Defaults to C(<extension_name>-installer).
      - Its objects carry M(kubeforge.operators.olm_cluster_extension)'s labels, so that module's
        O(kubeforge.operators.olm_cluster_extension#module:create_service_account=true) keeps them up to date afterwards.
    type: str
  backup_dir:
    description:
      - Directory the backup is written to before the first change - one JSON file per object the move touches
        (Subscription, CSV, OperatorGroup, InstallPlans, OperatorCondition, every object to adopt) and C(plan.json).
        A Secret is kept as its metadata and a SHA-256 of each value, never its data.
      - Required with O(state=migrated) unless in check mode.
    type: path
  delete_operator_group:
    description:
      - Delete the namespace's OperatorGroup at the end, when no other Subscription or CSV uses it. Its
        C(olm.og.<name>.*) ClusterRoles go with it.
    type: bool
    default: false
  state:
    description:
      - V(migrated) moves the operator (or resumes a move the record says is under way).
      - V(rolled_back) undoes a move the record says has not deleted anything of OLM v0 yet (up to the wait for
        C(Installed)), as the automatic rollback does. Once the Subscription is deleted the module refuses - OLM v1
        manages the operator then; finish with V(migrated).
      - A rollback that was interrupted (the record says C(rolling_back)) is finished with V(rolled_back); V(migrated)
        refuses until then. Before deleting the Subscription, a run reads the ClusterExtension again and refuses to go
        on unless it is C(Installed) at the installed version and controls every adopted object.
    type: str
    choices: [migrated, rolled_back]
    default: migrated
  wait_timeout:
    description:
      - Seconds to wait for the ClusterExtension to reach C(Installed), and for the CSV to be gone after its deletion.
    type: int
    default: 300
notes:
  - O(registry_auth) - How the module reads the ClusterCatalogs' images and the bundle image of the installed version.
    O(registry_auth.username) is for the registries of the ClusterCatalogs' images (and of bundle images on those
    registries). Other registries get credentials from O(registry_auth.docker_config) only.
  - OLM v1 v1.5.1 installs registry+v1 bundles in C(AllNamespaces) mode only, resolves no dependencies and refuses
    APIServices and (without its alpha feature gates) webhooks; such operators stay on OLM v0.
  - operator-controller's Helm adoption overwrites every value of the bundle that differs on the cluster, which is why
    a Deployment that differs (a Subscription C(spec.config), a scale, an edit) is refused (E12) rather than rolled.
  - After the move, M(kubeforge.operators.olm_cluster_extension) upgrades the ClusterExtension without
    O(kubeforge.operators.olm_cluster_extension#module:force_conflicts).
  - The way back after the Subscription is deleted (re-creating it from the backup) is not done by the module.
seealso:
  - module: kubeforge.operators.olm_cluster_extension
  - module: kubeforge.operators.olm_operator
  - module: kubeforge.operators.olm_cluster_catalog
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.registry_auth.dict_option
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The diff shows who manages the operator before and after the move (or the way back) - OLM v0's Subscription
        and CSV, or the ClusterExtension and its installer's RBAC - and the objects that change hands; RV(plan) lists
        every write.
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Show what moving argocd-operator to OLM v1 would do
  kubeforge.operators.olm_migrate:
    package: argocd-operator
    namespace: operators
  check_mode: true
  register: preview

- name: Show the reasons it cannot move, if any
  ansible.builtin.debug:
    msg: "{{ preview.refusals | map(attribute='reason') | list }}"
  when: not preview.eligible

- name: Move it, selecting the catalog that serves its installed version
  kubeforge.operators.olm_migrate:
    package: argocd-operator
    namespace: operators
    extension_name: argocd
    catalog: operatorhubio
    backup_dir: /var/backups/olm-migrate/argocd
    delete_operator_group: true
    wait_timeout: 600
  register: moved

- name: Undo a move that has not removed anything of OLM v0 yet
  kubeforge.operators.olm_migrate:
    package: argocd-operator
    namespace: operators
    extension_name: argocd
    state: rolled_back
"""

RETURN = r"""
eligible:
  description: Whether the operator can move (no refusal); V(true) when a recorded move is resumed.
  returned: with O(state=migrated), and with a record
  type: bool
refusals:
  description: Every reason the operator cannot move now, rules E1 to E14 in order.
  returned: with O(state=migrated), and with a record
  type: list
  elements: dict
  contains:
    rule:
      description: The rule, V(E1) to V(E14).
      type: str
      sample: E1
    subject:
      description: The object or bundle concerned.
      type: str
      sample: OperatorGroup operators/og-single
    reason:
      description: Why, and what to do about it.
      type: str
plan:
  description:
    - The plan of the move (the record's, when one is resumed) - C(package), C(namespace), C(subscription), C(csv),
      C(version), C(channel), C(catalog), C(install_plan_approval), C(record), C(extension) (the ClusterExtension
      to create), C(installer) (C(service_account), C(objects)), C(adopt) (each object with the labels and
      annotations set, what OLM v1 adds, the OLM v0 marks removed), C(create) (what OLM v1 creates), C(delete)
      (what is deleted from OLM v0, by whom), C(removed_by_olm), C(kept), C(notes) and C(steps) (C(name),
      C(writes)) in order.
  returned: with O(state=migrated), and with a record
  type: dict
steps_done:
  description: The steps done in this run, in order (names of the C(steps) of RV(plan)).
  returned: when a move ran or was looked at
  type: list
  elements: str
  sample: [record, freeze_v0, stamp_helm_ownership, create_installer, create_extension, wait_installed]
extension:
  description: The ClusterExtension.
  returned: when a plan exists
  type: dict
  contains:
    name:
      description: Its name.
      type: str
    installed_version:
      description: The version operator-controller reports installed; V(null) when it does not exist.
      type: str
      sample: 0.1.0
backup:
  description: Where the backup is.
  returned: when a plan exists
  type: dict
  contains:
    dir:
      description: O(backup_dir).
      type: str
    files:
      description: The files written (empty in check mode).
      type: list
      elements: str
rolled_back:
  description: Whether the OLM v1 side was undone (by this run, or by an earlier one with O(state=rolled_back)).
  returned: always
  type: bool
rollback:
  description: What the rollback did, one sentence per change.
  returned: when this run rolled back
  type: list
  elements: str
duration:
  description: Seconds the run took.
  returned: always
  type: float
msg:
  description: What happened, in one sentence.
  returned: always
  type: str
diff:
  description:
    - With C(--diff), when the run changes something (or, in check mode, would) - C(before) and C(after), each with
      C(operator) - C(managed_by) (V(OLM v0) or V(OLM v1)), C(version) and C(objects) (the objects that change hands),
      with C(subscription), C(csv) and C(install_plan_approval) on the OLM v0 side and C(cluster_extension) (the
      definition) and C(installer) (its RBAC objects) on the OLM v1 side. With O(state=rolled_back) the sides are
      swapped.
  returned: when diff mode is on and the run changes something
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.migration_cluster.migrate import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (
    Unused(
        ("catalog", "service_account", "backup_dir", "delete_operator_group", "registry_auth"),
        lambda p: p["state"] == "migrated",
        "with state=rolled_back (the way back follows the record's plan)",
    ),
)


def argspec():
    return dict(
        package=dict(type="str", required=True),
        namespace=dict(type="str", required=True),
        extension_name=dict(type="str"),
        catalog=dict(type="str"),
        service_account=dict(type="str"),
        backup_dir=dict(type="path"),
        delete_operator_group=dict(type="bool", default=False),
        state=dict(type="str", choices=["migrated", "rolled_back"], default="migrated"),
        wait_timeout=dict(type="int", default=300),
        registry_auth=dict(type="dict", options=registry_auth_argspec()),
    )


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
