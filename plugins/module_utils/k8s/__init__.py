# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adapter between kubeforge.operators and kubernetes.core.

This package is the only place in the collection that imports kubernetes.core internals
(``ansible_collections.kubernetes.core.plugins.module_utils...``). Those are private APIs without a stability
contract, so when kubernetes.core changes, only this package (and its unit tests) should need updating.

Submodules:

- ``args``: auth/wait argument specs (auth is a deep copy of kubernetes.core's ``AUTH_ARG_SPEC``);
- ``errors``: ``K8sError`` (a kubernetes.core ``CoreException``) and ``ResourceTimeoutError``;
- ``client``: dynamic client creation, server-side dry run, resource lookup with discovery-cache invalidation;
- ``objects``: get/create/apply/patch/delete helpers returning ``(changed, before, after)``;
- ``watch``: ``watch_until`` (list + watch with re-list on 410 Gone and a monotonic deadline);
- ``module``: ``KubeforgeModule`` (wraps kubernetes.core's ``AnsibleK8SModule``; ``run`` is ``runner.run_module``;
  ``cluster`` is its ``Cluster``);
- ``cluster``: the plumbing every cluster layer shares (``apply``/``apply_owned`` as the field manager ``kubeforge``,
  the ``Cluster`` facade - the one way the cluster layers look kinds up, read and write -, ``ensure_namespace``,
  ``diff_view``, ``retry_guarded``);
- ``observe``: the one watch engine (several kinds at once, a decision function on every change, API server
  restarts ridden out); ``watch`` is it for one object;
- ``events``: the Events the modules record;
- ``clock``: ``Deadline``, the one clock of every duration and deadline outside this package.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
