#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_install
short_description: Install Operator Lifecycle Manager (OLM v0) on a Kubernetes cluster from its release manifests
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Installs OLM v0 the way upstream's C(install.sh) does, from the release files C(crds.yaml) and C(olm.yaml).
    The CustomResourceDefinitions come first, then (once every CRD is C(Established)) the other objects in file
    order, Namespaces first.
  - Every object is applied with server-side apply (field manager C(kubeforge), conflicts forced), so running the
    module against an installed OLM of the same version reports C(changed=false), and a newer O(version) updates
    the objects that differ.
  - With O(wait=true) the module then watches OLM's Deployments (C(olm-operator), C(catalog-operator)) until their
    rollout is complete and its ClusterServiceVersions (C(packageserver)) until they reach C(Succeeded).
  - Does nothing on OpenShift, which ships OLM itself (RV(openshift=true), C(changed=false)). OpenShift is detected
    from the APIServices C(v1.project.openshift.io) and C(v1.route.openshift.io); on OpenShift they are served by
    the openshift-apiserver Service; a cluster that only has CRDs in those groups is not mistaken for OpenShift.
  - Refuses to install when OLM's CRDs exist but none of its Deployments do and the CRDs were not applied by this
    module (RV(previous_install=foreign)); OLM was then installed some other way (its operators run elsewhere, or
    in other namespaces), and a second OLM would fight the first. O(force=true) installs anyway. An install
    this module started and that was interrupted (RV(previous_install=partial)) is simply completed.
