# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registry credentials: docker ``config.json`` parsing (``auths`` entries and the ``credHelpers`` /
``credsStore`` credential helpers, run like the docker CLI runs them) and ``WWW-Authenticate`` challenge parsing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import json
import os
import re
import subprocess

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import DockerConfigError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import DOCKER_HUB

DOCKER_HUB_CONFIG_KEYS = (
    "https://index.docker.io/v1/",
    "index.docker.io",
    "https://index.docker.io/v1",
    "docker.io",
    "registry-1.docker.io",
    "https://registry-1.docker.io",
)


class Credentials:
    """Username/password pair, or an identity token (the refresh token ``docker login`` stores for registries with
    OAuth2 token auth); secrets never appear in ``repr``/``str``."""

    __slots__ = ("username", "password", "identity_token")

    def __init__(self, username, password, identity_token=None):
        self.username = username
        self.password = password
        self.identity_token = identity_token or None

    def basic_header(self):
        raw = ("%s:%s" % (self.username, self.password)).encode("utf-8")
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def __repr__(self):
        return "Credentials(username=%r, password=<redacted>)" % (self.username,)

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, Credentials) and (self.username, self.password, self.identity_token) == (
            other.username, other.password, other.identity_token)

    def __hash__(self):
        return hash(self.username)


def default_docker_config_path(environ=None):
    """``$DOCKER_CONFIG/config.json`` if ``DOCKER_CONFIG`` is set, else ``~/.docker/config.json``."""
    environ = os.environ if environ is None else environ
    base = environ.get("DOCKER_CONFIG")
    if base:
        return os.path.join(base, "config.json")
    return os.path.join(os.path.expanduser("~"), ".docker", "config.json")


def default_auth_files(environ=None):
    """The credential files read when no ``docker_config`` is given, in containers-auth.json(5)'s order (podman,
    skopeo, buildah): ``$REGISTRY_AUTH_FILE``, ``$XDG_RUNTIME_DIR/containers/auth.json``,
    ``${XDG_CONFIG_HOME:-~/.config}/containers/auth.json``, then docker's config (:func:`default_docker_config_path`)."""
    environ = os.environ if environ is None else environ
    home = os.path.expanduser("~")
    files = [environ.get("REGISTRY_AUTH_FILE")]
    if environ.get("XDG_RUNTIME_DIR"):
        files.append(os.path.join(environ["XDG_RUNTIME_DIR"], "containers", "auth.json"))
    files.append(os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "containers", "auth.json"))
    files.append(default_docker_config_path(environ))
    return [path for path in dict.fromkeys(files) if path]


def load_docker_config(path=None, missing_ok=True):
    """Read a docker ``config.json`` (``path`` or the default location) and return the parsed dict.

    A missing file returns ``{}`` when ``missing_ok``; unreadable or invalid JSON raises
    :class:`DockerConfigError` (the message names the file, never its content).
    """
    if path is None:
        path = default_docker_config_path()
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        if missing_ok:
            return {}
        raise DockerConfigError("docker config %s does not exist" % path)
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8") or "{}")
    except UnicodeDecodeError as e:
        raise DockerConfigError("docker config %s: invalid UTF-8 at byte %d" % (path, e.start)) from None
    except (OSError, ValueError) as e:
        raise DockerConfigError("cannot read docker config %s: %s" % (path, type(e).__name__)) from None
    if not isinstance(data, dict):
        raise DockerConfigError("docker config %s: top level is not a JSON object" % path)
    return data


def _normalise_key(key):
    key = key.strip()
    for prefix in ("https://", "http://"):
        if key.startswith(prefix):
            key = key[len(prefix):]
    key = key.split("/", 1)[0]
    return key


