# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render an existing File-Based Catalog (directory or file) to one JSON or YAML stream, like `opm render CATALOG`.

The bytes are those of write.iter_format over load.load(path). Small catalogs are rendered exactly that way.
Big trees are rendered file by file on every CPU (opm loads files concurrently too): each worker process parses
a file and encodes its objects right away into its spool file, noting each object's position in opm's
writeToEncoder order (write.ordered_objects); the output is then assembled from the spools in that order. No
process ever holds the whole catalog, so memory stays near one file's objects per process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load, write
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, LoadError, WriteError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_emit import yaml_document
from ansible_collections.kubeforge.operators.plugins.module_utils.files import make_temp_dir

# Below this many input lines extra processes cost more than they save: fork, spools and result shipping, plus
# ~25 MiB of interpreter per process, which would put a mid-size catalog's summed memory above opm's. Lines, not
# bytes, predict the work: opm writes one YAML/JSON node per line, and long base64 lines are cheap to parse.
PARALLEL_MIN_LINES = 150000

# Rank of each kind of object inside its package, as write.ordered_objects emits them.
_PACKAGE, _CHANNEL, _BUNDLE, _OTHER, _DEPRECATION = range(5)
# Objects of a package sort before the package-less others, which keep load order.
_IN_PACKAGE, _ROOT = 0, 1
_NO_NAME = b""


def keyed_objects(cfg, file_index):
    """(sort key, Go-shaped object) for every object of one file's config.

    Sorting the keys of all files reproduces write.ordered_objects on the merged config: packages by name; inside
    a package: package blobs, channels by name, bundles by name, others by schema, deprecations; ties keep load
    order (file index, then position in the file); package-less others come last in load order.
    """
    for i, p in enumerate(cfg.packages):
        if p.get("name"):
            yield (_IN_PACKAGE, go_sort_key(p["name"]), _PACKAGE, _NO_NAME, file_index, i), write.go_package(p)
    for i, c in enumerate(cfg.channels):
        if c.get("package"):
            key = (_IN_PACKAGE, go_sort_key(c["package"]), _CHANNEL, go_sort_key(c.get("name") or ""), file_index, i)
            yield key, write.go_channel(c)
    for i, b in enumerate(cfg.bundles):
        if b.get("package"):
            key = (_IN_PACKAGE, go_sort_key(b["package"]), _BUNDLE, go_sort_key(b.get("name") or ""), file_index, i)
            yield key, write.go_bundle(b)
    for i, o in enumerate(cfg.others):
        pkg = write.meta_str(o, "package")
        if pkg:
            yield (_IN_PACKAGE, go_sort_key(pkg), _OTHER, go_sort_key(write.meta_str(o, "schema")), file_index, i), o
        else:
            yield (_ROOT, _NO_NAME, 0, _NO_NAME, file_index, i), o
    for i, d in enumerate(cfg.deprecations):
        if d.get("package"):
            yield (_IN_PACKAGE, go_sort_key(d["package"]), _DEPRECATION, _NO_NAME, file_index, i), write.go_deprecation(d)


def _encoder(output_format, escape_html=False):
    if output_format == "json":
        return lambda obj: write.json_document(obj, escape_html)
    if output_format == "yaml":
        return lambda obj: "---\n" + yaml_document(obj)
    raise WriteError("invalid output format %s" % json.dumps(output_format))


def _error_record(file_index, e):
    return (file_index, isinstance(e, LoadError), e.opm_message, e.path, e.context)


class _Spool:
    """One process's spool file: encoded objects appended as files are rendered."""

    def __init__(self, spool_dir, output_format, escape_html):
        import tempfile

        fd, self.path = tempfile.mkstemp(prefix="render-", suffix=".spool", dir=spool_dir)
        self.file = os.fdopen(fd, "wb")
        self.offset = 0
        self.encode = _encoder(output_format, escape_html)

    def render_file(self, task):
        """Parse one catalog file and spool its encoded objects: (spool path, [(key, offset, length)], error)."""
        file_index, path = task
        with load.gc_paused():
            try:
                cfg = load.load_file(path)
            except LoadError as e:
                return self.path, [], _error_record(file_index, e)
            records = []
            try:
                for key, obj in keyed_objects(cfg, file_index):
                    data = self.encode(obj).encode("utf-8")
                    self.file.write(data)
                    records.append((key, self.offset, len(data)))
                    self.offset += len(data)
            except FBCError as e:
                return self.path, [], _error_record(file_index, e)
            finally:
                self.file.flush()  # the parent reads the spool as soon as this result arrives
        return self.path, records, None


_WORKER_SPOOL = None  # the spool of a pool worker process


def _init_worker(spool_dir, output_format, escape_html):
    global _WORKER_SPOOL
    _WORKER_SPOOL = _Spool(spool_dir, output_format, escape_html)


def _render_in_worker(task):
    return _WORKER_SPOOL.render_file(task)


def _copy_range(src_fd, dst_fd, offset, length):
    """Copy length bytes at offset of src_fd to dst_fd's current position (in the kernel when it can)."""
    while length > 0:
        try:
            sent = os.sendfile(dst_fd, src_fd, offset, length)
        except (AttributeError, OSError):
            sent = None
        if not sent:
            # sendfile unavailable or refused for this pair of files: plain reads and writes
            data = os.pread(src_fd, min(length, 1 << 20), offset)
            if not data:
                raise WriteError("spool file ended early")
            sent = os.write(dst_fd, data)
        offset += sent
        length -= sent


