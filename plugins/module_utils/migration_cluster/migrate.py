# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster glue of the olm_migrate module: move an operator installed by OLM v0 to OLM v1 (operator-controller
v1.5.1) in place, and the way back.

Reading (``read_observed``): one LIST per kind - the namespace's Subscriptions, OperatorGroups and InstallPlans,
every CSV that is not a copy (all namespaces: ours, and the dependents of its APIs), the copies of ours (label
``olm.copiedFrom``), the migration records (label ``operators.kubeforge.io/olm-migrate``) - then a GET of the
OperatorCondition, the ClusterExtension and each object of the v1 release. The bundle of the installed version is
read the way ``olm_cluster_extension`` reads it: from the images of the serving ClusterCatalogs (``catalog``: that
one only) and the bundle image. ``olm/migrate.py`` judges it all (``eligibility``, ``plan``).

The move follows the plan's steps (``olm.migrate.STEP_NAMES``). Before the first write, every object the move
touches is backed up into ``backup_dir`` through the file-output service (a Secret as metadata and SHA-256 sums);
then the record, a ConfigMap nothing owns (``olm.migrate.record_name``), holds the plan and the last step done, so
a rerun after a kill resumes after that step, and a rerun after ``done`` changes nothing. Each step reads before it
writes and writes guarded (a resourceVersion test in each JSON patch), so doing one again is harmless.

When the ClusterExtension does not reach ``Installed`` at the installed version within ``wait_timeout`` (or
operator-controller reports a failure no retry fixes), rollback A undoes the OLM v1 side while OLM v0 still manages
the operator: the ClusterExtension deleted with propagation ``Orphan`` (never cascading to the CRDs), its release
Secrets, the objects v1 created, the Helm keys, v1's owner labels and ownerReferences, the installer objects; the
Subscription's approval restored. ``state=rolled_back`` runs the same while the record says OLM v0 is untouched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError, KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster, apply, apply_owned, retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import create_object, delete_object, patch_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.watch import absent, watch_until
from ansible_collections.kubeforge.operators.plugins.module_utils.migration import migrate as mg
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import csv_version, metadata, name_of, spec, status
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.operator import CREATED_BY_LABEL
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog import olm_v1_resource
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_extension import (
    CREATED_BY,
    EXTENSION_LABEL,
    BundleReader,
    usable_catalogs,
)

V0_API = "operators.coreos.com/v1alpha1"
V0_GROUP_API = "operators.coreos.com/v1"
CONDITION_API = "operators.coreos.com/v2"
COPIED_LABEL = "olm.copiedFrom"
PROPERTIES_ANNOTATION = "operatorframework.io/properties"
RECORD_LABEL_VALUE = "record"
# The labels operator-controller v1.5.1's Helm storage puts on a release's Secrets (helm-operator-plugins v0.8.0
# pkg/storage/labels.go); they live in operator-controller's system namespace.
RELEASE_SECRET_SELECTOR = "owner=operator-controller,name={}"
PROPAGATION_ORPHAN = "Orphan"
# What rollback A may do after the wait: each phase up to here leaves OLM v0 managing the operator.
ROLLBACK_A_PHASES = ("record", "freeze_v0", "stamp_helm_ownership", "create_installer", "create_extension", "wait_installed", "rolling_back")
ROLLED_BACK = "rolled_back"
# Holds the ClusterExtension during a rollback until OLM v1's references are off every object it owned.
HOLD_FINALIZER = "operators.kubeforge.io/olm-migrate-rollback"
# Recorded while a rollback runs: a run killed then must finish the way back before anything else.
ROLLING_BACK = "rolling_back"
RBAC_API = "rbac.authorization.k8s.io/v1"
V1_RBAC_KINDS = ("ClusterRoleBinding", "ClusterRole", "RoleBinding", "Role")
DONE = "done"
# Seconds to wait for the ClusterExtension to be gone after the Orphan deletion (operator-controller removes its
# finalizers at once; the testbed measured 0.5 s).
DELETE_WAIT = 60


class MigrateError(mg.MigrationError):
    """The move cannot start, go on or be undone; ``result`` carries what was done."""


# ------------------------------------------------------------------------------------------------ reading


def _resource_for(cluster):
    def resource_for(api_version, kind):
        try:
            resource = cluster.resource(kind, api_version)
        except K8sError:
            return None
        return resource.name, bool(resource.namespaced)

    return resource_for


