# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OLM v0's release manifests (``crds.yaml`` + ``olm.yaml``) and how to read an installation (pure).

What upstream's ``install.sh`` does, as data: the CRDs first (``kubectl apply -f crds.yaml``, then ``kubectl wait
--for=condition=Established``), then the rest of ``olm.yaml`` in file order, then ``rollout status`` of the
Deployments and a wait for the ``packageserver`` CSV to reach ``Succeeded``. Here:

- ``plan_install`` splits both multi-document streams, checks every document, moves CRDs first and Namespaces
  right after them (the file order is kept otherwise), drops the default CatalogSource on request and lists the
  namespaces, Deployments and CSVs to wait for, plus the OLM image and version;
- ``openshift_evidence`` tells OpenShift from a cluster that merely has OpenShift-named CRDs, from APIService
  objects (an aggregated API served by a Service, not a ``Local`` CRD-backed group);
- ``assess_existing`` classifies what is already on the cluster before anything is applied;
- ``plan_steps`` decides every step of a run (apply, check mode's predictions, waits) from what the cluster has
  before the first write, so check mode runs the same steps as a real run (as dry runs) and a kind the cluster
  does not serve is refused before anything is written;
- ``crd_verdict``, ``deployment_verdict`` and ``csv_verdict`` are ``(status, message)`` readings for watch waits.

No Ansible or kubernetes imports: everything here is testable with literal objects and the real manifests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import namedtuple
from urllib.parse import urlsplit

try:
    import yaml

    try:
        _Loader = yaml.CSafeLoader
    except AttributeError:  # PyYAML without libyaml
        _Loader = yaml.SafeLoader
    YAML_IMPORT_ERROR = None
except ImportError:
    import traceback

    yaml = None
    _Loader = None
    YAML_IMPORT_ERROR = traceback.format_exc()

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import redact_userinfo
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import CSV_RETRIED_REASONS

DEFAULT_VERSION = "v0.46.0"
# Base of upstream's release downloads; files are fetched from <base>/<version>/<file>, as install.sh does.
DEFAULT_MANIFESTS_URL = "https://github.com/operator-framework/operator-lifecycle-manager/releases/download"
CRDS_FILE = "crds.yaml"
OLM_FILE = "olm.yaml"
MANIFEST_FILES = (CRDS_FILE, OLM_FILE)
# Largest manifest file accepted (v0.46.0's crds.yaml is 0.6 MiB).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

CRD_KIND = "CustomResourceDefinition"
CRD_API_VERSION = "apiextensions.k8s.io/v1"
OLM_GROUP = "operators.coreos.com"
OLMCONFIG_CRD = "olmconfigs.operators.coreos.com"
CATALOG_SOURCE_KIND = "CatalogSource"
CSV_KIND = "ClusterServiceVersion"
OLM_OPERATOR_DEPLOYMENT = "olm-operator"

# Aggregated APIs of openshift-apiserver; on OpenShift their APIService objects name a Service.

# Order within olm.yaml: file order, except that namespaces come first (everything else may live in them).
_EARLY_KINDS = {"Namespace": 0}
_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]+)?$")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

Ref = namedtuple("Ref", ["api_version", "kind", "namespace", "name"])


class ManifestError(KubeforgeError):
    """The OLM manifests are missing, malformed or inconsistent."""


OLMManifests = namedtuple(
    "OLMManifests",
    [
        "crds",  # CRD documents (both files), in file order
        "objects",  # every other document to apply, in apply order
        "skipped",  # documents left out on request (the default CatalogSource)
        "namespaces",  # namespace names the objects live in (Namespace objects and metadata.namespace values)
        "deployments",  # Refs of the Deployments to wait for
        "csvs",  # Refs of the ClusterServiceVersions to wait for
        "image",  # image of the olm-operator Deployment, or None
        "version",  # tag of that image, or None when it is pinned by digest
        "warnings",
    ],
)


# ------------------------------------------------------------------------------------------------ sources


def check_version(version):
    """``version`` if it is a release tag such as ``v0.46.0`` (it becomes part of a URL path); else ManifestError."""
    if not isinstance(version, str) or not _VERSION.match(version):
        raise ManifestError(f"version {excerpt(version)!r} is not an OLM release tag such as {DEFAULT_VERSION}")
    return version


