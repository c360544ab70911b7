# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exceptions of the pure-Python OCI registry client.

Messages never contain passwords, tokens or ``Authorization`` headers: every exception built here goes through
:func:`redact` and only stores the registry, repository, HTTP status and a short (redacted) server message.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import redact_userinfo
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError

_SECRET_PATTERNS = [
    # Authorization: Basic xxx / Bearer xxx (headers echoed back by proxies or servers)
    (re.compile(r"(?i)(authorization\s*[:=]\s*)(basic|bearer)?\s*[^\s,;\"']+"), r"\1<redacted>"),
    (re.compile(r"(?i)\b(basic|bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 <redacted>"),
    # token=..., access_token=..., password=... in JSON bodies or query strings
    (
        re.compile(r"(?i)([\"']?(?:access_token|refresh_token|token|password|passwd|secret|auth)[\"']?\s*[:=]\s*[\"']?)"
                   r"[^\"'&\s,}]+"),
        r"\1<redacted>",
    ),
]


def redact(text, secrets=None):
    """Return ``text`` with credentials removed.

    ``secrets`` is an optional iterable of literal strings (passwords, tokens) that must never appear.
    """
    if text is None:
        return text
    text = str(text)
    for secret in secrets or ():
        if secret and len(str(secret)) >= 1:
            text = text.replace(str(secret), "<redacted>")
    for pattern, repl in _SECRET_PATTERNS:
        text = pattern.sub(repl, text)
    return redact_userinfo(text)


class OCIError(KubeforgeError):
    """Base class of every error raised by ``module_utils.oci``.

    Attributes ``registry``, ``repository``, ``status`` (HTTP status or ``None``) and ``reason`` (short text) are
    safe to log.
    """

    def __init__(self, message, registry=None, repository=None, status=None, reason=None):
        self.message = redact(message)
        self.registry = registry
        self.repository = repository
        self.status = status
        self.reason = redact(reason)
        super().__init__(self.message)

    def __str__(self):
        return self.message

    def failure_fields(self):
        return {"registry": self.registry, "repository": self.repository, "status": self.status}

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.message)


class InvalidReferenceError(OCIError, ValueError):
    """An image reference could not be parsed."""


class RegistryError(OCIError):
    """The registry answered with an unexpected HTTP status or could not be reached."""


class RegistryConnectionError(RegistryError):
    """Network-level failure (DNS, refused connection, timeout)."""


class TLSError(RegistryConnectionError):
    """TLS handshake or certificate verification failed."""


class AuthenticationError(RegistryError):
    """Credentials are missing or were rejected (HTTP 401/403, token endpoint failure)."""


class NotFoundError(RegistryError):
    """Manifest, blob or repository does not exist (HTTP 404)."""


class DigestMismatchError(OCIError):
    """Downloaded content does not match its digest."""


class UnsupportedMediaTypeError(OCIError):
    """A manifest of an unsupported media type was returned."""


class PlatformNotFoundError(OCIError):
    """An image index holds no manifest for the requested platform."""


class UnsafeLayerError(OCIError):
    """A layer tar contains an entry that would escape the extraction directory."""


class ImageBuildError(OCIError):
    """A catalog image could not be built (bad FBC directory, bad base image)."""


class DockerConfigError(OCIError):
    """A docker ``config.json`` could not be read or parsed."""