options:
  version:
    description:
      - OLM release to download, for example V(v0.46.0).
      - Used to build the download URLs (O(manifests_url)C(/<version>/crds.yaml)); when not set, V(v0.46.0) is
        downloaded.
      - With O(manifests_dir) nothing is downloaded; O(version) is then only reported as RV(version).
    type: str
    version_added: 0.1.0
  manifests_url:
    description:
      - Base URL of the release downloads. C(crds.yaml) and C(olm.yaml) are fetched from
        C(<manifests_url>/<version>/), as C(install.sh) does; point it at a mirror of the GitHub releases.
      - A URL with credentials in it (C(https://user:password@host)) is refused, since the URL is returned in
        RV(source).
      - Must be V(https://) (certificates are verified against the system trust store); plain V(http://) is only
        accepted for a loopback address. Redirects to non-HTTPS locations are refused.
    type: str
    default: https://github.com/operator-framework/operator-lifecycle-manager/releases/download
    version_added: 0.1.0
  manifests_dir:
    description:
      - Directory on the managed node that contains C(crds.yaml) and C(olm.yaml), for air-gapped clusters (copy
        them from the release page beforehand). O(manifests_url) other than its default is refused with it (nothing is
        downloaded).
    type: path
    version_added: 0.1.0
  catalog_source:
    description:
      - Whether to create the default C(operatorhubio-catalog) CatalogSource of C(olm.yaml) (a registry pod pulling
        C(quay.io/operatorhubio/catalog)). Set V(false) on air-gapped clusters and add your own catalog with
        M(kubeforge.operators.olm_catalog_source).
    type: bool
    default: true
    version_added: 0.1.0
  force:
    description:
      - Apply the manifests even when OLM's CRDs exist without its Deployments and were not applied by this module
        (RV(previous_install=foreign)).
    type: bool
    default: false
    version_added: 0.1.0
  wait:
    description:
      - Whether to wait until OLM's Deployments are rolled out and its ClusterServiceVersions have succeeded.
      - Waiting uses the Kubernetes watch API (no polling interval).
      - It fails at once, with the reason, when a pod of those Deployments will not start by itself (an image that
        cannot be pulled - an air-gapped cluster without a mirror for it -, a crash loop), when a Deployment
        exceeds its progress deadline, or when a ClusterServiceVersion fails for a reason OLM does not retry.
      - The CRDs are always waited for (until C(Established)), because the objects that follow need them; that
        wait is bounded by O(wait_timeout) as well.
      - Nothing is waited for in check mode.
  wait_timeout:
    description:
      - How long to wait, in seconds, for all the waits of one run together.
      - On timeout the module fails and returns the objects applied so far and the last state it saw.
notes:
  - Check mode applies everything with server-side dry run, so the API server validates each object. Objects in a
    namespace that does not exist yet, and custom resources whose CRD is not installed yet, cannot be dry-run; they
    are reported in RV(objects) with C(action=created) and C(validated=false).
  - Every step is decided before the first write; an object whose kind the cluster does not serve, and which no CRD
    of the manifests defines, fails the run before anything is applied (also in check mode).
  - OLM's manifests give its service account cluster-admin rights; download them only from a trusted source.
  - The quickstart files committed in OLM's source tree (C(deploy/upstream/quickstart)) are older than the release
    downloads of the same tag (v0.46.0's lack the OLMConfig CRD); the module warns when C(crds.yaml) has no OLMConfig
    CRD.
  - Nothing is deleted; uninstalling OLM is not supported by this module.
seealso:
  - name: OLM installation
    description: Upstream installation instructions (C(install.sh) and the release files).
    link: https://olm.operatorframework.io/docs/getting-started/
  - module: kubeforge.operators.olm_catalog_source
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.k8s_wait
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Install OLM v0.46.0 and wait until it runs
  kubeforge.operators.olm_install:
    version: v0.46.0
    wait: true
    wait_timeout: 600
  register: olm

- name: Air-gapped cluster, manifests copied beforehand, no default catalog
  kubeforge.operators.olm_install:
    manifests_dir: /opt/olm/v0.46.0
    version: v0.46.0
    catalog_source: false
    wait: true
    wait_timeout: 600

- name: Own catalog instead of operatorhub.io
  kubeforge.operators.olm_catalog_source:
    name: my-catalog
    namespace: olm
    image: registry.example.com/catalogs/my-catalog:v1
    wait: true
"""

RETURN = r"""
openshift:
  description: Whether the cluster is OpenShift (then nothing else is done or returned).
  returned: always
  type: bool
  sample: false
openshift_evidence:
  description: Why the cluster was recognised as OpenShift.
  returned: when RV(openshift=true)
  type: str
  sample: APIService v1.project.openshift.io is served by Service openshift-apiserver/api (OpenShift's openshift-apiserver)
version:
  description:
    - The OLM version installed; O(version) when given or when the manifests were downloaded, else the tag of the
      C(olm-operator) image of the manifests.
    - V(null) with O(manifests_dir), no O(version) and an image pinned by digest (as upstream pins it).
  returned: unless RV(openshift=true)
  type: str
  sample: v0.46.0
image:
  description: The image of the C(olm-operator) Deployment in the manifests.
  returned: unless RV(openshift=true)
  type: str
  sample: quay.io/operator-framework/olm@sha256:e74b2ac57963c7f3ba19122a8c31c9f2a0deb3c0c5cac9e5323ccffd0ca198ed
source:
  description: Where C(crds.yaml) and C(olm.yaml) were read from (file paths or URLs).
  returned: unless RV(openshift=true)
  type: dict
  sample:
    crds.yaml: https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.46.0/crds.yaml
    olm.yaml: https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.46.0/olm.yaml
previous_install:
  description:
    - What was on the cluster before the run. V(none) nothing; V(installed) all of OLM's Deployments existed;
      V(partial) some of them, or CRDs applied by an earlier run of this module; V(foreign) OLM's CRDs without its
      Deployments, not applied by this module (the module fails unless O(force=true)).
  returned: unless RV(openshift=true)
  type: str
  sample: none
objects:
  description:
    - Every object of the manifests that was applied (in check mode, would be), in order.
    - C(action) is V(created), V(updated) or V(unchanged); C(validated) is V(false) for objects that could not be
      sent to the API server in check mode (their namespace or CRD does not exist yet).
  returned: unless RV(openshift=true)
  type: list
  elements: dict
  sample:
    - {api_version: v1, kind: Namespace, namespace: null, name: olm, action: created, validated: true}
created:
  description: C(Kind namespace/name) of the objects created (in check mode, that would be created).
  returned: unless RV(openshift=true)
  type: list
  elements: str
  sample: [Namespace olm, Deployment olm/olm-operator]
updated:
  description: C(Kind namespace/name) of the objects that changed (in check mode, that would change).
  returned: unless RV(openshift=true)
  type: list
  elements: str
  sample: []
crds:
  description: Names of the CustomResourceDefinitions in the manifests.
  returned: unless RV(openshift=true)
  type: list
  elements: str
  sample: [catalogsources.operators.coreos.com, subscriptions.operators.coreos.com]
namespaces:
  description: Namespaces the manifests create or use.
  returned: unless RV(openshift=true)
  type: list
  elements: str
  sample: [olm, operators]
left_out:
  description: Objects of the manifests left out (the default CatalogSource when O(catalog_source=false)).
  returned: unless RV(openshift=true)
  type: list
  elements: str
  sample: [CatalogSource olm/operatorhubio-catalog]
duration:
  description: Seconds spent applying and waiting.
  returned: unless RV(openshift=true)
  type: float
  sample: 42.5
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.manifests import DEFAULT_MANIFESTS_URL
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.install import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (Unused(("manifests_url",), lambda p: not p["manifests_dir"], "with manifests_dir (nothing is downloaded)"),)


def argspec():
    return dict(
        version=dict(type="str"),
        manifests_url=dict(type="str", default=DEFAULT_MANIFESTS_URL),
        manifests_dir=dict(type="path"),
        catalog_source=dict(type="bool", default=True),
        force=dict(type="bool", default=False),
    )


def main():
    module = KubeforgeModule(argument_spec=argspec(), wait=True, supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
