# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exception types raised by kubeforge module_utils (never ``fail_json`` below module level)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException


class KubeforgeError(CoreException):
    """Error raised by our module_utils; ``fail_from_exception`` turns it into ``fail_json``.

    It subclasses kubernetes.core's ``CoreException`` so code that handles kubernetes.core errors handles ours too.
    ``result`` carries partial results (merged into the failure output); ``status`` is the HTTP status of an
    underlying API error, if any.
    """

    def __init__(self, message="", result=None, status=None):
        super().__init__(message)
        self.msg = message
        self.result = dict(result or {})
        self.status = status


class ResourceTimeoutError(KubeforgeError):
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


def api_error_status(exc):
    """Return the HTTP status of a kubernetes ``ApiException``-like error, else None."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


def api_error_message(exc):
    """A readable message for an API error: the ``message`` of the Status body when there is one."""
    import json

    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body:
        try:
            parsed = json.loads(body)
        except ValueError:
            return body
        if isinstance(parsed, dict) and parsed.get("message"):
            return parsed["message"]
        return body
    reason = getattr(exc, "reason", None)
    return str(reason) if reason else str(exc)
