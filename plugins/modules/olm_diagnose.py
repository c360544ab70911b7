#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_diagnose
short_description: Name why an OLM operator install fails, and collect the state for a support case
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
    V(NoSubscription) (the package has no Subscription in the namespace - a wrong namespace or name),
    V(OrphanedCSV) (a CSV no Subscription references), V(NoOperatorGroup) (OLM resolves nothing in such a
    namespace), V(InstallPlanCarriesOtherOperators) (a plan waiting for approval that would also install or upgrade
    other operators), V(InstallModeMismatch) (the OperatorGroup does not
    fit the CSV''s install modes, or there are none or several), V(PodSecurityRejected), V(SCCRejected),
    V(CrashLoop) (naming the container, its image, its last exit code and reason such as C(Error) or C(OOMKilled),
    and the last five lines of its log, or briefly why there is none; also while the container runs again between
    two crashes, until it has run for 10 minutes and the kubelet resets its back-off), V(ImagePullFailed) (naming the container and
    its image, with what to check when no mirror covers it; the kubelet alternates C(ErrImagePull) and
    C(ImagePullBackOff) while a pull fails, and either is this finding), V(BundleUnpackFailed),
    V(CatalogNotServing), V(PackageServerUnavailable), V(CSVFailed) for other failed CSVs, and OLM''s own reason for
    other resolution failures.'
  - 'With O(cluster_extension), the same for an OLM v1 ClusterExtension: it reads the ClusterExtension, the
    ClusterCatalogs its catalog selector allows, the Deployments it installed in its namespace with their
    ReplicaSets, pods and Warning events, its installer ServiceAccount and the Deployments of OLM v1''s own namespace
    (operator-controller, catalogd). Causes: operator-controller''s retried or terminal errors named by what fixes
    them - V(ResolutionFailed), V(InvalidRequest), V(InstallModeMismatch), V(BundleInvalid),
    V(ServiceAccountMissing), V(InsufficientPermissions), V(OwnershipConflict), V(BundleUnpackFailed),
    V(ResolutionBlocked) (a catalog that is not served stops every resolution),
    V(ExtensionBlocked), V(Retrying) for other errors - and V(NoCatalog), V(CatalogNotServing),
    V(OLMv1ControllerUnavailable) (a Deployment of OLM v1 that is not available, or a ClusterExtension or
    ClusterCatalog whose conditions are of an older generation than its spec - the controller has not acted on the
    last change), V(NotReconciled), and the pod causes above (V(PodSecurityRejected),
    V(SCCRejected), V(CrashLoop), V(ImagePullFailed)).'
  - With O(dest), everything read is also written to a gzip'd tarball for a support case, atomically - one JSON
    C(List) per kind, as C(kubectl get -o json) writes it (C(managedFields) dropped; values of environment variables
    named like a password, secret, token or key, the bundle manifests inlined in InstallPlan steps and kubectl's
    C(last-applied-configuration) masked), the last
    log lines of the stuck or crashed containers of the operator's pods (where the node serves logs), RV(findings) as
    C(findings.json) and RV(summary) as C(summary.txt). Secrets are not listed.
  - The stuck and crashed containers' logs are read once, for the V(CrashLoop) findings and the tarball alike (at
    least five lines each, O(log_lines) with O(dest)); a container that has not run yet (its image cannot be pulled)
    is not asked for one.
  - Read-only on the cluster.
options:
  namespace:
    description:
      - Namespace of the OLM v0 operator (its Subscription, CSV and pods).
      - Required unless O(cluster_extension) is set; not with it (the ClusterExtension names its namespace).
    type: str
  cluster_extension:
    description:
      - Name of the OLM v1 ClusterExtension to diagnose instead of an OLM v0 namespace.
    type: str
    version_added: 0.1.0
  package:
    description:
      - Package of the OLM v0 operator that fails to install (not with O(cluster_extension)). With it, failures of other Subscriptions of the namespace are
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
        when it restarted). V(0) for none. Only with O(dest). A V(CrashLoop) finding quotes the last five lines
        either way.
      - A crash-looping container's log that the kubelet cannot find because it has just replaced that run is asked
        for again, at most three times, a second apart.
      - Refused without O(dest) when it differs from the default (logs are only written into the tarball).
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
  - M(kubeforge.operators.olm_cluster_extension) already fails with operator-controller's message for the errors no
    retry fixes; this module adds what surrounds it (catalogs, controllers, the installed workload).
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