def bundle_properties(csv):
    """The properties a CSV's ``operatorframework.io/properties`` annotation lists (OLM v0 copies the bundle's)."""
    raw = (metadata(csv).get("annotations") or {}).get(PROPERTIES_ANNOTATION)
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return []
    return [p for p in (value.get("properties") or []) if isinstance(p, dict)] if isinstance(value, dict) else []


def dependents(csvs, csv, package):
    """The CSVs (of other operators) that require an API ``csv`` owns (``spec.customresourcedefinitions.required``)
    or ``package`` (an ``olm.package.required`` property)."""
    if csv is None:
        return []
    owned = {o.get("name") for o in ((spec(csv).get("customresourcedefinitions") or {}).get("owned") or []) if isinstance(o, dict)}
    ours = (metadata(csv).get("namespace"), name_of(csv))
    found = []
    for other in csvs:
        if (metadata(other).get("namespace"), name_of(other)) == ours:
            continue
        required = {r.get("name") for r in ((spec(other).get("customresourcedefinitions") or {}).get("required") or []) if isinstance(r, dict)}
        needs_package = any(p.get("type") == "olm.package.required" and (p.get("value") or {}).get("packageName") == package for p in bundle_properties(other))
        if (owned & required) or needs_package:
            found.append(other)
    return found


def find_bundle(cluster, params, package, version, warnings=None):
    """``(catalog name, FBC bundle, manifests)`` of ``package`` at ``version`` in the first serving ClusterCatalog
    that has it (``params["catalog"]``: that one only), read from the catalog and bundle images; Nones when none. A
    catalog image that cannot be read is passed over with a warning (appended to ``warnings``): other teams'
    catalogs may need credentials the module was not given."""
    selector = {"matchLabels": {cc.NAME_LABEL: params["catalog"]}} if params.get("catalog") else None
    catalogs, _all_serving = usable_catalogs(cluster, selector)
    serving = sorted((c for c in catalogs if cc.cluster_catalog_verdict(c)[0] == cc.VERDICT_READY), key=name_of)
    reader = BundleReader({"registry_auth": params.get("registry_auth")})
    try:
        for catalog in serving:
            reader.trust(cc.resolved_ref(catalog))
        for catalog in serving:
            try:
                cfg = reader.catalog(cc.resolved_ref(catalog))
            except KubeforgeError as exc:
                if warnings is None or params.get("catalog"):
                    raise
                warnings.append(f"ClusterCatalog {name_of(catalog)} passed over: its image cannot be read ({excerpt(str(exc), 300)})")
                continue
            for bundle in cfg.bundles:
                if bundle.get("package") == package and ce.bundle_version(bundle) == version:
                    return name_of(catalog), bundle, reader.bundle_objects(bundle)
    finally:
        reader.close()
    return None, None, None


def _typed(items, kind, api_version):
    """List items as the API server sends them lack ``kind`` and ``apiVersion``: the backup files name them."""
    return [dict(item, kind=item.get("kind") or kind, apiVersion=item.get("apiVersion") or api_version) for item in items]


def read_records(cluster, namespace, package):
    """The migration records of ``package`` in ``namespace`` (ConfigMaps labelled by olm_migrate)."""
    found = cluster.list("ConfigMap", namespace, "v1", label_selector=f"{mg.RECORD_LABEL}={RECORD_LABEL_VALUE}")
    return [r for r in found if (r.get("data") or {}).get("package") == package]


def read_observed(cluster, params, record, warnings=None):
    """``olm.migrate.Observed`` of the package's Subscription in the namespace (the first by name when several:
    eligibility refuses that), or None when there is no Subscription of the package."""
    namespace, package = params["namespace"], params["package"]
    extension_name = params["extension_name"] or package
    subscriptions = sorted(_typed(cluster.list("Subscription", namespace, V0_API), "Subscription", V0_API), key=name_of)
    ours = [s for s in subscriptions if spec(s).get("name") == package]
    if not ours:
        return None
    sub = ours[0]
    all_csvs = _typed(cluster.list(mg.ir.CSV_KIND, None, V0_API, label_selector=f"!{COPIED_LABEL}"), mg.ir.CSV_KIND, V0_API)
    csvs = [c for c in all_csvs if metadata(c).get("namespace") == namespace]
    installed = status(sub).get("installedCSV")
    csv = next((c for c in csvs if name_of(c) == installed), None)
    copies = cluster.list(mg.ir.CSV_KIND, None, V0_API, label_selector=f"{COPIED_LABEL}={namespace}")
    fields = {
        "subscriptions": subscriptions,
        "csv": csv,
        "csvs": csvs,
        "operator_groups": _typed(cluster.list("OperatorGroup", namespace, V0_GROUP_API), "OperatorGroup", V0_GROUP_API),
        "installplans": _typed(cluster.list("InstallPlan", namespace, V0_API), "InstallPlan", V0_API),
        "operator_condition": cluster.get("OperatorCondition", installed, namespace, CONDITION_API) if installed else None,
        "copied_csvs": sorted((metadata(c).get("namespace"), name_of(c)) for c in copies if name_of(c) == installed),
        "dependents": dependents(all_csvs, csv, package),
        "extension": cluster.get(ce.KIND, extension_name, None, ce.API_VERSION),
        "record": record,
    }
    if csv is not None:
        catalog, bundle, manifests = find_bundle(cluster, params, package, csv_version(csv), warnings)
        fields.update(catalog=catalog, bundle=bundle, manifests=manifests)
        if manifests is not None and mg.ir.bundle_csv(manifests) is not None:
            live = {}
            try:
                items = mg.release_objects(manifests, namespace, _resource_for(cluster))
            except mg.MigrationError:
                items = []  # eligibility names it (E14)
            for item in items:
                live[(item.kind, item.namespace, item.name)] = cluster.get(item.kind, item.name, item.namespace, item.api_version)
            fields["live"] = live
    return mg.Observed(sub, **fields)


