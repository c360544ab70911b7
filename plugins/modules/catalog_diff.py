#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_diff
short_description: What changed between two file-based catalogs (FBC)
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Compares an old and a new file-based catalog and returns what changed - packages, channels and bundles added
    and removed, default channels changed, channel heads moved, C(olm.deprecations) entries added, removed and
    changed, and C(olm.maxOpenShiftVersion) changed on bundles and on channel heads - as data (RV(packages),
    RV(channels), ...) and as a few lines a person reads (RV(summary)).
  - Each side is a directory, a single (rendered) FBC file, or a catalog image pulled without a container engine.
    Both are read like C(opm render) reads them and converted with opm's C(ConvertToModel), so a catalog opm cannot
    load or convert is refused with opm's message, naming the side. A channel head is the one opm's model computes
    (the entry nothing replaces or skips).
  - Every list is sorted by package, then channel or bundle name (Go byte order), so two runs on the same catalogs
    return the same result.
  - Read-only; C(changed) is always V(false). Does not need a Kubernetes cluster and does not use
    C(kubernetes.core).
options:
  old:
    description:
      - The old catalog, a directory (every catalog file below it, honouring C(.indexignore)) or a single FBC file
        (YAML or JSON, for example the output of C(opm render)).
      - Exactly one of O(old) and O(old_image) is required.
    type: path
    version_added: 0.1.0
  old_image:
    description:
      - The old catalog as a catalog (index) image, pulled with the registry options; its file-based catalog is read
        from the directory its label C(operators.operatorframework.io.index.configs.v1) names. An image without that
        label is refused.
    type: str
    version_added: 0.1.0
  new:
    description:
      - The new catalog, a directory or a single FBC file, like O(old).
      - Exactly one of O(new) and O(new_image) is required.
    type: path
    version_added: 0.1.0
  new_image:
    description:
      - The new catalog as a catalog image, like O(old_image).
    type: str
    version_added: 0.1.0
notes:
  - O(registry_username)/O(registry_password) are used for the registries of both O(old_image) and O(new_image);
    without them, credentials come from O(docker_config). The registry options are refused when neither image is
    given.
  - The catalogs are not validated beyond opm's conversion; use M(kubeforge.operators.catalog_validate) for that. A
    channel without exactly one head (which C(opm validate) refuses) is reported with the head V(null) and a warning.
  - C(olm.maxOpenShiftVersion) is read from the bundles' properties (where C(opm render) puts a CSV's
    C(olm.properties) annotation), as declared - a string as it is, another value as its JSON text (the YAML number
    C(4.10) reads as V(4.1), as in opm); a repeated property (which OLM refuses) as the list of its values.
seealso:
  - module: kubeforge.operators.catalog_graph
  - module: kubeforge.operators.catalog_validate
  - module: kubeforge.operators.catalog_render
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.registry_auth
attributes:
  check_mode:
    support: full
    details: The module never changes anything; check mode returns the same result.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: What changes for users between the committed v4.19 and v4.20 catalogs?
  kubeforge.operators.catalog_diff:
    old: catalogs/v4.19
    new: catalogs/v4.20
  register: changes

- name: Show the summary
  ansible.builtin.debug:
    msg: "{{ changes.summary }}"

- name: Compare a rendered catalog with the image the clusters run
  kubeforge.operators.catalog_diff:
    old_image: registry.example.com/catalogs/index:v4.20
    new: build/index.json
    docker_config: ~/.docker/config.json
  register: release

- name: Refuse a release that removes a package or moves a head below a cluster's next OpenShift minor
  ansible.builtin.assert:
    that:
      - release.packages.removed | length == 0
      - release.max_openshift_versions.heads | selectattr('new', 'equalto', '4.20') | list | length == 0
    fail_msg: "{{ release.summary | join('\n') }}"

- name: Channels that became deprecated
  ansible.builtin.debug:
    msg: "{{ release.olm_deprecations.added | selectattr('schema', 'equalto', 'olm.channel') | map(attribute='name') | list }}"
"""

RETURN = r"""
differs:
  description: Whether anything this module compares changed (every list below empty when V(false)).
  returned: always
  type: bool
  sample: true
