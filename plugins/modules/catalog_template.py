#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_template
short_description: Edit, create or query a basic or semver catalog template
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Adds a bundle to a catalog template with the semantics of community-operators C(release-config.yaml) (the
    C(add_bundle_to_fbc) step of the release pipeline), creating the template when it does not exist.
  - Removes bundles from a template, optionally re-linking the upgrade chain.
  - Writes a basic template converted from a full FBC, like C(opm alpha convert-template basic).
  - Reports the latest bundle (the single channel head) of a channel of a basic template, read-only.
  - Idempotent; the file is rewritten only when its content changes. Key order of existing templates is kept.
  - Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  path:
    description:
      - The template file (YAML or JSON; only the first document is read).
    type: path
    required: true
    version_added: 0.1.0
  add_bundle:
    description:
      - Bundle to add. For a basic template an C(olm.bundle) entry with the image is appended unless an
        entry with that image exists, missing channels are appended, and the channel entry (C(name), C(replaces),
        C(skips), C(skipRange)) is appended to each listed channel unless an identical entry is there.
        The package and its default channel are not changed.
      - For a semver template an C(Image) item is appended to the C(Bundles) of each listed channel archetype.
      - When O(path) does not exist a new template of type O(template_type) is created.
    type: dict
    version_added: 0.1.0
    suboptions:
      image:
        description:
          - Bundle image reference.
        type: str
        required: true
        version_added: 0.1.0
      name:
        description:
          - Bundle (CSV) name of the channel entry, for example V(kube-green.v0.7.2). Basic templates only.
          - Required for basic templates unless O(add_bundle.bundle_path) is given.
        type: str
        version_added: 0.1.0
      bundle_path:
        description:
          - Unpacked bundle directory the CSV name (and, for new templates, the package name) is read from.
        type: path
        version_added: 0.1.0
      channels:
        description:
          - Channels to add the bundle to. For semver templates each must be V(Candidate), V(Fast) or V(Stable).
        type: list
        elements: str
        required: true
        version_added: 0.1.0
      replaces:
        description:
          - C(replaces) of the channel entry (basic only).
        type: str
        version_added: 0.1.0
      skips:
        description:
          - C(skips) of the channel entry (basic only).
        type: list
        elements: str
        version_added: 0.1.0
      skip_range:
        description:
          - C(skipRange) of the channel entry (basic only), for example V(>=0.5.0 <0.7.2).
        type: str
        aliases: [skipRange]
        version_added: 0.1.0
      default_channel:
        description:
          - Default channel of a new basic template (must be one of O(add_bundle.channels); the first channel when
            not set). Ignored for existing templates, as in the release pipeline.
        type: str
        aliases: [defaultChannel]
        version_added: 0.1.0
      package:
        description:
          - Package name of a new basic template. Defaults to the package of O(add_bundle.bundle_path).
        type: str
        version_added: 0.1.0
  remove_bundle:
    description:
      - Bundles to remove, each given by image (removes the C(olm.bundle) entry or the semver C(Image)) or by bundle
        name (removes the channel entries of that name; basic only). Give both to remove a bundle completely.
    type: list
    elements: str
    version_added: 0.1.0
  relink:
    description:
      - When removing a channel entry, let entries that replaced it inherit its C(replaces), so the upgrade chain
        stays connected.
    type: bool
    default: true
    version_added: 0.1.0
  convert_from:
    description:
      - Full FBC (a single catalog file, or a directory) to convert into a basic template written at O(path), like
        C(opm alpha convert-template basic); bundles are reduced to their C(schema) and C(image).
    type: path
    version_added: 0.1.0
  latest_in_channel:
    description:
      - Name of a channel of a basic template whose latest bundle (single channel head) is returned as
        RV(latest). Read-only.
    type: str
    version_added: 0.1.0
  template_type:
    description:
      - Type of a template created by O(add_bundle) when O(path) does not exist. An existing template keeps its own
        type; V(semver) for an existing basic template is refused.
      - New semver templates get C(GenerateMajorChannels) and C(GenerateMinorChannels) set to V(true), as the
        release pipeline creates them.
    type: str
    choices: [basic, semver]
    default: basic
    version_added: 0.1.0
  format:
    description:
      - Output format of new and converted templates (C(-o) of C(opm alpha convert-template)). Existing templates
        keep their format (a file whose content starts with an opening brace is JSON); V(json) for an existing YAML
        template is refused.
    type: str
    choices: [yaml, json]
    default: yaml
    version_added: 0.1.0
notes:
  - Options that would have no effect are refused - O(relink) without O(remove_bundle); for semver templates
    O(add_bundle.name), O(add_bundle.replaces), O(add_bundle.skips), O(add_bundle.skip_range),
    O(add_bundle.default_channel), O(add_bundle.package) and O(add_bundle.bundle_path); for an existing basic template
    an O(add_bundle.package) (or the package of O(add_bundle.bundle_path)) or O(add_bundle.default_channel) other
    than the template's own.
  - Comments of an edited YAML template are not kept, and very long plain scalars are written on one line.