# ------------------------------------------------------------------------------------------------ writes


def _pointer(key):
    return key.replace("~", "~0").replace("/", "~1")


def metadata_patch(obj, labels=None, annotations=None, remove_labels=(), remove_annotations=(), drop_owner=None):
    """The JSON patch operations that set ``labels``/``annotations``, remove ``remove_labels``/``remove_annotations``
    and the ownerReferences to ``drop_owner`` (``(kind, name)``) on ``obj``; ``[]`` when nothing would change."""
    ops = []
    meta = metadata(obj)
    for field, wanted, unwanted in (("labels", labels or {}, remove_labels), ("annotations", annotations or {}, remove_annotations)):
        current = meta.get(field) or {}
        setting = {k: v for k, v in wanted.items() if current.get(k) != v}
        removing = [k for k in unwanted if k in current and k not in wanted]
        if setting and field not in meta:
            ops.append({"op": "add", "path": f"/metadata/{field}", "value": setting})
        else:
            ops += [{"op": "add", "path": f"/metadata/{field}/{_pointer(k)}", "value": v} for k, v in sorted(setting.items())]
        ops += [{"op": "remove", "path": f"/metadata/{field}/{_pointer(k)}"} for k in sorted(removing)]
    if drop_owner:
        refs = meta.get("ownerReferences") or []
        kept = [r for r in refs if (r.get("kind"), r.get("name")) != tuple(drop_owner)]
        if len(kept) != len(refs):
            ops.append({"op": "add", "path": "/metadata/ownerReferences", "value": kept})
    return ops


def guarded_patch(cluster, kind, api_version, name, namespace, build, deleting=False):
    """Read the object, ``build(obj) -> JSON patch operations``, and send them behind a resourceVersion test (read
    and decided again when the object changed meanwhile). False when the object is gone (or being deleted, unless
    ``deleting``) or nothing changes."""
    what = f"{kind} {namespace + '/' if namespace else ''}{name}"

    def attempt():
        obj = cluster.get(kind, name, namespace, api_version)
        if obj is None or (metadata(obj).get("deletionTimestamp") and not deleting):
            return False
        ops = build(obj)
        if not ops:
            return False
        guard = {"op": "test", "path": "/metadata/resourceVersion", "value": metadata(obj).get("resourceVersion")}
        patch_object(cluster.client, cluster.resource(kind, api_version), name, [guard] + ops, namespace, patch_type="json")
        return True

    return retry_guarded(attempt, what, error=MigrateError)


def edit_metadata(cluster, item, **changes):
    """``metadata_patch`` of ``changes`` applied to the plan's object ``item`` (kind, apiVersion, namespace, name)."""
    return guarded_patch(cluster, item["kind"], item["apiVersion"], item["name"], item.get("namespace"), lambda obj: metadata_patch(obj, **changes))


def delete(cluster, kind, api_version, name, namespace, propagation=None):
    """Delete when present and not being deleted already (a second DELETE would race the garbage collector)."""
    obj = cluster.get(kind, name, namespace, api_version)
    if obj is None or metadata(obj).get("deletionTimestamp"):
        return False
    return delete_object(cluster.client, cluster.resource(kind, api_version), name, namespace, propagation_policy=propagation)[0]


# ------------------------------------------------------------------------------------------------ the record


