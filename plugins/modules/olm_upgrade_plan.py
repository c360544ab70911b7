#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_upgrade_plan
short_description: Whether the installed operators allow an OpenShift upgrade, and what to do about those that do not
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Judges every operator installed through Operator Lifecycle Manager (OLM) v0 and v1 against a target OpenShift
    version, with the rule OLM itself applies before it lets a cluster take the next minor release - the
    C(olm.maxOpenShiftVersion) property of each installed ClusterServiceVersion (CSV) - and says, per operator, what
    to do before the upgrade.
  - The rule is OLM's (operator-lifecycle-manager v0.46.0, C(pkg/controller/operators/openshift/helpers.go)) - the
    property is read from the CSV's C(operatorframework.io/properties) annotation; only C(<major>.<minor>) counts;
    4.23 and 5.0 are the same release; copied CSVs are skipped; an invalid value, an empty one or two properties
    block (OLM fails closed) and are reported with OLM's words. RV(operators[].block_reason) and
    RV(olm_condition.message) are the text of OLM's ClusterOperator C(Upgradeable) condition.
  - OLM compares with the next minor release of the cluster it runs on; this module compares with O(openshift_version),
    so it answers the question before that release is the next one (for example two minors ahead, or for a cluster
    not yet on the release below the target).
  - With the target version's catalogs (O(catalogs)), it also reports per operator whether the catalog still has
    its package and channel, the upgrade path from the installed version to the first version whose
    C(olm.maxOpenShiftVersion) allows the target (following C(replaces), C(skips) and C(skipRange) like
    M(kubeforge.operators.catalog_graph)), the catalog's C(olm.deprecations) for the package, the channel and the
    installed bundle, and one action.
  - Read-only. Three API requests at most, whatever the number of operators - one LIST each of the CSVs and the
    Subscriptions of all namespaces, and of the ClusterExtensions when the discovery cache lists
    C(olm.operatorframework.io/v1). Needs permission to list them cluster-wide.
