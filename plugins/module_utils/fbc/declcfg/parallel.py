# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Load whole catalog trees: opm's declcfg.LoadFS, with big YAML trees parsed by several processes.

Mirrors LoadFS in operator-registry's alpha/declcfg/load.go, which parses files concurrently: files are merged in
(deterministic) walk order and the first bad file in that order is reported.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.builder import gc_paused, load_file
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.ignore import list_catalog_files
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import LoadError

# YAML parsing is CPU bound and PyYAML holds the GIL, so big YAML trees are split across processes (opm parses
# files concurrently too). JSON parses ~15x faster than YAML in C, so shipping results between processes would
# cost more than it saves; small and mid-size trees are not worth the forks and ~25 MiB of interpreter per worker
# either. Size is counted in lines, not bytes: opm writes one node per line, and long base64 lines are cheap.
PARALLEL_MIN_YAML_LINES = 150000


def count_lines(paths, limit):
    """Newlines in the files, counted until limit is reached (unreadable files are left to the loader)."""
    lines = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                lines += f.read().count(b"\n")
        except OSError:
            continue
        if lines >= limit:
            break
    return lines


def _is_json_file(path):
    with open(path, "rb") as f:
        head = f.read(4096)
    return head.lstrip(b" \t\r\n").startswith(b"{")


def _load_shipped(path):
    """Worker side: parse one file and ship its config with marshal (the fastest stdlib codec for JSON-shaped
    data; it keeps key order and exact values). Returns (path, data or None, error or None)."""
    import marshal

    try:
        with gc_paused():
            part = load_file(path)
    except LoadError as e:
        return path, None, (e.opm_message, e.path, e.context)
    return path, marshal.dumps([part.packages, part.channels, part.bundles, part.deprecations, part.others]), None


def _load_parallel(paths, workers):
    import marshal
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(workers)
    results = []
    with pool:
        # biggest files first, one at a time, so every worker stays busy until the end; the parent decodes each
        # result while the workers parse the next files
        for path, data, error in pool.imap_unordered(_load_shipped, sorted(paths, key=os.path.getsize, reverse=True)):
            results.append((path, DeclarativeConfig(*marshal.loads(data)) if data is not None else None, error))
    return results


def usable_cpus():
    """CPUs this process may run on. Like opm, big trees are parsed on all of them whatever the machine's load:
    the 1-minute load average lags and counts our own earlier work, so it kept the parallel path off (measured
    on a 2-core host: 2 parser processes load a 205 MiB YAML catalog 10-20 % faster than one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _default_workers(paths):
    cpus = usable_cpus()
    if cpus < 2 or len(paths) < 2 or not hasattr(os, "fork"):
        return 1
    try:
        yaml_paths = [p for p in paths if not _is_json_file(p)]
    except OSError:
        return 1
    return cpus if count_lines(yaml_paths, PARALLEL_MIN_YAML_LINES) >= PARALLEL_MIN_YAML_LINES else 1


def load_fs(root, workers=None):
    """opm's LoadFS: load every catalog file under directory root, merged in (deterministic) walk order.

    workers: number of processes; by default the CPU count when the tree holds at least
    PARALLEL_MIN_YAML_LINES lines of YAML, else 1. On failure the error of the first bad file in walk order is raised.
    """
    root = os.fspath(root)
    paths = [os.path.join(root, *rel.split("/")) for rel in list_catalog_files(root)]
    if workers is None:
        workers = _default_workers(paths)
    workers = max(1, min(workers, len(paths)))
    cfg = DeclarativeConfig()
    if workers == 1:
        with gc_paused():
            for path in paths:
                load_file(path, cfg=cfg)
        return cfg
    try:
        results = _load_parallel(paths, workers)
    except (OSError, ImportError, RuntimeError, AssertionError):
        # no usable process pool (restricted environment): parse serially
        return load_fs(root, workers=1)
    order = {p: i for i, p in enumerate(paths)}
    results.sort(key=lambda r: order[r[0]])
    for _path, part, error in results:
        if error is not None:
            # another group may have failed on a later file too: report the first bad file in walk order
            raise LoadError(error[0], path=error[1], context=error[2])
        cfg.merge(part)
    return cfg


def load(path, workers=1):
    """Load a directory (load_fs) or a single file (load_file).

    workers: parser processes for a directory; 1 (the default) parses serially, None lets load_fs decide. Callers
    that keep the loaded catalog next to large output (rendering) stay serial: with parallel parsing their peak
    memory went above opm's, while read-only validation gains 1.5-2x on big YAML trees at 0.7x opm's memory.
    """
    path = os.fspath(path)
    with gc_paused():
        if os.path.isdir(path):
            return load_fs(path, workers=workers)
        return load_file(path)
