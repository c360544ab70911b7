# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the clusters run, as a ``catalog_mirror`` ``select`` (pure; the ``mirror_select`` filter).

Input: ``olm_operator_info`` results - one result, a list of them (one per cluster), or a registered loop's result
(its ``results``), in any nesting of those. Each result's ``operator`` (when present), ``operators`` (OLM v0:
Subscriptions) and ``cluster_extensions`` (OLM v1) are read.

Output: ``{"packages": [{"name": <package>, "installed_version": <lowest installed version>}, ...]}`` by package
name - the selection of fbc/action/filter.py that keeps, in every channel of the target catalog, the channel head and
the path from the version a cluster runs up to it. Where clusters run different versions of one package, the lowest
(semantic version order) is kept, so every cluster can upgrade from the mirror. A package subscribed but not
installed yet (no installed version anywhere) is kept with its channel heads only.

Refused: a failed or skipped result (the mirror would miss what that cluster runs), something that is not an
``olm_operator_info`` result, a version that is not semantic, and results with no operator at all - an empty
``packages`` list would select every package of the catalog.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver

RESULT_KEYS = ("operator", "operators", "cluster_extensions")


def _results(value, where):
    """``(where, result)`` for every olm_operator_info result in ``value``."""
    if isinstance(value, dict):
        if isinstance(value.get("results"), list) and not any(key in value for key in RESULT_KEYS):
            for index, item in enumerate(value["results"]):
                yield from _results(item, f"{where}.results[{index}]")
            return
        yield where, value
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _results(item, f"{where}[{index}]")
        return
    raise InvalidInputError(f"{where}: expected an olm_operator_info result (a dict) or a list of them, not {type(value).__name__}")


def _label(result, where):
    """How errors name a result: its cluster when the loop item or the result says which."""
    item = result.get("item")
    cluster = result.get("cluster") or (item if isinstance(item, str) else None)
    return f"{where} ({cluster})" if cluster else where


def _records(result, where, sources, cluster_extensions):
    """``(package, installed_version)`` of every installed operator of one result."""
    label = _label(result, where)
    if result.get("failed"):
        raise InvalidInputError(f"{label} failed ({excerpt(result.get('msg') or 'no message')}): the mirror would miss what that cluster runs")
    if result.get("skipped"):
        raise InvalidInputError(f"{label} was skipped: the mirror would miss what that cluster runs")
    if not any(key in result for key in RESULT_KEYS):
        raise InvalidInputError(f"{label} is not an olm_operator_info result: it has none of {', '.join(RESULT_KEYS)}")
    subscriptions = ([result["operator"]] if result.get("operator") else []) + list(result.get("operators") or ())
    for record in subscriptions:
        if not record.get("present", True) or not record.get("package"):
            continue
        source = (record.get("subscription") or {}).get("source")
        if sources is not None and source not in sources:
            continue
        yield label, record["package"], record.get("installed_version")
    if cluster_extensions:
        for record in result.get("cluster_extensions") or ():
            if record.get("package"):
                yield label, record["package"], record.get("installed_version")


def _parse(version, label, package):
    try:
        return semver.parse(str(version))
    except semver.SemverError as exc:
        raise InvalidInputError(f"{label}: package {package} has installed version {excerpt(str(version))}, not a semantic version: {exc}") from None


def mirror_select(results, sources=None, cluster_extensions=True):
    """The ``select`` of ``catalog_mirror``/``catalog_render`` that keeps exactly the packages the clusters of
    ``results`` run, each from its lowest installed version up to the channel heads. ``sources``: only OLM v0
    operators subscribed from these CatalogSources (None: all); ``cluster_extensions``: include OLM v1's."""
    if sources is not None:
        if isinstance(sources, str) or not isinstance(sources, (list, tuple)):
            raise InvalidInputError(f"sources must be a list of CatalogSource names, not {excerpt(str(sources))}")
        sources = set(sources)
    lowest = {}
    seen = 0
    for where, result in _results(results, "results" if isinstance(results, (list, tuple)) else "result"):
        seen += 1
        for label, package, version in _records(result, where, sources, cluster_extensions):
            current = lowest.setdefault(package, None)
            if version is None or version == "":
                continue
            parsed = _parse(version, label, package)
            if current is None or parsed.compare(current[0]) < 0:
                lowest[package] = (parsed, str(version))
    if not seen:
        raise InvalidInputError("no olm_operator_info result given")
    if not lowest:
        what = f" subscribed from {', '.join(sorted(sources))}" if sources is not None else ""
        raise InvalidInputError(
            f"no installed operator{what} in the {seen} olm_operator_info result(s): an empty select would keep every package of the catalog"
        )
    packages = []
    for name in sorted(lowest):
        entry = {"name": name}
        if lowest[name] is not None:
            entry["installed_version"] = lowest[name][1]
        packages.append(entry)
    return {"packages": packages}
