# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image pull-spec syntax check like docker/reference.ParseNormalizedNamed (+ go-digest validation).

opm (v1.64+) rejects bundle and related images whose reference does not parse; the error text is appended to
its own message, so the wording here follows distribution/reference and opencontainers/go-digest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*"
_HOST = r"(?:" + _DOMAIN_NAME + r"|\[(?:[a-fA-F0-9:]+)\])"
_DOMAIN_AND_PORT = _HOST + r"(?::[0-9]+)?"
_TAG = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}"
_PATH_COMPONENT = _ALNUM + r"(?:" + _SEPARATOR + _ALNUM + r")*"
_REMOTE_NAME = _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_NAME = r"(?:" + _DOMAIN_AND_PORT + r"/)?" + _REMOTE_NAME

_REFERENCE_RE = re.compile(r"(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?\Z")
_IDENTIFIER_RE = re.compile(r"[a-f0-9]{64}\Z")
_DIGEST_ANCHORED_RE = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+\Z")
_ALGORITHM_HEX_LEN = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX = 255


class ImageReferenceError(ValueError):
    pass


def _split_docker_domain(name):
    maybe_domain, sep, maybe_remote = name.partition("/")
    if not sep:
        return "docker.io", "library/" + name
    if maybe_domain == "localhost":
        domain, remote = maybe_domain, maybe_remote
    elif maybe_domain == "index.docker.io":
        domain, remote = "docker.io", maybe_remote
    elif "." in maybe_domain or ":" in maybe_domain or maybe_domain.lower() != maybe_domain:
        domain, remote = maybe_domain, maybe_remote
    else:
        domain, remote = "docker.io", name
    if domain == "docker.io" and "/" not in remote:
        remote = "library/" + remote
    return domain, remote


def _validate_digest(d):
    i = d.find(":")
    if i <= 0 or i + 1 == len(d):
        raise ImageReferenceError("invalid checksum digest format")
    algorithm, encoded = d[:i], d[i + 1:]
    size = _ALGORITHM_HEX_LEN.get(algorithm)
    if size is None:
        if not _DIGEST_ANCHORED_RE.match(d):
            raise ImageReferenceError("invalid checksum digest format")
        raise ImageReferenceError("unsupported digest algorithm")
    if len(encoded) != size:
        raise ImageReferenceError("invalid checksum digest length")
    if not re.match(r"[a-f0-9]+\Z", encoded):
        raise ImageReferenceError("invalid checksum digest format")


def parse_normalized_named(s):
    """Raise ImageReferenceError (Go wording) if s is not a valid normalized image reference."""
    if _IDENTIFIER_RE.match(s):
        raise ImageReferenceError("invalid repository name (%s), cannot specify 64-byte hexadecimal strings" % s)
    domain, remainder = _split_docker_domain(s)
    remote = remainder.split(":", 1)[0]
    if remote.lower() != remote:
        raise ImageReferenceError("invalid reference format: repository name (%s) must be lowercase" % remote)
    full = domain + "/" + remainder
    m = _REFERENCE_RE.match(full)
    if m is None:
        if _REFERENCE_RE.match(full.lower()):
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    name = m.group(1)
    path = name.split("/", 1)[1] if "/" in name else name
    if len(path) > _NAME_TOTAL_LENGTH_MAX:
        raise ImageReferenceError("repository name must not be more than 255 characters")
    if m.group(3):
        _validate_digest(m.group(3))
    return name, m.group(2) or "", m.group(3) or ""
