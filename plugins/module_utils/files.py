# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one file-output service of kubeforge.operators (no Ansible import).

Every module that writes files goes through :class:`FileOutput`: stage each file in a temporary file, compare its
bytes with what is there, build the diff (:func:`make_diff`, a summary for big files), then commit with fsync and an
atomic rename. Temporary names are unique and created exclusively (``O_EXCL``: a pre-existing file or symlink of
that name is never followed or overwritten).

Where temporaries live, and what an interruption leaves:

- In check mode everything is staged in a private directory under the system's temporary directory and removed
  afterwards; nothing is created or changed next to the destination.
- Otherwise a file is staged in its destination directory (a rename is only atomic within one filesystem), under a
  name that says who made it: ``.kubeforge-<host>-<pid>-<name>.<random>.tmp`` (spool directories:
  ``.kubeforge-<host>-<pid>-<name>.<random>``; ``<host>`` is a short hash of the host name). A run killed
  mid-write can leave such entries behind; the catalog loader ignores them (:func:`is_temp_name`), and the next run
  on the same host that writes into that directory removes those whose process is gone (:func:`remove_stale_temps`).
- A multi-file output is all-or-nothing until every file is staged: a failure while staging changes nothing. The
  renames that follow cannot be made atomic as a group: a crash (or a rename failing, e.g. on a full disk) in that
  short phase leaves some files new and some old, each one complete. Directories created for new files stay.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError

# hashlib, shutil and tempfile are imported where used: the catalog loader imports this module only for
# is_temp_name, and its start-up time is benchmarked.

TEMP_PREFIX = ".kubeforge-"
DIFF_MAX_BYTES = 128 * 1024
_CHUNK = 1 << 20
_TEMP_RE = re.compile(r"^\.kubeforge-([0-9a-f]{8})-(\d+)-.+\.[A-Za-z0-9_]{6,}(\.tmp)?$")
_HOST_TAG = []


def _host_tag():
    """8 hex digits naming this host, so a writer on another host (or in a container) sharing the directory is
    never taken for a dead process of ours."""
    if not _HOST_TAG:
        import hashlib
        import socket

        _HOST_TAG.append(hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8])
    return _HOST_TAG[0]


def temp_prefix(name):
    """The prefix of a temporary file or directory made by this process for ``name``."""
    return "%s%s-%d-%s." % (TEMP_PREFIX, _host_tag(), os.getpid(), name)


def is_temp_name(name):
    """True for names made by :func:`temp_prefix` (temporary files and spool directories of a writer)."""
    return name.startswith(TEMP_PREFIX) and _TEMP_RE.match(name) is not None


