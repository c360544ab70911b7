#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_render
short_description: Render a basic or semver catalog template, or an existing catalog, into a file-based catalog (FBC)
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Pure-Python equivalent of C(opm alpha render-template [basic|semver] -o yaml|json [--migrate-level ...]).
    The template type is detected from its C(schema) (V(olm.template.basic) or V(olm.semver)).
  - Bundle images named by the template are resolved offline from O(bundle_lookup) (committed FBC catalogs and
    bundle directories) and O(bundle_images); an image found nowhere is pulled from its registry unless
    O(pull=false).
  - Output is byte-identical to opm's writers. Files are only rewritten when their bytes change. Every output file
    is first staged under a unique temporary name in its directory and nothing is replaced until all of them are
    staged, so an error while rendering or writing leaves the old files untouched; then each file is fsynced and
    renamed into place (a crash during those renames can leave some files new and some old, each complete).
    Temporary files of an interrupted run (C(.kubeforge-<pid>-...)) are ignored by the catalog modules and removed
    by the next run that writes into that directory.
  - With O(ocp_versions) the template is rendered once per OpenShift catalog version into
    C(<dest>/<version>/<package>/catalog.yaml), the layout of community-operators-prod C(catalogs/), each with the
    migrate level the community pipeline uses for that version (or O(migrate_levels)).
  - With O(source) instead of O(template), an existing catalog is rendered like
    C(opm render CATALOG -o yaml|json [--migrate-level ...]), to convert it between YAML and JSON, merge a directory
    into one file, split a file into the per-package layout, or migrate its bundles. Big catalog directories written
    to one file are parsed and encoded on every CPU, file by file, without holding the whole catalog in memory.
  - With O(source_image), a catalog image is rendered the same way, pulled without a container engine.
  - Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  template:
    description:
      - Path of the catalog template (YAML or JSON; only the first document is read, like opm).
      - Exactly one of O(template), O(source) and O(source_image) is required.
    type: path
    version_added: 0.1.0
  source:
    description:
      - Path of an existing file-based catalog, a directory (every catalog file below it, honouring
        C(.indexignore)) or a single file, to render instead of a template.
      - O(bundle_lookup), O(bundle_images), O(pull), O(opm_compat) and the registry options do not apply to it.
    type: path
    version_added: 0.1.0
  source_image:
    description:
      - A catalog (index) image to render instead of a template, like C(opm render <image>) - pulled with the registry
        options (no container engine), its file-based catalog read from the directory its label
        C(operators.operatorframework.io.index.configs.v1) names. An image without that label is refused.
      - Rendered like O(source) (the same outputs, migrations and per-version layouts).
    type: str
    version_added: 0.1.0
  dest:
    description:
      - Without O(ocp_versions), the output file, or a directory when it exists already or ends with C(/); a
        directory gets opm's C(WriteFS) layout C(<dest>/<package>/catalog.<yaml|json>).
      - With O(ocp_versions), the catalogs root directory (C(<dest>/<version>/<package>/catalog.<yaml|json>)).
    type: path
    required: true
    version_added: 0.1.0
  format:
    description:
      - Output format (C(opm ... -o yaml|json)).
    type: str
    choices: [yaml, json]
    default: yaml
    version_added: 0.1.0
  bundle_lookup:
    description:
      - FBC catalogs (directories or files, for example committed C(catalogs/v4.16/<package>)) whose bundles are
        reused for the template's bundle images (matched by C(image)), and unpacked bundle directories
        (C(manifests/) + C(metadata/)).
      - A bundle directory is used for a template image whose tag is the bundle's CSV version (with or without a
        leading C(v)) or the directory name; use O(bundle_images) for an explicit mapping.
      - Catalogs that carry C(olm.bundle.object) properties also provide the CSV needed to migrate bundles to
        C(olm.csv.metadata) and the package icon of semver templates.
    type: list
    elements: path
    default: []
    version_added: 0.1.0
  bundle_images:
    description:
      - Explicit mapping of bundle image references to unpacked bundle directories.
    type: dict
    default: {}
    version_added: 0.1.0
  pull:
    description:
      - Pull bundle images found neither in O(bundle_lookup) nor in O(bundle_images) from their registries.
      - Set to V(false) to work strictly offline; a missing image is then an error.
    type: bool
    default: true
    version_added: 0.1.0
  migrate_level:
    description:
      - The C(--migrate-level) of the render. V(bundle-object-to-csv-metadata) (and V(all)) replace the
        C(olm.bundle.object) properties of every bundle by one C(olm.csv.metadata) property.
      - Without O(ocp_versions) the default is V(none).
      - With O(ocp_versions), when set, it applies to every version not listed in O(migrate_levels); when not set,
        each version gets the community pipeline's level (V(bundle-object-to-csv-metadata) for v4.17 and later,
        V(none) below).
    type: str
    choices: [none, bundle-object-to-csv-metadata, all]
    version_added: 0.1.0
  opm_compat:
    description:
      - Semver template behaviour to reproduce. V(current) is the current opm behaviour (edge-scoped linking across
        channels, package metadata from the newest bundle's CSV). V(v1.46) reproduces opm v1.46 (per-channel
        "inchworm" linking, no package description/icon), which many committed catalogs were rendered with.
      - V(v1.46) is refused for a basic template (it would have no effect there).
    type: str
    choices: [current, v1.46]
    default: current
    version_added: 0.1.0
  ocp_versions:
    description:
      - OpenShift catalog versions (V(v4.16), V(v4.20), ...) to render, one directory per version below O(dest).
      - Quote the values in YAML; an unquoted V(4.20) would be read as the number 4.2.
    type: list
    elements: str
    version_added: 0.1.0
  migrate_levels:
    description:
      - Per-version override of the migrate level, a mapping of OpenShift version to level, for example
        C(v4.16) to V(bundle-object-to-csv-metadata). Keys must be in O(ocp_versions).
    type: dict
    default: {}
    version_added: 0.1.0
