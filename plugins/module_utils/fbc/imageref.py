# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image pull-spec syntax check like go.podman.io/image/v5 docker/reference.ParseNormalizedNamed + go-digest.

opm (v1.64+) rejects bundle and related images whose reference does not parse; the error text is appended to
its own message, so grammar and wording follow podman's fork of docker/reference (v5.40) and go-digest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import (
    CREDENTIALS_MESSAGE,
    has_credentials,
    redact_reference,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import check_one_line

_ALNUM = r"[a-z0-9]+"
# podman's separator is `(?:[._]|__|[-]*)`; an empty separator adds nothing to the language, and requiring
# at least one dash avoids exponential backtracking in Python's regex engine (Go's RE2 is linear).
_SEPARATOR = r"(?:[._]|__|-+)"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = _DOMAIN_COMPONENT + r"(?:(?:\.)" + _DOMAIN_COMPONENT + r")*(?::[0-9]+)?"
_TAG = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}"
_NAME_COMPONENT = _ALNUM + r"(?:" + _SEPARATOR + _ALNUM + r")*"
_NAME = r"(?:" + _DOMAIN + r"/)?" + _NAME_COMPONENT + r"(?:/" + _NAME_COMPONENT + r")*"

_REFERENCE_RE = re.compile(r"(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?\Z")
_IDENTIFIER_RE = re.compile(r"[a-f0-9]{64}\Z")
_DIGEST_ANCHORED_RE = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+\Z")
_ALGORITHM_HEX_LEN = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX = 255


class ImageReferenceError(InvalidInputError):
    pass


def _split_docker_domain(name):
    i = name.find("/")
    if i == -1 or (not any(c in name[:i] for c in ".:") and name[:i] != "localhost"):
        domain, remainder = "docker.io", name
    else:
        domain, remainder = name[:i], name[i + 1:]
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


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


_CACHE = {}
_CACHE_MAX = 20000


def parse_normalized_named(s):
    """Raise ImageReferenceError (Go wording) if s is not a valid normalized image reference.

    Results are memoised: catalogs repeat the same related images across many bundles.
    """
    hit = _CACHE.get(s)
    if hit is not None:
        if isinstance(hit, ImageReferenceError):
            raise ImageReferenceError(str(hit))
        return hit
    try:
        result = _parse_normalized_named(s)
    except ImageReferenceError as e:
        result = e
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[s] = result
    if isinstance(result, ImageReferenceError):
        raise ImageReferenceError(str(result))
    return result


def shown_reference(ref):
    """``ref`` as opm would quote it, unless it carries credentials (then masked); bounded in length."""
    if not isinstance(ref, str):
        return excerpt(str(ref))
    return redact_reference(ref) if has_credentials(ref) else excerpt(ref)


def repository_of(ref):
    """``ref`` without its digest and tag (``quay.io/a/b:1@sha256:..`` -> ``quay.io/a/b``); no validation."""
    name = ref.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def near_references(ref, known, limit=5):
    """Up to ``limit`` of the ``known`` image references a user may have meant by ``ref``: those of the same
    repository first (another tag or digest), then the most similar by text. Sorted, credentials never shown."""
    known = sorted({k for k in known if isinstance(k, str) and k and k != ref})
    same = [k for k in known if repository_of(k) == repository_of(ref)]
    similar = difflib.get_close_matches(ref, [k for k in known if k not in same], n=limit, cutoff=0.6)
    return [shown_reference(k) for k in (same + similar)[:limit]]


def check_image_reference(image, field="image"):
    """Validate a user-given image reference: non-empty string, no credentials (never echoed), no control characters,
    and ParseNormalizedNamed must accept it. Raises ImageReferenceError naming ``field``; returns ``image``."""
    if not isinstance(image, str) or not image:
        raise ImageReferenceError("%s must be a non-empty image reference" % field)
    if has_credentials(image):
        raise ImageReferenceError("%s: %s" % (field, CREDENTIALS_MESSAGE))
    check_one_line(field, image, ImageReferenceError)
    try:
        parse_normalized_named(image)
    except ImageReferenceError as e:
        raise ImageReferenceError("invalid %s %s: %s" % (field, json.dumps(redact_reference(image)), e)) from None
    return image


def _parse_normalized_named(s):
    if _IDENTIFIER_RE.match(s):
        raise ImageReferenceError("invalid repository name (%s), cannot specify 64-byte hexadecimal strings" % s)
    domain, remainder = _split_docker_domain(s)
    remote = remainder.split(":", 1)[0]
    if remote.lower() != remote:
        raise ImageReferenceError("invalid reference format: repository name must be lowercase")
    full = domain + "/" + remainder
    m = _REFERENCE_RE.match(full)
    if m is None:
        if full == "":
            raise ImageReferenceError("repository name must have at least one component")
        if _REFERENCE_RE.match(full.lower()):
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    if len(m.group(1)) > _NAME_TOTAL_LENGTH_MAX:
        raise ImageReferenceError("repository name must not be more than 255 characters")
    if m.group(3):
        _validate_digest(m.group(3))
    return m.group(1), m.group(2) or "", m.group(3) or ""
