# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials written into image references (``user:password@host/repo``): detected, refused and masked the same
way by the FBC engine and the OCI client (no Ansible import)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt

CREDENTIALS_MESSAGE = "image reference must not contain credentials (user:password@)"
# go-digest's grammar (algorithm:hex); a digest after "@" is not user info
_DIGEST_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,}\Z")


def has_credentials(ref):
    """True when ``ref`` carries URL-style user info (``user:password@host/repo``, ``user@host``,
    ``scheme://user@...``). A digest (``repo@sha256:...``) never contains ``/`` or ``@`` after its ``@``."""
    at = ref.find("@")
    if at < 0:
        return False
    head, tail = ref[:at], ref[at + 1 :]
    if "://" in head or "/" in tail or "@" in tail:
        return True
    # ``user[:password]@registry[:port]`` without a path: no repository before the @, and no digest after it
    return "/" not in head and (":" not in tail or ":" in head and not _DIGEST_RE.match(tail))


def redact_reference(ref):
    """``ref`` for an error message: everything up to the last ``@`` of its name (the whole user info, whatever
    characters the password holds) masked, a trailing digest kept, bounded in length."""
    name, digest = ref, ""
    at = ref.rfind("@")
    if at >= 0 and _DIGEST_RE.match(ref[at + 1 :]):
        name, digest = ref[:at], ref[at:]
    cut = name.rfind("@")
    if cut >= 0:
        name = "<redacted>@" + name[cut + 1 :]
    return excerpt(name + digest)


# a whitespace-delimited token holding user info before a host: "[scheme://]user[:password]@host[:port]/..."
_USERINFO_TOKEN_RE = re.compile(r"(?i)((?:\w+://)?)\S*@(?=[A-Za-z0-9.-]+(?::[0-9]+)?(?:/|\s|$|['\",;)]))")


def redact_userinfo(text):
    """``text`` with the user info of every reference or URL in it masked (``scheme://<redacted>@host/...``)."""
    return _USERINFO_TOKEN_RE.sub(r"\1<redacted>@", text)


def userinfo_secrets(value):
    """The secrets a string written as an image reference or URL carries in its user info: for
    ``[scheme://]user:password@host/...`` the password and ``user:password``; nothing for a string without
    credentials (see has_credentials) or with whitespace (not a reference)."""
    if not isinstance(value, str) or not value or any(c.isspace() for c in value) or not has_credentials(value):
        return []
    name = value
    at = value.rfind("@")
    if at >= 0 and _DIGEST_RE.match(value[at + 1 :]):
        name = value[:at]
    userinfo = name[: name.rfind("@")]
    if "://" in userinfo:
        userinfo = userinfo.split("://", 1)[1]
    user, _sep, password = userinfo.partition(":")
    return [secret for secret in (userinfo, password) if secret and secret != user]


def strings_in(value):
    """Every string leaf of a nested structure of dicts and lists (module parameters)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings_in(item)


# Keys under a kubeconfig's users[].user whose values are secrets (static tokens, basic auth, client keys, the
# auth-provider plugins' tokens and client secrets); exec plugins' arguments and env values are treated as secrets too.
_KUBECONFIG_SECRET_KEY_RE = re.compile(r"token|password|secret|key-data|credential", re.I)


def kubeconfig_secrets(kubeconfig):
    """The secret strings of a kubeconfig given as a dict (what must be masked); its other values (cluster names,
    server URLs, CA data, ``v1``) are not secret."""
    secrets = []

    def walk(value, secret):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, secret or bool(_KUBECONFIG_SECRET_KEY_RE.search(str(key))))
        elif isinstance(value, list):
            for item in value:
                walk(item, secret)
        elif secret and isinstance(value, str) and value:
            secrets.append(value)

    for entry in (kubeconfig or {}).get("users") or []:
        user = entry.get("user") if isinstance(entry, dict) else None
        if isinstance(user, dict):
            plugin = user.get("exec") if isinstance(user.get("exec"), dict) else {}
            walk({k: v for k, v in user.items() if k != "exec"}, False)
            # An exec plugin's arguments and environment may carry secrets (--client-secret ...): all of them count.
            walk({"args": plugin.get("args"), "env": [e.get("value") for e in plugin.get("env") or [] if isinstance(e, dict)]}, True)
    return secrets


def scalar_leaves(value):
    """The leaves of a nested structure as Ansible's no_log masking sees them: strings, and numbers and booleans as
    their text."""
    if isinstance(value, dict):
        for item in value.values():
            yield from scalar_leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from scalar_leaves(item)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (bool, int, float)):
        yield str(value)