def _decode_entry(entry, source):
    if not isinstance(entry, dict):
        return None
    username = entry.get("username") or ""
    password = entry.get("password") or ""
    auth = entry.get("auth")
    if auth:
        try:
            decoded = base64.b64decode(auth.strip() + "=" * (-len(auth.strip()) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError, AttributeError):
            raise DockerConfigError("docker config %s: invalid base64 'auth' entry" % source) from None
        if ":" not in decoded:
            raise DockerConfigError("docker config %s: 'auth' entry is not base64 of 'user:password'" % source)
        username, password = decoded.split(":", 1)
    identity_token = entry.get("identitytoken") or None
    if identity_token is not None and not isinstance(identity_token, str):
        raise DockerConfigError("docker config %s: 'identitytoken' is not a string" % source)
    if not username and not password and not identity_token:
        return None
    return Credentials(username, password, identity_token)


HELPER_TIMEOUT = 60
HELPER_NOT_FOUND = "credentials not found in native keychain"  # docker-credential-helpers' ErrCredentialsNotFound
_HELPER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def run_credential_helper(helper, registry, source="config.json", timeout=HELPER_TIMEOUT):
    """``docker-credential-<helper> get`` for registry (the docker-credential-helpers protocol: the server address
    on stdin, ``{"ServerURL", "Username", "Secret"}`` JSON on stdout). Returns :class:`Credentials`, or ``None`` when
    the helper has none or is not installed. Errors name the helper and the registry, never the helper's output (it
    may hold secrets).
    """
    if not isinstance(helper, str) or not _HELPER_NAME_RE.match(helper):
        raise DockerConfigError("docker config %s: invalid credential helper name %s" % (source, json.dumps(helper)))
    program = "docker-credential-" + helper
    # the docker CLI stores Docker Hub credentials under its v1 index URL
    server = DOCKER_HUB_CONFIG_KEYS[0] if registry == DOCKER_HUB else registry
    try:
        proc = subprocess.run([program, "get"], input=server.encode("utf-8"), capture_output=True, timeout=timeout,
                              check=False)
    except FileNotFoundError:
        # config.json files travel between machines (a desktop's credsStore on a CI runner): like a helper without
        # an entry, a missing helper leaves the auths entries (or anonymous access)
        return None
    except subprocess.TimeoutExpired:
        raise DockerConfigError("credential helper %s did not answer for %s within %d s"
                                % (program, registry, timeout)) from None
    except OSError as e:
        raise DockerConfigError("credential helper %s cannot be run: %s" % (program, e.strerror or e)) from None
    if proc.returncode != 0:
        if HELPER_NOT_FOUND in (proc.stdout + proc.stderr).decode("utf-8", "replace"):
            return None
        raise DockerConfigError("credential helper %s failed for %s (exit status %d)"
                                % (program, registry, proc.returncode))
    try:
        data = json.loads(proc.stdout.decode("utf-8"))
        username, secret = data.get("Username") or "", data.get("Secret") or ""
    except (ValueError, AttributeError):
        raise DockerConfigError("credential helper %s returned malformed output for %s" % (program, registry)) from None
    if not isinstance(username, str) or not isinstance(secret, str):
        raise DockerConfigError("credential helper %s returned malformed output for %s" % (program, registry))
    if username == "<token>":  # docker-credential-helpers' mark of an identity token
        return Credentials("", "", secret) if secret else None
    if not username and not secret:
        return None
    return Credentials(username, secret)


def _wanted_keys(registry):
    wanted = {registry}
    if registry in (DOCKER_HUB, "index.docker.io", "registry-1.docker.io"):
        wanted.update(_normalise_key(k) for k in DOCKER_HUB_CONFIG_KEYS)
        wanted.add(DOCKER_HUB)
    return wanted


def _lookup(mapping, registry, wanted):
    """The value for registry in a config.json mapping: the exact key first, then keys that normalise to it."""
    if registry in mapping:
        yield mapping[registry]
    for key in sorted(mapping):
        if key != registry and _normalise_key(key) in wanted:
            yield mapping[key]


def credentials_from_config(config, registry, source="config.json", run_helper=run_credential_helper):
    """Look up credentials for ``registry`` (``host[:port]``) in a parsed docker config dict.

    Like the docker CLI: a ``credHelpers`` entry for the registry, else ``credsStore``, names a credential helper
    that is asked first; ``auths`` entries (keys may be bare hosts or URLs such as ``https://host/v1/``; Docker Hub
    keys match ``docker.io``) answer otherwise. Returns :class:`Credentials` or ``None``.
    """
    config = config or {}
    auths = config.get("auths") or {}
    if not isinstance(auths, dict):
        raise DockerConfigError("docker config %s: 'auths' is not an object" % source)
    helpers = config.get("credHelpers") or {}
    if not isinstance(helpers, dict):
        raise DockerConfigError("docker config %s: 'credHelpers' is not an object" % source)
    wanted = _wanted_keys(registry)
    helper = next(_lookup(helpers, registry, wanted), None) or config.get("credsStore")
    if helper:
        creds = run_helper(helper, registry, source)
        if creds:
            return creds
    for entry in _lookup(auths, registry, wanted):
        creds = _decode_entry(entry, source)
        if creds:
            return creds
    return None


def resolve_credentials(registry, username=None, password=None, docker_config=None, environ=None):
    """Explicit ``username``/``password`` win; else ``docker_config``; else the first of :func:`default_auth_files`
    that has credentials for ``registry`` (as containers/image reads them)."""
    if username or password:
        return Credentials(username or "", password or "")
    if docker_config is not None:
        return credentials_from_config(load_docker_config(docker_config, missing_ok=False), registry, source=docker_config)
    for path in default_auth_files(environ):
        creds = credentials_from_config(load_docker_config(path), registry, source=path)
        if creds:
            return creds
    return None


def parse_www_authenticate(header):
    """Parse a ``WWW-Authenticate`` header into a list of ``(scheme, params)``; scheme is lower-case.

    Handles quoted strings with escaped quotes and commas, several challenges in one header, and token68 values.
    ``Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull"`` →
    ``[("bearer", {"realm": ..., "service": ..., "scope": ...})]``.
    """
    challenges = []
    if not header:
        return challenges
    s = header
    n = len(s)
    i = 0
    current = None
    while True:
        while i < n and s[i] in " \t,":
            i += 1
        if i >= n:
            break
        start = i
        while i < n and s[i] not in " \t,=\"":
            i += 1
        token = s[start:i]
        if not token:  # stray character
            i += 1
            continue
        j = i
        while j < n and s[j] in " \t":
            j += 1
        if j < n and s[j] == "=":
            k = j
            while k < n and s[k] == "=":
                k += 1
            m = k
            while m < n and s[m] in " \t":
                m += 1
            if current is not None and (m >= n or s[m] == ",") and (k - j > 1 or not current[1]):
                # token68 after a scheme (e.g. "Negotiate abc==")
                current[1]["token68"] = token + s[j:k]
                i = m
                continue
            if current is None:
                current = ("", {})
                challenges.append(current)
            i = m
            if i < n and s[i] == '"':
                i += 1
                buf = []
                while i < n and s[i] != '"':
                    if s[i] == "\\" and i + 1 < n:
                        i += 1
                    buf.append(s[i])
                    i += 1
                i += 1
                value = "".join(buf)
            else:
                vstart = i
                while i < n and s[i] != ",":
                    i += 1
                value = s[vstart:i].strip()
            current[1][token.lower()] = value
            continue
        current = (token.lower(), {})
        challenges.append(current)
        i = j
    return challenges


def pick_challenge(header):
    """Return the preferred ``(scheme, params)`` for registry auth: Bearer over Basic; ``None`` if neither."""
    found = parse_www_authenticate(header)
    for wanted in ("bearer", "basic"):
        for scheme, params in found:
            if scheme == wanted:
                return scheme, params
    return None