- name: Why does the ClusterExtension argocd not install (OLM v1)?
  kubeforge.operators.olm_diagnose:
    cluster_extension: argocd
  register: diagnosis
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
  description:
    - How many objects of each kind were read - C(subscriptions), C(installplans), C(csvs), C(operatorgroups),
      C(catalogsources), C(pods), C(replicasets), C(events) for OLM v0;
    - C(clustercatalogs), C(deployments) (those the ClusterExtension installed), C(replicasets), C(pods), C(events),
      C(controllers) (OLM v1's Deployments) with O(cluster_extension).
  returned: always
  type: dict
overview:
  description:
    - What OLM shows in the namespace, in brief, from the same read as RV(findings) - for a report that shows it
      beside the causes (the P(kubeforge.operators.olm_operator#role) role's failure message).
    - C(subscriptions) (C(name), C(package), C(source), C(source_namespace), C(channel), C(approval), C(state),
      C(installed_csv), C(current_csv), and C(conditions), those with status C(True)), C(install_plans) (C(name),
      C(phase), C(approved), C(approval), C(csvs), and C(conditions), those with status C(False)), oldest first,
      C(csvs) (C(name), C(phase), C(reason), C(message); not OLM's copies), oldest first, C(catalog_sources) (C(name),
      C(namespace), C(state), C(address), C(last_connect), C(reason), C(message)), C(events) (the latest O(events)
      Warning events, oldest first - C(time), C(kind) and C(name) of the object, C(reason), C(message), C(count)) and
      C(events_total) (how many Warning events the namespace has).
  returned: without O(cluster_extension)
  type: dict
namespace:
  description: The ClusterExtension's install namespace (its C(spec.namespace)).
  returned: with O(cluster_extension)
  type: str
  sample: argocd
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
  description: The files in the tarball, under one top directory C(olm-diagnose-<namespace or ClusterExtension>-<time>).
  returned: with O(dest)
  type: list
  elements: str
duration:
  description: Seconds the module took.
  returned: always
  type: float
uid:
  description: Numeric owner of O(dest); Ansible adds these file attributes to every result that names an existing file.
  returned: when O(dest) is set and exists after the run
  type: int
  sample: 1000
gid:
  description: Numeric group of O(dest).
  returned: when O(dest) is set and exists after the run
  type: int
  sample: 1000
owner:
  description: Owner name of O(dest).
  returned: when O(dest) is set and exists after the run
  type: str
  sample: builder
group:
  description: Group name of O(dest).
  returned: when O(dest) is set and exists after the run
  type: str
  sample: builder
mode:
  description: Permissions of O(dest), in octal.
  returned: when O(dest) is set and exists after the run
  type: str
  sample: "0644"
state:
  description: What O(dest) is, V(file), V(directory), V(link) or V(hard) (a file with more than one link).
  returned: when O(dest) is set and exists after the run
  type: str
  sample: file
size:
  description: Size of O(dest) in bytes (of the directory entry for a directory).
  returned: when O(dest) is set and exists after the run
  type: int
  sample: 4096
secontext:
  description: SELinux context of O(dest).
  returned: when O(dest) is set and exists after the run and SELinux is enabled
  type: str
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.diagnose import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (Unused(("log_lines",), lambda p: p["dest"], "without dest (logs are only written into the tarball)"),)


def argspec():
    return {
        "namespace": {"type": "str"},
        "cluster_extension": {"type": "str"},
        "package": {"type": "str"},
        "dest": {"type": "path"},
        "events": {"type": "int", "default": 50},
        "log_lines": {"type": "int", "default": 50},
    }


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        supports_check_mode=True,
        required_one_of=[("namespace", "cluster_extension")],
        mutually_exclusive=[("namespace", "cluster_extension"), ("package", "cluster_extension")],
    )
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