summary:
  description: A few lines a person reads - the sizes of both catalogs, then one line per kind of change with its
    counts and the first five names.
  returned: always
  type: list
  elements: str
  sample:
    - "old: 3 packages, 5 channels, 5 bundles; new: 3 packages, 5 channels, 5 bundles"
    - "packages: 1 added, 1 removed (+ new-op; - gone-op)"
    - "channels: 2 added, 2 removed (+ beta-op/candidate, new-op/stable; - beta-op/legacy, gone-op/stable)"
    - "bundles: 2 added, 2 removed (+ alpha-op.v1.2.0, new-op.v0.0.1; - alpha-op.v1.0.0, gone-op.v2.0.0)"
    - "default channels: 2 changed (alpha-op: stable -> fast, beta-op: legacy -> stable)"
    - "channel heads: 1 moved (alpha-op/stable: alpha-op.v1.1.0 -> alpha-op.v1.2.0)"
    - "deprecations: 1 added, 0 removed, 0 changed (beta-op olm.package)"
    - "maxOpenShiftVersion: changed on 1 bundles, 1 channel heads (alpha-op/stable: 4.17 -> none, alpha-op.v1.1.0: 4.17 -> 4.18)"
packages:
  description: Package names only in the new catalog (RV(packages.added)) and only in the old one (RV(packages.removed)).
  returned: always
  type: dict
  contains:
    added:
      description: Packages only in the new catalog.
      type: list
      elements: str
    removed:
      description: Packages only in the old catalog.
      type: list
      elements: str
  sample: {added: [new-op], removed: [gone-op]}
channels:
  description: Channels only in the new catalog (RV(channels.added)) and only in the old one (RV(channels.removed)),
    including those of added and removed packages.
  returned: always
  type: dict
  contains:
    added:
      description: Channels only in the new catalog.
      type: list
      elements: dict
      contains:
        package:
          description: The package.
          type: str
        channel:
          description: The channel name.
          type: str
    removed:
      description: Channels only in the old catalog, with the same keys.
      type: list
      elements: dict
  sample: {added: [{package: beta-op, channel: candidate}], removed: [{package: beta-op, channel: legacy}]}
bundles:
  description: Bundles only in the new catalog's package (RV(bundles.added)) and only in the old one's
    (RV(bundles.removed)), including those of added and removed packages.
  returned: always
  type: dict
  contains:
    added:
      description: Bundles only in the new catalog.
      type: list
      elements: dict
      contains:
        package:
          description: The package.
          type: str
        bundle:
          description: The bundle name.
          type: str
        channels:
          description: The channels the bundle is in (in the new catalog for RV(bundles.added), the old one for
            RV(bundles.removed)).
          type: list
          elements: str
    removed:
      description: Bundles only in the old catalog, with the same keys.
      type: list
      elements: dict
  sample: {added: [{package: alpha-op, bundle: alpha-op.v1.2.0, channels: [fast, stable]}], removed: []}
channel_bundles:
  description: Per channel present in both catalogs, the bundles it gained (RV(channel_bundles.added)) and lost
    (RV(channel_bundles.removed)) - a bundle
    added to a package shows here for each channel it joined, and so does a bundle that joined one more channel.
  returned: always
  type: dict
  contains:
    added:
      description: Entries only in the new catalog's channel.
      type: list
      elements: dict
      contains:
        package:
          description: The package.
          type: str
        channel:
          description: The channel.
          type: str
        bundle:
          description: The bundle name.
          type: str
    removed:
      description: Entries only in the old catalog's channel, with the same keys.
      type: list
      elements: dict
  sample: {added: [{package: alpha-op, channel: stable, bundle: alpha-op.v1.2.0}], removed: []}
default_channels:
  description: Packages in both catalogs whose default channel changed.
  returned: always
  type: list
  elements: dict
  contains:
    package:
      description: The package.
      type: str
    old:
      description: The old default channel.
      type: str
    new:
      description: The new default channel.
      type: str
  sample: [{package: alpha-op, old: stable, new: fast}]
