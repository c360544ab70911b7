#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_cluster_extension
short_description: Install, upgrade or uninstall an operator with OLM v1 (ClusterExtension)
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Manages a C(ClusterExtension) (C(olm.operatorframework.io/v1), cluster-scoped) of Operator Lifecycle Manager v1
    with server-side apply (field manager C(kubeforge)). operator-controller resolves a bundle of O(package) from the
    ClusterCatalogs (see M(kubeforge.operators.olm_cluster_catalog)), pulls the bundle image and installs its
    content into O(namespace).
  - O(version) is a version constraint as operator-controller reads it (Masterminds/semver, for example
    V(>=1.2.0 <2.0.0), V(1.2.x), V(~1.2)). A range makes operator-controller upgrade inside it as the catalogs
    change; an exact version pins. O(channels) narrow the choice further.
  - With O(wait=true) the module watches the ClusterExtension until operator-controller has handled its current
    generation with C(Installed=True) and C(Progressing=True/Succeeded), and returns the installed bundle. It fails
    on C(Progressing=False) (C(Blocked), C(InvalidConfiguration), C(ProgressDeadlineExceeded)) with
    operator-controller's message, and also on the errors operator-controller only retries but no retry fixes (no
    bundle matches the request once every selected catalog is served, a bundle without the C(AllNamespaces) install
    mode, a missing ServiceAccount, missing permissions, a bundle image that cannot be pulled, an unsupported bundle,
    a failed CRD upgrade safety check, and a selected ClusterCatalog that catalogd cannot serve - operator-controller
    resolves nothing while one is not served). Other C(Retrying) messages are returned in RV(messages).
  - "ServiceAccount: operator-controller up to v1.10 requires C(spec.serviceAccount) and installs with that
    ServiceAccount's permissions; v1.11 and later ignore it. The module reads the cluster's ClusterExtension CRD and
    sends O(service_account) only when the CRD requires it. With O(create_service_account=true) it creates the
    ServiceAccount with least-privilege RBAC derived from every bundle the request allows (see notes)."
  - O(state=absent) deletes the ClusterExtension. operator-controller's installed objects are owned by it, so the
    garbage collector deletes them too, B(including its CRDs and with them every custom resource of those kinds in
    the cluster). That is why it is refused unless O(delete_crds_and_data=true).
