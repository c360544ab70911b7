# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrade-graph queries on the typed model: channel heads, upgrade edges and paths, cycles, a JSON summary.

No operator-registry counterpart beyond Channel.Head (alpha/model/model.go): OLM's upgrade semantics (replaces,
skips, skipRange) as the catalog_graph module and the OLM cores query them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote as q
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_sort_key


def _resolve_channel(model, package, channel=None):
    pkg = model.get(package)
    if pkg is None:
        raise FBCError("unknown package %s" % q(package))
    if channel is None:
        if pkg.default_channel is None:
            raise FBCError("package %s has no default channel" % q(package))
        return pkg.default_channel
    ch = pkg.channels.get(channel)
    if ch is None:
        raise FBCError("package %s has no channel %s" % (q(package), q(channel)))
    return ch


def channel_head(model, package, channel=None):
    """Name of the head bundle of a channel (default channel when channel is None)."""
    return _resolve_channel(model, package, channel).head().name


def upgrade_edges(ch):
    """{bundle name: set of bundle names it can upgrade to} from replaces, skips and skipRange (OLM semantics)."""
    edges = {name: set() for name in ch.bundles}
    for b in ch.bundles.values():
        if b.replaces in edges:
            edges[b.replaces].add(b.name)
        for s in b.skips:
            if s in edges:
                edges[s].add(b.name)
        if b.skip_range:
            try:
                rng = semver.parse_range(b.skip_range)
            except semver.SemverError:
                continue
            for other in ch.bundles.values():
                if other is not b and rng(other.version):
                    edges[other.name].add(b.name)
    return edges


def _declared_edges(ch):
    """{bundle name: names that replace or skip it} (the upgrade edges a channel declares, without skipRange)."""
    edges = {name: set() for name in ch.bundles}
    for b in ch.bundles.values():
        if b.replaces in edges:
            edges[b.replaces].add(b.name)
        for s in b.skips:
            if s in edges:
                edges[s].add(b.name)
    return edges


def find_upgrade_cycle(ch, start_nodes, edges=None):
    """A replaces/skips cycle the upgrade walk from ``start_nodes`` can run into, as ``[a, b, ..., a]`` (each bundle
    upgrades to the next), or None. The walk may reach it through any edge (skipRange included); skipRange edges are
    not part of cycles (a range covering a newer bundle is OLM's usual re-release pattern, not a loop)."""
    edges = upgrade_edges(ch) if edges is None else edges
    reachable = set()
    stack = [n for n in start_nodes if n in edges]
    while stack:
        n = stack.pop()
        if n not in reachable:
            reachable.add(n)
            stack.extend(edges.get(n, ()))
    declared = _declared_edges(ch)

    def order(n):
        return (ch.bundles[n].version, n)

    state = {}  # 1 = on the current DFS path, 2 = done
    for root in sorted(reachable, key=order):
        if root in state:
            continue
        path = [root]
        state[root] = 1
        iters = [iter(sorted((x for x in declared[root] if x in reachable), key=order))]
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted((x for x in declared[nxt] if x in reachable), key=order)))
    return None


def upgrade_path(model, package, start, channel=None):
    """Shortest upgrade path [start, ..., head] inside a channel.

    start is a bundle name or a version string. A version that is not in the channel starts from the
    bundles whose skipRange covers it. Ties prefer the higher version (OLM jumps as far as it can).
    Returns [] when start is the head; raises FBCError when the head is unreachable, or when the walk from start can
    run into a replaces/skips cycle (naming the bundles of the cycle) rather than returning a path through it.
    """
    ch = _resolve_channel(model, package, channel)
    head = ch.head().name
    by_version = {}
    for b in ch.bundles.values():
        by_version.setdefault(str(b.version), b.name)
    edges = upgrade_edges(ch)
    if start in ch.bundles:
        origin, first = start, [start]
    else:
        origin = by_version.get(start)
        if origin is None:
            try:
                v = semver.parse(start)
            except semver.SemverError:
                raise FBCError("bundle or version %s not found in channel %s" % (q(start), q(ch.name))) from None
            first = [b.name for b in ch.bundles.values()
                     if b.skip_range and _range_contains(b.skip_range, v)]
            if not first:
                raise FBCError("no upgrade edge from version %s in channel %s" % (q(start), q(ch.name)))
            origin = None
        else:
            first = [origin]
    if origin == head:
        return []
    cycle = find_upgrade_cycle(ch, first, edges)
    if cycle is not None:
        raise FBCError("upgrade graph of channel %s has a cycle reachable from %s: %s"
                       % (q(ch.name), q(excerpt(start)), excerpt(" -> ".join(cycle), 1000)))

    # Breadth-first search; neighbours visited highest version first so ties resolve to bigger jumps.
    def order(n):
        return ch.bundles[n].version

    previous = {n: None for n in first}
    frontier = sorted(first, key=order, reverse=True)
    while frontier:
        nxt = []
        for node in frontier:
            if node == head:
                path = []
                while node is not None:
                    path.append(node)
                    node = previous[node]
                path.reverse()
                return ([start] + path) if origin is None else path
            for succ in sorted(edges.get(node, ()), key=order, reverse=True):
                if succ not in previous:
                    previous[succ] = node
                    nxt.append(succ)
        frontier = nxt
    raise FBCError("no upgrade path from %s to channel head %s in channel %s" % (q(start), q(head), q(ch.name)))


def _range_contains(text, version):
    try:
        return semver.parse_range(text)(version)
    except semver.SemverError:
        return False


def to_jsonable(model):
    """A plain-data summary of a model (packages, channels, heads, entries) for module results."""
    out = {}
    for pkg in model.values():
        chans = {}
        for ch in pkg.channels.values():
            try:
                head = ch.head().name
            except FBCError:
                head = None
            chans[ch.name] = {"head": head, "bundles": sorted(ch.bundles, key=go_sort_key)}
        out[pkg.name] = {"defaultChannel": pkg.default_channel.name if pkg.default_channel else None,
                         "channels": chans}
    return json.loads(json.dumps(out))