heads:
  description: Channels in both catalogs whose head moved; a head opm's model cannot determine is V(null) (see
    RV(warnings)).
  returned: always
  type: list
  elements: dict
  contains:
    package:
      description: The package.
      type: str
    channel:
      description: The channel.
      type: str
    old:
      description: The old head bundle.
      type: str
    new:
      description: The new head bundle.
      type: str
  sample: [{package: alpha-op, channel: stable, old: alpha-op.v1.1.0, new: alpha-op.v1.2.0}]
olm_deprecations:
  description: C(olm.deprecations) entries only in the new catalog (RV(olm_deprecations.added), including those of
    added packages), only in the old one (RV(olm_deprecations.removed)), and in both with another message
    (RV(olm_deprecations.changed)).
  returned: always
  type: dict
  contains:
    added:
      description: New deprecations.
      type: list
      elements: dict
      contains:
        package:
          description: The package.
          type: str
        schema:
          description: What is deprecated, V(olm.package), V(olm.channel) or V(olm.bundle).
          type: str
        name:
          description: The channel or bundle name; empty for a package.
          type: str
        message:
          description: The deprecation message.
          type: str
    removed:
      description: Deprecations only in the old catalog, with the same keys.
      type: list
      elements: dict
    changed:
      description: Deprecations whose message changed, with RV(olm_deprecations.added[].package),
        RV(olm_deprecations.added[].schema), RV(olm_deprecations.added[].name), C(old_message) and C(new_message).
      type: list
      elements: dict
  sample:
    added: [{package: beta-op, schema: olm.package, name: "", message: "beta-op is deprecated, use alpha-op."}]
    removed: []
    changed: []
max_openshift_versions:
  description: C(olm.maxOpenShiftVersion) changes - V(null) when a bundle has none, a list when the property is
    repeated.
  returned: always
  type: dict
  contains:
    bundles:
      description: Bundles in both catalogs whose value changed, with C(package), C(bundle), C(old) and C(new).
      type: list
      elements: dict
    heads:
      description: Channels in both catalogs whose head's value changed (the head itself may have moved), with
        C(package), C(channel), C(old_head), C(new_head), C(old) and C(new).
      type: list
      elements: dict
  sample:
    bundles: [{package: alpha-op, bundle: alpha-op.v1.1.0, old: "4.17", new: "4.18"}]
    heads: [{package: alpha-op, channel: stable, old_head: alpha-op.v1.1.0, new_head: alpha-op.v1.2.0, old: "4.17", new: null}]
totals:
  description: Sizes of both catalogs, C(old) and C(new), each with C(packages), C(channels) and C(bundles).
  returned: always
  type: dict
  sample: {old: {packages: 3, channels: 5, bundles: 5}, new: {packages: 3, channels: 5, bundles: 5}}
old_image:
  description: The catalog image of O(old_image) as pulled.
  returned: with O(old_image)
  type: dict
  contains:
    ref:
      description: The image reference.
      type: str
      sample: registry.example.com/catalogs/index:v4.20
    digest:
      description: The digest of its manifest.
      type: str
      sample: sha256:0a1b...
new_image:
  description: The catalog image of O(new_image) as pulled, with the keys of RV(old_image).
  returned: with O(new_image)
  type: dict
  sample: {ref: registry.example.com/catalogs/index:v4.21, digest: sha256:2c3d...}
warnings:
  description: Channels whose head opm's model cannot determine (no head, or several), issued as Ansible warnings.
  returned: when there are any
  type: list
  elements: str
  sample: ["new catalog: package p channel stable: multiple channel heads found in graph: p.v1.0.0, p.v1.1.0"]
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.diff import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import REGISTRY_OPTION_NAMES, registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

UNUSED = (Unused(REGISTRY_OPTION_NAMES, lambda p: p["old_image"] or p["new_image"], "without old_image or new_image (nothing is pulled)"),)


def argspec():
    spec = dict(
        old=dict(type="path"),
        old_image=dict(type="str"),
        new=dict(type="path"),
        new_image=dict(type="str"),
    )
    spec.update(registry_argspec())
    return spec


def main():
    module = MaskingAnsibleModule(
        argument_spec=argspec(),
        supports_check_mode=True,
        mutually_exclusive=[("old", "old_image"), ("new", "new_image")],
        required_one_of=[("old", "old_image"), ("new", "new_image")],
    )
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
