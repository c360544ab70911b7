#!/usr/bin/python
# -*- coding: utf-8 -*-

# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: catalog_validate
short_description: Validate a file-based catalog (FBC) like opm validate, reporting every problem
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Pure-Python equivalent of C(opm validate <dir>). It loads the catalog (all of opm's load errors) and runs
    the schema and upgrade-graph checks of C(declcfg.ConvertToModel) and C(model.Validate).
  - Unlike opm, which stops at the first sequential error, every problem found is returned in RV(errors), each in
    opm's wording; RV(opm_error) is the single message opm itself would print.
  - No image pulls and no CSV validation (opm does not do them either).
  - Never changes anything. Does not need a Kubernetes cluster and does not use C(kubernetes.core).
options:
  path:
    description:
      - FBC directory (for example C(catalogs/v4.20)) or a single FBC file.
    type: path
    required: true
    version_added: 0.1.0
  fail_on_invalid:
    description:
      - Fail the task when the catalog is invalid. With V(false) the result is returned with RV(valid=false).
    type: bool
    default: true
    version_added: 0.1.0
  community_checks:
    description:
      - Also run the community-operators static checks on catalogs (operator-pipelines C(operator_catalogs)),
        every bundle image must start with one of O(allowed_registries), and catalogs of OpenShift v4.17 and later
        must not contain C(olm.bundle.object) properties. Problems are added to RV(errors) and
        RV(community_errors).
    type: bool
    default: false
    version_added: 0.1.0
  allowed_registries:
    description:
      - Allowed bundle image prefixes for O(community_checks).
    type: list
    elements: str
    default: [quay.io/community-operator-pipeline-prod/, quay.io/openshift-community-operators/]
    version_added: 0.1.0
  ocp_version:
    description:
      - OpenShift catalog version (V(v4.20)) of O(path) for O(community_checks). Defaults to the C(vX.Y) directory
        O(path) lies in (for example C(catalogs/v4.20/kube-green)); without one the C(olm.bundle.object) check is
        skipped.
      - Must look like V(v4.20) (quote it in YAML); refused without O(community_checks=true), like
        O(allowed_registries) set to other than its default.
    type: str
    version_added: 0.1.0
notes:
  - "Model problems are prefixed with their path in opm's error tree, for example
    C(invalid package \"foo\": invalid channel \"stable\": ...)."
seealso:
  - module: kubeforge.operators.catalog_render
  - name: opm validate
    description: The upstream command this module reproduces.
    link: https://github.com/operator-framework/operator-registry
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Validate the v4.20 catalog directory
  kubeforge.operators.catalog_validate:
    path: catalogs/v4.20

- name: Collect the problems of a catalog without failing
  kubeforge.operators.catalog_validate:
    path: catalogs/v4.16/kube-green/catalog.yaml
    fail_on_invalid: false
  register: check

- name: Show them
  ansible.builtin.debug:
    var: check.errors
  when: not check.valid
"""

RETURN = r"""
valid:
  description: Whether the catalog passes C(opm validate).
  returned: always
  type: bool
  sample: true
errors:
  description: Every problem found, in opm's wording (empty when valid).
  returned: always
  type: list
  elements: str
  sample: ['invalid package "foo": invalid channel "stable": multiple channel heads found in graph: foo.v1, foo.v2']
opm_error:
  description: The error message opm itself would report (its first error), V(null) when valid.
  returned: always
  type: str
  sample: null
packages:
  description: Number of packages in the catalog.
  returned: always
  type: int
  sample: 1
bundles:
  description: Number of bundles in the catalog.
  returned: always
  type: int
  sample: 10
community_errors:
  description: The problems found by O(community_checks) (also listed in RV(errors)).
  returned: when O(community_checks=true)
  type: list
  elements: str
  sample:
    - 'bundle "foo.v1": image "docker.io/x/foo:1" is not from an allowed registry (quay.io/community-operator-pipeline-prod/)'

"""

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.validate import execute
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import YAML_IMPORT_ERROR
from ansible_collections.kubeforge.operators.plugins.module_utils.options import Unused
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module

UNUSED = (Unused(("ocp_version", "allowed_registries"), lambda p: p["community_checks"], "without community_checks=true"),)


def argspec():
    return dict(
        path=dict(type="path", required=True),
        fail_on_invalid=dict(type="bool", default=True),
        community_checks=dict(type="bool", default=False),
        allowed_registries=dict(type="list", elements="str",
                                default=["quay.io/community-operator-pipeline-prod/",
                                         "quay.io/openshift-community-operators/"]),
        ocp_version=dict(type="str"),
    )


def main():
    module = MaskingAnsibleModule(argument_spec=argspec(), supports_check_mode=True)
    run_module(module, execute, requirements=[("PyYAML", YAML_IMPORT_ERROR)], unused=UNUSED)


if __name__ == "__main__":
    main()
