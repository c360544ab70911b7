# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what ``olm_upgrade_plan`` judges: the installed operators and the target catalogs.

Requests do not grow with the catalogs or the number of operators (discovery comes from the client's cache):

* ClusterServiceVersions: one LIST of all namespaces without copied CSVs (label selector ``!olm.copiedFrom``; the
  core drops what ``IsCopied`` still calls copied);
* Subscriptions: one LIST of all namespaces;
* ClusterExtensions (OLM v1): one LIST, when the discovery cache lists ``olm.operatorframework.io/v1`` (like
  ``olm_operator_info``, no request to confirm its absence); users who may not list them get a warning.

Target catalogs are loaded the way the catalog modules load them: an image is pulled into a temporary directory with
``catalog.lookup.pulled_catalog`` (catalog_render's source_image), a directory or a file is read with
``fbc.declcfg.load.load`` (catalog_graph, catalog_validate), and converted with ``convert_to_model`` (not validated:
a target catalog with a problem elsewhere still answers for the packages asked about).

The judgement itself is ``olm.upgrade_plan`` (pure).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.lookup import pulled_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_params
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import upgrade_plan as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import EXTENSIONS_API, OPERATORS_API, group_version_served, list_objects

CATALOG_NAME_LABEL = "olm.operatorframework.io/metadata.name"  # the label catalogd puts on every ClusterCatalog


def _meta(obj):
    return obj.get("metadata") or {}


def _spec(obj):
    return obj.get("spec") or {}


def load_catalog(entry, packages=None):
    """The typed FBC model of one ``catalogs`` entry (its ``image``, ``dir`` or ``file``); with ``packages``, of those
    packages only (converting a 500-package catalog for the 50 installed ones took 1.1 s more, benchmarks/README.md)."""
    if entry.get("image"):
        params = dict(registry_auth_params(entry.get("registry_auth")), source_image=entry["image"])
        with pulled_catalog(params) as (path, _image):
            cfg = load(path)
    else:
        cfg = load(entry.get("dir") or entry.get("file"))
    if packages is not None:
        cfg = cfg.restricted_to(packages)
    return convert_to_model(cfg, validate=False)


def check_catalogs(catalogs):
    """Refuse entries the argument spec cannot: ``registry_auth`` without ``image``."""
    for i, entry in enumerate(catalogs):
        if entry.get("registry_auth") and not entry.get("image"):
            raise InvalidInputError("catalogs[%d] (%s): registry_auth is refused without image (only an image is pulled)" % (i, entry.get("source")))


def _v0_catalog(catalogs, source, source_namespace):
    for i, entry in enumerate(catalogs):
        if entry["source"] == source and (not entry.get("source_namespace") or entry["source_namespace"] == source_namespace):
            return i
    return None


def _subscription_of(key, subs, replaced_by):
    """The Subscription of the CSV ``key`` (namespace, name): its own, else that of the CSV replacing it - an upgrade
    under way (or stuck) keeps the old CSV, which OLM still judges, beside the Subscription's new one."""
    seen = set()
    while key not in subs and key in replaced_by and key not in seen:
        seen.add(key)
        key = (key[0], replaced_by[key])
    return subs.get(key)


def v0_installed(csvs, subscriptions, catalogs, packages=None):
    """The ``installed`` rows of ``olm.upgrade_plan.plan`` for every CSV that is not copied."""
    subs = {}
    for sub in subscriptions:
        ns = _meta(sub).get("namespace")
        st = sub.get("status") or {}
        for csv_name in (st.get("currentCSV"), st.get("installedCSV")):
            if csv_name:
                subs[(ns, csv_name)] = sub
    replaced_by = dict(((_meta(c).get("namespace"), _spec(c)["replaces"]), _meta(c).get("name")) for c in csvs if _spec(c).get("replaces"))
    rows = []
    for csv in csvs:
        if core.is_copied(csv):
            continue
        meta = _meta(csv)
        sub = _subscription_of((meta.get("namespace"), meta.get("name")), subs, replaced_by)
        declared, version, error = core.csv_max_openshift_version(csv)
        package = _spec(sub).get("name") if sub is not None else core.csv_package(csv)[0]
        if packages and package not in packages:
            continue
        source = _spec(sub).get("source") if sub is not None else None
        rows.append(
            {
                "generation": "v0",
                "namespace": meta.get("namespace"),
                "name": meta.get("name"),
                "package": package,
                "channel": _spec(sub).get("channel") if sub is not None else None,
                "installed_version": _spec(csv).get("version"),
                "source": source,
                "bundle": meta.get("name"),
                "properties_known": True,
                "declared": declared,
                "version": version,
                "error": error,
                "catalog": _v0_catalog(catalogs, source, _spec(sub).get("sourceNamespace")) if sub is not None else None,
            }
        )
    return rows


def v1_installed(extensions, catalogs, models, packages=None):
    """The ``installed`` rows for ClusterExtensions; the installed bundle's properties come from the catalogs."""
    rows = []
    for ext in extensions:
        source_spec = (_spec(ext).get("source") or {}).get("catalog") or {}
        package = source_spec.get("packageName")
        if packages and package not in packages:
            continue
        bundle = ((ext.get("status") or {}).get("install") or {}).get("bundle") or {}
        selector = ((source_spec.get("selector") or {}).get("matchLabels") or {}).get(CATALOG_NAME_LABEL)
        candidates = [i for i, entry in enumerate(catalogs) if selector is None or entry["source"] == selector]
        chosen, found = None, None
        for i in candidates:
            hit = core.catalog_bundle(models[i], package, bundle.get("name"), bundle.get("version")) if bundle else None
            if hit is not None:
                chosen, found = i, hit
                break
            if chosen is None and models[i].get(package) is not None:
                chosen = i
        if chosen is None and selector is not None and candidates:
            chosen = candidates[0]  # the entry of the ClusterCatalog the selector names, even without the package
        declared = version = error = None
        if found is not None:
            declared, version, error = core.max_openshift_version(core.catalog_properties(found.properties))
        channels = source_spec.get("channels") or []
        rows.append(
            {
                "generation": "v1",
                "namespace": None,
                "name": _meta(ext).get("name"),
                "package": package,
                "channel": channels[0] if len(channels) == 1 else None,
                "channels": list(channels),
                "installed_version": bundle.get("version"),
                "source": catalogs[chosen]["source"] if chosen is not None else selector,
                "bundle": bundle.get("name"),
                "properties_known": found is not None,
                "declared": declared,
                "version": version,
                "error": error,
                "catalog": chosen,
            }
        )
    return rows


def upgrade_plan(client, openshift_version, catalogs=(), packages=None, catalog_loader=load_catalog):
    """The result of ``olm_upgrade_plan`` minus ``changed``; ``warnings`` when there are any."""
    catalogs = list(catalogs or ())
    check_catalogs(catalogs)
    core.parse_target(openshift_version)  # refuse a bad version before any request
    warnings = []
    cluster = Cluster(client)
    csvs = list_objects(client, cluster.resource("ClusterServiceVersion", OPERATORS_API), None, label_selector="!%s" % core.COPIED_LABEL)
    subscriptions = list_objects(client, cluster.resource("Subscription", OPERATORS_API), None)
    extensions = []
    served, _why = group_version_served(client, EXTENSIONS_API, confirm=False)
    if served:
        try:
            extensions = list_objects(client, cluster.resource("ClusterExtension", EXTENSIONS_API), None)
        except K8sError as exc:
            # 404: the discovery cache was stale (it listed the API of another cluster at the same address): not served.
            if exc.status not in (401, 403, 404):
                raise
            if exc.status != 404:
                warnings.append("OLM v1 ClusterExtensions are not judged: %s" % excerpt(exc.msg))
    v0_rows = v0_installed(csvs, subscriptions, catalogs, packages)
    installed = set(row["package"] for row in v0_rows)
    installed.update(((_spec(ext).get("source") or {}).get("catalog") or {}).get("packageName") for ext in extensions)
    installed.discard(None)
    models = dict((i, catalog_loader(entry, installed)) for i, entry in enumerate(catalogs))
    rows = v0_rows + v1_installed(extensions, catalogs, models, packages)
    used = set(row["catalog"] for row in rows)
    for i, entry in enumerate(catalogs):
        if i not in used:
            warnings.append("catalogs[%d] (%s) is the catalog of no installed operator" % (i, entry["source"]))
    result = core.plan(rows, models, openshift_version)
    if warnings:
        result["warnings"] = warnings
    return result


def execute(module):
    """The olm_upgrade_plan module's entry point (``KubeforgeModule.run``)."""
    p = module.params
    result = upgrade_plan(module.client, p["openshift_version"], catalogs=p["catalogs"], packages=p["packages"])
    result["changed"] = False
    return result