def _record_data(plan, phase, backup):
    return {
        "package": plan["package"],
        "subscription": plan["subscription"],
        "extension": plan["extension"]["metadata"]["name"],
        "phase": phase,
        "backup": json.dumps(backup, sort_keys=True),
        "plan": json.dumps(plan, sort_keys=True),
    }


def write_record(cluster, plan, backup, existing):
    """Create the record (or reset an earlier, rolled-back one) at phase ``record``."""
    data = _record_data(plan, "record", backup)
    namespace, name = plan["record"]["namespace"], plan["record"]["name"]
    if existing is not None and name_of(existing) == name:
        return guarded_patch(cluster, "ConfigMap", "v1", name, namespace, lambda obj: [{"op": "add", "path": "/data", "value": data}])
    definition = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {mg.RECORD_LABEL: RECORD_LABEL_VALUE}},
        "data": data,
    }
    return create_object(cluster.client, cluster.resource("ConfigMap", "v1"), definition).changed


def set_phase(cluster, record, phase):
    ns, name = metadata(record).get("namespace"), name_of(record)
    return guarded_patch(
        cluster,
        "ConfigMap",
        "v1",
        name,
        ns,
        lambda obj: [] if (obj.get("data") or {}).get("phase") == phase else [{"op": "add", "path": "/data/phase", "value": phase}],
    )


def record_plan(record):
    try:
        return json.loads((record.get("data") or {}).get("plan") or "")
    except ValueError:
        raise MigrateError(
            f"the migration record ConfigMap {metadata(record).get('namespace')}/{name_of(record)} holds no readable plan: "
            "it was edited; restore it from the backup directory's plan.json"
        ) from None


# ------------------------------------------------------------------------------------------------ backup


def backup_name(obj):
    meta = metadata(obj)
    return f"{str(obj.get('kind')).lower()}-{meta.get('namespace') or 'cluster'}-{meta.get('name')}.json"


def write_backup(directory, observed, plan, check_mode):
    """Write every object the move touches (``backup_copy``: no Secret data) and the plan into ``directory``;
    ``{dir, files}``."""
    objects = [observed.subscription, observed.csv, observed.operator_condition]
    objects += list(observed.operator_groups or []) + list(observed.installplans or [])
    objects += list((observed.live or {}).values())
    files = []
    with FileOutput(check_mode=check_mode) as output:
        for obj in objects:
            if obj is None:
                continue
            path = os.path.join(directory, backup_name(obj))
            output.write(path, json.dumps(mg.backup_copy(obj), indent=2, sort_keys=True) + "\n")
            files.append(path)
        path = os.path.join(directory, "plan.json")
        output.write(path, json.dumps(plan, indent=2, sort_keys=True) + "\n")
        files.append(path)
        output.commit()
    return {"dir": directory, "files": files}


# ------------------------------------------------------------------------------------------------ the steps


