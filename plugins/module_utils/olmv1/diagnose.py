# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why an OLM v1 ClusterExtension does not install, named from what the cluster shows (pure).

``diagnose(snapshot)`` runs ``CHECKS`` over one read of a ClusterExtension, the ClusterCatalogs its selector allows,
its install namespace (Deployments the extension installed, their ReplicaSets and pods, Warning events), its
installer ServiceAccount and the Deployments of OLM v1's own controllers, and returns ``diagnose.Finding`` records
like the OLM v0 diagnosis. operator-controller words most failures as ``Progressing=True/Retrying`` with the error
of its last attempt (``olmv1/cluster_extension.py``); its permanent ones are named here by what they need fixing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubeforge.operators.plugins.module_utils.olm.diagnose import Finding, admission_rejections, stuck_pods
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, name_of, spec, status
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce

# snapshot keys: extension (the ClusterExtension), serviceaccount (its installer ServiceAccount, or None when missing
# or not named), namespace (spec.namespace), then lists: clustercatalogs (those its selector allows), deployments (of
# the namespace that the extension installed), replicasets, pods, events (Warning events of the namespace),
# controllers (the Deployments of operator-controller's and catalogd's namespace).
SNAPSHOT_KEYS = ("clustercatalogs", "deployments", "replicasets", "pods", "events", "controllers")

# PERMANENT_MESSAGES' kinds of failure -> (cause, fix).
CAUSES = {
    "resolution": (
        "ResolutionFailed",
        "check the package name, channels and version range against what the serving catalogs offer "
        "(olm_cluster_catalog_info lists them); an upgrade needs an edge from the installed version, or upgrade_constraint_policy SelfCertified",
    ),
    "invalid request": ("InvalidRequest", "fix the version range or the catalog selector of the ClusterExtension"),
    "install mode": (
        "InstallModeMismatch",
        "OLM v1 installs bundles that support the AllNamespaces install mode; install this one with OLM v0 (olm_operator)",
    ),
    "bundle": ("BundleInvalid", "the bundle has content OLM v1 does not install (webhooks, unsupported kinds): install it with OLM v0"),
    "service account": (
        "ServiceAccountMissing",
        "create the ServiceAccount the ClusterExtension names in its install namespace, or let olm_cluster_extension create it (create_service_account)",
    ),
    "permissions": (
        "InsufficientPermissions",
        "grant the installer ServiceAccount what operator-controller lists, or let olm_cluster_extension derive and grant it (create_service_account)",
    ),
    "ownership conflict": (
        "OwnershipConflict",
        "an object the bundle installs belongs to another installation (OLM v0, another ClusterExtension, Helm): remove that "
        "installation first, or install the operator where nothing else owns its CRDs",
    ),
}
# operator-controller resolves from every catalog its selector allows; one that is not served stops it (v1.5.1:
# "error walking catalogs: error getting package ... from catalog "x": catalog "x" is not being served").
CATALOG_BLOCKS = re.compile(r'catalog "(?P<catalog>[^"]+)" is not being served')
BUNDLE_PULL = re.compile(r"(pull|fetch|unpack)\w* .*image|manifest unknown|unauthorized|authentication required|name unknown", re.I)


def _extension(snap):
    ext = snap["extension"]
    name = name_of(ext)
    objects = [f"ClusterExtension/{name}"]
    progressing = condition(ext, "Progressing") or {}
    message = progressing.get("message") or ""
    if not progressing:
        return [Finding("NotReconciled", f"ClusterExtension {name} has no Progressing condition yet", "see the controllers' findings", objects)]
    if progressing.get("status") == "True" and progressing.get("reason") != "Retrying":
        return []
    problem = ce.permanent_problem(message)
    blocking = CATALOG_BLOCKS.search(message)
    if problem:
        cause, fix = CAUSES[problem[0]]
    elif blocking:
        cause = "ResolutionBlocked"
        fix = (
            f"operator-controller resolves from every catalog it may use and ClusterCatalog {blocking.group('catalog')} is not served: "
            "fix or delete that catalog, or narrow the ClusterExtension's catalog selector"
        )
    elif BUNDLE_PULL.search(message):
        cause, fix = "BundleUnpackFailed", "make the bundle image pullable by operator-controller (its name, and the pull secret of OLM v1's namespace)"
    elif progressing.get("status") == "False":
        cause, fix = "ExtensionBlocked", "operator-controller stopped trying: change the ClusterExtension as the message says"
    else:
        cause, fix = "Retrying", "operator-controller retries with back-off; the message is the error of its last attempt"
    state = f"{progressing.get('status')}/{progressing.get('reason')}"
    return [Finding(cause, f"ClusterExtension {name} (Progressing={state}): {message}", fix, objects)]


