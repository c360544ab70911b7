#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_diagnose
short_description: Name why an OLM v0 operator install fails, and collect the state for a support case
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Reads, once, what Operator Lifecycle Manager v0 shows in a namespace - Subscriptions, InstallPlans,
    ClusterServiceVersions (CSVs), OperatorGroups, the CatalogSources of the namespace and those its Subscriptions
    name, pods, ReplicaSets, the latest Warning events and the packageserver's APIService - and names the known
    causes of a failed install in plain words, each with what fixes it (RV(findings)).
  - 'Known causes (RV(findings[].cause)): V(ConstraintsNotSatisfiable) (OLM''s resolution message decoded clause by
    clause: which constraint, which bundle), V(UnresolvableSubscriptionInNamespace) (another Subscription of the
    namespace that OLM cannot resolve blocks every install there, since OLM resolves a namespace as a whole),
    V(OrphanedCSV) (a CSV no Subscription references), V(NoOperatorGroup) (OLM resolves nothing in such a
    namespace), V(InstallPlanCarriesOtherOperators) (a plan waiting for approval that would also install or upgrade
    other operators), V(InstallModeMismatch) (the OperatorGroup does not
    fit the CSV''s install modes, or there are none or several), V(PodSecurityRejected), V(SCCRejected),
    V(CrashLoop), V(ImagePullFailed) (with what to check when no mirror covers the image), V(BundleUnpackFailed),
    V(CatalogNotServing), V(PackageServerUnavailable), V(CSVFailed) for other failed CSVs, and OLM''s own reason for
    other resolution failures.'
  - With O(dest), everything read is also written to a gzip'd tarball for a support case, atomically - one JSON
    C(List) per kind, as C(kubectl get -o json) writes it (C(managedFields) dropped; values of environment variables
    named like a password, secret, token or key, the bundle manifests inlined in InstallPlan steps and kubectl's
    C(last-applied-configuration) masked), the last
    log lines of the stuck or crashed containers of the operator's pods (where the node serves logs), RV(findings) as
    C(findings.json) and RV(summary) as C(summary.txt). Secrets are not listed.
  - Read-only on the cluster.
options:
  namespace:
    description: Namespace of the operator (its Subscription, CSV and pods).
    type: str
    required: true
  package:
    description:
      - Package of the operator that fails to install. With it, failures of other Subscriptions of the namespace are
        also reported as what blocks this one (V(UnresolvableSubscriptionInNamespace)).
    type: str
  dest:
    description:
      - Path of the support tarball (C(.tar.gz)) to write. Its directory is created when missing; the file is
        replaced atomically, with mode C(0600).
      - Without it nothing is written.
    type: path
  events:
    description: How many of the namespace's latest Warning events are read (V(0) for none).
    type: int
    default: 50
  log_lines:
    description:
      - How many of the last lines of each stuck or crashed operator container go into the tarball (its previous run's
        when it restarted). V(0) for none. Only with O(dest).
    type: int
    default: 50
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
attributes:
  check_mode:
    support: full
    details: The cluster is only read either way; in check mode the tarball is not written (C(changed) predicts it).
  diff_mode:
    support: none
  platform:
    platforms: posix
notes:
  - OLM v0 only; OLM v1 ClusterExtensions report their own failures in their conditions
    (M(kubeforge.operators.olm_cluster_extension) names them).
  - KWOK's simulated nodes serve no container logs; the tarball then says so for each container.
seealso:
  - module: kubeforge.operators.olm_operator
  - module: kubeforge.operators.olm_operator_info
"""

EXAMPLES = r"""
- name: Why does the install of kube-demo fail?
  kubeforge.operators.olm_diagnose:
    namespace: kube-demo
    package: kube-demo
  register: diagnosis

- name: Show the causes and their fixes
  ansible.builtin.debug:
    msg: "{{ diagnosis.summary }}"

- name: Collect everything for a support case
  kubeforge.operators.olm_diagnose:
    namespace: kube-demo
    package: kube-demo
    dest: /tmp/kube-demo-olm.tar.gz
"""

RETURN = r"""
findings:
  description: The known failures found, most fundamental first (resolution, CSVs, InstallPlans, pods, catalogs).
  returned: always
  type: list
  elements: dict
  contains:
    cause:
      description: The cause's name, for example V(ConstraintsNotSatisfiable) or V(CrashLoop).
      type: str
    message:
      description: What is wrong, in plain words, naming the objects.
      type: str
    fix:
      description: What fixes it.
      type: str
    objects:
      description: The objects concerned, as C(Kind/name).
      type: list
      elements: str
  sample: [{"cause": "OrphanedCSV", "message": "CSV kube-demo.v0.0.1 is installed in namespace demo but no Subscription references it ...",
            "fix": "delete CSV kube-demo.v0.0.1 if its operator should go, or create a Subscription for its package",
            "objects": ["ClusterServiceVersion/kube-demo.v0.0.1"]}]
causes:
  description: The distinct RV(findings[].cause) values, sorted.
  returned: always
  type: list
  elements: str
  sample: ["CrashLoop"]
summary:
  description: The findings as lines of text (a headline, then each cause, message and fix).
  returned: always
  type: list
  elements: str
counts:
  description: How many objects of each kind were read (C(subscriptions), C(installplans), C(csvs), C(operatorgroups),
    C(catalogsources), C(pods), C(replicasets), C(events)).
  returned: always
  type: dict
notes:
  description: What could not be read (a kind the cluster does not serve, a list the credentials may not make).
  returned: when something could not be read
  type: list
  elements: str
dest:
  description: The tarball written (or, in check mode, that would be).
  returned: with O(dest)
  type: str
files:
  description: The files in the tarball, under one top directory C(olm-diagnose-<namespace>-<time>).
  returned: with O(dest)
  type: list
  elements: str
duration:
  description: Seconds the module took.
  returned: always
  type: float
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.diagnose import execute


def argspec():
    return {
        "namespace": {"type": "str", "required": True},
        "package": {"type": "str"},
        "dest": {"type": "path"},
        "events": {"type": "int", "default": 50},
        "log_lines": {"type": "int", "default": 50},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute)


if __name__ == "__main__":
    main()
