#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_release
short_description: Prepare a community-operators release commit (bundle, release-config, templates, catalogs)
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Works on a local git clone with the community-operators(-prod) layout and creates a branch with one commit that
    releases O(version) of O(package), the way a contributor pull request plus the release pipeline's
    C(add_bundle_to_fbc) step would. Never pushes.
  - The commit copies the bundle directory O(bundle_path) to C(operators/<package>/<version>/) (C(manifests/),
    C(metadata/) and C(tests/scorecard/) when present) and writes O(release_config) as
    C(operators/<package>/<version>/release-config.yaml).
  - With a release config (given or already committed), every listed catalog template in
    C(operators/<package>/catalog-templates/) is created or amended with the release-config semantics, every
    catalog the ci.yaml C(fbc.catalog_mapping) maps those templates to is rendered to
    C(catalogs/<version>/<package>/catalog.yaml) (C(bundle-object-to-csv-metadata) for v4.17 and later), and each
    rendered catalog is validated.
  - Inputs (ci.yaml, templates, committed catalogs) are read from the commit the branch starts from, not from the
    work tree. The commit is made in a temporary worktree, so the work tree, index and checked-out branch of
    O(repo_path) are never modified; on any error no branch is created or moved.
  - Bundle images of existing releases are resolved from the committed catalogs of the package, then from
    O(bundle_lookup), then pulled from their registries (unless O(pull=false)); the new bundle is rendered from
    O(bundle_path).
  - A second run with the same input finds nothing to change and reports C(changed=false).
options:
  repo_path:
    description:
      - Local git clone (work tree root) of community-operators-prod or a repository with the same layout.
      - A directory inside the work tree stands for its top level; a bare repository is refused.
    type: path
    required: true
    version_added: 0.1.0
  package:
    description:
      - Operator (package) name, the directory name below C(operators/).
    type: str
    required: true
    version_added: 0.1.0
  version:
    description:
      - Version directory name, usually the CSV version, for example V(0.7.2).
    type: str
    required: true
    version_added: 0.1.0
  bundle_path:
    description:
      - Unpacked bundle directory (C(manifests/), C(metadata/), optionally C(tests/scorecard/)).
      - Its package annotation must be O(package).
    type: path
    required: true
    version_added: 0.1.0
  release_config:
    description:
      - Content of C(release-config.yaml) (keys C(catalog_templates) and optional C(merge)), validated against the
        pipeline's schema. Each C(catalog_templates) item has C(template_name), C(channels) and optionally
        C(defaultChannel), C(replaces), C(skips) and C(skipRange).
      - Snake-cased keys (C(default_channel), C(skip_range)), as ansible-operator passes custom resource fields,
        are accepted and written with the pipeline's names.
      - When not set, an existing C(operators/<package>/<version>/release-config.yaml) is used; without one, only
        the bundle is added (no template or catalog change).
    type: dict
    version_added: 0.1.0
  bundle_image:
    description:
      - Bundle image reference of the release, recorded in the templates and catalogs.
      - Defaults to C(<bundle_registry>/<package>:<version>), the image the community pipeline publishes.
    type: str
    version_added: 0.1.0
  bundle_registry:
    description:
      - Registry and namespace of the default O(bundle_image).
    type: str
    default: quay.io/community-operator-pipeline-prod
    version_added: 0.1.0
  branch:
    description:
      - Branch to create (or to add a commit to, when it exists). Defaults to C(<package>-<version>).
    type: str
    version_added: 0.1.0
  base_ref:
    description:
      - Commit-ish a new branch starts from.
      - When the branch exists, the commit goes on top of it; a O(base_ref) other than V(HEAD) that the branch does
        not contain is refused.
    type: str
    default: HEAD
    version_added: 0.1.0
  commit_message:
    description:
      - Commit message. Defaults to C(operator <package> (<version>)), the community-operators convention.
    type: str
    version_added: 0.1.0
  author_name:
    description:
      - Author and committer name. Defaults to git's C(user.name).
    type: str
    version_added: 0.1.0
  author_email:
    description:
      - Author and committer e-mail. Defaults to git's C(user.email).
    type: str
    version_added: 0.1.0
  gpg_key:
    description:
      - Sign the commit with this key (C(git -c user.signingkey=KEY commit -S)).
    type: str
    aliases: [signing_key]
    version_added: 0.1.0
  sign:
    description:
      - Sign the commit with git's configured signing key (C(commit -S)).
      - Defaults to V(true) when O(gpg_key) is set (a signing key always signs, so V(false) with it is refused),
        else V(false).
    type: bool
    version_added: 0.1.0
  bundle_lookup:
    description:
      - Extra FBC catalogs or bundle directories used to resolve the bundle images of earlier releases (see
        M(kubeforge.operators.catalog_render)).
    type: list
    elements: path
    default: []
    version_added: 0.1.0
  pull:
    description:
      - Pull bundle images that cannot be resolved offline from their registries.
    type: bool
    default: true
    version_added: 0.1.0
  opm_compat:
    description:
      - Semver template behaviour to reproduce, V(current) or V(v1.46) (see M(kubeforge.operators.catalog_render)).
    type: str
    choices: [current, v1.46]
    default: current
    version_added: 0.1.0
  validate:
    description:
      - Validate every rendered catalog and fail when one is invalid.
    type: bool
    default: true
    version_added: 0.1.0