def _assemble(results, out):
    """Write every spooled object to out in key order, coalescing neighbouring ranges of the same spool."""
    spools = sorted(set(spool for spool, _records, _error in results))
    index_of = {spool: i for i, spool in enumerate(spools)}
    entries = []
    for spool, records, _error in results:
        spool_index = index_of[spool]
        entries.extend((key, spool_index, offset, length) for key, offset, length in records)
    entries.sort()
    ranges = []
    for _key, spool_index, offset, length in entries:
        if ranges and ranges[-1][0] == spool_index and ranges[-1][1] + ranges[-1][2] == offset:
            ranges[-1][2] += length
        else:
            ranges.append([spool_index, offset, length])
    fds = [os.open(spool, os.O_RDONLY) for spool in spools]
    try:
        try:
            out_fd = out.fileno()
        except (AttributeError, OSError, ValueError):
            out_fd = None
        out.flush()
        for spool_index, offset, length in ranges:
            if out_fd is not None:
                _copy_range(fds[spool_index], out_fd, offset, length)
                continue
            while length > 0:
                data = os.pread(fds[spool_index], min(length, 1 << 20), offset)
                out.write(data)
                offset += len(data)
                length -= len(data)
    finally:
        for fd in fds:
            os.close(fd)


def _raise_first_error(results):
    errors = [r[2] for r in results if r[2] is not None]
    if not errors:
        return
    # load errors first (loading precedes writing), then the first file in walk order
    _index, is_load, message, path, context = min(errors, key=lambda e: (not e[1], e[0]))
    raise (LoadError if is_load else WriteError)(message, path=path, context=context)


def _catalog_files(source):
    if os.path.isdir(source):
        return [os.path.join(source, *rel.split("/")) for rel in load.list_catalog_files(source)]
    return [source]  # a file, or a missing path that load.load reports


def _default_workers(paths):
    cpus = load.usable_cpus()
    if cpus < 2 or len(paths) < 2 or not hasattr(os, "fork"):
        return 1
    return cpus if load.count_lines(paths, PARALLEL_MIN_LINES) >= PARALLEL_MIN_LINES else 1


class _NoProcessPool(Exception):
    """Worker processes cannot be started here (restricted environment)."""


def _render_files(tasks, workers, output_format, escape_html, spool_dir):
    try:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(workers, initializer=_init_worker, initargs=(spool_dir, output_format, escape_html))
    except (ImportError, OSError, RuntimeError, ValueError) as e:
        raise _NoProcessPool(str(e)) from None
    # biggest files first, handed out one at a time: workers stay busy until the end whatever each file costs
    tasks = sorted(tasks, key=lambda task: os.path.getsize(task[1]), reverse=True)
    with pool:
        return list(pool.imap_unordered(_render_in_worker, tasks))


def render_catalog(source, out, output_format="yaml", workers=None, escape_html=False, spool_dir=None):
    """Write the catalog at source (directory or file) to the binary file object out, in opm render's bytes.

    workers: processes parsing and encoding (default: every usable CPU when the tree holds at least
    PARALLEL_MIN_LINES lines in two or more files, else 1, in this process). spool_dir: where the temporary spool
    files go (default: the system temporary directory); they are removed before returning. Raises LoadError
    (the first bad file in walk order; nothing written to out) or WriteError (a value JSON/YAML cannot hold; out
    may then hold the objects before it: render_catalog_file never leaves such output behind).

    Returns (package names, bundle names) of what was written, each sorted like opm sorts names.
    """
    source = os.fspath(source)
    _encoder(output_format)  # reject a bad format before any work
    paths = _catalog_files(source)
    if workers is None:
        workers = _default_workers(paths)
    workers = max(1, min(workers, len(paths)))
    if workers > 1:
        try:
            return _render_parallel(list(enumerate(paths)), out, workers, output_format, escape_html, spool_dir)
        except _NoProcessPool:
            pass  # render in this process instead
    cfg = load.load(source)
    for chunk in write.iter_format(cfg, output_format, escape_html):
        out.write(chunk.encode("utf-8"))
    return cfg.package_names(), sorted({b["name"] for b in cfg.bundles if b.get("package") and b.get("name")},
                                       key=go_sort_key)


def _names(results):
    """(package names, bundle names) of the written objects, from their sort keys."""
    packages, bundles = set(), set()
    for _spool, records, _error in results:
        for key, _offset, _length in records:
            if key[0] == _IN_PACKAGE:
                packages.add(key[1])
                if key[2] == _BUNDLE and key[3]:
                    bundles.add(key[3])
    return ([n.decode("utf-8", "surrogatepass") for n in sorted(packages)],
            [n.decode("utf-8", "surrogatepass") for n in sorted(bundles)])


def _render_parallel(tasks, out, workers, output_format, escape_html, spool_dir):
    import shutil

    private_dir = make_temp_dir(spool_dir, "render")
    try:
        results = _render_files(tasks, workers, output_format, escape_html, private_dir)
        _raise_first_error(results)
        _assemble(results, out)
        return _names(results)
    finally:
        shutil.rmtree(private_dir, ignore_errors=True)


def render_catalog_file(source, dest, output, output_format="yaml", workers=None, escape_html=False):
    """render_catalog into the file ``dest`` through ``output`` (a files.FileOutput: staged, compared, diffed,
    committed by the caller). The spool directory sits next to the staged file. Returns (changed, packages, bundles).
    """
    spool_dir = output.staging_dir(dest)
    changed, (packages, bundles) = output.stream(dest, lambda f: render_catalog(
        source, f, output_format, workers=workers, escape_html=escape_html, spool_dir=spool_dir))
    return changed, packages, bundles
