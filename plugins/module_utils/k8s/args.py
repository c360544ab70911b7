# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by kubeforge modules.

``auth_argspec()`` is a deep copy of kubernetes.core's ``AUTH_ARG_SPEC``, so our modules accept the same auth
options and the same ``K8S_AUTH_*`` environment variables (the environment is read by kubernetes.core's client code,
see ``client.py``). It is documented by the ``kubeforge.operators.k8s_auth`` doc fragment; ``AUTH_OPTION_NAMES``
is the documented set, and a unit test fails when kubernetes.core's spec drifts from it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

# Options documented in plugins/doc_fragments/k8s_auth.py (keep both in sync).
AUTH_OPTION_NAMES = (
    "kubeconfig",
    "context",
    "host",
    "api_key",
    "username",
    "password",
    "validate_certs",
    "ca_cert",
    "client_cert",
    "client_key",
    "proxy",
    "no_proxy",
    "proxy_headers",
    "persist_config",
    "impersonate_user",
    "impersonate_groups",
)

SECRET_OPTIONS = ("kubeconfig", "api_key", "password")

# Documented in plugins/doc_fragments/k8s_wait.py. Same defaults as kubernetes.core; waiting is watch based
# (``watch.watch_until``), so there is no poll interval (no ``wait_sleep``).
WAIT_ARG_SPEC = {
    "wait": {"type": "bool", "default": False},
    "wait_timeout": {"type": "int", "default": 120},
}


def auth_argspec():
    """Return a fresh copy of kubernetes.core's auth argument spec, restricted to the documented options.

    Never mutate kubernetes.core's dict; callers may modify the returned copy.
    """
    spec = {name: copy.deepcopy(AUTH_ARG_SPEC[name]) for name in AUTH_OPTION_NAMES if name in AUTH_ARG_SPEC}
    # Secrets are never logged, whatever the kubernetes.core version says.
    for name in SECRET_OPTIONS:
        if name in spec:
            spec[name]["no_log"] = True
    return spec


def wait_argspec():
    """Return a fresh copy of the wait options (``wait``, ``wait_timeout``)."""
    return copy.deepcopy(WAIT_ARG_SPEC)


def module_argspec(argument_spec=None, auth=True, wait=False):
    """Combine a module's own options with the shared ones.

    A module's own option wins over a shared one of the same name (for example a different ``wait`` default).
    """
    spec = {}
    if auth:
        spec.update(auth_argspec())
    if wait:
        spec.update(wait_argspec())
    spec.update(copy.deepcopy(argument_spec or {}))
    return spec