seealso:
  - module: kubeforge.operators.catalog_render
  - module: kubeforge.operators.catalog_release
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Add a release to the alpha channel of a basic template
  kubeforge.operators.catalog_template:
    path: operators/kube-green/catalog-templates/basic-template.yaml
    add_bundle:
      image: quay.io/community-operator-pipeline-prod/kube-green:0.7.2
      name: kube-green.v0.7.2
      channels: [alpha]
      replaces: kube-green.v0.7.1

- name: Which bundle does a new release replace?
  kubeforge.operators.catalog_template:
    path: operators/kube-green/catalog-templates/basic-template.yaml
    latest_in_channel: alpha
  register: head

- name: Add a bundle to the Candidate archetype of a semver template
  kubeforge.operators.catalog_template:
    path: operators/kairos-operator/catalog-templates/semver.yaml
    add_bundle:
      image: quay.io/community-operator-pipeline-prod/kairos-operator:2.3.0
      channels: [Candidate]

- name: Remove a bundle completely (image and channel entries)
  kubeforge.operators.catalog_template:
    path: catalog-templates/basic.yaml
    remove_bundle:
      - quay.io/example/foo-bundle:v0.1.0
      - foo.v0.1.0

- name: Turn a rendered catalog into a basic template
  kubeforge.operators.catalog_template:
    path: catalog-templates/v4.20.yaml
    convert_from: catalogs/v4.20/kube-green/catalog.yaml
"""

RETURN = r"""
path:
  description: The template path.
  returned: always
  type: str
  sample: catalog-templates/basic.yaml
template_type:
  description: Type of the template (V(basic) or V(semver)).
  returned: always
  type: str
  sample: basic
latest:
  description: The latest bundle (channel head) of O(latest_in_channel).
  returned: when O(latest_in_channel) is set
  type: str
  sample: kube-green.v0.7.1
images:
  description: Bundle images listed in the template after the change.
  returned: always
  type: list
  elements: str
  sample: [quay.io/community-operator-pipeline-prod/kube-green:0.7.1]
removed:
  description: The O(remove_bundle) values that matched something.
  returned: when O(remove_bundle) is set
  type: list
  elements: str
  sample: [foo.v0.1.0]
created:
  description: Whether the template file is (or would be) created.
  returned: always
  type: bool
  sample: false
uid:
  description: Numeric owner of O(path); Ansible adds these file attributes to every result that names an existing file.
  returned: when O(path) exists after the run
  type: int
  sample: 1000
gid:
  description: Numeric group of O(path).
  returned: when O(path) exists after the run
  type: int
  sample: 1000
owner:
  description: Owner name of O(path).
  returned: when O(path) exists after the run
  type: str
  sample: builder
group:
  description: Group name of O(path).
  returned: when O(path) exists after the run
  type: str
  sample: builder
mode:
  description: Permissions of O(path), in octal.
  returned: when O(path) exists after the run
  type: str
  sample: "0644"
state:
  description: What O(path) is, V(file), V(directory), V(link) or V(hard) (a file with more than one link).
  returned: when O(path) exists after the run
  type: str
  sample: file
size:
  description: Size of O(path) in bytes (of the directory entry for a directory).
  returned: when O(path) exists after the run
  type: int
  sample: 4096
secontext:
  description: SELinux context of O(path).
  returned: when O(path) exists after the run and SELinux is enabled
  type: str
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.templates import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

UNUSED = (Unused(("relink",), lambda p: p["remove_bundle"], "without remove_bundle (it relinks the channels around removed bundles)"),)


def argspec():
    return dict(
        path=dict(type="path", required=True),
        add_bundle=dict(type="dict", options=dict(
            image=dict(type="str", required=True),
            name=dict(type="str"),
            bundle_path=dict(type="path"),
            channels=dict(type="list", elements="str", required=True),
            replaces=dict(type="str"),
            skips=dict(type="list", elements="str"),
            skip_range=dict(type="str", aliases=["skipRange"]),
            default_channel=dict(type="str", aliases=["defaultChannel"]),
            package=dict(type="str"),
        )),
        remove_bundle=dict(type="list", elements="str"),
        relink=dict(type="bool", default=True),
        convert_from=dict(type="path"),
        latest_in_channel=dict(type="str"),
        template_type=dict(type="str", choices=["basic", "semver"], default="basic"),
        format=dict(type="str", choices=["yaml", "json"], default="yaml"),
    )


def main():
    module = MaskingAnsibleModule(
        argument_spec=argspec(),
        mutually_exclusive=[("convert_from", "add_bundle"), ("convert_from", "remove_bundle"),
                            ("convert_from", "latest_in_channel"), ("latest_in_channel", "add_bundle"),
                            ("latest_in_channel", "remove_bundle")],
        required_one_of=[("add_bundle", "remove_bundle", "convert_from", "latest_in_channel")],
        supports_check_mode=True,
    )
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
