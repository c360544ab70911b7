# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registry options shared by the modules that talk to OCI registries.

``registry_argspec()`` is the argument spec of the options documented by the ``kubeforge.operators.registry_auth``
doc fragment (plugins/doc_fragments/registry_auth.py; keep both in sync). ``registry_client_kwargs(params)`` turns
module params into the keyword arguments of ``client.client_for()`` and ``pull.make_image_puller()``.

Plain data and functions only (no Ansible imports), so the OCI code stays usable and testable outside modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

_REGISTRY_ARGSPEC = dict(
    registry_username=dict(type="str"),
    registry_password=dict(type="str", no_log=True),
    docker_config=dict(type="path"),
    ca_file=dict(type="path"),
    validate_certs=dict(type="bool", default=True),
    plain_http=dict(type="bool", default=False),
    timeout=dict(type="int", default=60),
)

# Option names as documented by the registry_auth doc fragment.
REGISTRY_OPTION_NAMES = tuple(_REGISTRY_ARGSPEC)


def registry_argspec():
    """A fresh (deep) copy of the registry options' argument spec, safe for the caller to modify."""
    return copy.deepcopy(_REGISTRY_ARGSPEC)


def registry_auth_argspec():
    """The suboptions of a module's ``registry_auth`` dict option: the registry options without their ``registry_``
    prefix (``username``, ``password``, ``docker_config``, ...), for modules whose own ``validate_certs`` and
    ``timeout`` are the cluster's."""
    return dict((name[len("registry_") :] if name.startswith("registry_") else name, spec) for name, spec in registry_argspec().items())


def registry_auth_params(auth):
    """A ``registry_auth`` dict's values under the registry options' own names (what ``registry_client_kwargs``
    reads); the unset ones left out."""
    return dict(("registry_" + name if name in ("username", "password") else name, value) for name, value in (auth or {}).items() if value is not None)


def _param(params, name):
    # Module params always hold every option; plain dicts (tests, callers outside modules) may leave some out.
    if name in params:
        return params[name]
    return _REGISTRY_ARGSPEC[name].get("default")


def registry_client_kwargs(params, credentials=True):
    """Keyword arguments for ``client_for()`` / ``make_image_puller()`` from module params.

    With ``credentials=False`` the explicit ``registry_username``/``registry_password`` are left out, so only the
    docker config can give credentials (for registries the explicit credentials are not meant for).
    """
    kwargs = dict(docker_config=_param(params, "docker_config"), ca_file=_param(params, "ca_file"),
                  verify=_param(params, "validate_certs"), plain_http=_param(params, "plain_http"),
                  timeout=_param(params, "timeout"))
    if credentials:
        kwargs.update(username=_param(params, "registry_username"), password=_param(params, "registry_password"))
    return kwargs