def check_url(url):
    """``url`` if it is an ``https://`` URL, or ``http://`` to a loopback host (a local mirror); else ManifestError.

    The manifests grant cluster-admin to OLM's service account: fetching them over plain HTTP from the network would
    let anyone on the path rewrite them.
    """
    if not isinstance(url, str):
        raise ManifestError("manifests_url must be a string")
    shown = excerpt(redact_userinfo(url))  # messages and results never carry a password written into the URL
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise ManifestError(f"manifests_url {shown!r} is not a valid URL") from None
    if parts.username is not None or parts.password is not None:
        raise ManifestError(f"manifests_url {shown!r} carries credentials: the URL is returned in results; use a mirror that needs none")
    if not host:
        raise ManifestError(f"manifests_url {shown!r} must be an https:// URL")
    if parts.scheme == "https":
        return url
    if parts.scheme == "http":
        if host in _LOOPBACK_HOSTS:
            return url
        raise ManifestError(f"manifests_url {shown!r} uses plain HTTP: only https:// (or http:// to a loopback address) is allowed")
    raise ManifestError(f"manifests_url {shown!r} must be an https:// URL")


def manifest_urls(base_url, version):
    """``{file: url}`` for ``crds.yaml`` and ``olm.yaml`` of ``version`` below ``base_url`` (install.sh's layout)."""
    base = check_url(base_url).rstrip("/")
    version = check_version(version)
    return {name: f"{base}/{version}/{name}" for name in MANIFEST_FILES}


# ------------------------------------------------------------------------------------------------ parsing


def object_ref(obj):
    """``Ref(api_version, kind, namespace, name)`` of a manifest document."""
    metadata = obj.get("metadata") or {}
    return Ref(obj.get("apiVersion"), obj.get("kind"), metadata.get("namespace"), metadata.get("name"))


def ref_text(ref):
    """``Kind namespace/name`` (``Kind name`` for cluster-scoped objects)."""
    return f"{ref.kind} {ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind} {ref.name}"


def load_documents(text, source):
    """The non-empty documents of a multi-document YAML stream, each checked to be a Kubernetes object.

    ``kind: List`` documents are expanded. Raises ``ManifestError`` naming ``source`` and the document number.
    """
    if yaml is None:
        raise ManifestError("PyYAML is required to read OLM manifests")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ManifestError(f"{source}: not UTF-8 text ({exc})") from None
    try:
        raw = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        raise ManifestError(f"{source}: invalid YAML: {excerpt(str(exc), 500)}") from None
    docs = []
    for index, doc in enumerate(raw, 1):
        if doc is None:
            continue
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            items = doc["items"]
        else:
            items = [doc]
        for item in items:
            _check_object(item, source, index)
            docs.append(item)
    return docs


def _check_object(doc, source, index):
    where = f"{source}, document {index}"
    if not isinstance(doc, dict):
        raise ManifestError(f"{where}: not a mapping but {type(doc).__name__}")
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise ManifestError(f"{where}: {field} is missing")
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise ManifestError(f"{where} ({doc['kind']}): metadata.name is missing")
    if metadata.get("generateName"):
        raise ManifestError(f"{where} ({doc['kind']} {metadata['name']}): generateName cannot be applied idempotently")


def image_tag(image):
    """The tag of an image reference, or None when it has none or is pinned by digest (``...@sha256:...``)."""
    if not isinstance(image, str) or "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _containers(deployment):
    template = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [c for c in template.get("containers") or [] if isinstance(c, dict)]


def olm_image(objects):
    """The image of the ``olm-operator`` Deployment's ``olm-operator`` container (first container otherwise)."""
    for obj in objects:
        if obj.get("kind") == "Deployment" and object_ref(obj).name == OLM_OPERATOR_DEPLOYMENT:
            containers = _containers(obj)
            named = [c for c in containers if c.get("name") == OLM_OPERATOR_DEPLOYMENT] or containers
            return named[0].get("image") if named else None
    return None


def plan_install(crds_text, olm_text, catalog_source=True, sources=MANIFEST_FILES):
    """Read ``crds.yaml`` and ``olm.yaml`` (text) into an ``OLMManifests`` (see the module docstring)."""
    crd_docs = load_documents(crds_text, sources[0])
    olm_docs = load_documents(olm_text, sources[1])
    crds, others, seen = [], [], {}
    for source, docs in ((sources[0], crd_docs), (sources[1], olm_docs)):
        for doc in docs:
            ref = object_ref(doc)
            key = (ref.api_version.split("/")[0] if "/" in ref.api_version else "", ref.kind, ref.namespace, ref.name)
            if key in seen:
                raise ManifestError(f"{ref_text(ref)} is defined twice ({seen[key]} and {source})")
            seen[key] = source
            (crds if ref.kind == CRD_KIND else others).append(doc)
    if not crds:
        raise ManifestError(f"{sources[0]} defines no CustomResourceDefinition")
    if not any(d.get("kind") == "Deployment" for d in others):
        raise ManifestError(f"{sources[1]} defines no Deployment: these are not OLM's manifests")
    for crd in crds:
        if crd.get("apiVersion") != CRD_API_VERSION:
            raise ManifestError(f"CustomResourceDefinition {object_ref(crd).name} uses {crd.get('apiVersion')}, not {CRD_API_VERSION}")

    kept, skipped = [], []
    for doc in others:
        (skipped if not catalog_source and doc.get("kind") == CATALOG_SOURCE_KIND else kept).append(doc)
    order = {id(doc): index for index, doc in enumerate(kept)}
    kept.sort(key=lambda doc: (_EARLY_KINDS.get(doc.get("kind"), 1), order[id(doc)]))

    namespaces = []
    for doc in kept:
        ref = object_ref(doc)
        name = ref.name if ref.kind == "Namespace" and ref.api_version == "v1" else ref.namespace
        if name and name not in namespaces:
            namespaces.append(name)
    deployments = [object_ref(d) for d in kept if d.get("kind") == "Deployment"]
    csvs = [object_ref(d) for d in kept if d.get("kind") == CSV_KIND]

    crd_names = {object_ref(c).name for c in crds}
    warnings = []
    if OLMCONFIG_CRD not in crd_names and any(object_ref(c).name.endswith("." + OLM_GROUP) for c in crds):
        warnings.append(
            f"{sources[0]} defines no OLMConfig CRD ({OLMCONFIG_CRD}): the olm-operator of recent OLM releases waits for it and never "
            "becomes ready without it (the quickstart files committed in OLM's source tree lack it)"
        )
    image = olm_image(kept)
    return OLMManifests(crds, kept, skipped, namespaces, deployments, csvs, image, image_tag(image), warnings)


