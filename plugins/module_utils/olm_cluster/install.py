# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_install module: install OLM v0 from its release manifests, as upstream's install.sh does.

Steps: detect OpenShift (a no-op there); read ``crds.yaml`` and ``olm.yaml`` (a directory, or a download); classify
what is already installed and refuse to install a second OLM over a foreign one; read which namespaces exist and
which kinds the cluster serves, and let ``olm/manifests.py`` decide every step (``plan_steps``) before the first
write; then run them: server-side apply the CRDs and watch until they are Established, server-side apply the rest
in order, optionally watch the Deployments and CSVs until they are ready. Check mode runs the same steps as dry runs
(without the waits). The rules are pure code in ``olm/manifests.py``; this file only does I/O through the k8s
adapter and ``ansible.module_utils.urls``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.urls import open_url

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import FIELD_MANAGER, apply, detect_openshift
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, KindNotFoundError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object, to_dict
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source, observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import manifests as mf
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import POD_FAILURES, first_problem

DOWNLOAD_TIMEOUT = 60


# ------------------------------------------------------------------------------------------------ reading


def _read_file(path):
    try:
        size = os.path.getsize(path)
        if size > mf.MAX_MANIFEST_BYTES:
            raise mf.ManifestError(f"{path} is larger than {mf.MAX_MANIFEST_BYTES} bytes")
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise mf.ManifestError(f"{path} does not exist (manifests_dir must contain {' and '.join(mf.MANIFEST_FILES)})") from None
    except OSError as exc:
        raise mf.ManifestError(f"cannot read {path}: {exc}") from None


def download(url, opener=open_url):
    """The body of ``url`` (bytes), at most ``MAX_MANIFEST_BYTES``; ManifestError on any failure."""
    try:
        response = opener(
            url,
            timeout=DOWNLOAD_TIMEOUT,
            validate_certs=True,
            follow_redirects="safe",
            http_agent="kubeforge.operators olm_install",
            use_netrc=False,
        )
        final = response.geturl() if hasattr(response, "geturl") else url
        if url.lower().startswith("https://") and not str(final).lower().startswith("https://"):
            raise mf.ManifestError(f"{url} redirected to a non-HTTPS location ({excerpt(final)})")
        body = response.read(mf.MAX_MANIFEST_BYTES + 1)
    except mf.ManifestError:
        raise
    except Exception as exc:  # HTTPError, URLError, SSL and socket errors
        code = getattr(exc, "code", None)
        reason = f"HTTP {code}" if code else str(getattr(exc, "reason", None) or exc)
        raise mf.ManifestError(f"Failed to download {url}: {excerpt(reason)}") from None
    if len(body) > mf.MAX_MANIFEST_BYTES:
        raise mf.ManifestError(f"{url} is larger than {mf.MAX_MANIFEST_BYTES} bytes")
    return body


def read_manifests(params, opener=open_url):
    """``(texts, sources, version)``: the two manifest files by name, where they came from, the requested version."""
    version = params.get("version")
    if version is not None:
        mf.check_version(version)
    if params.get("manifests_dir"):
        base = params["manifests_dir"]
        sources = {name: os.path.join(base, name) for name in mf.MANIFEST_FILES}
        texts = {name: _read_file(path) for name, path in sources.items()}
    else:
        version = version or mf.DEFAULT_VERSION
        sources = mf.manifest_urls(params.get("manifests_url") or mf.DEFAULT_MANIFESTS_URL, version)
        texts = {name: download(url, opener) for name, url in sources.items()}
    return texts, sources, version


# ------------------------------------------------------------------------------------------------ cluster reads


def _same_name_elsewhere(client, resource, refs):
    out = []
    for ref in refs:
        try:
            listing = to_dict(client.get(resource, field_selector=f"metadata.name={ref.name}"))
        except Exception:  # only used to enrich a message
            continue
        for item in listing.get("items") or []:
            meta = item.get("metadata") or {}
            if meta.get("namespace") != ref.namespace:
                out.append(mf.Ref(ref.api_version, ref.kind, meta.get("namespace"), meta.get("name")))
    return out