class Migration:
    """One run of the move (or of the way back) from a plan: the steps, the record, the rollback."""

    def __init__(self, module, cluster, plan, record):
        self.module = module
        self.params = module.params
        self.cluster = cluster
        self.plan = plan
        self.record = record
        self.steps_done = []
        self.extension = plan["extension"]
        self.name = self.extension["metadata"]["name"]
        self.ext_resource = olm_v1_resource(cluster, ce.KIND)
        self.base = {}  # what every result of the run holds (eligible, refusals, plan, backup)

    def _writes(self, step):
        return next((s["writes"] for s in self.plan["steps"] if s["name"] == step), [])

    # --- OLM v0 frozen, Helm's keys, the installer and the ClusterExtension

    def freeze_v0(self):
        for write in self._writes("freeze_v0"):
            guarded_patch(
                self.cluster,
                write["kind"],
                write["apiVersion"],
                write["name"],
                write["namespace"],
                lambda obj, after=write["after"]: (
                    [] if spec(obj).get("installPlanApproval") == after else [{"op": "add", "path": "/spec/installPlanApproval", "value": after}]
                ),
            )

    def stamp_helm_ownership(self):
        for write in self._writes("stamp_helm_ownership"):
            edit_metadata(self.cluster, write, labels=write["labels"], annotations=write["annotations"])

    def create_installer(self):
        labels = {CREATED_BY_LABEL: CREATED_BY, EXTENSION_LABEL: self.name}
        for obj in self.plan["installer"]["objects"]:
            obj = dict(obj, metadata=dict(obj["metadata"], labels=dict(obj["metadata"].get("labels") or {}, **labels)))
            # the labels make olm_cluster_extension's create_service_account treat these objects as its own later
            apply(self.cluster.client, self.cluster.resource(obj["kind"], obj["apiVersion"]), obj, force_conflicts=True)

    def create_extension(self):
        apply_owned(self.cluster.client, self.ext_resource, self.extension, False, f"ClusterExtension {self.name}")

    def wait_installed(self):
        """Watch until operator-controller's verdict; on a failure, a timeout or an adopted object without the
        ClusterExtension's controller reference, roll back (A) and fail saying so."""
        version = self.plan["version"]
        timeout = self.params["wait_timeout"]
        try:
            obj = watch_until(
                self.cluster.client,
                ce.API_VERSION,
                ce.KIND,
                self.name,
                None,
                lambda o: ce.cluster_extension_verdict(o)[0] != ce.VERDICT_WAITING,
                timeout,
                resource=self.ext_resource,
            )
        except ResourceTimeoutError as exc:
            self.fail_back(f"ClusterExtension {self.name} did not reach Installed at {version} within {timeout}s ({ce.describe(exc.last_object)})")
        verdict, message = ce.cluster_extension_verdict(obj)
        installed = (ce.installed_bundle(obj) or {}).get("version")
        if verdict != ce.VERDICT_READY:
            self.fail_back(f"operator-controller cannot install ClusterExtension {self.name}: {excerpt(message, 400)}")
        if installed != version:
            self.fail_back(f"ClusterExtension {self.name} installed version {installed}, not the installed version {version}")
        missing = self.uncontrolled()
        if missing:
            self.fail_back(f"ClusterExtension {self.name} is Installed but does not control {', '.join(missing)}")

    def uncontrolled(self):
        """The adopted objects the ClusterExtension is not the controller of (kind and name)."""
        missing = []
        for item in self.plan["adopt"]:
            live = self.cluster.get(item["kind"], item["name"], item["namespace"], item["apiVersion"])
            refs = metadata(live).get("ownerReferences") or [] if live else []
            if not any(r.get("kind") == ce.KIND and r.get("name") == self.name and r.get("controller") for r in refs):
                missing.append(f"{item['kind']} {item['name']}")
        return missing

    # --- OLM v0 removed

    def delete_subscription(self):
        """Only while OLM v1 holds the operator (read again: a resumed run may find it otherwise): the CSV's deletion
        that follows makes the garbage collector delete every object no other owner holds."""
        obj = self.cluster.get(ce.KIND, self.name, None, ce.API_VERSION)
        verdict, message = ce.cluster_extension_verdict(obj)
        installed = (ce.installed_bundle(obj) or {}).get("version")
        missing = self.uncontrolled() if verdict == ce.VERDICT_READY and installed == self.plan["version"] else []
        if verdict != ce.VERDICT_READY or installed != self.plan["version"] or missing:
            why = f"it does not control {', '.join(missing)}" if missing else message
            raise MigrateError(
                f"ClusterExtension {self.name} does not hold the operator at {self.plan['version']} ({why}): OLM v0's Subscription and CSV "
                "are left as they are (deleting the CSV now would let the garbage collector delete the operator's objects); roll back "
                "with state=rolled_back, or fix the ClusterExtension and run again",
                result=self.result(),
            )
        for write in self._writes("delete_subscription"):
            delete(self.cluster, write["kind"], write["apiVersion"], write["name"], write["namespace"], write.get("propagation"))

    def strip_csv_owner_labels(self):
        for write in self._writes("strip_csv_owner_labels"):
            edit_metadata(self.cluster, write, remove_labels=write["remove_labels"])

    def delete_csv(self):
        for write in self._writes("delete_csv"):
            delete(self.cluster, write["kind"], write["apiVersion"], write["name"], write["namespace"], write.get("propagation"))
            try:
                watch_until(self.cluster.client, write["apiVersion"], write["kind"], write["name"], write["namespace"], absent, self.params["wait_timeout"])
            except ResourceTimeoutError:
                raise MigrateError(
                    f"ClusterServiceVersion {write['namespace']}/{write['name']} is still there {self.params['wait_timeout']}s after its deletion "
                    "(OLM v0's finalizer removes its cluster RBAC first): run again once it is gone; OLM v1 manages the operator already",
                    result=self.result(),
                ) from None

    def strip_v0_marks(self):
        for write in self._writes("strip_v0_marks"):
            if write["verb"] == "delete":
                delete(self.cluster, write["kind"], write["apiVersion"], write["name"], write["namespace"])
            else:
                edit_metadata(self.cluster, write, remove_labels=write["remove_labels"], remove_annotations=write["remove_annotations"])

    def delete_operator_group(self):
        for write in self._writes("delete_operator_group"):
            delete(self.cluster, write["kind"], write["apiVersion"], write["name"], write["namespace"])

    # --- running

    def forward(self, phase):
        """Every step after ``phase`` (the last one done), each recorded when done."""
        order = list(mg.STEP_NAMES)
        for step in order[order.index(phase) + 1 :]:
            if step != DONE:
                getattr(self, step)()
            self.record_phase(step)
            self.steps_done.append(step)

    def record_phase(self, phase):
        set_phase(self.cluster, self.record, phase)

    def installed_version(self):
        obj = self.cluster.get(ce.KIND, self.name, None, ce.API_VERSION)
        return (ce.installed_bundle(obj) or {}).get("version")

    def result(self, **extra):
        out = dict(self.base)
        out.update(
            {
                "steps_done": list(self.steps_done),
                "extension": {"name": self.name, "installed_version": self.installed_version()},
                "rolled_back": False,
            }
        )
        out.update(extra)
        return out

    # --- the way back (A: OLM v0 still manages the operator)

    def _delete_installer(self, kinds, done):
        """Delete the installer objects of ``kinds`` that carry the module's labels (never a ServiceAccount it did not
        create)."""
        for obj in reversed(self.plan["installer"]["objects"]):
            meta = obj["metadata"]
            if obj["kind"] not in kinds:
                continue
            live = self.cluster.get(obj["kind"], meta["name"], meta.get("namespace"), obj["apiVersion"])
            if live is not None and (metadata(live).get("labels") or {}).get(CREATED_BY_LABEL) == CREATED_BY:
                if delete(self.cluster, obj["kind"], obj["apiVersion"], meta["name"], meta.get("namespace")):
                    done.append(f"deleted installer {obj['kind']} {meta['name']}")

    def _hold(self, obj):
        """The finalizers list with ours added: the ClusterExtension stays (being deleted) until the rollback lets it go."""
        finalizers = list(metadata(obj).get("finalizers") or [])
        if HOLD_FINALIZER in finalizers or metadata(obj).get("deletionTimestamp"):  # none can be added once deleting
            return []
        return [{"op": "add", "path": "/metadata/finalizers", "value": finalizers + [HOLD_FINALIZER]}]

    def _wait_extension(self, predicate, what):
        try:
            return watch_until(self.cluster.client, ce.API_VERSION, ce.KIND, self.name, None, predicate, DELETE_WAIT, resource=self.ext_resource)
        except ResourceTimeoutError as exc:
            raise MigrateError(
                f"ClusterExtension {self.name} {what} {DELETE_WAIT}s after its deletion ({ce.describe(exc.last_object)}, finalizers "
                f"{', '.join(metadata(exc.last_object).get('finalizers') or []) or 'none'}): is operator-controller running? Run "
                "state=rolled_back again",
                result=self.result(),
            ) from None

    def rollback(self):
        """Undo the OLM v1 side; every write reads first, so it can run after any step up to ``wait_installed``, and
        again after a kill mid-way (the record says ``rolling_back`` until it is done).

        The ClusterExtension is deleted with propagation Orphan while a finalizer of ours holds it, after its
        installer lost its bindings (operator-controller writes as that ServiceAccount): an adoption operator-controller
        had in flight may put the ClusterExtension's reference back on an object after the garbage collector orphaned
        them, and once the ClusterExtension is gone the garbage collector deletes an object whose only owner it was (a
        CRD, and with it every custom resource). So the references, Helm's keys and OLM v1's labels are removed while
        it still exists, and only then is it let go."""
        self.record_phase(ROLLING_BACK)
        done = []
        if self.cluster.get(ce.KIND, self.name, None, ce.API_VERSION) is not None:
            guarded_patch(self.cluster, ce.KIND, ce.API_VERSION, self.name, None, self._hold)
        self._delete_installer(("ClusterRoleBinding", "RoleBinding"), done)
        if delete(self.cluster, ce.KIND, ce.API_VERSION, self.name, None, PROPAGATION_ORPHAN):
            done.append(f"deleted ClusterExtension {self.name} (propagation Orphan)")
        self._wait_extension(
            lambda o: o is None or (bool(metadata(o).get("deletionTimestamp")) and set(metadata(o).get("finalizers") or []) <= {HOLD_FINALIZER}),
            "still has the finalizers of others",
        )
        for item in self.plan["create"]:
            live = self.cluster.get(item["kind"], item["name"], item["namespace"], item["apiVersion"])
            if live is not None and (metadata(live).get("labels") or {}).get(ce.OWNER_NAME_LABEL) == self.name:
                if delete(self.cluster, item["kind"], item["apiVersion"], item["name"], item["namespace"]):
                    done.append(f"deleted {item['kind']} {item['name']} (created by OLM v1)")
        adopted = {(a["kind"], a["namespace"], a["name"]) for a in self.plan["adopt"]}
        selector = f"{ce.OWNER_KIND_LABEL}={ce.KIND},{ce.OWNER_NAME_LABEL}={self.name}"
        for kind in V1_RBAC_KINDS:  # by label too: what operator-controller generated, whatever the plan computed
            for obj in self.cluster.list(kind, None, RBAC_API, label_selector=selector):
                key = (kind, metadata(obj).get("namespace"), name_of(obj))
                if key not in adopted and delete(self.cluster, kind, RBAC_API, key[2], key[1]):
                    done.append(f"deleted {kind} {key[2]} (created by OLM v1)")
        for item in self.plan["adopt"]:
            restore = dict(item["replaced_labels"])
            changed = edit_metadata(
                self.cluster,
                item,
                labels=restore,
                remove_labels=[k for k in item["labels"] if k not in restore] + [ce.OWNER_KIND_LABEL, ce.OWNER_NAME_LABEL],
                remove_annotations=list(item["annotations"]),
                drop_owner=(ce.KIND, self.name),
            )
            if changed:
                done.append(f"removed OLM v1's marks from {item['kind']} {item['name']}")
        for secret in self.cluster.list("Secret", None, "v1", label_selector=RELEASE_SECRET_SELECTOR.format(self.name)):
            if delete(self.cluster, "Secret", "v1", name_of(secret), metadata(secret).get("namespace")):
                done.append(f"deleted release Secret {metadata(secret).get('namespace')}/{name_of(secret)}")
        guarded_patch(
            self.cluster,
            ce.KIND,
            ce.API_VERSION,
            self.name,
            None,
            lambda o: (
                [{"op": "add", "path": "/metadata/finalizers", "value": [f for f in metadata(o).get("finalizers") or [] if f != HOLD_FINALIZER]}]
                if HOLD_FINALIZER in (metadata(o).get("finalizers") or [])
                else []
            ),
            deleting=True,
        )
        self._wait_extension(absent, "is still there")
        for write in self._writes("freeze_v0"):
            changed = guarded_patch(
                self.cluster,
                write["kind"],
                write["apiVersion"],
                write["name"],
                write["namespace"],
                lambda obj, before=write["before"], after=write["after"]: (
                    [{"op": "add", "path": "/spec/installPlanApproval", "value": before}] if spec(obj).get("installPlanApproval") == after else []
                ),
            )
            if changed:
                done.append(f"restored installPlanApproval {write['before']} on Subscription {write['name']}")
        self._delete_installer(("ClusterRoleBinding", "ClusterRole", "RoleBinding", "Role", "ServiceAccount"), done)
        self.record_phase(ROLLED_BACK)
        return done

    def fail_back(self, why):
        """Roll back (A) and fail with ``why`` and what the rollback did."""
        done = self.rollback()
        raise MigrateError(
            f"{why}. Rolled back: OLM v0 manages the operator as before ({'; '.join(done) or 'nothing to undo'})",
            result=self.result(rolled_back=True, rollback=done),
        )