# ------------------------------------------------------------------------------------------------ the cluster


def managed_by(obj, field_manager):
    """True when ``field_manager`` owns fields of ``obj`` (``metadata.managedFields``)."""
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return any(isinstance(e, dict) and e.get("manager") == field_manager for e in entries)


PREVIOUS_NONE = "none"
PREVIOUS_PARTIAL = "partial"
PREVIOUS_INSTALLED = "installed"
PREVIOUS_FOREIGN = "foreign"


def assess_existing(manifests, existing_crds, existing_deployments, field_manager, elsewhere=()):
    """``(state, message)``: what of OLM is on the cluster before anything is applied.

    ``existing_crds``: CRD name -> object or None; ``existing_deployments``: Deployment ``Ref`` -> object or None;
    ``elsewhere``: ``Ref``s of Deployments with the same names in other namespaces.

    - ``none``: none of the CRDs and none of the Deployments exist;
    - ``installed``: every Deployment exists (the apply then updates what differs);
    - ``partial``: some Deployments exist, or CRDs exist that ``field_manager`` applied (an interrupted run);
    - ``foreign``: OLM's CRDs exist but none of its Deployments, and the CRDs were not applied by us: OLM was
      installed some other way (operators running outside the cluster or in other namespaces, another tool).
      Installing over it would run a second OLM, so the caller refuses unless forced.
    """
    crds_found = sorted(name for name, obj in existing_crds.items() if obj is not None)
    deployments_found = [ref for ref in manifests.deployments if existing_deployments.get(ref) is not None]
    missing = [ref_text(ref) for ref in manifests.deployments if existing_deployments.get(ref) is None]
    if not crds_found and not deployments_found:
        return PREVIOUS_NONE, "OLM is not installed"
    if deployments_found and not missing:
        return PREVIOUS_INSTALLED, "OLM's Deployments exist: " + ", ".join(ref_text(r) for r in deployments_found)
    if deployments_found or any(managed_by(existing_crds[name], field_manager) for name in crds_found):
        return PREVIOUS_PARTIAL, f"OLM is partly installed; missing: {', '.join(missing) or 'nothing'}"
    message = (
        f"OLM's CRDs exist ({', '.join(crds_found)}) but its Deployments ({', '.join(missing)}) were not found, and the CRDs were not "
        f"applied by {field_manager}: OLM seems to be installed in another way"
    )
    if elsewhere:
        message += " (found " + ", ".join(ref_text(r) for r in elsewhere) + ")"
    return PREVIOUS_FOREIGN, message


# ------------------------------------------------------------------------------------------------ waiting

READY = "ready"
WAITING = "waiting"
FAILED = "failed"


