#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_catalog_source
short_description: Create, update or delete an OLM v0 CatalogSource and wait until OLM can read it
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Manages a C(CatalogSource) (C(operators.coreos.com/v1alpha1)) of Operator Lifecycle Manager v0 with server-side
    apply (field manager C(kubeforge)), so a second run with the same options reports C(changed=false) and fields
    the module no longer sets are removed. Fields another field manager owns are not taken over unless
    O(force_conflicts=true).
  - The catalog is always C(sourceType=grpc), served either by an existing registry server at O(address) or by a
    registry pod that OLM runs from O(image).
  - With O(wait=true) the module watches the CatalogSource until OLM's catalog operator reports
    C(status.connectionState.lastObservedState=READY). For an O(address) catalog it fails as soon as OLM reports
    C(TRANSIENT_FAILURE) (nothing answers at the address) or a sync error, with the state, address and OLM's
    message, instead of waiting for O(wait_timeout).
  - With O(state=absent) the CatalogSource is deleted; with O(wait=true) the module waits until it is gone.
options:
  name:
    description:
      - Name of the CatalogSource.
    type: str
    required: true
    version_added: 0.1.0
  namespace:
    description:
      - Namespace of the CatalogSource. It must exist; the module does not create it (unlike
        M(kubeforge.operators.olm_operator), which creates the operator's namespace).
      - A catalog in OLM's global catalog namespace (V(olm) on a vanilla installation, V(openshift-marketplace) on
        OpenShift) is usable by Subscriptions in every namespace; elsewhere only in its own namespace.
    type: str
    required: true
    version_added: 0.1.0
  state:
    description:
      - V(present) creates or updates the CatalogSource, V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
    version_added: 0.1.0
  address:
    description:
      - C(host:port) of an existing gRPC registry server (for example C(opm serve)), written to C(spec.address).
        OLM creates no pod; its catalog operator dials the address itself.
      - Mutually exclusive with O(image); one of them is required with O(state=present).
    type: str
    version_added: 0.1.0
  image:
    description:
      - Catalog image (an FBC or index image with C(opm)) written to C(spec.image); OLM runs a registry pod from it
        and a Service in front of it.
      - Mutually exclusive with O(address).
    type: str
    version_added: 0.1.0
  display_name:
    description:
      - Human-readable name (C(spec.displayName)).
    type: str
    version_added: 0.1.0
  publisher:
    description:
      - Publisher shown with the catalog (C(spec.publisher)).
    type: str
    version_added: 0.1.0
  update_interval:
    description:
      - How often OLM polls O(image) for a new digest (C(spec.updateStrategy.registryPoll.interval)), as a Go duration
        such as V(10m) or V(1h30m).
      - Only valid with O(image).
      - Refused for an O(image) pinned by digest (a digest never changes, so polling it has no effect).
    type: str
    version_added: 0.1.0
  pull_secrets:
    description:
      - Secrets in O(namespace) (C(kubernetes.io/dockerconfigjson)) with the credentials for a private O(image)
        (C(spec.secrets)); OLM gives them to the registry pod as image pull secrets. Only with O(image).
    type: list
    elements: str
    version_added: 0.1.0
  grpc_pod_config:
    description:
      - Overrides for OLM's registry pod, passed through unchanged as C(spec.grpcPodConfig), for example
        C(nodeSelector), C(tolerations), C(priorityClassName), C(securityContextConfig) (V(restricted) or V(legacy)),
        C(memoryTarget) or C(extractContent).
      - Only valid with O(image).
      - The module fails when the API server drops any of these fields, which happens when the cluster's
        CatalogSource CRD does not know them (an older OLM, or a misspelled key).
    type: dict
    version_added: 0.1.0
  priority:
    description:
      - Priority of the catalog (C(spec.priority)); OLM prefers higher-priority catalogs when several provide the
        same package.
    type: int
    version_added: 0.1.0
  force_conflicts:
    description:
      - What happens when another field manager (for example OpenShift's marketplace operator, which manages the
        default CatalogSources, or a C(kubectl apply)) owns a field the module sets, with a different value.
      - With V(false) the module fails with the API server's conflict message (HTTP 409), which names the fields and
        the managers that own them; nothing is changed.
      - With V(true) the module's values win and the fields become the module's; the other manager may set them back.
    type: bool
    default: false
    version_added: 0.1.0
