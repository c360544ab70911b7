# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of olm_bundle_run: serve a bundle directory as a catalog, install or upgrade it, clean up.

``present``: read the bundle; find what this module installed before (a Subscription of the package from the
module's CatalogSource ``<package>-catalog``); decide the run before its first write (``core.plan_run``: refusals,
install or upgrade, the Subscription's parameters; ``core.plan_registry``: the ConfigMaps and registry pod); serve
the catalog - with ``serve=pod`` the FBC goes into ConfigMaps and a registry pod, and the CatalogSource points at the
pod's IP once it is Ready; with ``serve=address`` the CatalogSource points at an existing gRPC server - then hand
over to ``olm_cluster.operator.install`` (Manual approval, the bundle's CSV as ``startingCSV``, version pinned), which
approves only the InstallPlan of that CSV.
``absent``: ``olm_cluster.operator.uninstall`` (operator-sdk's cleanup order), then the CatalogSource and its
registry objects. The rules are pure code in ``olm/bundle_run.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import shutil
import tempfile
import time
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_fs
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import apply, ensure_namespace
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import (
    create_object,
    delete_object,
    normalize,
    patch_object,
    public,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent as is_absent
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import bundle_run as core
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import installmode
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import operator as olm
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import metadata, name_of, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.operator import (
    V1ALPHA1,
    Cluster,
    ensure_operator_group,
    ensure_subscription,
    install,
    installed_csv,
    uninstall,
)


def find_subscription(cluster, namespace, package):
    """The namespace's Subscription of ``package`` (OLM allows one), or None."""
    subs = [s for s in cluster.list("Subscription", namespace) if spec(s).get("name") == package]
    if len(subs) > 1:
        names = ", ".join(sorted(name_of(s) for s in subs))
        raise core.BundleRunError(f"namespace {namespace} has {len(subs)} Subscriptions of package {package} ({names})")
    return subs[0] if subs else None


def _annotations(obj):
    return metadata(obj).get("annotations") or {}


def _registry_objects(cluster, namespace, catalog):
    """Our pods and ConfigMaps of ``catalog`` (every digest)."""
    selector = core.selector(catalog)
    return (
        cluster.list("Pod", namespace, "v1", label_selector=selector),
        cluster.list("ConfigMap", namespace, "v1", label_selector=selector),
    )


def _delete_all(cluster, kind, names, namespace):
    resource = cluster.resource(kind, "v1")
    for name in names:
        delete_object(cluster.client, resource, name, namespace)
    return list(names)


def remove_stale_registry(cluster, namespace, catalog, pod_name=None, cm_names=()):
    """Delete our registry pods and ConfigMaps of ``catalog`` other than the ones serving now (all, by default)."""
    pods, cms = _registry_objects(cluster, namespace, catalog)
    removed = {}
    stale_pods = core.stale_objects(pods, [pod_name] if pod_name else [])
    stale_cms = core.stale_objects(cms, cm_names)
    if stale_pods:
        removed["registry_pods"] = _delete_all(cluster, "Pod", stale_pods, namespace)
    if stale_cms:
        removed["config_maps"] = _delete_all(cluster, "ConfigMap", stale_cms, namespace)
    return removed


def read_served_catalog(cluster, namespace, catalog, source):
    """The FBC the registry pod serves now (from its ConfigMaps), or None when it cannot be read back intact."""
    digest = _annotations(source).get(core.ANNOTATION_DIGEST)
    if not digest:
        return None
    selector = f"{core.selector(catalog)},{core.DIGEST_LABEL}={core.short_digest(digest)}"
    cms = cluster.list("ConfigMap", namespace, "v1", label_selector=selector)

    def index(cm):
        tail = name_of(cm).rsplit("-", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    texts = [(cm.get("data") or {}).get(core.CONFIGMAP_KEY) or "" for cm in sorted(cms, key=index)]
    if not texts:
        return None
    cfg = core.load_documents(texts)
    # A ConfigMap lost or edited: start from the bundle alone rather than serve a partial catalog.
    return cfg if core.catalog_digest(core.fbc_documents(cfg)) == digest else None


# A container that keeps failing its readiness probe changes nothing in the pod: the verdict is asked again after
# this long without a change, so that time alone can settle it.
RECHECK_SECONDS = 10


def _last_unhealthy(cluster, namespace, name):
    """The kubelet's last probe failure message about the pod (an ``Unhealthy`` Event), or None."""
    try:
        events = cluster.list("Event", namespace, "v1", field_selector=f"involvedObject.name={name},reason=Unhealthy")
    except Exception:  # noqa: BLE001 - a detail of the message only: Events may be unreadable
        return None
    events.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    return excerpt(events[-1].get("message") or "", 600) if events else None


def wait_registry_pod(cluster, namespace, name, timeout):
    """Watch the registry pod until it is Ready with an IP; raise at once when it cannot start, and when it has run
    NOT_READY_GRACE_SECONDS without passing its readiness probe."""
    resource = cluster.resource("Pod", "v1")

    def settled(pod):
        return core.registry_pod_verdict(pod, time.time())[0] != core.VERDICT_WAITING

    try:
        pod = watch_until(cluster.client, "v1", "Pod", name, namespace, settled, max(1, timeout), resource=resource, tick=RECHECK_SECONDS)
    except ResourceTimeoutError as exc:
        message = core.registry_pod_verdict(exc.last_object)[1] if exc.last_object else "it does not exist"
        raise core.BundleRunError(
            f"Timed out after {timeout}s waiting for the registry pod {namespace}/{name} to be Ready: {message}",
            result={"reason": "RegistryPodNotReady", "registry_pod": name},
        ) from None
    verdict, message = core.registry_pod_verdict(pod, time.time())
    if verdict == core.VERDICT_FAILED:
        if pod is not None:
            message = core.registry_pod_verdict(pod, time.time(), _last_unhealthy(cluster, namespace, name))[1]
        raise core.BundleRunError(message, result={"reason": "RegistryPodFailed", "registry_pod": name})
    return pod


def serve_address(cluster, params, bundle, catalog, source, ns_exists, check_mode):
    """Point the CatalogSource at ``catalog_address`` (an existing gRPC server that serves the bundle)."""
    ns = params["namespace"]
    previous = _annotations(source).get(core.ANNOTATION_INJECTED_BUNDLES)
    annotations = {core.ANNOTATION_INJECTED_BUNDLES: core.injected_bundles(previous=previous, bundle=bundle)}
    definition = core.catalog_source(catalog, ns, bundle.package, params["catalog_address"], annotations)
    served = {"address": params["catalog_address"], "registry_pod": None, "config_maps": [], "digest": None, "created": {}, "removed": {}}
    if not ns_exists:
        if check_mode:
            return dict(served, changed=True, before=None, after=definition, created={"catalog_source": catalog})
        ensure_namespace(cluster, ns)
    # the catalog is ours: force_conflicts takes back any field someone else changed
    changed, before, after = apply(cluster.client, cluster.resource("CatalogSource", V1ALPHA1), definition, force_conflicts=True)
    if source is None:
        served["created"]["catalog_source"] = catalog
    if ns_exists:  # registry objects of an earlier serve=pod run
        served["removed"] = remove_stale_registry(cluster, ns, catalog)
    return dict(served, changed=bool(changed or served["removed"]), before=before, after=after)


def serve_pod(cluster, params, bundle, run, source, ns_exists, check_mode, deadline, index=None):
    """Serve the catalog from ConfigMaps and a registry pod (``core.plan_registry``); point the CatalogSource at the pod
    once it is Ready. ``index``: an ``Index`` the first install adds the bundle to (later runs extend the catalog
    served, which holds it)."""
    ns, catalog = params["namespace"], run.catalog
    extending = source is not None and run.kind != core.INSTALL
    existing = read_served_catalog(cluster, ns, catalog, source) if extending else None
    owner = core.owner_reference(source) if source is not None else None
    cms, pod, annotations, digest = core.plan_registry(params, bundle, run, existing, _annotations(source) if extending else {}, owner, index)
    cm_names, pod_name = [name_of(cm) for cm in cms], name_of(pod)
    served = {"registry_pod": pod_name, "config_maps": cm_names, "digest": digest, "created": {}, "removed": {}}
    if not ns_exists:
        if check_mode:  # nothing can be dry-run in a namespace that does not exist yet
            predicted = core.catalog_source(catalog, ns, bundle.package, None, annotations)
            created = {"catalog_source": catalog, "config_maps": cm_names, "registry_pod": pod_name}
            return dict(served, changed=True, address=None, before=None, after=predicted, created=created)
        ensure_namespace(cluster, ns)

    cm_results = [create_object(cluster.client, cluster.resource("ConfigMap", "v1"), cm) for cm in cms]
    created_cms = [name for name, res in zip(cm_names, cm_results) if res.changed]
    pod_result = create_object(cluster.client, cluster.resource("Pod", "v1"), pod)
    if created_cms:
        served["created"]["config_maps"] = created_cms
    if pod_result.changed:
        served["created"]["registry_pod"] = pod_name

    if check_mode:
        # The pod's IP is known only once it runs: the dry run keeps the current address (none for a new catalog).
        ready = not pod_result.changed and core.registry_pod_verdict(pod_result.after)[0] == core.VERDICT_READY
        address = core.pod_address(pod_result.after) if ready else spec(source).get("address")
    else:
        address = core.pod_address(wait_registry_pod(cluster, ns, pod_name, deadline.remaining()))
    definition = core.catalog_source(catalog, ns, bundle.package, address, annotations)
    changed, before, after = apply(cluster.client, cluster.resource("CatalogSource", V1ALPHA1), definition, force_conflicts=True)
    if source is None:
        served["created"]["catalog_source"] = catalog
    if not check_mode:  # the CatalogSource owns its registry (for the garbage collector), also what a new one made
        ref = {"metadata": {"ownerReferences": [core.owner_reference(after)]}}
        for kind, res in [("ConfigMap", r) for r in cm_results] + [("Pod", pod_result)]:
            if not metadata(res.after).get("ownerReferences"):
                patch_object(cluster.client, cluster.resource(kind, "v1"), name_of(res.after), ref, ns)
    if not check_mode:  # the old pod goes only after the CatalogSource has moved to the new one
        served["removed"] = remove_stale_registry(cluster, ns, catalog, pod_name, cm_names)
    changed = bool(changed or served["created"] or served["removed"])
    return dict(served, changed=changed, address=address, before=before, after=after)


def predict_install(cluster, params, ns_exists):
    """Check mode before the CatalogSource exists: dry-run the OperatorGroup and Subscription install() would make."""
    ns, sub_name = params["namespace"], params["subscription_name"]
    wanted = olm.subscription_spec(params)
    created = {"subscription": sub_name}
    if ns_exists:
        og_created, group = ensure_operator_group(cluster, ns, params["install_modes"], params.get("target_namespaces"), ns)
        if og_created:
            created["operator_group"] = name_of(group)
        after = ensure_subscription(cluster, ns, sub_name, wanted, None)[2]
    else:
        installmode.choose_targets(params["install_modes"], ns, params.get("target_namespaces"))
        created.update(namespace=ns, operator_group=ns)
        after = {"apiVersion": V1ALPHA1, "kind": "Subscription", "metadata": {"name": sub_name, "namespace": ns}, "spec": wanted}
    return {
        "changed": True,
        "subscription": after,
        "csv": None,
        "installed_csv": None,
        "current_csv": None,
        "version": None,
        "phase": None,
        "approved_install_plans": [],
        "created": created,
        "diff": {"before": {}, "after": {"subscription": after}},
    }


# An index image pulled for --index-image: its reference, digest and DeclarativeConfig.
Index = namedtuple("Index", ["ref", "digest", "cfg"])


def observe_run(cluster, params, bundle):
    """What ``present`` reads before its first write (``core.Observed``)."""
    ns = params["namespace"]
    if cluster.get("Namespace", ns, None, "v1") is None:
        return core.Observed(False, None, None, None)
    sub = find_subscription(cluster, ns, bundle.package)
    return core.Observed(True, cluster.get("CatalogSource", core.catalog_name(bundle.package), ns), sub, installed_csv(cluster, sub) if sub else None)


def present(module, bundle_dir, image=None, load_index=None):
    """operator-sdk run bundle / bundle-upgrade: read, decide (``core.plan_run``), serve, install. ``load_index``:
    pulls the ``Index`` of ``index_image``, called only when no catalog is served yet (later runs extend the served
    catalog, which holds the index)."""
    p = module.params
    check_mode = module.check_mode
    deadline = Deadline(p["wait_timeout"])
    core.check_params(p)
    bundle = core.read_bundle(bundle_dir, p.get("package"), p.get("channel"), image)
    cluster = Cluster(module.client)
    if p.get("pull_secret") and image is None and load_index is None:  # (an image pulled with it: already checked)
        pull_secret_data(cluster, p["namespace"], p["pull_secret"])
    observed = observe_run(cluster, p, bundle)
    run = core.plan_run(p, bundle, observed, check_mode)

    index = load_index() if load_index is not None and run.needs_index else None
    if p["serve"] == core.SERVE_ADDRESS:
        served = serve_address(cluster, p, bundle, run.catalog, observed.catalog_source, observed.namespace_exists, check_mode)
    else:
        served = serve_pod(cluster, p, bundle, run, observed.catalog_source, observed.namespace_exists, check_mode, deadline, index)
    if run.predict:
        result = predict_install(cluster, run.subscription, observed.namespace_exists)
    else:
        result = install(cluster, run.subscription, check_mode, p["wait"], deadline.remaining(floor=1))

    install_diff = result.pop("diff", {}) or {}
    result["changed"] = bool(result.get("changed") or served["changed"])
    result["created"] = dict(result.get("created") or {}, **served["created"])
    result.update(
        operation=run.kind,
        bundle={"name": bundle.name, "package": bundle.package, "version": bundle.version, "channel": bundle.channel},
        catalog_source=public(served["after"]),
        catalog_address=served["address"],
        registry_pod=served["registry_pod"],
        config_maps=served["config_maps"],
        catalog_digest=served["digest"],
        removed=served["removed"],
        index_image={"ref": index.ref, "digest": index.digest} if index is not None else None,
        duration=deadline.elapsed(),
    )
    if not p["wait"] and not check_mode and result.get("installed_csv") != bundle.name:
        # the Subscription is Manual: without the wait nobody approves the InstallPlan
        result.setdefault("warnings", []).append(
            f"wait=false: the InstallPlan of {bundle.name} stays unapproved (the module approves it while it waits); run again with wait=true to install"
        )
    if module._diff:
        result["diff"] = {
            "before": dict(install_diff.get("before") or {}, catalog_source=normalize(public(served["before"])) or {}),
            "after": dict(install_diff.get("after") or {}, catalog_source=normalize(public(served["after"])) or {}),
        }
    return result


def absent(module, bundle_dir=None):
    """operator-sdk cleanup: the operator (Subscription, optionally CRDs, CSV, our OperatorGroup), the CatalogSource,
    its registry pods and ConfigMaps. Objects this module did not make are left alone (with a warning)."""
    p = module.params
    package = p.get("package")
    if bundle_dir:
        package = core.read_bundle(bundle_dir, package).package
    ns, catalog = p["namespace"], core.catalog_name(package)
    cluster = Cluster(module.client)
    result = {"changed": False, "removed": {}}
    if cluster.get("Namespace", ns, None, "v1") is None:
        return result
    warnings = []
    source = cluster.get("CatalogSource", catalog, ns)
    ours = source is not None and core.is_ours(source)
    sub = find_subscription(cluster, ns, package)
    removed = {}
    deadline = Deadline(p["wait_timeout"])  # one deadline for the uninstall and the CatalogSource together
    if (sub is not None and core.from_catalog(sub, catalog, ns)) or (sub is None and ours):
        params = {"namespace": ns, "package": package, "subscription_name": name_of(sub) if sub else package, "delete_crds_and_data": p["delete_crds_and_data"]}
        removed.update(uninstall(cluster, params, module.check_mode, p["wait"], p["wait_timeout"])["removed"])
    elif sub is not None:
        warnings.append(
            f"Subscription {ns}/{name_of(sub)} of {package} installs from CatalogSource {spec(sub).get('sourceNamespace')}/{spec(sub).get('source')}, "
            "not from this module's catalog: left alone"
        )
    if ours:
        resource = cluster.resource("CatalogSource", V1ALPHA1)
        delete_object(cluster.client, resource, catalog, ns)
        removed["catalog_source"] = catalog
        if p["wait"] and not module.check_mode:
            watch_until(cluster.client, V1ALPHA1, "CatalogSource", catalog, ns, is_absent, deadline.remaining(), resource=resource)
    elif source is not None:
        warnings.append(f"CatalogSource {ns}/{catalog} was not created by this module: left alone")
    removed.update(remove_stale_registry(cluster, ns, catalog))
    result.update(changed=bool(removed), removed=removed)
    if warnings:
        result["warnings"] = warnings
    if module._diff:
        result["diff"] = {"before": removed, "after": {}}
    return result


def pull_secret_data(cluster, namespace, name):
    """The base64 ``.dockerconfigjson`` of Secret ``namespace/name``; refuses a Secret that is missing or of another
    type (the kubelet would then pull without it, and the option would silently do nothing)."""
    secret = cluster.get("Secret", name, namespace, "v1")
    if secret is None:
        raise core.BundleRunError(f"pull_secret: Secret {namespace}/{name} does not exist")
    data = (secret.get("data") or {}).get(".dockerconfigjson")
    if secret.get("type") != "kubernetes.io/dockerconfigjson" or not data:
        raise core.BundleRunError(f"pull_secret: Secret {namespace}/{name} is not of type kubernetes.io/dockerconfigjson")
    return data


def pull_secret_config(cluster, namespace, name, directory):
    """The ``.dockerconfigjson`` of Secret ``namespace/name`` written (mode 0600) into ``directory``; its path."""
    data = pull_secret_data(cluster, namespace, name)
    path = os.path.join(directory, "pull-secret.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(base64.b64decode(data))
    return path


def registry_kwargs(module, directory):
    """The registry client's keyword arguments for the images the module pulls: ``registry_auth``, or the credentials
    of ``pull_secret`` (written into ``directory``)."""
    # The registry client is imported on use: most runs install a bundle directory.
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_params, registry_client_kwargs

    p = module.params
    options = registry_auth_params(p.get("registry_auth"))
    if p.get("pull_secret"):
        if options.get("docker_config"):
            raise core.BundleRunError("pull_secret and registry_auth.docker_config both give registry credentials: set one")
        options["docker_config"] = pull_secret_config(Cluster(module.client), p["namespace"], p["pull_secret"], directory)
    return registry_client_kwargs(options)


def pulled_bundle(kwargs, image, directory):
    """Pull and unpack bundle ``image`` below ``directory``; the bundle directory's path."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import make_image_puller

    return make_image_puller(cache_dir=directory, **kwargs)(image)


def pulled_index(kwargs, image, directory):
    """Pull ``index_image`` into ``directory``; ``Index`` of its file-based catalog (as opm renders it)."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog

    path, pulled = pull_catalog(image, os.path.join(directory, "index"), **kwargs)
    return Index(pulled.ref, pulled.digest, load_fs(path))


def execute(module):
    """Entry point of the olm_bundle_run module."""
    p = module.params
    if not p.get("bundle_image") and not p.get("index_image"):
        if p["state"] == "absent":
            return absent(module, p.get("bundle_dir"))
        return present(module, p["bundle_dir"])
    directory = tempfile.mkdtemp(prefix="kubeforge-bundle-run-")
    try:
        kwargs = registry_kwargs(module, directory)
        bundle_dir = pulled_bundle(kwargs, p["bundle_image"], directory) if p.get("bundle_image") else p["bundle_dir"]
        if p["state"] == "absent":
            return absent(module, bundle_dir)
        load_index = (lambda: pulled_index(kwargs, p["index_image"], directory)) if p.get("index_image") else None
        return present(module, bundle_dir, p.get("bundle_image"), load_index)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