# ------------------------------------------------------------------------------------------------ install


class _Run:
    """State of one olm_install run (for partial results on failure)."""

    def __init__(self, module, base, deadline):
        self.client = module.client
        self.base = base
        self.deadline = deadline
        self.objects = []

    @property
    def changed(self):
        return any(o["action"] != "unchanged" for o in self.objects)

    def partial(self):
        """The result so far: the facts known before applying, ``changed`` and the objects applied."""
        return dict(self.base, changed=self.changed, objects=list(self.objects))

    def fail(self, message):
        return K8sError(message, result=self.partial())

    def record(self, ref, action, validated=True):
        self.objects.append(
            {"api_version": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name, "action": action, "validated": validated}
        )

    def apply(self, obj, resource):
        ref = mf.object_ref(obj)
        try:
            changed, before, after = apply(self.client, resource, obj, force_conflicts=True)
        except K8sError as exc:
            exc.result.update(self.partial())
            raise
        self.record(ref, "created" if before is None else ("updated" if changed else "unchanged"))
        return after

    def wait_rollout(self, deployment):
        """Watch a Deployment of the manifests and its pods until it is rolled out; fail on ProgressDeadlineExceeded,
        or at once when a pod will not start by itself (an image that cannot be pulled - a cluster without a mirror
        for it -, a crash loop), with the pod's reason, instead of at the deadline."""
        ref = mf.object_ref(deployment)
        labels = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        sources = [Source("deployment", ref.api_version, ref.kind, ref.namespace, ref.name)]
        if labels:
            selector = ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
            sources.append(Source("pods", "v1", "Pod", ref.namespace, label_selector=selector, optional=True))

        def on_change(snapshot):
            obj = snapshot["deployment"].get(ref.name)
            verdict, message = mf.deployment_verdict(obj)
            if verdict == mf.READY:
                return obj
            if verdict == mf.FAILED:
                raise self.fail(f"{mf.ref_text(ref)} failed: {message}")
            for pod in (snapshot.get("pods") or {}).values():
                problem = first_problem(POD_FAILURES, pod)
                if problem is not None:
                    raise self.fail(f"{mf.ref_text(ref)} does not roll out ({message}): {problem.message}")
            return None

        remaining = self.deadline.remaining(floor=1.0)
        try:
            return observe(self.client, sources, on_change, remaining, on_timeout=lambda snapshot: {"last_object": snapshot["deployment"].get(ref.name)})
        except ResourceTimeoutError as exc:
            last = (exc.result or {}).get("last_object")
            err = self.fail(f"Timed out waiting for {mf.ref_text(ref)}: {mf.deployment_verdict(last)[1]}")
            err.result["last_object"] = last
            raise err from None

    def wait(self, ref, resource=None):
        """Watch ``ref`` until its verdict settles; fail on ``failed`` or at the deadline."""
        verdict = mf.VERDICTS[ref.kind]
        remaining = self.deadline.remaining(floor=1.0)
        try:
            obj = watch_until(self.client, ref.api_version, ref.kind, ref.name, ref.namespace, mf.settled(ref.kind), remaining, resource=resource)
        except ResourceTimeoutError as exc:
            message = verdict(exc.last_object)[1]
            err = self.fail(f"Timed out waiting for {mf.ref_text(ref)}: {message}")
            err.result["last_object"] = exc.last_object
            raise err from None
        status, message = verdict(obj)
        if status == mf.FAILED:
            raise self.fail(f"{mf.ref_text(ref)} failed: {message}")
        return obj


def _served_kinds(cluster, manifests, existing_crds, check_mode):
    """The ``(apiVersion, kind)`` pairs of the manifests' objects the cluster serves now. A kind the manifests' own
    CRDs define is looked up in check mode only, and only when its CRD exists (a real run applies the CRDs first)."""
    new_kinds = mf.crd_kinds(manifests.crds)
    served = set()
    for api_version, kind in dict.fromkeys((ref.api_version, ref.kind) for ref in map(mf.object_ref, manifests.objects)):
        crd = new_kinds.get((mf.api_group(api_version), kind))
        if crd is not None and (not check_mode or existing_crds.get(crd) is None):
            continue
        try:
            cluster.resource(kind, api_version)
        except KindNotFoundError:
            continue
        served.add((api_version, kind))
    return served