notes:
  - Options that would have no effect are refused (a value other than the default) - O(bundle_registry) with
    O(bundle_image), the registry options with O(pull=false), O(sign=false) with O(gpg_key).
  - O(registry_username)/O(registry_password) are used for every registry the bundle images of earlier
    releases are pulled from; without them, credentials come from O(docker_config).
  - Needs the C(git) command line client; signing needs C(gpg) (or git's configured signing program).
  - The release branch is never moved while it is checked out, in O(repo_path) or in another worktree of the
    repository; such a run fails (also in check mode) unless nothing needs changing.
  - Directories of the repository that are symbolic links are never written through; a file that is a symbolic
    link is replaced by a regular file.
  - Catalogs are validated per package (the rendered C(catalogs/<version>/<package>) content), not as whole
    C(catalogs/<version>) directories.
seealso:
  - module: kubeforge.operators.catalog_template
  - module: kubeforge.operators.catalog_render
  - name: community-operators FBC workflow
    description: The release process this module reproduces.
    link: https://redhat-openshift-ecosystem.github.io/operator-pipelines/users/fbc_workflow/
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kubeforge.operators.registry_auth
attributes:
  check_mode:
    support: full
    details: Computes the change set without creating worktrees, branches or commits.
  diff_mode:
    support: full
    details: Full texts for files up to 128 KiB, a size and digest summary for larger ones.
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Prepare the kube-green 0.7.2 release branch
  kubeforge.operators.catalog_release:
    repo_path: ~/src/community-operators-prod
    package: kube-green
    version: 0.7.2
    bundle_path: build/bundle
    release_config:
      catalog_templates:
        - template_name: basic-template.yaml
          channels: [alpha]
          replaces: kube-green.v0.7.1
    author_name: Release Bot
    author_email: release-bot@example.com
  register: release

- name: Push it yourself
  ansible.builtin.command:
    cmd: git push origin {{ release.branch }}
    chdir: ~/src/community-operators-prod
  when: release.changed
  changed_when: true

- name: Semver operator, signed commit
  kubeforge.operators.catalog_release:
    repo_path: ~/src/community-operators-prod
    package: kairos-operator
    version: 2.3.0
    bundle_path: bundle/
    release_config:
      catalog_templates:
        - template_name: semver.yaml
          channels: [Candidate]
    gpg_key: 0xDEADBEEF
"""

RETURN = r"""
branch:
  description: The release branch.
  returned: always
  type: str
  sample: kube-green-0.7.2
commit:
  description: Commit id at the tip of RV(branch); V(null) in check mode when a commit would be created, or when
    nothing needed changing and the branch does not exist.
  returned: always
  type: str
  sample: 4e1f0c2d9b3c6d1c2a7b5e8f9a0b1c2d3e4f5a6b
base:
  description: Commit id the change set was computed against (the existing branch tip, else O(base_ref)).
  returned: always
  type: str
  sample: 9f8e7d6c5b4a39281706f5e4d3c2b1a098765432
files:
  description: Repository paths added or modified by the commit.
  returned: always
  type: list
  elements: str
  sample: [catalogs/v4.20/kube-green/catalog.yaml, operators/kube-green/0.7.2/manifests/kube-green.clusterserviceversion.yaml]
templates:
  description: Catalog templates created or amended.
  returned: always
  type: list
  elements: str
  sample: [basic-template.yaml]
catalogs:
  description: OpenShift catalogs rendered (every catalog mapped to a touched template).
  returned: always
  type: list
  elements: str
  sample: [v4.16, v4.20]
validation:
  description: Validation result per rendered catalog.
  returned: always
  type: dict
  sample: {v4.20: {valid: true, errors: []}}
bundle_image:
  description: The bundle image recorded in the templates.
  returned: always
  type: str
  sample: quay.io/community-operator-pipeline-prod/kube-green:0.7.2
csv_name:
  description: Name of the bundle's ClusterServiceVersion.
  returned: always
  type: str
  sample: kube-green.v0.7.2
"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.release import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import REGISTRY_OPTION_NAMES, registry_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

UNUSED = (
    Unused(("bundle_registry",), lambda p: not p["bundle_image"], "with bundle_image (it only builds the default bundle_image)"),
    Unused(REGISTRY_OPTION_NAMES, lambda p: p["pull"], "with pull=false (nothing is pulled)"),
)


def argspec():
    spec = dict(
        repo_path=dict(type="path", required=True),
        package=dict(type="str", required=True),
        version=dict(type="str", required=True),
        bundle_path=dict(type="path", required=True),
        release_config=dict(type="dict"),
        bundle_image=dict(type="str"),
        bundle_registry=dict(type="str", default="quay.io/community-operator-pipeline-prod"),
        branch=dict(type="str"),
        base_ref=dict(type="str", default="HEAD"),
        commit_message=dict(type="str"),
        author_name=dict(type="str"),
        author_email=dict(type="str"),
        gpg_key=dict(type="str", aliases=["signing_key"], no_log=False),
        sign=dict(type="bool"),
        bundle_lookup=dict(type="list", elements="path", default=[]),
        pull=dict(type="bool", default=True),
        opm_compat=dict(type="str", choices=["current", "v1.46"], default="current"),
        validate=dict(type="bool", default=True),
    )
    spec.update(registry_argspec())
    return spec


def main():
    module = MaskingAnsibleModule(argument_spec=argspec(), supports_check_mode=True)
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
