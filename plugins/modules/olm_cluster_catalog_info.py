#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: olm_cluster_catalog_info
short_description: What OLM v1 ClusterCatalogs offer - packages, channels and versions, read from catalogd
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Reports the C(ClusterCatalog)s (C(olm.operatorframework.io/v1)) of Operator Lifecycle Manager v1 - image, the
    digest catalogd resolved it to, whether it is served - and, from catalogd, what each one offers - every
    package with its default channel, deprecations and channels, each channel with its head and its versions in
    order - in the shape M(kubeforge.operators.olm_operator_info) reports an OLM v0 catalog.
  - catalogd serves a catalog at C(<status.urls.base>/api/v1/all). An in-cluster address
    (C(https://catalogd-service.<namespace>.svc/...)) is read through the API server's service proxy with the
    module's credentials, which needs C(get) on C(services/proxy) in that namespace; any other address (a route,
    an ingress) is read directly over HTTPS, its certificate checked against O(catalogd_ca_cert) or the system's
    certificate authorities.
  - A catalog that is not served, or whose contents cannot be read, is still reported, with RV(catalogs[].contents_error)
    and a warning; the other catalogs are read.
  - Read-only, for AWX surveys (the versions a ClusterExtension may ask for) and dashboards.
options:
  name:
    description:
      - Name of the ClusterCatalog to report. Without it, every ClusterCatalog of the cluster.
    type: str
  package:
    description:
      - Report only this package of each catalog's contents, and list the catalogs that offer it (RV(offered_by)).
      - Refused with O(contents=false), like O(catalogd_ca_cert) (only the contents tell which catalogs offer a
        package).
    type: str
  contents:
    description:
      - Read what each served catalog offers from catalogd. With V(false) only the ClusterCatalogs' state is reported
        (one API request).
    type: bool
    default: true
  catalogd_ca_cert:
    description:
      - CA certificate file that verifies catalogd's certificate when its address is read directly (not through the
        API server). Without it, the system's certificate authorities.
    type: path
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
  - A catalog's whole content is read (up to 512 MiB) to report one package; OLM v1's per-package API is not served
    by every catalogd version.
  - Catalog problems that do not stop the report (a channel without a single head, an entry without a bundle) are
    warnings, at most 10 per catalog.
seealso:
  - module: kubeforge.operators.olm_cluster_catalog
  - module: kubeforge.operators.olm_cluster_extension
  - module: kubeforge.operators.olm_operator_info
"""

EXAMPLES = r"""
- name: What the catalogs offer
  kubeforge.operators.olm_cluster_catalog_info:
  register: offered

- name: The versions of argocd-operator in its default channel, for an AWX survey
  kubeforge.operators.olm_cluster_catalog_info:
    name: operatorhubio
    package: argocd-operator
  register: argocd

- name: Survey choices
  vars:
    argocd_package: "{{ argocd.catalogs[0].packages[0] }}"
  ansible.builtin.set_fact:
    version_choices: >-
      {{ (argocd_package.channels | selectattr('name', 'equalto', argocd_package.default_channel) | first).versions }}

- name: Which catalogs are not served
  kubeforge.operators.olm_cluster_catalog_info:
    contents: false
  register: state

- name: Show them
  ansible.builtin.debug:
    msg: "{{ state.catalogs | rejectattr('serving') | map(attribute='name') }}"
"""

RETURN = r"""
catalogs:
  description: One record per ClusterCatalog, by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Name of the ClusterCatalog.
      type: str
    image:
      description: The image it names (C(spec.source.image.ref)).
      type: str
    resolved_image:
      description: The image by digest catalogd serves (C(status.resolvedSource.image.ref)), or V(null).
      type: str
    base_url:
      description: Where catalogd serves it (C(status.urls.base)), or V(null).
      type: str
    priority:
      description: C(spec.priority) (V(0) when not set).
      type: int
    availability_mode:
      description: C(spec.availabilityMode), V(Available) or V(Unavailable).
      type: str
    serving:
      description: Whether catalogd serves it (C(Serving=True)).
      type: bool
    state:
      description: catalogd's conditions in one line.
      type: str
    cluster_catalog:
      description: The ClusterCatalog object (without C(managedFields)).
      type: dict
    packages:
      description: What it offers (only O(package) when set); absent when its contents were not read.
      type: list
      elements: dict
      contains:
        name:
          description: Package name.
          type: str
        default_channel:
          description: The package's default channel.
          type: str
        description:
          description: The package's description, or V(null).
          type: str
        deprecated:
          description: The catalog's deprecation message for the package, or V(null).
          type: str
        channels:
          description: The channels, by name.
          type: list
          elements: dict
          contains:
            name:
              description: Channel name.
              type: str
            head:
              description: The channel head (the bundle nothing replaces or skips), or V(null) when the channel has
                none or several.
              type: str
            head_version:
              description: The head's version.
              type: str
            versions:
              description: The versions of the channel's bundles, oldest first.
              type: list
              elements: str
            entries:
              description: The channel's bundles, oldest first, with C(name), C(version) and C(deprecated) (the
                catalog's deprecation message, or V(null)).
              type: list
              elements: dict
            deprecated:
              description: The catalog's deprecation message for the channel, or V(null).
              type: str
    contents_error:
      description: Why the contents were not read (not served, unreachable, too large, not a catalog).
      type: str
  sample:
    - name: kubeforge
      image: registry.example.com/kubeforge/catalog:v1
      resolved_image: registry.example.com/kubeforge/catalog@sha256:3b0c...
      serving: true
      packages:
        - name: kube-demo
          default_channel: stable
          channels:
            - name: stable
              head: kube-demo.v0.0.2
              head_version: 0.0.2
              versions: [0.0.1, 0.0.2]
offered_by:
  description: The catalogs whose contents include O(package).
  returned: when O(package) is set and O(contents=true)
  type: list
  elements: str
  sample: [kubeforge]
duration:
  description: Seconds the module took.
  returned: always
  type: float
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.module import KubeforgeModule
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog_info import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused

UNUSED = (Unused(("package", "catalogd_ca_cert"), lambda p: p["contents"], "with contents=false (they are for reading the catalogs' contents)"),)


def argspec():
    return {
        "name": {"type": "str"},
        "package": {"type": "str"},
        "contents": {"type": "bool", "default": True},
        "catalogd_ca_cert": {"type": "path"},
    }


def main():
    module = KubeforgeModule(argument_spec=argspec(), supports_check_mode=True)
    module.run(execute, unused=UNUSED)


if __name__ == "__main__":
    main()
