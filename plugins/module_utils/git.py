# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small git command wrapper (subprocess, no shell): run, read blobs at a ref, current branch."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError


class GitError(KubeforgeError):
    """A git command failed (message: the command word, exit code and git's output)."""


class GitRepo:
    """Minimal git plumbing via the git CLI (``git -C repo ...``)."""

    def __init__(self, path, git="git", env=None):
        self.path = path
        self.git = git
        self.env = env

    def run(self, *args, **kwargs):
        cwd = kwargs.pop("cwd", self.path)
        data = kwargs.pop("input", None)
        env = dict(os.environ)
        env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
        env.update(self.env or {})
        env.update(kwargs.pop("env", None) or {})
        check = kwargs.pop("check", True)
        proc = subprocess.run([self.git] + list(args), cwd=cwd, input=data, capture_output=True, env=env, check=False)
        if check and proc.returncode != 0:
            words = list(args)
            while words[:1] == ["-c"]:
                words = words[2:]
            detail = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError("git %s failed (exit %d): %s" % (" ".join(words[:1]), proc.returncode, detail))
        return proc

    def out(self, *args, **kwargs):
        return self.run(*args, **kwargs).stdout.decode("utf-8", "replace").strip()

    def rev_parse(self, ref):
        proc = self.run("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    def ls_tree(self, ref, *paths):
        text = self.out("ls-tree", "-r", "--name-only", "-z", ref, "--", *paths)
        return [p for p in text.split("\0") if p]

    def read_blobs(self, ref, paths):
        """{path: bytes} for the paths present at ref (missing ones are left out)."""
        paths = list(paths)
        if not paths:
            return {}
        for p in paths:
            if "\n" in p or "\r" in p:  # cat-file --batch reads one object name per line
                raise GitError("cannot read %r: a path with a line break" % p[:200])
        req = "".join("%s:%s\n" % (ref, p) for p in paths).encode("utf-8")
        raw = self.run("cat-file", "--batch", input=req).stdout
        out = {}
        pos = 0
        for p in paths:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode("utf-8", "replace")
            pos = nl + 1
            if header.endswith(" missing") or header.endswith(" ambiguous"):
                continue
            _sha, kind, size = header.rsplit(" ", 2)
            size = int(size)
            if kind == "blob":
                out[p] = raw[pos:pos + size]
            pos += size + 1
        return out

    def current_branch(self):
        proc = self.run("symbolic-ref", "-q", "HEAD", check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None
