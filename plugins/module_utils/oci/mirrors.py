# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registry mirrors as podman, skopeo, CRI-O and OLM v1 read them: containers-registries.conf(5), version 2.

The file is ``$CONTAINERS_REGISTRIES_CONF`` when set, else ``$HOME/.config/containers/registries.conf`` when it
exists, else ``/etc/containers/registries.conf``; the ``*.conf`` files of the ``registries.conf.d`` directory beside
it follow in name order, a later ``[[registry]]`` replacing an earlier one of the same prefix - what OpenShift's
machine-config operator writes for an ImageDigestMirrorSet. A pull of a reference the longest ``prefix`` matches
tries the entry's mirrors in order (``pull-from-mirror``: ``all``, ``digest-only``, ``tag-only``; the entry's
``mirror-by-digest-only``), then the entry's ``location`` unless ``blocked``.

``unqualified-search-registries``, short names and the version 1 format are not read. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import OCIError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

SYSTEM_FILE = "/etc/containers/registries.conf"
USER_FILE = os.path.join(".config", "containers", "registries.conf")
PULL_POLICIES = ("all", "digest-only", "tag-only")
_CACHE = {}


class MirrorConfigError(OCIError):
    """A registries.conf that cannot be read; the message names the file and the problem."""


class Endpoint:
    """Where a pull may go: ``location`` (``host[:port][/path]``) and whether its TLS is not verified."""

    __slots__ = ("location", "insecure")

    def __init__(self, location, insecure=False):
        self.location = location
        self.insecure = insecure

    def __repr__(self):
        return "Endpoint(%r%s)" % (self.location, ", insecure" if self.insecure else "")


def default_path(env=None):
    """The registries.conf the containers tools read (it may not exist)."""
    env = os.environ if env is None else env
    if env.get("CONTAINERS_REGISTRIES_CONF"):
        return env["CONTAINERS_REGISTRIES_CONF"]
    home = env.get("HOME")
    if home and os.path.isfile(os.path.join(home, USER_FILE)):
        return os.path.join(home, USER_FILE)
    return SYSTEM_FILE


def _toml(path):
    try:
        import tomllib
    except ImportError:
        raise MirrorConfigError("%s: reading registries.conf needs Python 3.11 or later (tomllib)" % path) from None
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError) as e:
        raise MirrorConfigError("%s: %s" % (path, excerpt(str(e), 300))) from None


def _text(value, what, path):
    if not isinstance(value, str):
        raise MirrorConfigError("%s: %s must be a string, not %r" % (path, what, excerpt(repr(value), 100)))
    return value.strip().rstrip("/")


def parse_entries(doc, path="registries.conf"):
    """``{prefix: entry}`` of one file's ``[[registry]]`` tables (entry: prefix, location, blocked, mirrors)."""
    entries = {}
    registries = doc.get("registry") or []
    if not isinstance(registries, list):
        raise MirrorConfigError("%s: registry must be an array of tables ([[registry]])" % path)
    for table in registries:
        if not isinstance(table, dict):
            raise MirrorConfigError("%s: every [[registry]] must be a table" % path)
        location = _text(table.get("location", ""), "location", path)
        prefix = _text(table.get("prefix", "") or location, "prefix", path)
        if not prefix:
            raise MirrorConfigError("%s: a [[registry]] needs a location or a prefix" % path)
        if prefix.startswith("*") and not prefix.startswith("*."):
            raise MirrorConfigError("%s: prefix %s: a wildcard is *.<domain>" % (path, prefix))
        digest_only = bool(table.get("mirror-by-digest-only", False))
        mirrors = []
        for mirror in table.get("mirror") or []:
            policy = mirror.get("pull-from-mirror", "all") or "all"
            if policy not in PULL_POLICIES:
                raise MirrorConfigError("%s: pull-from-mirror %r of a mirror of %s is not one of %s" % (
                    path, excerpt(str(policy), 50), prefix, ", ".join(PULL_POLICIES)))
            if digest_only:
                policy = "digest-only"
            mirrors.append((Endpoint(_text(mirror.get("location", ""), "mirror location", path),
                                     bool(mirror.get("insecure", False))), policy))
        entries[prefix] = {"prefix": prefix, "location": location or prefix, "insecure": bool(table.get("insecure", False)),
                           "blocked": bool(table.get("blocked", False)), "mirrors": mirrors}
    return entries


def load(path=None, env=None):
    """``{prefix: entry}`` of ``path`` (default: :func:`default_path`) and its ``.d`` drop-ins; empty when none exist.
    Cached per file and modification time."""
    path = path or default_path(env)
    files = [path] if os.path.isfile(path) else []
    dropins = os.path.splitext(path)[0] + ".conf.d" if path.endswith(".conf") else path + ".d"
    if os.path.isdir(dropins):
        files += [os.path.join(dropins, n) for n in sorted(os.listdir(dropins)) if n.endswith(".conf")]
    key = tuple((f, os.stat(f).st_mtime_ns) for f in files)
    if key not in _CACHE:
        entries = {}
        for f in files:
            entries.update(parse_entries(_toml(f), f))
        _CACHE.clear()
        _CACHE[key] = entries
    return _CACHE[key]


def _matches(prefix, name):
    """Whether ``prefix`` covers ``name`` (``host/repository``, with ``:tag``/``@digest`` when given)."""
    if prefix.startswith("*."):
        host = name.split("/", 1)[0].split(":", 1)[0]
        return host.endswith(prefix[1:])
    return name == prefix or (name.startswith(prefix) and name[len(prefix)] in "/:@")


def _rewrite(text, prefix, location):
    if prefix.startswith("*."):
        host = text.split("/", 1)[0]
        return location + text[len(host):] if location != prefix else text
    return location + text[len(prefix):]


def pull_endpoints(entries, ref):
    """``[(ImageReference to pull, insecure)]`` for ``ref`` (an ImageReference): the applicable mirrors in order,
    then the source (its entry's location) unless blocked. Without a matching entry, ``[(ref, False)]``."""
    text = str(ref)
    matching = [p for p in entries if _matches(p, text)]
    if not matching:
        return [(ref, False)]
    entry = entries[max(matching, key=len)]
    wanted = "digest-only" if ref.digest else "tag-only"
    out = []
    for endpoint, policy in entry["mirrors"]:
        if policy in ("all", wanted):
            out.append((parse_reference(_rewrite(text, entry["prefix"], endpoint.location)), endpoint.insecure))
    if not entry["blocked"]:
        out.append((parse_reference(_rewrite(text, entry["prefix"], entry["location"])), entry["insecure"]))
    if not out:
        raise OCIError("image %s: its registry is blocked in registries.conf (prefix %s) and no mirror applies"
                       % (text, entry["prefix"]))
    return out