options:
  openshift_version:
    description:
      - The target OpenShift version, for example V(4.21) or V(4.21.3); only C(<major>.<minor>) counts, and V(4.23)
        means V(5.0) (RV(target)).
    type: str
    required: true
  catalogs:
    description:
      - The target version's catalog for each catalog operators are installed from.
      - Operators whose catalog is not in this list are still judged by OLM's rule, but get no path; a blocking one
        gets the action V(unknown).
    type: list
    elements: dict
    default: []
    suboptions:
      source:
        description:
          - The catalog the operators come from - the Subscriptions' CatalogSource (C(spec.source)) for OLM v0, the
            ClusterCatalog for OLM v1 (a ClusterExtension whose catalog selector names a ClusterCatalog by its
            C(olm.operatorframework.io/metadata.name) label is looked up in that entry only, others in every entry).
        type: str
        required: true
      source_namespace:
        description:
          - The CatalogSource's namespace (C(spec.sourceNamespace)); any namespace when not set.
        type: str
      image:
        description:
          - The target catalog's image reference, pulled with O(catalogs[].registry_auth).
          - Exactly one of O(catalogs[].image), O(catalogs[].dir) and O(catalogs[].file) is required.
        type: str
      dir:
        description:
          - The target catalog as a file-based catalog (FBC) directory.
        type: path
      file:
        description:
          - The target catalog as one rendered FBC file (a JSON stream or YAML documents, as C(opm render) writes).
        type: path
      registry_auth:
        description:
          - How the module pulls O(catalogs[].image); refused without it.
        type: dict
        suboptions:
          username:
            description:
              - Username for the registry of O(catalogs[].image).
            type: str
          password:
            description:
              - Password or token for O(catalogs[].registry_auth.username); never logged or returned.
            type: str
          docker_config:
            description:
              - Path of a docker C(config.json) with registry credentials.
            type: path
          ca_file:
            description:
              - PEM CA bundle to verify the registry's certificate, on top of the system trust store.
            type: path
          validate_certs:
            description:
              - Verify the registry's TLS certificate.
            type: bool
            default: true
          plain_http:
            description:
              - Plain HTTP to loopback test registries.
            type: bool
            default: false
          timeout:
            description:
              - Timeout in seconds of each registry request.
            type: int
            default: 60
  packages:
    description:
      - Only the operators of these packages; all of them when not set.
      - RV(blockers), RV(verdict) and RV(olm_condition) then only speak for these packages.
    type: list
    elements: str
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
  - OLM v1 ClusterExtensions have no CSV; the installed bundle's properties are read from the catalog entry that
    has the bundle (C(status.install.bundle)), so without its catalog RV(operators[].action.kind) is V(unknown).
    They are judged by the same rule but are not in RV(blockers) or RV(olm_condition), which only speak for CSVs as
    OLM's condition does.
  - RV(operators[].path) follows the shortest upgrade path to the channel head and stops at the first version whose
    maximum allows the target; a version off that path is not considered.
  - OLM's message lists the CSVs in the order of its informer cache, which is not defined; RV(olm_condition.message)
    orders them by namespace and name (error lines first, the others after them in the reverse of that order, like
    OLM's C(skews.String)). Compare the lines, not their order.
  - A properties annotation that is not valid JSON is reported with Python's description of the syntax error, not
    Go's (OLM writes that annotation itself, so this should not happen).
seealso:
  - module: kubeforge.operators.olm_operator_info
  - module: kubeforge.operators.catalog_graph
  - name: OLM's maxOpenShiftVersion check
    description: The rule this module applies (operator-lifecycle-manager, C(pkg/controller/operators/openshift/helpers.go)).
    link: https://github.com/operator-framework/operator-lifecycle-manager/blob/v0.46.0/pkg/controller/operators/openshift/helpers.go
"""

EXAMPLES = r"""
- name: Can this cluster go to OpenShift 4.21, and what must change first?
  kubeforge.operators.olm_upgrade_plan:
    openshift_version: "4.21"
    catalogs:
      - source: redhat-operators
        source_namespace: openshift-marketplace
        image: registry.redhat.io/redhat/redhat-operator-index:v4.21
        registry_auth:
          docker_config: /run/secrets/pull-secret.json
  register: plan

- name: Stop when an operator has no way forward
  ansible.builtin.assert:
    that: plan.verdict != 'blocked'
    fail_msg: "{{ plan.blockers | join(', ') }} block OpenShift {{ plan.target }}"

- name: What to do per operator
  ansible.builtin.debug:
    msg: "{{ item.namespace }}/{{ item.name }}: {{ item.action.kind }} {{ item.action.to_version }} ({{ item.action.reason }})"
  loop: "{{ plan.operators | rejectattr('action.kind', 'equalto', 'none') }}"
  loop_control:
    label: "{{ item.name }}"

- name: One operator, target catalog from a mirrored FBC directory
  kubeforge.operators.olm_upgrade_plan:
    openshift_version: 4.22.1
    packages: [kube-demo]
    catalogs:
      - source: kube-demo-catalog
        dir: /srv/catalogs/v4.22/configs
"""

RETURN = r"""
operators:
  description:
    - One record per installed operator - every CSV that is not copied (OLM v0, with or without a Subscription) and
      every ClusterExtension (OLM v1) - blocking ones first, then by namespace and name.
    - A CSV that another CSV of its namespace replaces (an upgrade under way, or stuck on a failing new version - OLM
      keeps the old CSV and still judges it) belongs to the Subscription of the CSV that replaces it.
  returned: always
  type: list
  elements: dict
  contains:
    generation:
      description: V(v0) for a CSV, V(v1) for a ClusterExtension.
      type: str
      sample: v0
    namespace:
      description: The CSV's namespace; V(null) for a ClusterExtension.
      type: str
      sample: kube-demo
    name:
      description: The CSV's or the ClusterExtension's name.
      type: str
      sample: kube-demo.v0.0.1
    package:
      description: The package - the Subscription's C(spec.name), the CSV's C(olm.package) property without one, the
        ClusterExtension's C(spec.source.catalog.packageName); V(null) when unknown.
      type: str
      sample: kube-demo
    channel:
      description: The Subscription's channel (or the ClusterExtension's only channel); V(null) when none is named
        (the package's default channel is then used).
      type: str
      sample: stable
    installed_version:
      description: The CSV's C(spec.version), or the ClusterExtension's installed bundle version.
      type: str
      sample: 0.0.1
    source:
      description: The Subscription's CatalogSource, or the ClusterCatalog of a ClusterExtension when known; V(null)
        otherwise.
      type: str
      sample: kube-demo-catalog
    max_openshift_version:
      description: The declared C(olm.maxOpenShiftVersion) as written (quotes trimmed); V(null) without one, with
        two, or when the annotation cannot be read.
      type: str
      sample: "4.20"
    blocks_upgrade:
      description: Whether OLM's rule blocks the upgrade to RV(target) - a maximum below it, or a property OLM
        cannot read.
      type: bool
      sample: true
    block_reason:
      description: The line OLM's ClusterOperator C(Upgradeable) message has for this CSV (its C(skew.String)),
        V(null) when it does not block. A ClusterExtension gets a line in the same words naming it alone.
      type: str
      sample: "- maximum supported OCP version for kube-demo/kube-demo.v0.0.1 is 4.20"
    target_catalog:
      description: V(null) when O(catalogs) has no entry for the operator's catalog, else whether that catalog has
        the package and the channel (RV(operators[].channel), or the package's default channel).
      type: dict
      contains:
        package:
          description: Whether the target catalog has the package.
          type: bool
        channel:
          description: Whether it has the channel.
          type: bool
      sample: {package: true, channel: true}
    target_version:
      description: For a blocking operator, the first version on the upgrade path whose maximum allows RV(target);
        V(null) otherwise or when none does.
      type: str
      sample: 0.0.2
    path:
      description: The versions from the installed one to RV(operators[].target_version); empty when no upgrade is
        needed or none exists.
      type: list
      elements: str
      sample: [0.0.1, 0.0.2]
    deprecations:
      description: The target catalog's C(olm.deprecations) entries for the package, the channel and the installed
        bundle. For a ClusterExtension, those of the channels C(spec.source.catalog.channels) names (none when it names
        none), as operator-controller reports them in its C(ChannelDeprecated) condition.
      type: list
      elements: dict
      contains:
        scope:
          description: V(package), V(channel) or V(bundle).
          type: str
        name:
          description: The deprecated package, channel or bundle.
          type: str
        message:
          description: The catalog's message.
          type: str
      sample: [{scope: channel, name: alpha, message: alpha is no longer maintained, use stable}]
    action:
      description: What to do before the upgrade.
      type: dict
      contains:
        kind:
          description:
            - V(none) - nothing.
            - V(upgrade) - upgrade within the channel to RV(operators[].action.to_version).
            - V(switch_channel) - move to RV(operators[].action.to_channel) (the installed channel is gone from the
              target catalog, or only another channel reaches a version that allows the target).
            - V(remove_or_replace) - the target catalog has no package, or no version reachable from the installed
              one allows the target.
            - V(unknown) - a blocking operator without a target catalog, or an OLM v1 extension whose installed
              bundle is in none of O(catalogs) (if its selector names an entry without its package,
              V(remove_or_replace)).
          type: str
          sample: upgrade
        to_version:
          description: The version to upgrade to; V(null) when none.
          type: str
          sample: 0.0.2
        to_channel:
          description: The channel to switch to; V(null) when none.
          type: str
        reason:
          description: Why, in words; V(null) for V(none).
          type: str
          sample: 0.0.2 allows OpenShift 4.21
blockers:
  description: C(<namespace>/<name>) of every CSV that blocks RV(target), as OLM's condition names them.
  returned: always
  type: list
  elements: str
  sample: [kube-demo/kube-demo.v0.0.1]
verdict:
  description:
    - V(ready) - nothing blocks and no action is due.
    - V(needs_action) - an action is due, and every blocking operator has one that unblocks it.
    - V(blocked) - at least one blocking operator has no way forward (V(remove_or_replace) or V(unknown)).
  returned: always
  type: str
  sample: needs_action
target:
  description: The target as C(<major>.<minor>), 4.23 written V(5.0).
  returned: always
  type: str
  sample: "4.21"
olm_condition:
  description: The C(Upgradeable) condition OLM's ClusterOperator controller would set for the CSVs of RV(operators)
    on the cluster whose next minor is RV(target) (once OLM's own upgrade is done).
  returned: always
  type: dict
  contains:
    status:
      description: V(True) or V(False).
      type: str
    reason:
      description: V(IncompatibleOperatorsInstalled), or V(null) when V(True).
      type: str
    message:
      description: OLM's message (C(skews.String)), or V(null) when V(True).
      type: str
  sample:
    status: "False"
    reason: IncompatibleOperatorsInstalled
    message: >-
      ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:
      - maximum supported OCP version for kube-demo/kube-demo.v0.0.1 is 4.20
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.upgrade_plan import execute


def argspec():
    return dict(
        openshift_version=dict(type="str", required=True),
        catalogs=dict(
            type="list",
            elements="dict",
            default=[],
            mutually_exclusive=[("image", "dir", "file")],
            required_one_of=[("image", "dir", "file")],
            options=dict(
                source=dict(type="str", required=True),
                source_namespace=dict(type="str"),
                image=dict(type="str"),
                dir=dict(type="path"),
                file=dict(type="path"),
                registry_auth=dict(type="dict", options=registry_auth_argspec()),
            ),
        ),
        packages=dict(type="list", elements="str"),
    )


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute)


if __name__ == "__main__":
    main()
