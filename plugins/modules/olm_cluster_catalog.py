#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_cluster_catalog
short_description: Create, update or delete an OLM v1 ClusterCatalog and wait until catalogd serves it
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Manages a C(ClusterCatalog) (C(olm.operatorframework.io/v1), cluster-scoped) of Operator Lifecycle Manager v1
    with server-side apply (field manager C(kubeforge)), so a second run with the same options reports
    C(changed=false), and fields the module no longer sets are removed.
  - catalogd pulls the catalog image (a file-based catalog image such as the ones
    M(kubeforge.operators.catalog_image) builds), unpacks the directory its label
    C(operators.operatorframework.io.index.configs.v1) names, and serves the content to operator-controller.
  - With O(wait=true) the module watches the ClusterCatalog until catalogd has handled the current generation and
    reports C(Serving=True), and returns the digest it resolved the image to (RV(resolved_ref)). It fails at once
    on C(Progressing=False) (a terminal error), and on a C(Progressing=True/Retrying) pull error no retry fixes (the
    tag or repository does not exist, the registry refuses catalogd's credentials or its certificate, the image is not
    a catalog - no C(operators.operatorframework.io.index.configs.v1) label -, its content cannot be stored, there is
    no image for catalogd's platform), with catalogd's message; other
    retried errors (a registry that does not answer) are waited on until O(wait_timeout).
  - With O(state=absent) the ClusterCatalog is deleted; ClusterExtensions installed from it stay installed but can
    no longer be upgraded from it.
  - Fails with a clear message when the cluster does not serve the OLM v1 API.
options:
  name:
    description:
      - Name of the ClusterCatalog. The module also sets the label C(olm.operatorframework.io/metadata.name) to it
        (catalogd's webhook does the same), so ClusterExtensions can select the catalog by name.
    type: str
    required: true
    version_added: 0.1.0
  state:
    description:
      - V(present) creates or updates the ClusterCatalog, V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.1.0
  image:
    description:
      - Catalog image reference, by tag or by digest (C(spec.source.image.ref)). Required with O(state=present).
    type: str
    version_added: 0.1.0
  poll_interval_minutes:
    description:
      - How often catalogd checks the tag of O(image) for a new digest (C(spec.source.image.pollIntervalMinutes)).
      - Refused with a digest reference, as the API's validation does (a digest never changes).
    type: int
    version_added: 0.1.0
  priority:
    description:
      - Priority of the catalog (C(spec.priority), default 0 on the server). When several catalogs provide a bundle
        a ClusterExtension could install, operator-controller picks the one from the highest-priority catalog.
    type: int
    version_added: 0.1.0
  availability_mode:
    description:
      - V(Available) serves the catalog; V(Unavailable) keeps the object but makes catalogd drop the content, so
        operator-controller ignores the catalog (C(spec.availabilityMode)).
      - With V(Unavailable) and O(wait=true) the module waits for catalogd to report
        C(Serving=False/UserSpecifiedUnavailable).
    type: str
    choices: [Available, Unavailable]
    version_added: 0.1.0
  labels:
    description:
      - Extra labels of the ClusterCatalog, for C(spec.source.catalog.selector) of ClusterExtensions.
    type: dict
    version_added: 0.1.0
  force_conflicts:
    description:
      - With V(false) the module fails with the API server's conflict message when another field manager owns a
        field it sets with a different value; with V(true) the module's values win.
    type: bool
    default: false
    version_added: 0.1.0
notes:
  - Check mode sends the request with server-side dry run; nothing is created, changed or waited for.
  - catalogd caches the catalog by digest; a new tag target is picked up at the next poll (O(poll_interval_minutes))
    or when the ClusterCatalog's generation changes.
seealso:
  - module: kubeforge.operators.olm_cluster_extension
  - module: kubeforge.operators.catalog_image
  - name: OLM v1 ClusterCatalog
    description: The upstream API reference.
    link: https://operator-framework.github.io/operator-controller/api-reference/olmv1-api-reference/
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.k8s_auth
  - kubeforge.operators.k8s_wait
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Serve the operatorhub catalog, checking for a new digest every hour
  kubeforge.operators.olm_cluster_catalog:
    name: operatorhubio
    image: quay.io/operatorhubio/catalog:latest
    poll_interval_minutes: 60
    wait: true
    wait_timeout: 600
  register: catalog

- name: Show the digest catalogd serves
  ansible.builtin.debug:
    var: catalog.resolved_ref

- name: A pinned, preferred in-house catalog
  kubeforge.operators.olm_cluster_catalog:
    name: in-house
    image: registry.example.com/catalogs/in-house@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
    priority: 100
    labels:
      example.com/tier: in-house
    wait: true

- name: Take the catalog out of service without deleting it
  kubeforge.operators.olm_cluster_catalog:
    name: in-house
    image: registry.example.com/catalogs/in-house@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
    availability_mode: Unavailable
    wait: true

- name: Delete it
  kubeforge.operators.olm_cluster_catalog:
    name: in-house
    state: absent
    wait: true
"""

RETURN = r"""
cluster_catalog:
  description:
    - The ClusterCatalog as the API server stored it (in check mode, as it would store it), without
      C(metadata.managedFields); after waiting, the last state seen. V(null) once deleted.
  returned: always
  type: dict
  sample:
    apiVersion: olm.operatorframework.io/v1
    kind: ClusterCatalog
    metadata:
      name: operatorhubio
      labels:
        olm.operatorframework.io/metadata.name: operatorhubio
    spec:
      source:
        type: Image
        image:
          ref: quay.io/operatorhubio/catalog:latest
          pollIntervalMinutes: 60
    status:
      conditions:
        - type: Serving
          status: "True"
          reason: Available
resolved_ref:
  description: The image by digest catalogd serves (C(status.resolvedSource.image.ref)); V(null) before it served one.
  returned: always
  type: str
  sample: quay.io/operatorhubio/catalog@sha256:5f1c1f6c3b0c54c6cd1e3a6dd9b3a3d8b1f5a7d1c2e8f4b6a9d0e1f2a3b4c5d6
base_url:
  description: Where catalogd serves the content (C(status.urls.base); the catalog is at C(<base_url>/api/v1/all)).
  returned: always
  type: str
  sample: https://catalogd-service.olmv1-system.svc/catalogs/operatorhubio
duration:
  description: Seconds spent waiting.
  returned: when the module waited
  type: float
  sample: 2.4
diff:
  description: The ClusterCatalog before and after the change (without volatile metadata).
  returned: when diff mode is on
  type: dict
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog import execute


def argspec():
    return dict(
        name=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        image=dict(type="str"),
        poll_interval_minutes=dict(type="int"),
        priority=dict(type="int"),
        availability_mode=dict(type="str", choices=["Available", "Unavailable"]),
        labels=dict(type="dict"),
        force_conflicts=dict(type="bool", default=False),
    )


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        supports_check_mode=True,
        required_if=[("state", "present", ("image",))],
    )
    module.run(execute)


if __name__ == "__main__":
    main()
