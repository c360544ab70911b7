# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors of the Kubernetes adapter (subclasses of the root ``errors.KubeforgeError``; only the runner fails)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError


class K8sError(KubeforgeError, CoreException):
    """A Kubernetes API or adapter error; the runner turns it into ``fail_json``.

    Also a kubernetes.core ``CoreException``, so code that handles kubernetes.core errors handles ours too.
    ``result`` carries partial results (merged into the failure output); ``status`` is the HTTP status of an
    underlying API error, if any.
    """

    def __init__(self, message="", result=None, status=None):
        super().__init__(message, result=result)
        self.msg = message
        self.status = status

    def failure_fields(self):
        return {"status": self.status} if isinstance(self.status, int) else {}


class KindNotFoundError(K8sError):
    """The API server's discovery does not list a kind (after the refreshes ``client.find_resource`` makes): its API
    is not installed on this cluster. Only this error says so; others (no client, a starting server) do not."""


class ResourceTimeoutError(K8sError):
    """A wait did not succeed before its deadline.

    ``last_object`` is the last state seen (a dict, or None if the object did not exist), also returned to the
    user as ``result``; ``duration`` is the time spent waiting, in seconds.
    """

    def __init__(self, message="", last_object=None, duration=None, result=None):
        result = dict(result or {})
        result.setdefault("result", last_object)
        if duration is not None:
            result.setdefault("duration", duration)
        super().__init__(message, result=result)
        self.last_object = last_object
        self.duration = duration
