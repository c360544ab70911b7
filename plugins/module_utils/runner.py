# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one module contract of kubeforge.operators: ``main()`` -> :func:`run_module` -> ``execute(module)``.

A module builds its ``AnsibleModule`` (or ``k8s.module.KubeforgeModule`` for cluster-facing modules) and hands its
``execute(module)`` function to :func:`run_module`. ``execute`` returns the result dict and never calls
``exit_json``/``fail_json``; helpers and cores raise. This file is the only place that turns an exception into
``fail_json``, through :func:`failure_from_exception`:

==========================================  ====================================================================
exception                                   failure fields
==========================================  ====================================================================
``errors.KubeforgeError`` (FBC, OCI, k8s)   ``msg``; its ``result`` (partial results) and ``failure_fields()``
                                            (``registry``/``repository``/``status`` for OCI, ``status`` for k8s)
Kubernetes ``ApiException``-like            ``msg`` (the Status message), ``status``, ``reason``
``ValueError``, ``OSError``, kubernetes.    ``msg``
core ``CoreException``
anything else (a bug)                       ``msg`` prefixed with the exception's type name
==========================================  ====================================================================

Every failure also carries ``exception``: the traceback (shown by Ansible at ``-vvv``), whose last line holds the
same bounded message. Messages are cut at :data:`MESSAGE_LIMIT` characters, so no input, however large, can make
a huge result. Warnings a module collects are returned under ``warnings`` and passed to ``module.warn`` here.
Every module builds :class:`MaskingAnsibleModule` (directly, or through ``KubeforgeModule``): passwords written into
image references among the parameters are masked in every output, like no_log values - from the start, since
Ansible's own argument validation may fail (and show the invocation) before ``run_module`` runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import strings_in, userinfo_secrets
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import (
    KubeforgeError,
    api_error_message,
    api_error_status,
    excerpt,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.options import defaults_of, refuse_unused

# Longest message a failure may carry (validation can legitimately list many problems; a single input excerpt is
# bounded much tighter by errors.excerpt).
MESSAGE_LIMIT = 16 * 1024

_EXPECTED = (ValueError, OSError)


def _is_core_exception(exc):
    # kubernetes.core's CoreException, matched by name: importing it would tie every module to kubernetes.core.
    return any(cls.__name__ == "CoreException" for cls in type(exc).__mro__)


def failure_from_exception(exc):
    """The ``fail_json`` keyword arguments for ``exc`` (pure; see the table in the module docstring)."""
    failure = {}
    if isinstance(exc, KubeforgeError):
        msg = str(exc)
        failure.update(exc.result)
        failure.update((k, v) for k, v in exc.failure_fields().items() if v is not None)
    elif api_error_status(exc) is not None and hasattr(exc, "body"):
        msg = api_error_message(exc)
        failure["status"] = api_error_status(exc)
        if getattr(exc, "reason", None):
            failure["reason"] = str(exc.reason)
    elif isinstance(exc, _EXPECTED) or _is_core_exception(exc):
        msg = str(exc)
    else:
        msg = "%s: %s" % (type(exc).__name__, exc)
    failure["msg"] = excerpt(msg or type(exc).__name__, MESSAGE_LIMIT)
    tb = "".join(traceback.format_tb(exc.__traceback__)) if exc.__traceback__ else ""
    failure["exception"] = "Traceback (most recent call last):\n%s%s: %s\n" % (tb, type(exc).__name__, failure["msg"])
    return failure


class MaskingAnsibleModule(AnsibleModule):
    """``AnsibleModule`` whose no_log values include the secrets of every image reference or URL among its
    parameters (``user:password@registry/...``; refused later, but never shown)."""

    def _load_params(self):
        super()._load_params()
        for text in strings_in(self.params or {}):
            self.no_log_values.update(userinfo_secrets(text))


def run_module(module, execute, requirements=(), unused=()):
    """Run ``execute(module)`` and exit with its result dict, or fail with :func:`failure_from_exception`.

    ``unused``: the module's ``options.Unused`` rules; an option given where it has no effect fails before
    ``execute`` runs (``options.refuse_unused``).

    ``requirements``: ``(library name, import traceback or None)`` pairs; a missing library fails first, with
    Ansible's standard message. A ``warnings`` list in the result goes to ``module.warn``; a ``diff`` is dropped
    unless the module runs in diff mode. Warnings in the result of a failure go to ``module.warn`` as well.
    """
    # The imports (kubernetes, pydantic, ansible) leave a few hundred thousand objects that live until the process
    # ends: out of the collector's reach, a module's garbage collections and its interpreter shutdown stop walking
    # them again (the shutdown alone took about 0.2 s, a fifth of a no-op run).
    gc.freeze()
    for library, import_error in requirements:
        if import_error:
            module.fail_json(msg=missing_required_lib(library), exception=import_error)
    try:
        if unused:
            refuse_unused(module.params, unused, defaults_of(module.argument_spec))
        result = dict(execute(module) or {})
    except Exception as exc:  # the one place where errors become fail_json
        failure = failure_from_exception(exc)
        for warning in failure.pop("warnings", None) or ():
            module.warn(warning)
        module.fail_json(**failure)
        return  # fail_json exits; reached only with test doubles that return
    for warning in result.pop("warnings", None) or ():
        module.warn(warning)
    if not getattr(module, "_diff", False):
        result.pop("diff", None)  # returned only in diff mode, like Ansible's own modules
    result.setdefault("changed", False)
    module.exit_json(**result)
