# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The `.indexignore` files of a catalog tree: which files LoadFS parses.

Mirrors the ignore handling of operator-registry's alpha/declcfg/load.go (github.com/joelanford/ignore on top of
go-git's gitignore patterns): gitignore semantics, nested ignore files, lexical fs.WalkDir order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError, decode_utf8
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.path import match_regex
from ansible_collections.kubeforge.operators.plugins.module_utils.files import is_temp_name

INDEX_IGNORE_FILENAME = ".indexignore"


class _IgnorePattern:
    """go-git gitignore.Pattern as used by github.com/joelanford/ignore."""

    __slots__ = ("domain", "parts", "inclusion", "dir_only", "is_glob")

    def __init__(self, line, domain):
        self.domain = domain
        self.inclusion = line.startswith("!")
        if self.inclusion:
            line = line[1:]
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        self.dir_only = line.endswith("/")
        if self.dir_only:
            line = line[:-1]
        self.is_glob = "/" in line
        self.parts = [(p, match_regex(p)) for p in line.split("/")]

    def match(self, path, is_dir):
        """None (no match), True (exclude) or False (re-include)."""
        if len(path) <= len(self.domain) or path[:len(self.domain)] != self.domain:
            return None
        path = path[len(self.domain):]
        ok = self._glob_match(path, is_dir) if self.is_glob else self._simple_match(path, is_dir)
        if not ok:
            return None
        return not self.inclusion

    def _simple_match(self, path, is_dir):
        rx = self.parts[0][1]
        if rx is None:
            return False
        for i, name in enumerate(path):
            if not rx.match(name):
                continue
            if self.dir_only and not is_dir and i == len(path) - 1:
                return False
            return True
        return False

    def _glob_match(self, path, is_dir):
        matched = False
        can_traverse = False
        path = list(path)
        for i, (part, rx) in enumerate(self.parts):
            if part == "":
                can_traverse = False
                continue
            if part == "**":
                if i == len(self.parts) - 1:
                    break
                can_traverse = True
                continue
            if "**" in part or rx is None:
                return False
            if not path:
                return False
            if can_traverse:
                can_traverse = False
                while path:
                    e = path.pop(0)
                    if rx.match(e):
                        matched = True
                        break
                    if not path:
                        matched = False
            else:
                if not rx.match(path[0]):
                    return False
                matched = True
                path.pop(0)
        if matched and self.dir_only and not is_dir and not path:
            matched = False
        return matched


class IgnoreMatcher:
    """All `.indexignore` patterns of a tree; the last matching pattern decides (gitignore rules)."""

    def __init__(self, patterns):
        self.patterns = patterns

    def match(self, rel_path, is_dir=False):
        parts = rel_path.split("/")
        for pattern in reversed(self.patterns):
            result = pattern.match(parts, is_dir)
            if result is not None:
                return result
        return False


def _walk(root):
    """Yield (relative posix path, is_dir) in Go fs.WalkDir order (lexical, directories entered in place).

    Unlike opm, the temporaries of an interrupted kubeforge writer are skipped (files.is_temp_name)."""
    def rec(abs_dir, rel_dir):
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name.encode("utf-8", "surrogateescape"))
        except OSError as e:
            raise LoadError("open %s: %s" % (rel_dir or ".", e.strerror or e), path=abs_dir) from None
        for entry in entries:
            if is_temp_name(entry.name):
                continue  # a writer's temporary file or spool directory (files.FileOutput), never catalog content
            rel = entry.name if not rel_dir else rel_dir + "/" + entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            yield rel, is_dir, entry
            if is_dir:
                yield from rec(entry.path, rel)
    return rec(root, "")


def _load_ignore_patterns(root, entries):
    patterns = []
    for rel, is_dir, entry in entries:
        if is_dir or entry.name != INDEX_IGNORE_FILENAME:
            continue
        domain = rel.split("/")[:-1]
        try:
            with open(entry.path, "rb") as f:
                text = decode_utf8(f.read(), entry.path)
        except OSError as e:
            raise LoadError("read ignore file: %s" % (e.strerror or e), path=entry.path) from None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            patterns.append(_IgnorePattern(line, domain))
    return IgnoreMatcher(patterns)


def list_catalog_files(root):
    """Relative paths of the files LoadFS would parse under root, in walk order."""
    root = os.fspath(root)
    if not os.path.exists(root):
        raise LoadError("open %s: no such file or directory" % root, path=root)
    if not os.path.isdir(root):
        raise LoadError("%s is not a directory" % json.dumps(root, ensure_ascii=False), path=root)
    entries = list(_walk(root))
    matcher = _load_ignore_patterns(root, entries)
    files = []
    for rel, is_dir, entry in entries:
        if is_dir or entry.name == INDEX_IGNORE_FILENAME or matcher.match(rel, False):
            continue
        if not entry.is_file():
            # Sockets, fifos and dangling links cannot be catalog content; opm would fail opening them.
            if entry.is_symlink() and not os.path.exists(entry.path):
                raise LoadError("open %s: no such file or directory" % rel, path=entry.path)
            if not entry.is_file():
                continue
        files.append(rel)
    return files