# ------------------------------------------------------------------------------------------------ entry


def _refusals_text(refusals):
    return "; ".join(f"{r['rule']} {r['subject']}: {r['reason']}" for r in refusals)


def _record_of(records, params):
    if len(records) > 1:
        names = ", ".join(sorted(name_of(r) for r in records))
        raise MigrateError(
            f"namespace {params['namespace']} holds {len(records)} migration records of package {params['package']} ({names}): "
            "keep the one of the Subscription being migrated"
        )
    return records[0] if records else None


def migrate(module, cluster, record):
    p = module.params
    extension_name = p["extension_name"] or p["package"]
    phase = (record.get("data") or {}).get("phase") if record else None
    if record is not None and phase != ROLLED_BACK:
        plan = record_plan(record)
        planned = plan["extension"]["metadata"]["name"]
        if planned != extension_name:
            raise MigrateError(
                f"a migration of package {p['package']} to ClusterExtension {planned} is under way (record {name_of(record)}, "
                f"phase {phase}): run again with extension_name={planned}, or roll it back with state=rolled_back"
            )
        base = {"eligible": True, "refusals": [], "plan": plan, "backup": json.loads((record.get("data") or {}).get("backup") or "{}")}
        if phase == ROLLING_BACK:
            raise MigrateError(
                f"a rollback of the migration of package {p['package']} was interrupted (record {name_of(record)}): finish it with "
                "state=rolled_back, then migrate again",
                result=dict(base, steps_done=[], rolled_back=False),
            )
        if phase == DONE:
            run = Migration(module, cluster, plan, record)
            return dict(base, changed=False, **run.result(msg=f"package {p['package']} is migrated to ClusterExtension {planned} already"))
        run = Migration(module, cluster, plan, record)
        run.base = base
        if module.check_mode:
            return dict(base, changed=True, **run.result(msg=f"would resume the migration after step {phase}"))
        run.forward(phase)
        return dict(base, changed=True, **run.result(msg=f"resumed after step {phase}: migrated to ClusterExtension {planned}"))
    warnings = []
    observed = read_observed(cluster, p, record, warnings)
    if observed is None:
        raise MigrateError(f"namespace {p['namespace']} has no Subscription of package {p['package']} and no migration record of it: nothing to migrate")
    service_account = p["service_account"] or f"{extension_name}-installer"
    plan = mg.plan(observed, extension_name, service_account, p["delete_operator_group"], _resource_for(cluster))
    result = {"eligible": plan["eligible"], "refusals": plan["refusals"], "plan": plan, "steps_done": [], "rolled_back": False, "warnings": warnings}
    result["extension"] = {"name": extension_name, "installed_version": None}
    if not plan["eligible"]:
        msg = f"package {p['package']} in {p['namespace']} cannot move to OLM v1: {_refusals_text(plan['refusals'])}"
        if module.check_mode:
            return dict(result, changed=False, msg=msg)
        raise MigrateError(msg + ". Nothing was changed", result=result)
    if module.check_mode:
        return dict(result, changed=True, backup={"dir": p["backup_dir"], "files": []}, msg="eligible: the plan would be carried out")
    backup = write_backup(p["backup_dir"], observed, plan, module.check_mode)
    write_record(cluster, plan, backup, record)
    record = cluster.get("ConfigMap", plan["record"]["name"], p["namespace"], "v1")
    run = Migration(module, cluster, plan, record)
    run.base = dict(eligible=True, refusals=[], plan=plan, backup=backup, warnings=warnings)
    run.steps_done.append("record")
    run.forward("record")
    return dict(result, changed=True, **run.result(msg=f"migrated package {p['package']} to ClusterExtension {extension_name}"))


