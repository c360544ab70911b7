# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what ``olm_operator_info`` reports from the cluster, with as few API requests as possible.

One namespace, read-only. Requests (discovery comes from the client's cache):

* Subscriptions: one GET (``name`` given) or one LIST of the namespace;
* ClusterExtensions (OLM v1), unless only a Subscription name is given: one LIST, kept when their
  ``spec.namespace`` is the namespace, when the discovery cache lists ``olm.operatorframework.io/v1`` (no request
  to confirm its absence);
* CSVs: one GET of the installed CSV (one operator), or one LIST of the namespace without copied CSVs (label
  selector ``!olm.copiedFrom``) for every operator; none when nothing is installed;
* InstallPlans: one LIST of the namespace, none when there is no Subscription;
* PackageManifests (``packages.operators.coreos.com/v1``, served by OLM's packageserver): one LIST per operator,
  narrowed by the catalog labels and a ``metadata.name`` field selector. When that API is not served (OLM without
  packageserver), cannot be read, or fails, ``catalog`` is null and a warning says why: the rest is still reported.
  Whether it is served comes from the discovery cache; only when the cache does not list the group is its discovery
  document requested (one GET, answered 404 on clusters without packageserver). A plain lookup would cost a
  discovery refresh per lookup attempt on every run there (18 requests with kubernetes.core's client).

The summaries themselves are ``olm.info`` (pure).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, api_error_message, api_error_status, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import dynamic_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import to_dict
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import info
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import COPIED_LABEL, metadata, spec, status
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.cluster_extension import extensions_in

OPERATORS_API = "operators.coreos.com/v1alpha1"
PACKAGES_API = "packages.operators.coreos.com/v1"
PACKAGE_MANIFEST = "PackageManifest"
EXTENSIONS_API = "olm.operatorframework.io/v1"


def group_version_served(client, api_version, confirm=True):
    """``(served, why_not)`` for an API group version such as ``packages.operators.coreos.com/v1``.

    Answered from the client's discovery cache when it lists the group version (no request); otherwise one GET of
    the group version's discovery document tells (the cache may predate the API): 404 means not served, another
    error (503 for an aggregated API whose server is down) means not available.
    """
    dyn = dynamic_client(client)
    group, version = api_version.split("/", 1)
    try:
        cached = dyn.resources.parse_api_groups(request_resources=False) or {}
    except Exception:  # a cache we cannot read: ask the server
        cached = {}
    if version in ((cached.get("apis") or {}).get(group) or {}):
        return True, None
    if not confirm:
        return False, f"the {api_version} API is not in the discovery cache"
    try:
        dyn.request("GET", f"/apis/{api_version}")
    except Exception as exc:
        status = api_error_status(exc)
        if status == 404:
            return False, f"the {api_version} API is not served"
        return False, f"the {api_version} API is not available (HTTP {status}): {api_error_message(exc)}" if status else str(exc)
    return True, None


def list_objects(client, resource, namespace, label_selector=None, field_selector=None):
    """The items of one LIST request (plain dicts); API errors become ``K8sError``."""
    params = {"namespace": namespace}
    if label_selector:
        params["label_selector"] = label_selector
    if field_selector:
        params["field_selector"] = field_selector
    try:
        listing = to_dict(client.get(resource, **params)) or {}
    except Exception as exc:
        kind = getattr(resource, "kind", None) or str(resource)
        where = f" in namespace {namespace}" if namespace else ""
        raise K8sError(f"Failed to list {kind}{where}: {api_error_message(exc)}", status=api_error_status(exc)) from exc
    return [item for item in listing.get("items") or () if isinstance(item, dict)]


class CatalogReader:
    """PackageManifest lookups; after the first failure (API not served, forbidden, ...) it stops asking."""

    def __init__(self, client, namespace):
        self.client = client
        self.namespace = namespace
        self.resource = None
        self.problem = None
        self.warnings = []

    def _resource(self):
        if self.problem is not None:
            return None
        if self.resource is None:
            served, why_not = group_version_served(self.client, PACKAGES_API)
            if not served:
                self._give_up(f"{why_not} (OLM's packageserver serves PackageManifests)")
                return None
            try:
                self.resource = Cluster(self.client).resource(PACKAGE_MANIFEST, PACKAGES_API)
            except K8sError:
                self._give_up(f"the {PACKAGES_API} API has no PackageManifest resource")
        return self.resource

    def _give_up(self, why):
        self.problem = why
        self.warnings.append(f"catalog information is not reported: {excerpt(why)}")  # bounded: it quotes the server

    def package_manifest(self, package, source=None, source_namespace=None, namespace=None):
        """``package``'s PackageManifest from ``source``/``source_namespace`` (any catalog when unset), as seen
        from ``namespace`` (the reader's by default), or None."""
        if not package:
            return None
        resource = self._resource()
        if resource is None:
            return None
        namespace = namespace or self.namespace
        try:
            manifests = list_objects(
                self.client,
                resource,
                namespace,
                label_selector=info.catalog_labels(source, source_namespace),
                field_selector=f"metadata.name={package}",
            )
        except K8sError as exc:
            self._give_up(f"{exc} (HTTP {exc.status})" if exc.status else str(exc))
            return None
        manifest, warning = info.select_package_manifest(manifests, package, source, source_namespace, namespace)
        if warning:
            self.warnings.append(warning)
        return manifest

    def package_names(self, source, source_namespace, namespace=None):
        """The names of the packages ``source``/``source_namespace`` serves (its PackageManifests, as seen from
        ``namespace``): empty while the catalog is not serving yet, None when the API cannot be read."""
        resource = self._resource()
        if resource is None:
            return None
        try:
            manifests = list_objects(self.client, resource, namespace or self.namespace, label_selector=info.catalog_labels(source, source_namespace))
        except K8sError as exc:
            self._give_up(f"{exc} (HTTP {exc.status})" if exc.status else str(exc))
            return None
        return sorted({status(m).get("packageName") or metadata(m).get("name") for m in manifests} - {None})


def _catalog_of(sub, source, source_namespace):
    """The catalog to look the package up in: the Subscription's, else the one given by the user."""
    if sub is not None:
        sub_spec = spec(sub)
        return sub_spec.get("source"), sub_spec.get("sourceNamespace")
    return source, source_namespace


def operator_info(client, namespace, package=None, name=None, source=None, source_namespace=None):
    """The result of ``olm_operator_info`` minus ``changed``: ``{"operator": record}`` when ``package`` or ``name``
    is given with a ``namespace``, else ``{"operators": [records]}`` - of the namespace, or of every namespace when
    ``namespace`` is None (then of ``package`` alone when it is given); plus ``warnings`` when there are any."""
    if namespace is None and (name or source or source_namespace):
        raise InvalidInputError("subscription_name, catalog and catalog_namespace need a namespace")
    cluster = Cluster(client)
    subscriptions = cluster.resource("Subscription", OPERATORS_API)
    if name:
        found = cluster.get("Subscription", name, namespace, OPERATORS_API)
        candidates = [found] if found is not None else []
    else:
        candidates = list_objects(client, subscriptions, namespace)
    subs = info.find_subscriptions(candidates, package=package, name=name)
    catalogs = CatalogReader(client, namespace)
    warnings = []

    if namespace and (package or name):
        if len(subs) > 1:
            names = ", ".join(sub["metadata"]["name"] for sub in subs)
            warnings.append(f"{len(subs)} Subscriptions in {namespace} are for package {package} ({names}); reporting the first")
        sub = subs[0] if subs else None
        pkg = package or (spec(sub).get("name") if sub is not None else None)
        csv = None
        plans = []
        if sub is not None:
            installed = status(sub).get("installedCSV")
            if installed:
                csv = cluster.get("ClusterServiceVersion", installed, namespace, OPERATORS_API)
            plans = list_objects(client, cluster.resource("InstallPlan", OPERATORS_API), namespace)
        own = (spec(sub).get("source"), spec(sub).get("sourceNamespace")) if sub is not None else None
        if own and (source, source_namespace) != (None, None) and (source or own[0], source_namespace or own[1]) != own:
            warnings.append(f"Subscription {metadata(sub).get('name')} uses catalog {own[1]}/{own[0]}: catalog and catalog_namespace are not used")
        manifest = catalogs.package_manifest(pkg, *_catalog_of(sub, source, source_namespace))
        record, more = info.operator_summary(pkg, namespace, sub, csv, plans, manifest)
        result = {"operator": record}
        warnings.extend(more)
    else:
        # One LIST per kind, of the namespace or (namespace None) of the whole cluster.
        csvs = {}
        plans = {}
        if subs:
            if any(status(sub).get("installedCSV") for sub in subs):
                csv_resource = cluster.resource("ClusterServiceVersion", OPERATORS_API)
                for csv in list_objects(client, csv_resource, namespace, label_selector=f"!{COPIED_LABEL}"):
                    csvs[(metadata(csv).get("namespace"), metadata(csv).get("name"))] = csv
            for plan in list_objects(client, cluster.resource("InstallPlan", OPERATORS_API), namespace):
                plans.setdefault(metadata(plan).get("namespace"), []).append(plan)
        records = []
        for sub in sorted(subs, key=lambda sub: (metadata(sub).get("namespace") or "", metadata(sub).get("name") or "")):
            pkg, where = spec(sub).get("name"), metadata(sub).get("namespace") or namespace
            manifest = catalogs.package_manifest(pkg, *_catalog_of(sub, None, None), namespace=where)
            installed = csvs.get((where, status(sub).get("installedCSV")))
            record, more = info.operator_summary(pkg, where, sub, installed, plans.get(where, []), manifest)
            records.append(record)
            warnings.extend(more)
        result = {"operators": records}

    if package or not name:
        # the discovery cache decides: no extra request on the many clusters without OLM v1
        served, _why = group_version_served(client, EXTENSIONS_API, confirm=False)
        if served:
            try:
                extensions = list_objects(client, cluster.resource("ClusterExtension", EXTENSIONS_API), None)
            except K8sError as exc:
                if exc.status not in (401, 403):
                    raise
                # a namespace-scoped user may not list this cluster-scoped kind: report the rest
                warnings.append(f"OLM v1 ClusterExtensions are not reported: {excerpt(exc.msg)}")
            else:
                result["cluster_extensions"] = extensions_in(extensions, namespace, package)
    warnings = catalogs.warnings + warnings
    if warnings:
        result["warnings"] = warnings
    return result


def execute(module):
    """The olm_operator_info module's entry point (``KubeforgeModule.run``)."""
    p = module.params
    result = operator_info(
        module.client,
        p["namespace"],
        package=p["package"],
        name=p["subscription_name"],
        source=p["catalog"],
        source_namespace=p["catalog_namespace"],
    )
    result["changed"] = False
    return result
