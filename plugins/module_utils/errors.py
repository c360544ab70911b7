# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error root of kubeforge.operators (no Ansible import).

Every error our module_utils raise derives from :class:`KubeforgeError`: ``fbc.errors.FBCError``,
``oci.errors.OCIError``, ``k8s.errors.K8sError``, ``git.GitError``, the domain errors, and :class:`InvalidInputError` for a value
that cannot be used (also a ``ValueError``, which callers catch). Cores raise; only ``runner.run_module`` turns an error into
``fail_json``, with the fields :meth:`KubeforgeError.failure_fields` names. (``tests/unit/plugins/module_utils/test_errors.py``
checks every ``raise`` and every exception class.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Longest excerpt of user input an error message may quote (the rest is summarised as a count).
EXCERPT_LIMIT = 200


def excerpt(text, limit=EXCERPT_LIMIT):
    """``text`` (any value, str() applied) cut to ``limit`` characters, with a note of how much was left out."""
    text = text if isinstance(text, str) else str(text)
    if len(text) <= limit:
        return text
    return "%s… (%d more characters)" % (text[:limit], len(text) - limit)


class KubeforgeError(Exception):
    """Root of the errors raised by kubeforge.operators module_utils; ``str()`` is the user-facing message.

    ``result`` holds partial results (for example the last object seen before a timeout); the runner merges them
    into the failure. Subclasses add safe, structured fields through :meth:`failure_fields`.
    """

    def __init__(self, message="", result=None):
        super().__init__(message)
        self.result = dict(result or {})

    def failure_fields(self):
        """Extra keyword arguments for ``fail_json`` (never secrets)."""
        return {}


class InvalidInputError(KubeforgeError, ValueError):
    """A value that cannot be used - an option, a field of a file, a duration - named in the message. A ``ValueError``
    too: parsers and callers catch it as one."""


def api_error_status(exc):
    """The HTTP status of a kubernetes ``ApiException``-like error, else None."""
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


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
