# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_cluster_extension module: install, upgrade and uninstall an operator through OLM v1.

present: read whether the cluster's ClusterExtension API still requires ``spec.serviceAccount``; create the
namespace; when asked, derive the installer ServiceAccount's least-privilege RBAC from the bundles the request
allows (read from the ClusterCatalogs' images and the bundle images, as operator-controller reads them) and apply
it; apply the ClusterExtension; watch it until operator-controller's verdict (``olmv1/cluster_extension.py``).

absent: deleting a ClusterExtension makes the garbage collector delete everything operator-controller installed,
its CRDs included, and with them every custom resource of those kinds: refused without ``delete_crds_and_data``.
The deletion is in the foreground, so when the ClusterExtension is gone the installed objects are gone too; the
installer ServiceAccount and RBAC the module created are removed after the deletion request (the garbage collector
does not need them).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import render_bundle_dir_blob
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_fs
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import apply, apply_owned, diff_view, ensure_namespace
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import delete_object, get_object, public
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_auth_params, registry_client_kwargs
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_bundle, pull_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import pruned_fields
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, metadata, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.operator import CREATED_BY_LABEL
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import installer_rbac, version_constraint
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog import olm_v1_resource

CRD_API_VERSION = "apiextensions.k8s.io/v1"
CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
# The installer objects the module creates, found again by these labels for removal.
CREATED_BY = "kubeforge.operators.olm_cluster_extension"
EXTENSION_LABEL = "operators.kubeforge.io/cluster-extension"
INSTALLER_KINDS = (
    ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", False),
    ("ClusterRole", "rbac.authorization.k8s.io/v1", False),
    ("RoleBinding", "rbac.authorization.k8s.io/v1", True),
    ("Role", "rbac.authorization.k8s.io/v1", True),
    ("ServiceAccount", "v1", True),
)


class ExtensionError(KubeforgeError):
    """operator-controller reported a failure, or the request cannot be carried out safely."""


def _constraint_check(text):
    """``version -> bool`` for a version constraint (operator-controller's Masterminds/semver rules)."""
    return version_constraint.Constraint.parse(text).matches


def check_version(text):
    """What the API server's CRD validation, then operator-controller's parser, would say about a constraint."""
    version_constraint.validate_field(text)
    version_constraint.validate(text)


def usable_catalogs(cluster, selector):
    """``(catalogs, all_serving)``: the ClusterCatalogs the extension may resolve from (selector, not
    Unavailable), and whether catalogd serves every one of them for its current generation."""
    selectors = {"label_selector": ce.selector_string(selector)} if selector else {}
    items = [c for c in cluster.list(cc.KIND, None, cc.API_VERSION, **selectors) if spec(c).get("availabilityMode") != cc.UNAVAILABLE]
    return items, all(cc.cluster_catalog_verdict(c)[0] == cc.VERDICT_READY for c in items)


# ------------------------------------------------------------------------------------------ reading bundles


class BundleReader:
    """Reads catalog and bundle images the way operator-controller does, with the module's registry options.

    The explicit credentials go to the registries of the catalog images (and so to bundle images on those
    registries); other registries get the docker config's. Everything is unpacked below one temporary directory.
    """

    def __init__(self, params):
        self.params = registry_auth_params(params.get("registry_auth"))
        self.root = tempfile.mkdtemp(prefix="kubeforge-olmv1-")
        self.trusted = set()  # registries the explicit credentials are for: those of the catalog images
        self.clients = {}

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def trust(self, image):
        """Send the explicit credentials to the registry of this catalog image."""
        self.trusted.add(parse_reference(image).registry.lower())

    def _client(self, ref):
        key = ref.registry.lower()
        if key not in self.clients:
            self.clients[key] = client_for(ref, **registry_client_kwargs(self.params, credentials=key in self.trusted))
        return self.clients[key]

    def catalog(self, image):
        ref = parse_reference(image)
        dest = tempfile.mkdtemp(prefix="catalog-", dir=self.root)
        pulled = pull_image(ref, dest, client=self._client(ref))
        configs = (pulled.labels or {}).get(CONFIGS_LABEL) or "/configs"
        root = os.path.join(dest, *[part for part in configs.split("/") if part and part != ".."])
        if not os.path.isdir(root):
            raise ExtensionError(f"catalog image {image} has no directory {configs} (label {CONFIGS_LABEL})")
        return load_fs(root)

    def bundle_objects(self, bundle):
        objects = ce.embedded_objects(bundle)
        if objects is not None:
            return objects
        image = bundle.get("image")
        if not image:
            raise ExtensionError(f"bundle {bundle.get('name')} has neither an image nor embedded manifests")
        ref = parse_reference(image)
        path = pull_bundle(ref, tempfile.mkdtemp(prefix="bundle-", dir=self.root), client=self._client(ref))
        blob = render_bundle_dir_blob(path, image=image)[0]
        return ce.embedded_objects(blob) or []


def candidate_bundles(reader, catalogs, package, channels, version, installed=None):
    """``[(catalog name, FBC bundle, objects)]`` for every bundle the request allows, from every usable catalog, plus
    the installed bundle ``installed`` (its name): an upgrade makes Helm delete that bundle's objects by name."""
    matches = _constraint_check(version) if version else None
    found = []
    for catalog in catalogs:
        if cc.resolved_ref(catalog):
            reader.trust(cc.resolved_ref(catalog))
    for catalog in catalogs:
        ref = cc.resolved_ref(catalog)
        if not ref:
            continue
        cfg = reader.catalog(ref)
        chosen = ce.candidate_bundles(cfg, package, channels, matches)
        names = set(b.get("name") for b in chosen)
        chosen += [b for b in cfg.bundles if installed and b.get("name") == installed and installed not in names and b.get("package") == package]
        for bundle in chosen:
            found.append((metadata(catalog).get("name"), bundle, reader.bundle_objects(bundle)))
    return found


# ------------------------------------------------------------------------------------ installer ServiceAccount


def _served(cluster, kind, api_version):
    try:
        return cluster.resource(kind, api_version)
    except K8sError:
        raise ExtensionError(f"a bundle the request allows ships a {kind} ({api_version}), which this cluster does not serve: install "
                             "what provides that API first, or narrow the version or channels") from None


def _resource_for(cluster):
    def resource_for(api_version, kind):
        resource = _served(cluster, kind, api_version)
        return resource.name, bool(resource.namespaced)

    return resource_for


def plan_installer(cluster, params, sa_name, installed, warnings):
    """Derive the installer ServiceAccount and its RBAC from the bundles the request allows: ``(objects, bundle
    names)``. Refuses (``ExtensionError``) when OLM v1 cannot install any of them, before anything is created."""
    catalogs, _serving = usable_catalogs(cluster, params.get("catalog_selector"))
    reader = BundleReader(params)
    try:
        bundles = candidate_bundles(reader, catalogs, params["package"], params.get("channels"), params.get("version"), installed)
    finally:
        reader.close()
    if not bundles:
        unserved = [metadata(c).get("name") for c in catalogs if cc.cluster_catalog_verdict(c)[0] != cc.VERDICT_READY]
        wanted = ", ".join(f"{k} {params[k]}" for k in ("version", "channels") if params.get(k))
        raise ExtensionError(
            f"no bundle of package {params['package']}{' with ' + wanted if wanted else ''} in the ClusterCatalogs "
            f"({', '.join(metadata(c).get('name') for c in catalogs) or 'none selected'}): nothing to derive the installer's permissions from"
            + (f"; not served yet: {', '.join(unserved)}" if unserved else ""),
            result={"warnings": warnings},
        )
    installable, problems = [], []
    for catalog_name, bundle, objects in bundles:
        found = installer_rbac.check_installable(objects, bundle.get("properties"), bundle.get("name"))
        problems.extend(f"{bundle.get('name')} (catalog {catalog_name}): {problem}" for problem in found)
        if not found:
            installable.append((bundle.get("name"), objects))
    if bundles and not installable:
        raise ExtensionError(
            "OLM v1 cannot install any bundle this request allows: " + "; ".join(problems),
            result={"bundles": [b.get("name") for _c, b, _o in bundles]},
        )
    if problems:
        warnings.append("bundles OLM v1 cannot install (the installer gets no permissions for them): " + "; ".join(problems))
    check_owners(cluster, params, [o for _n, o in installable])
    labels = {CREATED_BY_LABEL: CREATED_BY, EXTENSION_LABEL: params["name"]}
    objects = installer_rbac.installer_rbac(params["name"], params["namespace"], sa_name, [o for _n, o in installable],
                                            resource_for=_resource_for(cluster), labels=labels)
    warnings.extend(installer_rbac.broad_grants(objects))
    return objects, sorted(set(name for name, _o in installable))


def check_owners(cluster, params, bundles):
    """Refuse when an object the bundles install (a CRD, a shipped ClusterRole, ...) exists and belongs to someone
    else (OLM v0, another extension): operator-controller cannot adopt it and would retry forever."""
    seen, conflicts = set(), []
    for objects in bundles:
        for obj in objects:
            if obj.get("kind") in (None, "ClusterServiceVersion"):
                continue
            resource = _served(cluster, obj["kind"], obj.get("apiVersion"))
            key = (obj["kind"], metadata(obj).get("name"), params["namespace"] if resource.namespaced else None)
            if key in seen:
                continue
            seen.add(key)
            current = get_object(cluster.client, resource, key[1], key[2])
            owner = ce.foreign_owner(current, params["name"]) if current is not None else None
            if owner:
                conflicts.append(f"{key[0]} {key[1]} (managed by {owner})")
    if conflicts:
        raise ExtensionError(f"objects the bundle installs exist already and belong to someone else: {', '.join(conflicts)}. OLM v1 cannot take "
                             "them over: uninstall what manages them first (for OLM v0, olm_operator with state=absent and delete_crds_and_data=true)")


def _foreign(cluster, obj):
    """Whether ``obj`` exists without the module's label (a ServiceAccount the user named): not ours to take over."""
    current = get_object(cluster.client, cluster.resource(obj["kind"], obj["apiVersion"]), metadata(obj)["name"], metadata(obj).get("namespace"))
    return current is not None and (metadata(current).get("labels") or {}).get(CREATED_BY_LABEL) != CREATED_BY


def apply_installer(cluster, objects, check_mode):
    """Apply the installer objects (server-side, ours); ``(changed, [kind/name/namespace])``. An existing
    ServiceAccount the module did not create gets the RBAC but is neither labelled nor, later, deleted."""
    changed = False
    applied = []
    for obj in objects:
        if obj["kind"] == "ServiceAccount" and _foreign(cluster, obj):
            continue
        resource = cluster.resource(obj["kind"], obj["apiVersion"])
        namespace = metadata(obj).get("namespace")
        if check_mode and namespace and get_object(cluster.client, cluster.resource("Namespace", "v1"), namespace) is None:
            changed = True  # the namespace does not exist yet: a dry run in it would fail
        else:
            changed |= apply(cluster.client, resource, obj, force_conflicts=True)[0]
        applied.append({"kind": obj["kind"], "name": metadata(obj).get("name"), "namespace": namespace})
    return changed, applied


def remove_installer(cluster, name):
    """Delete the installer objects the module created for extension ``name`` (found by label)."""
    changed = False
    selector = f"{CREATED_BY_LABEL}={CREATED_BY},{EXTENSION_LABEL}={name}"
    for kind, api_version, namespaced in INSTALLER_KINDS:
        resource = cluster.resource(kind, api_version)
        for obj in cluster.list(kind, None, api_version, label_selector=selector):
            changed |= delete_object(cluster.client, resource, metadata(obj)["name"], metadata(obj).get("namespace") if namespaced else None)[0]
    return changed


# ------------------------------------------------------------------------------------------------ present


def read_crd(cluster):
    """The ClusterExtension CRD (what this cluster's operator-controller release accepts), or None if unreadable."""
    try:
        return get_object(cluster.client, cluster.resource("CustomResourceDefinition", CRD_API_VERSION), ce.CRD_NAME)
    except K8sError as exc:
        if exc.status not in (401, 403):
            raise
    return None


def _service_account(params, crd, existing, warnings):
    """``(name to send or None, create?)`` from the CRD's requirement, the request and the existing object."""
    if crd is None and (params.get("service_account") or params.get("create_service_account")):
        warnings.append(f"cannot read CustomResourceDefinition {ce.CRD_NAME} to tell whether this cluster uses spec.serviceAccount; "
                        "sending it as asked")
    required = ce.service_account_required(crd) if crd is not None else bool(params.get("service_account") or params.get("create_service_account"))
    current = (spec(existing).get("serviceAccount") or {}).get("name")
    wanted = params.get("service_account") or (f"{params['name']}-installer" if params.get("create_service_account") else None)
    if not required:
        if params.get("service_account") or params.get("create_service_account"):
            warnings.append("this cluster's ClusterExtension API does not use spec.serviceAccount (operator-controller v1.11 and later "
                            "install with their own permissions): service_account and create_service_account are ignored")
        return current, False
    if current and wanted and current != wanted:
        raise ExtensionError(f"ClusterExtension {params['name']} uses ServiceAccount {current}; spec.serviceAccount is immutable, so it cannot become {wanted}")
    if not wanted:
        if current:
            return current, False
        raise ExtensionError(
            f"this cluster's OLM v1 (operator-controller before v1.11) installs as a ServiceAccount of the extension: set service_account to a "
            f"ServiceAccount in namespace {params['namespace']} whose RBAC covers everything the bundle installs (its CRDs, Deployments, "
            "ServiceAccounts, RBAC and every rule its ClusterServiceVersion grants), or create_service_account=true to let the module create "
            "one with least-privilege RBAC derived from the bundles the request allows"
        )
    return wanted, bool(params.get("create_service_account"))


def _facts(obj):
    bundle = ce.installed_bundle(obj)
    return {
        "cluster_extension": public(obj),
        "installed_bundle": bundle,
        "installed_version": (bundle or {}).get("version"),
    }


def _wait(cluster, params, resource, deadline, result):
    """Watch the ClusterExtension until operator-controller's verdict; returns ``(obj, retrying messages seen,
    catalogs serving)``. Whether every selected catalog is served is read again (one LIST) for each new resolution
    message while it was not: a catalog that finished unpacking makes "no bundles found" final."""
    state = {"serving": usable_catalogs(cluster, params.get("catalog_selector"))[1], "failed_catalogs": {}}
    seen = []

    def verdict_reached(obj):
        message = ce.retrying_message(obj)
        if message and message not in seen:
            seen.append(message)
            problem = ce.permanent_problem(message)
            if problem and problem[1] and not state["serving"]:
                state["serving"] = usable_catalogs(cluster, params.get("catalog_selector"))[1]
            blocked = ce.unserved_catalog(message)
            if blocked:  # one GET per new message: is catalogd failing that catalog too?
                verdict, why = cc.cluster_catalog_verdict(cluster.get(cc.KIND, blocked, None, cc.API_VERSION))
                if verdict == cc.VERDICT_FAILED:
                    state["failed_catalogs"][blocked] = why
        return ce.cluster_extension_verdict(obj, state["serving"], state["failed_catalogs"])[0] != ce.VERDICT_WAITING

    remaining = deadline.remaining(floor=1)
    try:
        obj = watch_until(cluster.client, ce.API_VERSION, ce.KIND, params["name"], None, verdict_reached, remaining, resource=resource)
    except ResourceTimeoutError as exc:
        last = exc.last_object
        raise ExtensionError(
            f"Timed out after {params['wait_timeout']}s waiting for operator-controller to install ClusterExtension {params['name']}: "
            f"{ce.cluster_extension_verdict(last, state['serving'])[1]}",
            result=dict(result, messages=seen, duration=exc.duration, **_facts(last)),
        ) from None
    return obj, seen, state


def present(module):
    p = module.params
    cluster = module.cluster
    resource = olm_v1_resource(cluster, ce.KIND)
    deadline = Deadline(p["wait_timeout"])
    warnings = []
    existing = get_object(module.client, resource, p["name"])
    if existing is not None:
        for field, wanted, current in (
            ("namespace", p["namespace"], spec(existing).get("namespace")),
            ("package", p["package"], ((spec(existing).get("source") or {}).get("catalog") or {}).get("packageName")),
        ):
            if current and current != wanted:
                raise ExtensionError(f"ClusterExtension {p['name']} has {field} {current}; the field is immutable, so it cannot become {wanted} "
                                     "(uninstall it first, or use another name)")
    crd = read_crd(cluster)
    sa_name, create_sa = _service_account(p, crd, existing, warnings)
    definition = ce.cluster_extension_definition(
        p["name"], p["namespace"], p["package"],
        version=p.get("version"), channels=p.get("channels"), selector=p.get("catalog_selector"),
        upgrade_constraint_policy=p.get("upgrade_constraint_policy"), crd_upgrade_safety=p.get("crd_upgrade_safety"),
        config=p.get("config"), service_account=sa_name, check_version=check_version,
    )
    unknown = ce.unknown_spec_fields(crd, definition)
    if unknown:
        raise ExtensionError(f"This cluster's ClusterExtension API (its operator-controller release) does not know {', '.join(unknown)}: "
                             "leave the option out, or upgrade OLM v1")
    result = {"service_account": sa_name, "warnings": warnings}
    installed = (ce.installed_bundle(existing) or {}).get("name")
    installer = plan_installer(cluster, p, sa_name, installed, warnings) if create_sa else None
    changed = ensure_namespace(cluster, p["namespace"])
    if installer is not None:
        sa_changed, applied = apply_installer(cluster, installer[0], module.check_mode)
        result["installer"] = {"name": sa_name, "objects": applied, "bundles": installer[1]}
        changed |= sa_changed
    ext_changed, before, after = apply_owned(module.client, resource, definition, bool(p.get("force_conflicts")), f"ClusterExtension {p['name']}")
    dropped = pruned_fields(definition["spec"], (after or {}).get("spec"))
    if dropped:
        raise ExtensionError(f"The API server dropped {', '.join(dropped)} from ClusterExtension {p['name']}: this cluster's ClusterExtension API "
                             "(its operator-controller release) does not know these fields",
                             result=dict(result, changed=changed or ext_changed, **_facts(after)))
    result.update(_facts(after), changed=changed or ext_changed)
    if module._diff:
        result["diff"] = diff_view(before, after)
    if module.check_mode or not p.get("wait"):
        return result
    obj, seen, state = _wait(cluster, p, resource, deadline, result)
    verdict, message = ce.cluster_extension_verdict(obj, state["serving"], state["failed_catalogs"])
    result.update(_facts(obj), messages=seen, duration=deadline.elapsed())
    if verdict == ce.VERDICT_FAILED:
        progressing = condition(obj, "Progressing") or {}
        raise ExtensionError(f"operator-controller cannot install ClusterExtension {p['name']} ({progressing.get('reason')}): {message}", result=result)
    return result


# ------------------------------------------------------------------------------------------------- absent


def installed_crd_objects(cluster, name):
    """The CRDs operator-controller installed for extension ``name`` (by its owner labels)."""
    selector = f"{ce.OWNER_KIND_LABEL}={ce.KIND},{ce.OWNER_NAME_LABEL}={name}"
    return cluster.list("CustomResourceDefinition", None, CRD_API_VERSION, label_selector=selector)


def installed_crds(cluster, name):
    return sorted(metadata(c).get("name") for c in installed_crd_objects(cluster, name))


def _remaining_crds(cluster, name):
    """``(CRDs extension ``name`` installed that are still there, {CRD name: its custom resources still there})``;
    only CRDs held by the cleanup of their objects are listed through."""
    crds = installed_crd_objects(cluster, name)
    leftovers = {}
    for crd in crds:
        if ce.CRD_CLEANUP_FINALIZER not in (metadata(crd).get("finalizers") or []):
            continue
        names = spec(crd).get("names") or {}
        storage = next((v.get("name") for v in spec(crd).get("versions") or [] if v.get("storage")), None)
        if names.get("kind") and storage:
            leftovers[metadata(crd).get("name")] = cluster.list(names["kind"], None, f"{spec(crd).get('group')}/{storage}")
    return crds, leftovers


def remove(module):
    p = module.params
    cluster = module.cluster
    resource = olm_v1_resource(cluster, ce.KIND)
    existing = get_object(module.client, resource, p["name"])
    result = {"changed": False, "cluster_extension": None, "installed_bundle": None, "installed_version": None}
    if existing is not None:
        crds = installed_crds(cluster, p["name"])
        result["deleted_crds"] = crds
        if not p.get("delete_crds_and_data"):
            raise ExtensionError(
                f"Deleting ClusterExtension {p['name']} uninstalls the operator AND deletes the CRDs it installed "
                f"({', '.join(crds) or 'none found'}), and with them every custom resource of those kinds in the cluster. "
                "Set delete_crds_and_data=true to confirm",
                result=dict(result, **_facts(existing)),
            )
        result["changed"], _before, after = delete_object(module.client, resource, p["name"], propagation_policy="Foreground")
        result.update(_facts(after))  # still there (being deleted) until the wait below, if any
        if module._diff:
            result["diff"] = diff_view(existing, None)
        if p.get("wait") and not module.check_mode:
            timer = Deadline()
            try:
                watch_until(module.client, ce.API_VERSION, ce.KIND, p["name"], None, absent, p["wait_timeout"], resource=resource)
            except ResourceTimeoutError as exc:
                blockers = ce.deletion_blockers(exc.last_object, *_remaining_crds(cluster, p["name"]))
                raise ExtensionError(
                    f"Timed out after {p['wait_timeout']}s waiting for ClusterExtension {p['name']} and what it installed to be deleted"
                    + (f": {blockers}" if blockers else ""),
                    result=dict(result, duration=exc.duration, **_facts(exc.last_object)),
                ) from None
            result.update(_facts(None), duration=timer.elapsed())
    # the garbage collector, not the installer ServiceAccount, deletes what the extension installed
    result["changed"] |= remove_installer(cluster, p["name"])
    return result


def execute(module):
    """Entry point of the olm_cluster_extension module."""
    if module.params["state"] == "absent":
        return remove(module)
    return present(module)
