# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_cluster_catalog_info module: the ClusterCatalogs' state and, from catalogd, what each
one offers (packages, channels, versions).

catalogd serves a catalog's File-Based Catalog at ``<status.urls.base>/api/v1/all``. Inside a cluster the base
is the address of catalogd's Service (``https://catalogd-service.<namespace>.svc/catalogs/<name>``), which is
reached through the API server's service proxy (``services/proxy`` in that namespace, with the module's own
credentials); any other address (a route, or the testbed's local catalogd) is read directly over HTTPS, its
certificate checked against ``catalogd_ca_cert`` or the system's CAs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ssl
import urllib.request
from urllib.parse import quote, urlsplit

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, api_error_message, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.client import dynamic_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object, public, to_dict
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, name_of, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog import olm_v1_resource

# A catalog larger than this is refused rather than held in memory (the largest public catalogs are ~100 MB).
MAX_CONTENT_BYTES = 512 * 1024 * 1024
CHUNK = 1024 * 1024
TIMEOUT_SECONDS = 60


def proxy_path(base):
    """The API server's service-proxy path for a catalogd base URL on an in-cluster Service, or None."""
    parts = urlsplit(base)
    host = (parts.hostname or "").split(".")
    if len(host) < 3 or host[2] != "svc":
        return None
    service, namespace = host[0], host[1]
    port = parts.port or 443
    return f"/api/v1/namespaces/{quote(namespace)}/services/https:{quote(service)}:{port}/proxy{parts.path.rstrip('/')}/api/v1/all"


def _bounded_read(stream, what):
    chunks, size = [], 0
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_CONTENT_BYTES:
            raise InvalidInputError(f"{what} is larger than {MAX_CONTENT_BYTES // (1024 * 1024)} MiB; not read")
        chunks.append(chunk)


def fetch_contents(client, base, ca_cert=None):
    """The bytes catalogd serves at ``<base>/api/v1/all``: through the API server's service proxy for a Service
    address, else directly over verified HTTPS. Raises ``ValueError`` with the reason."""
    path = proxy_path(base)
    if path is not None:
        try:
            response = dynamic_client(client).request("GET", path, header_params={"Accept": "application/jsonl, application/json, */*"})
        except Exception as exc:  # forbidden services/proxy, catalogd down: reported per catalog
            raise InvalidInputError(f"reading {base}/api/v1/all through the API server's service proxy failed: {excerpt(api_error_message(exc))}") from None
        data = getattr(response, "data", None)
        return data if data is not None else _bounded_read(response, f"{base}/api/v1/all")
    if not base.startswith("https://"):
        raise InvalidInputError(f"catalogd's address {base} is not https; not read")
    context = ssl.create_default_context(cafile=ca_cert) if ca_cert else ssl.create_default_context()
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
    try:
        with opener.open(base + "/api/v1/all", timeout=TIMEOUT_SECONDS) as response:
            return _bounded_read(response, f"{base}/api/v1/all")
    except (OSError, ssl.SSLError) as exc:
        raise InvalidInputError(f"reading {base}/api/v1/all failed: {excerpt(str(exc))}") from None


def catalog_record(obj):
    """What the module reports of a ClusterCatalog without its contents."""
    serving = condition(obj, "Serving") or {}
    return {
        "name": name_of(obj),
        "image": ((spec(obj).get("source") or {}).get("image") or {}).get("ref"),
        "resolved_image": cc.resolved_ref(obj),
        "base_url": cc.base_url(obj),
        "priority": spec(obj).get("priority", 0),
        "availability_mode": spec(obj).get("availabilityMode") or "Available",
        "serving": serving.get("status") == "True",
        "state": cc.describe(obj),
        "cluster_catalog": public(obj),
    }


def execute(module):
    """Entry point of the olm_cluster_catalog_info module."""
    p = module.params
    timer = Deadline()
    resource = olm_v1_resource(module.cluster, cc.KIND)
    if p.get("name"):
        found = get_object(module.client, resource, p["name"])
        catalogs = [found] if found is not None else []
    else:
        catalogs = list((to_dict(module.client.get(resource)) or {}).get("items") or [])
    records, warnings = [], []
    for obj in sorted(catalogs, key=name_of):
        record = catalog_record(obj)
        if p["contents"]:
            if not record["serving"] or not record["base_url"]:
                record["contents_error"] = f"not read: catalogd does not serve it ({record['state']})"
            else:
                try:
                    cfg = load_bytes(fetch_contents(module.client, record["base_url"], p.get("catalogd_ca_cert")), source=record["base_url"])
                    record["packages"], problems = cc.contents_summary(cc.only_package(cfg, p.get("package")))
                except (ValueError, FBCError) as exc:  # unreachable, too large, not an FBC: reported per catalog
                    record["contents_error"] = str(exc)
                else:
                    warnings.extend(f"ClusterCatalog {record['name']}: {problem}" for problem in problems[:10])
            if "contents_error" in record:
                warnings.append(f"ClusterCatalog {record['name']}: contents {record['contents_error']}")
        records.append(record)
    result = {"changed": False, "catalogs": records, "duration": timer.elapsed()}
    if p.get("package") and p["contents"]:
        result["offered_by"] = [r["name"] for r in records if r.get("packages")]
    if p.get("name") and not catalogs:
        warnings.append(f"ClusterCatalog {p['name']} does not exist")
    if warnings:
        result["warnings"] = warnings
    return result
