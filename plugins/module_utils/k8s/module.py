# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module base for kubeforge modules.

Typical module ``main()``::

    def main():
        module = KubeforgeModule(argument_spec=argspec(), wait=True, supports_check_mode=True)
        module.run(execute)          # execute(module) -> dict of results; exceptions become fail_json

``run`` is ``runner.run_module``, the contract every module follows. ``module.client`` is kubernetes.core's
``K8SClient`` (server-side dry run in check mode); ``module.resource(kind, api_version)`` finds a resource,
refreshing the discovery cache once on a miss.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import kubeconfig_secrets, scalar_leaves
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.args import module_argspec
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import find_resource, get_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.runner import MaskingAnsibleModule, run_module


class KubeforgeModule(AnsibleK8SModule):
    """``AnsibleK8SModule`` plus our shared options, a lazy client and uniform error handling.

    ``auth`` (default True) adds the kubernetes.core auth options, ``wait`` (default False) adds ``wait`` and
    ``wait_timeout``; the module's own ``argument_spec`` entries win on name clashes. Other keyword arguments go to
    ``AnsibleModule`` (``supports_check_mode``, ``mutually_exclusive``, ...) or to ``AnsibleK8SModule``
    (``check_k8s``, ``check_pyyaml``, ``module_class``).
    """

    def __init__(self, argument_spec=None, auth=True, wait=False, **kwargs):
        kwargs.setdefault("module_class", MaskingAnsibleModule)
        spec = module_argspec(argument_spec, auth=auth, wait=wait)
        super().__init__(argument_spec=spec, **kwargs)
        self._client = None
        self._cluster = None
        self._mask_only_kubeconfig_secrets(spec)

    def _mask_only_kubeconfig_secrets(self, spec):
        """A kubeconfig given as a dict is a no_log option, so Ansible masks each of its values in every output -
        ``v1``, the cluster's name, ``True`` - which garbles the objects modules return (kubernetes.core#870). Keep
        the option hidden in the invocation, but mask only its secrets (and every other secret option's values)."""
        kubeconfig = self.params.get("kubeconfig")
        masked = getattr(self._module, "no_log_values", None)
        if not isinstance(kubeconfig, dict) or masked is None:
            return
        keep = set(kubeconfig_secrets(kubeconfig))
        for name, option in spec.items():
            if name != "kubeconfig" and option.get("no_log") and self.params.get(name) is not None:
                keep.update(scalar_leaves(self.params[name]))
        masked.difference_update(set(scalar_leaves(kubeconfig)) - keep)

    @property
    def client(self):
        """kubernetes.core ``K8SClient`` (created on first use)."""
        if self._client is None:
            self._client = get_client(module=self)
        return self._client

    @property
    def cluster(self):
        """The ``Cluster`` facade on ``client``: the one way cluster layers read and write (created on first use)."""
        if self._cluster is None:
            self._cluster = Cluster(self.client)
        return self._cluster

    @property
    def argument_spec(self):
        """The wrapped AnsibleModule's argument spec (the defaults ``options.refuse_unused`` compares with)."""
        return self._module.argument_spec

    @property
    def no_log_values(self):
        """The wrapped AnsibleModule's set of values masked in every output."""
        return self._module.no_log_values

    @property
    def dry_run(self):
        """True when mutating calls are sent with ``dryRun=All`` (check mode)."""
        return bool(self.server_side_dry_run)

    def resource(self, kind, api_version):
        return find_resource(self.client, kind, api_version)

    def run(self, execute, unused=()):
        """``runner.run_module(self, execute, unused=unused)``: exit with ``execute(self)``'s result dict, fail on
        errors (and on options given where the ``unused`` rules say they have no effect)."""
        run_module(self, execute, unused=unused)