def roll_back(module, cluster, record):
    p = module.params
    if record is None:
        return {
            "changed": False,
            "rolled_back": False,
            "steps_done": [],
            "msg": f"no migration record of package {p['package']} in {p['namespace']}: nothing to roll back",
        }
    phase = (record.get("data") or {}).get("phase")
    plan = record_plan(record)
    base = {"plan": plan, "eligible": True, "refusals": [], "backup": json.loads((record.get("data") or {}).get("backup") or "{}")}
    run = Migration(module, cluster, plan, record)
    run.base = base
    if phase == ROLLED_BACK:
        return dict(base, changed=False, **run.result(rolled_back=True, msg="rolled back already"))
    if phase not in ROLLBACK_A_PHASES:
        raise MigrateError(
            f"the migration of package {p['package']} is past step {phase}: OLM v0's Subscription is deleted, so the way back would re-create "
            "it from the backup, which this module does not do; OLM v1 manages the operator (ClusterExtension "
            f"{run.name}); finish with state=migrated",
            result=dict(base, **run.result()),
        )
    if module.check_mode:
        return dict(base, changed=True, **run.result(msg=f"would roll back the migration (recorded after step {phase})"))
    done = run.rollback()
    return dict(base, changed=True, **run.result(rolled_back=True, rollback=done, msg="rolled back: OLM v0 manages the operator as before"))


def execute(module):
    """Entry point of the olm_migrate module."""
    p = module.params
    cluster = Cluster(module.client)
    timer = Deadline()
    if p["state"] != ROLLED_BACK and not module.check_mode and not p["backup_dir"]:
        raise InvalidInputError(
            "backup_dir is required with state=migrated (the backup of every object the move touches is written there before the first "
            "change), except in check mode"
        )
    record = _record_of(read_records(cluster, p["namespace"], p["package"]), p)
    if p["state"] == ROLLED_BACK:
        result = roll_back(module, cluster, record)
    else:
        result = migrate(module, cluster, record)
    if module._diff and result.get("changed") and result.get("plan"):
        result["diff"] = mg.move_diff(result["plan"], back=p["state"] == ROLLED_BACK)
    result["duration"] = timer.elapsed()
    return result