def _service_account(snap):
    ext = snap["extension"]
    wanted = (spec(ext).get("serviceAccount") or {}).get("name")
    if not wanted or snap.get("serviceaccount") is not None:
        return []
    problem = ce.permanent_problem((condition(ext, "Progressing") or {}).get("message"))
    if problem and problem[0] == "service account":
        return []  # operator-controller said it already (_extension reports it)
    cause, fix = CAUSES["service account"]
    where = f"{snap['namespace']}/{wanted}"
    return [Finding(cause, f"ServiceAccount {where}, which ClusterExtension {name_of(ext)} installs as, does not exist", fix, [f"ServiceAccount/{where}"])]


def _catalogs(snap):
    findings = []
    if not snap["clustercatalogs"]:
        findings.append(
            Finding(
                "NoCatalog",
                f"no ClusterCatalog matches the catalog selector of ClusterExtension {name_of(snap['extension'])}",
                "create a ClusterCatalog (olm_cluster_catalog), or widen the ClusterExtension's catalog selector",
                [f"ClusterExtension/{name_of(snap['extension'])}"],
            )
        )
    for catalog in snap["clustercatalogs"]:
        if spec(catalog).get("availabilityMode") == cc.UNAVAILABLE:
            continue
        serving = condition(catalog, "Serving") or {}
        if serving.get("status") == "True" and cc.resolved_ref(catalog):
            continue
        image = ((spec(catalog).get("source") or {}).get("image") or {}).get("ref")
        findings.append(
            Finding(
                "CatalogNotServing",
                f"ClusterCatalog {name_of(catalog)} ({image}) is not serving: {cc.describe(catalog)}",
                "check the image reference and that catalogd can pull it (a tag that exists, the pull secret in OLM v1's namespace)",
                [f"ClusterCatalog/{name_of(catalog)}"],
            )
        )
    return findings


def _controllers(snap):
    findings = []
    for deployment in snap["controllers"]:
        available = condition(deployment, "Available") or {}
        if available.get("status") == "True":
            continue
        where = f"{(deployment.get('metadata') or {}).get('namespace')}/{name_of(deployment)}"
        findings.append(
            Finding(
                "OLMv1ControllerUnavailable",
                f"Deployment {where} of OLM v1 is not available ({available.get('reason')}: {available.get('message') or ''}; "
                f"{status(deployment).get('availableReplicas') or 0} of {spec(deployment).get('replicas', 1)} replicas available)",
                "check the pods of that Deployment: without operator-controller nothing installs, without catalogd no catalog is served",
                [f"Deployment/{where}"],
            )
        )
    return findings


def _lag(obj):
    """``(generation, newest observedGeneration of its conditions)`` when the controller has not acted on the
    object's current generation, else None."""
    generation = (obj.get("metadata") or {}).get("generation")
    observed = [c.get("observedGeneration") for c in status(obj).get("conditions") or () if isinstance(c.get("observedGeneration"), int)]
    if not isinstance(generation, int) or not observed or max(observed) >= generation:
        return None
    return generation, max(observed)


def _unprocessed(snap):
    """A controller that is down leaves no trace where the testbed (or a cluster) runs it outside a Deployment: its
    objects' conditions stay at an older generation. Right after a change that is normal for a moment."""
    findings = []
    lagging = [("operator-controller", "ClusterExtension", snap["extension"])]
    lagging += [("catalogd", "ClusterCatalog", c) for c in snap["clustercatalogs"]]
    for controller, kind, obj in lagging:
        lag = _lag(obj)
        if lag:
            findings.append(
                Finding(
                    "OLMv1ControllerUnavailable",
                    f"{controller} has not acted on generation {lag[0]} of {kind} {name_of(obj)} (its conditions are of generation {lag[1]})",
                    f"if that lasts more than a few seconds, {controller} is not running or not keeping up: check it (its pods and logs in OLM v1's namespace)",
                    [f"{kind}/{name_of(obj)}"],
                )
            )
    return findings


CHECKS = (_extension, _service_account, _catalogs, admission_rejections, stuck_pods, _controllers, _unprocessed)


def diagnose(snapshot):
    """Every ``Finding`` of the ``CHECKS`` for ``snapshot`` (missing lists count as empty), in table order."""
    snap = dict(snapshot)
    for key in SNAPSHOT_KEYS:
        snap[key] = list(snap.get(key) or [])
    snap["workload_deployments"] = [name_of(d) for d in snap["deployments"]]
    findings = []
    for check in CHECKS:
        findings.extend(check(snap))
    return findings