def execute(module, opener=open_url):
    """Entry point of the olm_install module (see the module documentation for the result)."""
    p = module.params
    client = module.client
    evidence = detect_openshift(client)
    if evidence:
        return {"changed": False, "openshift": True, "openshift_evidence": evidence}

    texts, sources, version = read_manifests(p, opener)
    plan = mf.plan_install(
        texts[mf.CRDS_FILE],
        texts[mf.OLM_FILE],
        catalog_source=p["catalog_source"],
        sources=tuple(sources[name] for name in mf.MANIFEST_FILES),
    )
    result = {
        "openshift": False,
        "version": version or plan.version,
        "image": plan.image,
        "source": dict(sources),
        "crds": [mf.object_ref(c).name for c in plan.crds],
        "namespaces": list(plan.namespaces),
        "left_out": [mf.ref_text(mf.object_ref(o)) for o in plan.skipped],
    }
    # Warned at once (not returned in the result): they must reach the user on failures too.
    for warning in plan.warnings:
        module.warn(warning)

    crd_resource = module.cluster.resource(mf.CRD_KIND, mf.CRD_API_VERSION)
    deployment_resource = module.cluster.resource("Deployment", "apps/v1")
    existing_crds = {mf.object_ref(c).name: get_object(client, crd_resource, mf.object_ref(c).name) for c in plan.crds}
    existing_deployments = {ref: get_object(client, deployment_resource, ref.name, ref.namespace) for ref in plan.deployments}
    elsewhere = ()
    if not any(existing_deployments.values()) and any(existing_crds.values()):
        elsewhere = _same_name_elsewhere(client, deployment_resource, plan.deployments)
    previous, message = mf.assess_existing(plan, existing_crds, existing_deployments, FIELD_MANAGER, elsewhere)
    result["previous_install"] = previous
    if previous == mf.PREVIOUS_FOREIGN:
        if not p["force"]:
            raise K8sError(f"{message}. Not installing a second OLM; set force=true to apply the manifests anyway.", result=dict(result, changed=False))
        module.warn(f"{message}; applying the manifests anyway (force=true)")

    deadline = Deadline(p["wait_timeout"])
    run = _Run(module, result, deadline)
    namespace_resource = module.cluster.resource("Namespace", "v1")
    existing_namespaces = {ns for ns in plan.namespaces if get_object(client, namespace_resource, ns) is not None}
    served = _served_kinds(module.cluster, plan, existing_crds, module.check_mode)
    try:
        steps = mf.plan_steps(plan, existing_namespaces, served, module.check_mode, p["wait"])
    except mf.ManifestError as exc:  # refused before the first write
        exc.result.update(run.partial())
        raise
    for step in steps:
        if step.action == mf.APPLY:
            try:
                resource = module.cluster.resource(step.ref.kind, step.ref.api_version)
            except KindNotFoundError:  # a kind of the manifests' CRDs, not served once they are Established
                raise run.fail(f"{mf.ref_text(step.ref)}: the cluster does not serve {step.ref.api_version} {step.ref.kind}") from None
            run.apply(step.obj, resource)
        elif step.action == mf.PREDICT:
            run.record(step.ref, "created", validated=False)
        elif step.action == mf.ROLLOUT:
            run.wait_rollout(step.obj)
        else:  # ESTABLISHED, SUCCEEDED
            run.wait(step.ref, crd_resource if step.action == mf.ESTABLISHED else None)
    result = run.partial()
    result["duration"] = deadline.elapsed()
    result["created"] = [_text(o) for o in run.objects if o["action"] == "created"]
    result["updated"] = [_text(o) for o in run.objects if o["action"] == "updated"]
    return result


def _text(entry):
    return mf.ref_text(mf.Ref(entry["api_version"], entry["kind"], entry["namespace"], entry["name"]))