notes:
  - Check mode sends the request with server-side dry run, so C(changed) and RV(catalog_source) show what the API
    server would store; nothing is created, changed or waited for.
  - OLM reports C(TRANSIENT_FAILURE) for an unreachable O(address) within seconds (between 0.01 and 5 seconds
    after the change on the collection's test cluster, as fast as it reports C(READY) for a working one).
  - For an O(image) catalog a C(TRANSIENT_FAILURE) can be temporary (the registry pod or its Service endpoints are
    still starting), so the module keeps waiting and fails at O(wait_timeout) with the last state. Meanwhile it looks
    at OLM's registry pod every 5 seconds and fails at once when that pod cannot serve by itself (a crash loop, an
    image that cannot be pulled, a container that cannot be created), with the container's reason and last output.
    It also fails at once when the API server refuses the registry pod OLM creates (C(RegistryServerError) with
    C(is forbidden) or C(is invalid), for example Pod Security rejecting O(grpc_pod_config) C(securityContextConfig=legacy)).
  - A catalog image without an entrypoint (built on the C(scratch) base, the M(kubeforge.operators.catalog_image)
    default) needs O(grpc_pod_config) C(extractContent) with C(catalogDir=/configs) (OLM then serves its content with
    its own opm image); without it the registry pod fails with C(CreateContainerError) and the module says so. Set
    C(cacheDir) only for an image that holds a pre-built opm cache there (C(opm generate dockerfile) images do).
  - A READY state that OLM reported before the change is accepted for an O(image) catalog whose image was changed;
    for an O(address) catalog the module waits until OLM reports on the new address.
seealso:
  - name: CatalogSource
    description: OLM documentation of catalog sources.
    link: https://olm.operatorframework.io/docs/concepts/crds/catalogsource/
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
- name: Catalog served by an existing registry server
  kubeforge.operators.olm_catalog_source:
    name: my-catalog
    namespace: olm
    address: registry.example.com:50051
    display_name: My catalog
    publisher: Example
    wait: true
    wait_timeout: 120
  register: catalog

- name: Show OLM's connection state
  ansible.builtin.debug:
    var: catalog.state

- name: Catalog from an image, polled every 10 minutes, registry pod on infra nodes
  kubeforge.operators.olm_catalog_source:
    name: my-catalog
    namespace: olm
    image: quay.io/example/catalog:v4.20
    update_interval: 10m
    priority: 10
    grpc_pod_config:
      securityContextConfig: restricted
      nodeSelector:
        node-role.kubernetes.io/infra: ""
    wait: true
    wait_timeout: 600

- name: Take over the display name of a catalog another tool manages (without force_conflicts the module fails)
  kubeforge.operators.olm_catalog_source:
    name: shared-catalog
    namespace: olm
    address: registry.example.com:50051
    display_name: Shared catalog
    force_conflicts: true

- name: Remove the catalog
  kubeforge.operators.olm_catalog_source:
    name: my-catalog
    namespace: olm
    state: absent
    wait: true
"""

RETURN = r"""
catalog_source:
  description:
    - The CatalogSource as the API server stored it (in check mode, as it would store it), without
      C(metadata.managedFields); after waiting, the last state seen.
    - V(null) after O(state=absent) once it is gone.
  returned: always
  type: dict
  sample:
    apiVersion: operators.coreos.com/v1alpha1
    kind: CatalogSource
    metadata:
      name: my-catalog
      namespace: olm
    spec:
      sourceType: grpc
      address: registry.example.com:50051
      displayName: My catalog
    status:
      connectionState:
        address: registry.example.com:50051
        lastConnect: "2026-11-23T15:15:17Z"
        lastObservedState: READY
state:
  description:
    - OLM's last reported gRPC connection state, C(status.connectionState.lastObservedState) (V(IDLE),
      V(CONNECTING), V(READY), V(TRANSIENT_FAILURE) or V(SHUTDOWN)); V(null) before OLM reported one.
  returned: always
  type: str
  sample: READY
duration:
  description: Seconds spent waiting.
  returned: when the module waited
  type: float
  sample: 1.52
diff:
  description: The CatalogSource before and after the change (without volatile metadata).
  returned: when diff mode is on
  type: dict
  sample:
    before: {}
    after:
      spec:
        sourceType: grpc
"""

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.catalog_source import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

DIGEST = re.compile(r"@[A-Za-z][A-Za-z0-9]*:[0-9a-fA-F]{32,}\Z")
UNUSED = (
    Unused(
        ("update_interval",),
        lambda p: not (p["image"] and DIGEST.search(p["image"])),
        "with an image pinned by digest (a digest never changes: use a tag to follow updates)",
    ),
)


def argspec():
    return dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        address=dict(type="str"),
        image=dict(type="str"),
        display_name=dict(type="str"),
        publisher=dict(type="str"),
        update_interval=dict(type="str"),
        grpc_pod_config=dict(type="dict"),
        pull_secrets=dict(type="list", elements="str", no_log=False),
        priority=dict(type="int"),
        force_conflicts=dict(type="bool", default=False),
    )


def main():
    module = KubeforgeModule(
        argument_spec=argspec(),
        wait=True,
        supports_check_mode=True,
        mutually_exclusive=[("address", "image")],
        required_if=[("state", "present", ("address", "image"), True)],
    )
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