notes:
  - O(registry_username)/O(registry_password) are used for every registry bundle images are pulled from;
    without them, credentials come from O(docker_config).
  - Options that would have no effect are refused (a value other than the default) - O(bundle_lookup),
    O(bundle_images), O(pull), O(opm_compat) and the registry options with O(source); the registry options with
    O(pull=false); O(migrate_level) when O(migrate_levels) names every one of O(ocp_versions).
  - Like C(opm alpha render-template), rendering does not validate the result; use
    M(kubeforge.operators.catalog_validate) afterwards.
  - Files of packages that are no longer produced are not removed from O(dest).
seealso:
  - module: kubeforge.operators.catalog_validate
  - module: kubeforge.operators.catalog_template
  - name: opm alpha render-template
    description: The upstream command this module reproduces.
    link: https://github.com/operator-framework/operator-registry
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.registry_auth
  - kubeforge.operators.catalog_select
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: Full texts for files up to 128 KiB, a size and digest summary for larger ones.
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Render a basic template offline from the committed catalog
  kubeforge.operators.catalog_render:
    template: operators/kube-green/catalog-templates/basic-template.yaml
    dest: catalogs/v4.16/kube-green/catalog.yaml
    bundle_lookup:
      - catalogs/v4.16/kube-green
    pull: false

- name: Render for several OpenShift versions (v4.17+ get olm.csv.metadata)
  kubeforge.operators.catalog_render:
    template: operators/kairos-operator/catalog-templates/semver.yaml
    dest: catalogs
    ocp_versions: ["v4.16", "v4.17", "v4.20"]
    bundle_lookup:
      - catalogs/v4.16/kairos-operator
  register: rendered

- name: Merge a catalog directory into one JSON file (opm render catalogs/v4.20 -o json)
  kubeforge.operators.catalog_render:
    source: catalogs/v4.20
    dest: build/index.json
    format: json

- name: Unpack a catalog image into the per-package layout (opm render <image>, no container engine)
  kubeforge.operators.catalog_render:
    source_image: registry.example.com/catalogs/index:v4.20
    dest: index/
    docker_config: ~/.docker/config.json

