# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image reference parsing with Docker Hub normalisation (``distribution/reference`` semantics).

``parse_reference("busybox")`` → registry ``docker.io``, repository ``library/busybox``, tag ``latest``.
A first path component is a registry host when it contains ``.`` or ``:`` or is ``localhost``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import (
    CREDENTIALS_MESSAGE,
    has_credentials,
    redact_reference,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import InvalidReferenceError

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
DEFAULT_TAG = "latest"

_HOST_RE = re.compile(
    r"^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*"
    r"|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$"
)
_PATH_COMPONENT_RE = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$")
_TAG_RE = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")
_SHA256_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


class ImageReference:
    """A parsed, normalised image reference.

    ``registry`` is the user-facing host (``docker.io`` for Docker Hub); ``api_host`` the host actually contacted.
    """

    __slots__ = ("registry", "repository", "tag", "digest")

    def __init__(self, registry, repository, tag=None, digest=None):
        self.registry = registry
        self.repository = repository
        self.tag = tag
        self.digest = digest

    @property
    def api_host(self):
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def reference(self):
        """What goes into ``/v2/<repo>/manifests/<reference>``: the digest if present, else the tag."""
        return self.digest or self.tag or DEFAULT_TAG

    @property
    def name(self):
        return "%s/%s" % (self.registry, self.repository)

    @property
    def is_loopback(self):
        return is_loopback_host(self.registry)

    def with_digest(self, digest):
        return ImageReference(self.registry, self.repository, self.tag, digest)

    def with_tag(self, tag):
        return ImageReference(self.registry, self.repository, tag, None)

    def __str__(self):
        out = self.name
        if self.tag:
            out += ":" + self.tag
        if self.digest:
            out += "@" + self.digest
        return out

    def __repr__(self):
        return "ImageReference(%r)" % str(self)

    def __eq__(self, other):
        return isinstance(other, ImageReference) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def _shown(text):
    """``repr`` of (part of) a reference for an error message: ``user:password@`` masked, length bounded."""
    return repr(redact_reference(text))


def _split_domain(name):
    parts = name.split("/", 1)
    if len(parts) == 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost" or parts[0] != parts[0].lower()):
        return parts[0], parts[1]
    return DOCKER_HUB, name


def parse_reference(ref, default_tag=DEFAULT_TAG):
    """Parse ``ref`` into an :class:`ImageReference`.

    A reference with neither tag nor digest gets ``default_tag`` (``latest``). ``index.docker.io`` and
    ``registry-1.docker.io`` are normalised to ``docker.io``; one-component Docker Hub names get ``library/``.
    Raises :class:`InvalidReferenceError` with the offending reference in the message.
    """
    if not isinstance(ref, str) or not ref:
        raise InvalidReferenceError("invalid image reference %r: empty" % (ref,))
    if has_credentials(ref):
        raise InvalidReferenceError("invalid image reference: " + CREDENTIALS_MESSAGE)
    if len(ref) > 4096 or any(c.isspace() for c in ref):
        raise InvalidReferenceError("invalid image reference %s: contains whitespace or is too long" % _shown(ref))
    if "://" in ref:
        raise InvalidReferenceError("invalid image reference %s: must not contain a URL scheme" % _shown(ref))
    rest = ref
    digest = None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
        if not _DIGEST_RE.match(digest):
            raise InvalidReferenceError("invalid image reference %s: bad digest %s" % (_shown(ref), _shown(digest)))
        if digest.startswith("sha256:") and not _SHA256_RE.match(digest):
            raise InvalidReferenceError("invalid image reference %s: sha256 digest must be 64 lower-case hex" % _shown(ref))
    tag = None
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        rest, tag = rest[:colon], rest[colon + 1:]
        if not _TAG_RE.match(tag):
            raise InvalidReferenceError("invalid image reference %s: bad tag %s" % (_shown(ref), _shown(tag)))
    registry, path = _split_domain(rest)
    if registry != DOCKER_HUB:
        if not _HOST_RE.match(registry):
            raise InvalidReferenceError("invalid image reference %s: bad registry host %s" % (_shown(ref), _shown(registry)))
        if registry in ("index.docker.io", "registry-1.docker.io"):
            registry = DOCKER_HUB
    if not path:
        raise InvalidReferenceError("invalid image reference %s: missing repository" % _shown(ref))
    for component in path.split("/"):
        if not _PATH_COMPONENT_RE.match(component):
            raise InvalidReferenceError(
                "invalid image reference %s: repository component %s must be lower-case alphanumerics with "
                "separators" % (_shown(ref), _shown(component))
            )
    if registry == DOCKER_HUB and "/" not in path:
        path = "library/" + path
    if len(registry) + 1 + len(path) > 255:
        raise InvalidReferenceError("invalid image reference %s: repository name longer than 255" % _shown(ref))
    if tag is None and digest is None:
        tag = default_tag
    return ImageReference(registry, path, tag, digest)


def is_loopback_host(host):
    """``True`` for ``localhost``, ``127.x.y.z`` and ``[::1]``, with or without a port."""
    host = (host or "").lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host in _LOOPBACK_HOSTS or host.startswith("127.")


def is_digest(value):
    return bool(value) and bool(_DIGEST_RE.match(value))