def _conditions(obj):
    return [c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def _condition(obj, cond_type):
    for cond in _conditions(obj):
        if cond.get("type") == cond_type:
            return cond
    return None


def crd_verdict(obj):
    """A CRD is ready when ``Established=True``; ``NamesAccepted=False`` (a name clash) fails."""
    if obj is None:
        return WAITING, "the CRD does not exist"
    names = _condition(obj, "NamesAccepted")
    if names and names.get("status") == "False":
        return FAILED, f"NamesAccepted=False: {names.get('reason')}: {names.get('message')}"
    established = _condition(obj, "Established")
    if established and established.get("status") == "True":
        return READY, "Established"
    return WAITING, "not Established yet"


def deployment_verdict(obj):
    """A Deployment is ready when its rollout is complete (``kubectl rollout status``'s rule, Available replicas).

    ``Progressing=False`` with ``ProgressDeadlineExceeded`` fails.
    """
    if obj is None:
        return WAITING, "the Deployment does not exist"
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation") or 0
    progressing = _condition(obj, "Progressing")
    if progressing and progressing.get("status") == "False" and progressing.get("reason") == "ProgressDeadlineExceeded":
        return FAILED, f"ProgressDeadlineExceeded: {progressing.get('message')}"
    replicas = spec.get("replicas", 1)
    updated = st.get("updatedReplicas") or 0
    available = st.get("availableReplicas") or 0
    total = st.get("replicas") or 0
    summary = f"{available}/{replicas} available, {updated} updated"
    if (st.get("observedGeneration") or 0) < generation:
        return WAITING, f"rollout not observed yet ({summary})"
    if updated < replicas or total > updated or available < updated:
        return WAITING, f"rollout in progress ({summary})"
    return READY, summary


def csv_verdict(obj):
    """A ClusterServiceVersion is ready in phase ``Succeeded``; ``Failed`` for a reason OLM does not retry fails
    (``status.CSV_RETRIED_REASONS``: those are waited for, like every other phase)."""
    if obj is None:
        return WAITING, "the ClusterServiceVersion does not exist"
    st = obj.get("status") or {}
    if st.get("phase") == "Succeeded":
        return READY, "Succeeded"
    if st.get("phase") == "Failed" and st.get("reason") not in CSV_RETRIED_REASONS:
        return FAILED, ": ".join(str(x) for x in ("Failed", st.get("reason"), st.get("message")) if x)
    detail = ": ".join(str(x) for x in (st.get("phase") or "no phase yet", st.get("reason"), st.get("message")) if x)
    return WAITING, detail


VERDICTS = {CRD_KIND: crd_verdict, "Deployment": deployment_verdict, CSV_KIND: csv_verdict}


def settled(kind):
    """Watch predicate for ``kind``: its verdict is no longer ``waiting``."""
    verdict = VERDICTS[kind]
    return lambda obj: verdict(obj)[0] != WAITING


# ------------------------------------------------------------------------------------------------ the run's steps

APPLY = "apply"  # server-side apply (a dry run in check mode)
PREDICT = "predict"  # check mode: reported as created, unvalidated (its namespace or its kind comes with this install)
ESTABLISHED = "established"  # wait until a CRD is Established
ROLLOUT = "rollout"  # wait until a Deployment has rolled out (its pods watched for failures)
SUCCEEDED = "succeeded"  # wait until a CSV has Succeeded

Step = namedtuple("Step", ["action", "ref", "obj"])


def api_group(api_version):
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def crd_kinds(crds):
    """``{(group, kind): CRD name}`` of the kinds the CRDs ``crds`` define."""
    return {((crd.get("spec") or {}).get("group"), ((crd.get("spec") or {}).get("names") or {}).get("kind")): object_ref(crd).name for crd in crds}


def plan_steps(manifests, namespaces, served, check_mode, wait):
    """Every step of one olm_install run, in order, decided before the first write (a list of ``Step``).

    ``manifests``: ``plan_install``'s ``OLMManifests``; ``namespaces``: the names of the namespaces that exist;
    ``served``: the ``(apiVersion, kind)`` pairs the cluster serves now. CRDs first, Established before anything else
    (in a real run); the other objects in order: in check mode an object can only be dry-run when its namespace and
    its kind exist already, the others are predicted. A kind neither served nor defined by the manifests' CRDs is
    refused here (``ManifestError``), before anything is applied. With ``wait`` (a real run), the Deployments roll
    out, then the CSVs succeed.
    """
    new_kinds = crd_kinds(manifests.crds)
    steps = [Step(APPLY, object_ref(crd), crd) for crd in manifests.crds]
    if not check_mode:
        steps.extend(Step(ESTABLISHED, object_ref(crd), crd) for crd in manifests.crds)
    for obj in manifests.objects:
        ref = object_ref(obj)
        kind_served = (ref.api_version, ref.kind) in served
        if not kind_served and (api_group(ref.api_version), ref.kind) not in new_kinds:
            raise ManifestError(f"{ref_text(ref)}: the cluster does not serve {ref.api_version} {ref.kind}")
        if check_mode and (not kind_served or (ref.namespace and ref.namespace not in namespaces)):
            steps.append(Step(PREDICT, ref, obj))
        else:
            steps.append(Step(APPLY, ref, obj))
    if wait and not check_mode:
        by_ref = {object_ref(obj): obj for obj in manifests.objects}
        steps.extend(Step(ROLLOUT, ref, by_ref[ref]) for ref in manifests.deployments)
        steps.extend(Step(SUCCEEDED, ref, by_ref.get(ref)) for ref in manifests.csvs)
    return steps