- name: Keep two operators of a catalog image, one of them from version 1.2.0 on (oc-mirror's selection)
  kubeforge.operators.catalog_render:
    source_image: registry.example.com/catalogs/index:v4.20
    dest: filtered/
    select:
      packages:
        - name: kube-green
        - name: cert-manager
          channels:
            - name: stable
              min_version: 1.2.0

- name: Migrate a committed catalog to olm.csv.metadata in place of olm.bundle.object
  kubeforge.operators.catalog_render:
    source: catalogs/v4.16/kube-green/catalog.yaml
    dest: catalogs/v4.17/kube-green/catalog.yaml
    migrate_level: bundle-object-to-csv-metadata

- name: Render a semver template the way opm v1.46 did, pulling bundles from quay.io
  kubeforge.operators.catalog_render:
    template: catalog-templates/semver.yaml
    dest: catalog/
    opm_compat: v1.46
    registry_username: "{{ quay_user }}"
    registry_password: "{{ quay_token }}"
"""

RETURN = r"""
dest:
  description: The O(dest) value.
  returned: always
  type: str
  sample: catalogs
files:
  description: Every output file (written or already up to date).
  returned: always
  type: list
  elements: str
  sample: [catalogs/v4.16/kube-green/catalog.yaml, catalogs/v4.20/kube-green/catalog.yaml]
changed_files:
  description: The output files whose content changed (or would change in check mode).
  returned: always
  type: list
  elements: str
  sample: [catalogs/v4.20/kube-green/catalog.yaml]
packages:
  description: Names of the rendered packages.
  returned: always
  type: list
  elements: str
  sample: [kube-green]
bundles:
  description: Names of the rendered bundles.
  returned: always
  type: list
  elements: str
  sample: [kube-green.v0.7.0, kube-green.v0.7.1]
renders:
  description: One entry per rendered catalog (one without O(ocp_versions)).
  returned: always
  type: list
  elements: dict
  contains:
    ocp_version:
      description: The OpenShift version, V(null) without O(ocp_versions).
      type: str
    migrate_level:
      description: The migrate level used.
      type: str
    files:
      description: Output files of this render.
      type: list
      elements: str
    packages:
      description: Rendered packages.
      type: list
      elements: str
    bundles:
      description: Rendered bundles.
      type: list
      elements: str
  sample:
    - ocp_version: v4.20
      migrate_level: bundle-object-to-csv-metadata
      files: [catalogs/v4.20/kube-green/catalog.yaml]
      packages: [kube-green]
      bundles: [kube-green.v0.7.1]
pulled:
  description: Bundle images that had to be pulled from registries (always empty with O(source) and O(source_image)).
  returned: always
  type: list
  elements: str
  sample: []
source_image:
  description: The catalog image of O(source_image) as pulled.
  returned: with O(source_image)
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
uid:
  description: Numeric owner of O(dest); Ansible adds these file attributes to every result that names an existing file.
  returned: when O(dest) exists after the run
  type: int
  sample: 1000
gid:
  description: Numeric group of O(dest).
  returned: when O(dest) exists after the run
  type: int
  sample: 1000
owner:
  description: Owner name of O(dest).
  returned: when O(dest) exists after the run
  type: str
  sample: builder
group:
  description: Group name of O(dest).
  returned: when O(dest) exists after the run
  type: str
  sample: builder
mode:
  description: Permissions of O(dest), in octal.
  returned: when O(dest) exists after the run
  type: str
  sample: "0644"
state:
  description: What O(dest) is, V(file), V(directory), V(link) or V(hard) (a file with more than one link).
  returned: when O(dest) exists after the run
  type: str
  sample: file
size:
  description: Size of O(dest) in bytes (of the directory entry for a directory).
  returned: when O(dest) exists after the run
  type: int
  sample: 4096
secontext:
  description: SELinux context of O(dest).
  returned: when O(dest) exists after the run and SELinux is enabled
  type: str
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.args import select_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.render import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import REGISTRY_OPTION_NAMES, registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

TEMPLATE_ONLY = ("bundle_lookup", "bundle_images", "pull", "opm_compat")
UNUSED = (
    Unused(TEMPLATE_ONLY, lambda p: p["template"], "without template (they find and pull a template's bundles)"),
    Unused(("select",), lambda p: not p["template"], "with template (it selects operators of an existing catalog: source or source_image)"),
    Unused(
        REGISTRY_OPTION_NAMES,
        lambda p: p["source_image"] or (p["template"] and p["pull"]),
        "unless something is pulled (source_image, or template with pull=true)",
    ),
    Unused(
        ("migrate_level",),
        lambda p: not p["ocp_versions"] or any(v not in (p["migrate_levels"] or {}) for v in p["ocp_versions"]),
        "when migrate_levels gives every one of ocp_versions its own level",
    ),
)


def argspec():
    spec = dict(
        template=dict(type="path"),
        source=dict(type="path"),
        source_image=dict(type="str"),
        select=select_argspec(),
        dest=dict(type="path", required=True),
        format=dict(type="str", choices=["yaml", "json"], default="yaml"),
        bundle_lookup=dict(type="list", elements="path", default=[]),
        bundle_images=dict(type="dict", default={}),
        pull=dict(type="bool", default=True),
        migrate_level=dict(type="str", choices=["none", "bundle-object-to-csv-metadata", "all"]),
        opm_compat=dict(type="str", choices=["current", "v1.46"], default="current"),
        ocp_versions=dict(type="list", elements="str"),
        migrate_levels=dict(type="dict", default={}),
    )
    spec.update(registry_argspec())
    return spec


def main():
    module = MaskingAnsibleModule(argument_spec=argspec(), supports_check_mode=True,
                                  mutually_exclusive=[("template", "source", "source_image")],
                                  required_one_of=[("template", "source", "source_image")])
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