options:
  name:
    description:
      - Name of the ClusterExtension.
    type: str
    required: true
  state:
    description:
      - V(present) installs or updates, V(absent) uninstalls (see O(delete_crds_and_data)).
      - An uninstall that does not end within O(wait_timeout) names what holds it - the ClusterExtension's own
        finalizers (operator-controller's to remove), and the CRDs it installed with the custom resources whose
        finalizers keep them (their operator, now uninstalled, will not remove those).
    type: str
    choices: [present, absent]
    default: present
  namespace:
    description:
      - Namespace the operator is installed into (C(spec.namespace), immutable). Created when missing.
      - Required with O(state=present).
    type: str
  package:
    description:
      - Package to install (C(spec.source.catalog.packageName), immutable). Required with O(state=present).
    type: str
  version:
    description:
      - Version constraint (C(spec.source.catalog.version), at most 64 characters), checked before anything is sent.
      - Without it, the newest version of the channels is installed and upgrades follow the catalog.
    type: str
  channels:
    description:
      - Channels to install from (C(spec.source.catalog.channels)); combined with O(version) (both must match).
    type: list
    elements: str
  catalog_selector:
    description:
      - Label selector (C(matchLabels), C(matchExpressions)) of the ClusterCatalogs to resolve from
        (C(spec.source.catalog.selector)); all catalogs when not set. Every ClusterCatalog carries the label
        C(olm.operatorframework.io/metadata.name) with its name.
    type: dict
  upgrade_constraint_policy:
    description:
      - V(CatalogProvided) (the server's default) allows only the upgrades the catalog's upgrade graph offers.
        V(SelfCertified) allows any version O(version) matches, downgrades included.
    type: str
    choices: [CatalogProvided, SelfCertified]
  crd_upgrade_safety:
    description:
      - C(spec.install.preflight.crdUpgradeSafety.enforcement). V(Strict) (the server's default) refuses upgrades
        whose CRD changes could break existing custom resources; V(None) skips that check.
    type: str
    choices: [Strict, None]
  config:
    description:
      - Inline bundle configuration, sent as C(spec.config) with C(configType=Inline) (for example
        C(watchNamespace)). Only newer operator-controller releases know this field; when the cluster's
        ClusterExtension CRD does not, the module fails before sending anything.
    type: dict
  service_account:
    description:
      - Name of the installer ServiceAccount in O(namespace) (C(spec.serviceAccount.name), immutable), sent only when
        the cluster's ClusterExtension CRD requires it. It must be allowed to create everything the bundle installs.
      - Defaults to C(<name>-installer) with O(create_service_account=true).
    type: str
  create_service_account:
    description:
      - Create (and keep up to date) the installer ServiceAccount with least-privilege RBAC derived from the bundles
        the request allows; only when the cluster requires a ServiceAccount.
      - The module reads the selected ClusterCatalogs' images and the bundle images with O(registry_auth), so it
        needs to reach the registries.
    type: bool
    default: false
  delete_crds_and_data:
    description:
      - Confirms O(state=absent), because deleting the ClusterExtension deletes the CRDs it installed and so all their
        custom resources. Without it the module fails, naming those CRDs, and deletes nothing.
      - Refused with O(state=present) (it would have no effect there).
    type: bool
    default: false
  force_conflicts:
    description:
      - With V(true) the module's values win over fields of the ClusterExtension another field manager owns.
      - The installer objects of O(create_service_account=true) (labelled as the module's, named after the extension)
        are always applied as the module's own, whatever this option says.
    type: bool
    default: false
notes:
  - O(registry_auth) - How the module reads catalog and bundle images, with O(create_service_account=true) only
    (refused without it, where it would have no effect). O(registry_auth.username) is for the
    registries of the selected ClusterCatalogs' images (and of bundle images on those registries). Other registries
    get credentials from O(registry_auth.docker_config) only.
  - "The derived installer RBAC follows upstream's guide (docs/howto/derive-service-account.md): C(update) of the
    ClusterExtension's finalizers; C(create), C(list) and C(watch) of every kind the bundle installs (lists and watches
    are cluster-wide because operator-controller watches installed objects in all namespaces); C(get), C(update),
    C(patch) and C(delete) only on the named objects (CRDs, Deployments, ServiceAccounts, the ClusterRoles and
    ClusterRoleBindings operator-controller generates, whose hashed names the module computes as operator-controller
    does, and the bundle's other manifests); and every rule the bundle's ClusterServiceVersion grants, because
    Kubernetes lets nobody grant permissions it does not hold. Wildcards appear only where the CSV itself has them."
  - The installer objects carry the label C(operators.kubeforge.io/created-by=kubeforge.operators.olm_cluster_extension)
    and are deleted with O(state=absent), after the deletion request (the garbage collector, not the installer,
    deletes what the extension installed). An existing ServiceAccount named by O(service_account) that the module did
    not create gets the RBAC but is neither labelled nor deleted.
  - Check mode sends the ClusterExtension with server-side dry run; nothing is created or waited for.
  - OLM v1 installs only bundles that support the C(AllNamespaces) install mode (others behind an alpha feature gate),
    without dependencies, webhooks need cert-manager or OpenShift's service CA. With O(create_service_account=true)
    the module refuses a request whose bundles OLM v1 cannot install before creating anything.
seealso:
  - module: kubeforge.operators.olm_cluster_catalog
  - module: kubeforge.operators.olm_operator_info
  - module: kubeforge.operators.bundle_image
  - name: OLM v1 ClusterExtension
    description: The upstream API reference.
    link: https://operator-framework.github.io/operator-controller/api-reference/olmv1-api-reference/
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.k8s_wait
  - kubeforge.operators.registry_auth.dict_option
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Install argocd-operator 0.6.x and follow its patch releases
  kubeforge.operators.olm_cluster_extension:
    name: argocd
    namespace: argocd
    package: argocd-operator
    version: ">=0.6.0 <0.7.0"
    channels: [alpha]
    create_service_account: true
    wait: true
    wait_timeout: 600
  register: argocd

- name: Show the installed version
  ansible.builtin.debug:
    msg: "{{ argocd.installed_bundle.name }} ({{ argocd.installed_version }})"

- name: Pin an exact version from one catalog only
  kubeforge.operators.olm_cluster_extension:
    name: argocd
    namespace: argocd
    package: argocd-operator
    version: 0.6.0
    catalog_selector:
      matchLabels:
        olm.operatorframework.io/metadata.name: operatorhubio
    wait: true

- name: Roll back to 0.5.0, which the catalog's upgrade graph does not offer
  kubeforge.operators.olm_cluster_extension:
    name: argocd
    namespace: argocd
    package: argocd-operator
    version: 0.5.0
    upgrade_constraint_policy: SelfCertified
    wait: true

- name: Uninstall, deleting its CRDs and every Argo CD custom resource
  kubeforge.operators.olm_cluster_extension:
    name: argocd
    state: absent
    delete_crds_and_data: true
    wait: true
"""

RETURN = r"""
cluster_extension:
  description: The ClusterExtension as stored (after waiting, the last state seen), without C(metadata.managedFields);
    V(null) once deleted.
  returned: always
  type: dict
installed_bundle:
  description: The installed bundle, C(status.install.bundle); V(null) before one is installed.
  returned: always
  type: dict
  sample: {name: argocd-operator.v0.6.0, version: 0.6.0}
installed_version:
  description: The installed bundle's version.
  returned: always
  type: str
  sample: 0.6.0
service_account:
  description: The installer ServiceAccount sent as C(spec.serviceAccount.name); V(null) when the cluster does not use one.
  returned: with O(state=present)
  type: str
  sample: argocd-installer
installer:
  description: What O(create_service_account=true) applied.
  returned: with O(create_service_account=true) on a cluster that requires a ServiceAccount
  type: dict
  contains:
    name:
      description: The ServiceAccount.
      type: str
    objects:
      description: Kind, name and namespace of each object applied.
      type: list
      elements: dict
    bundles:
      description: The bundles whose content the RBAC covers (every bundle the request allows).
      type: list
      elements: str
messages:
  description: The C(Progressing=True/Retrying) messages operator-controller reported while the module waited.
  returned: when the module waited
  type: list
  elements: str
deleted_crds:
  description: The CRDs operator-controller installed for the extension, which O(state=absent) deletes.
  returned: with O(state=absent) when the ClusterExtension existed
  type: list
  elements: str
duration:
  description: Seconds the run took, from reading the cluster (and, with O(create_service_account=true), the images)
    to the end of the wait; with O(state=absent), the wait for the deletion.
  returned: when the module waited
  type: float
diff:
  description: The ClusterExtension before and after.
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_extension import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (
    Unused(("delete_crds_and_data",), lambda p: p["state"] == "absent", "with state=present (it is part of the removal)"),
    Unused(
        ("registry_auth",),
        lambda p: p["create_service_account"],
        "without create_service_account=true (it reads catalog and bundle images to derive the installer's permissions)",
    ),
)


def argspec():
    return dict(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        namespace=dict(type="str"),
        package=dict(type="str"),
        version=dict(type="str"),
        channels=dict(type="list", elements="str"),
        catalog_selector=dict(type="dict"),
        upgrade_constraint_policy=dict(type="str", choices=["CatalogProvided", "SelfCertified"]),
        crd_upgrade_safety=dict(type="str", choices=["Strict", "None"]),
        config=dict(type="dict"),
        service_account=dict(type="str"),
        create_service_account=dict(type="bool", default=False),
        delete_crds_and_data=dict(type="bool", default=False),
        force_conflicts=dict(type="bool", default=False),
        registry_auth=dict(type="dict", options=registry_auth_argspec()),
    )


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        supports_check_mode=True,
        required_if=[("state", "present", ("namespace", "package"))],
    )
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