def _pid_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def remove_stale_temps(directory):
    """Remove the temporaries an interrupted writer left in ``directory`` (those whose process is gone)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in names:
        m = _TEMP_RE.match(name) if name.startswith(TEMP_PREFIX) else None
        if m is None or m.group(1) != _host_tag() or _pid_alive(int(m.group(2))):
            continue
        path = os.path.join(directory, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                import shutil

                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def make_temp_dir(directory, name):
    """A private spool directory in ``directory`` (``None``: the system's temporary directory), recognised by
    :func:`is_temp_name`. The caller removes it."""
    import tempfile

    return tempfile.mkdtemp(prefix=temp_prefix(name), dir=directory)


def read_bytes(path):
    """The bytes of ``path``, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", os.fspath(path)) from None


def summary(data):
    """The one-line stand-in for content too big to show in a diff."""
    import hashlib

    return _summary_line(len(data), hashlib.sha256(data).hexdigest())


def file_summary(path):
    """:func:`summary` of a file's content, read in chunks."""
    import hashlib

    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            digest.update(block)
            size += len(block)
    return _summary_line(size, digest.hexdigest())


def _summary_line(size, hexdigest):
    return "%d bytes, sha256:%s\n" % (size, hexdigest)


def make_diff(path, before, after, max_bytes=DIFF_MAX_BYTES):
    """The one diff builder: an Ansible diff dict for ``path``.

    ``before``/``after``: bytes (``before`` None when the file is absent) or an already prepared summary string.
    Full texts are shown when both sides are bytes of at most ``max_bytes``, else summaries of both sides.
    """
    def small(value):
        return value is None or (isinstance(value, bytes) and len(value) <= max_bytes)

    if small(before) and small(after):
        b = "" if before is None else before.decode("utf-8", "replace")
        a = "" if after is None else after.decode("utf-8", "replace")
    else:
        b = before if isinstance(before, str) else ("" if before is None else summary(before))
        a = after if isinstance(after, str) else summary(after)
    return {"before_header": path if before is not None else "%s (absent)" % path, "after_header": path,
            "before": b, "after": a}


def _same_bytes(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(_CHUNK), fb.read(_CHUNK)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def _write_data(f, data):
    if isinstance(data, bytes):
        f.write(data)
    elif isinstance(data, str):
        f.write(data.encode("utf-8"))
    else:
        for chunk in data:
            f.write(chunk if isinstance(chunk, bytes) else chunk.encode("utf-8"))


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class FileOutput:
    """Stage, compare, diff and commit a set of output files (see the module docstring).

    Use as a context manager: leaving the block discards whatever was not committed, also on errors and
    interruptions (KeyboardInterrupt, SystemExit)::

        with FileOutput(check_mode=module.check_mode, diff=module._diff) as out:
            out.write(path, text)                     # str, bytes or an iterable of str/bytes chunks
            out.stream(other, lambda f: render(f))    # or let a producer write into the staged file
            out.commit()                              # no-op in check mode
        out.changed, out.changed_paths, out.diffs
    """

    def __init__(self, check_mode=False, diff=False, diff_max_bytes=DIFF_MAX_BYTES, mode=0o644):
        self.check_mode = check_mode
        self.want_diff = diff
        self.diff_max_bytes = diff_max_bytes
        self.mode = mode
        self.paths = []
        self.changed_paths = []
        self.diffs = []
        self._staged = []  # (tmp, path) of changed files not yet renamed
        self._scratch = None
        self._cleaned = set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.discard()
        return False

    @property
    def changed(self):
        return bool(self.changed_paths)

    def staging_dir(self, path):
        """Where ``path`` is staged: its own directory, or the private scratch directory in check mode."""
        if self.check_mode:
            if self._scratch is None:
                self._scratch = make_temp_dir(None, "check")
            return self._scratch
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        if directory not in self._cleaned:
            remove_stale_temps(directory)
            self._cleaned.add(directory)
        return directory

    def write(self, path, data):
        """Stage ``data`` for ``path``; return True when it differs from the current content."""
        return self.stream(path, lambda f: _write_data(f, data))[0]

    def stream(self, path, producer):
        """Stage what ``producer(file object)`` writes for ``path``; return ``(changed, producer's return value)``."""
        path = os.fspath(path)
        if path in self.paths:
            raise InvalidInputError("%s is written twice in one output" % path)
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", path)
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(os.path.basename(path)), suffix=".tmp",
                                   dir=self.staging_dir(path))
        try:
            with os.fdopen(fd, "wb") as f:
                value = producer(f)
                f.flush()
                if not self.check_mode:
                    os.fsync(f.fileno())
            self.paths.append(path)
            exists = os.path.exists(path)  # a dangling symlink counts as absent (it is replaced)
            if exists and _same_bytes(tmp, path):
                os.unlink(tmp)
                return False, value
            if self.want_diff:
                self.diffs.append(self._diff(path, exists, tmp))
            self.changed_paths.append(path)
            self._staged.append((tmp, path))
            return True, value
        except BaseException:
            _unlink(tmp)
            raise

    def _diff(self, path, before_exists, tmp):
        limit = self.diff_max_bytes
        fits = os.path.getsize(tmp) <= limit and (not before_exists or os.path.getsize(path) <= limit)
        if fits:
            return make_diff(path, read_bytes(path) if before_exists else None, read_bytes(tmp), limit)
        return make_diff(path, file_summary(path) if before_exists else None, file_summary(tmp), limit)

    def commit(self):
        """Rename every staged file into place (check mode: discard them). Modes of replaced files are kept."""
        if self.check_mode:
            self.discard()
            return
        directories = set()
        while self._staged:
            tmp, path = self._staged[0]
            try:
                mode = os.stat(path).st_mode & 0o7777
            except OSError:
                mode = self.mode
            os.chmod(tmp, mode)
            os.replace(tmp, path)
            self._staged.pop(0)
            directories.add(os.path.dirname(os.path.abspath(path)))
        for directory in directories:
            _fsync_dir(directory)

    def discard(self):
        """Remove every staged file and the scratch directory (idempotent)."""
        while self._staged:
            _unlink(self._staged.pop()[0])
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def write_file(path, data, mode=0o644):
    """Write one file atomically (stage, fsync, rename), unconditionally; return True when its content changed."""
    with FileOutput(mode=mode) as out:
        changed = out.write(path, data)
        out.commit()
    return changed
