"""The scenario of olm_migrate's integration tests (issue #34): an operator installed by the real OLM v0, ready to be
moved to the real OLM v1, and what the tests watch while it moves.

``kube-mig34`` is the testbed's kube-demo made another package by renaming (as ``lib.olm_bundles`` makes
kube-v1demo), so that nothing collides with the ``olmv1`` group's kube-v1demo: versions 0.1.0 and 0.2.0, the operator
image the real node's pause image (the pod really runs, on the kubelet node). 0.2.0's Deployment template has an
environment variable 0.1.0's has not, so that the upgrade through OLM v1 after the move really rolls the pods out.

``publish`` pushes, once per test file, under a repository of this run (the testbed registry keeps earlier runs'):
the bundle images, a bundle 0.1.0 whose CRD changes the type of a property (operator-controller's CRD upgrade-safety
preflight refuses it against the live CRD: the v1 failure the rollback test forces; olm/migrate.py's E11 checks
scope and versions only), and four catalog images: ``v0`` (0.1.0 only, on the opm base: OLM v0's registry pod, a
Subscription with Automatic approval at AtLatestKnown), ``v1`` (0.1.0 and 0.2.0), ``v1-incompatible`` (0.1.0 with
that CRD) and ``v1-later`` (0.2.0 only); v1 catalogs rendered with ``olm.csv.metadata`` and all naming the same
bundle images.

``Scenario`` is one test's: its own namespace (pods on the real node), CatalogSource, ClusterCatalogs and extension
name; ``install_v0`` installs the operator with ``olm_operator`` in AllNamespaces mode and adds the data (a custom
resource and a ConfigMap it owns); ``cleanup`` removes everything in the order the testbed findings give (the
Operator object last: OLM v0 re-creates it while objects carry its component label).

``Continuity`` runs beside a module: a watch of the CRD (every event) and the operator's pods and ReplicaSets sampled
every half second. Deployment ``generation`` is not a continuity measure: the API server bumps it on annotation
changes, such as Helm's ownership annotations.
"""

import os
import re
import threading
import time
from pathlib import Path

import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError
from testbed import realnode
from testbed.fleet_catalog import write_renamed_bundles
from testbed.kube import api_client

from lib.polling import poll_until
from lib.runners import run_module_subprocess

PACKAGE = "kube-mig34"
GROUP = "mig34.kubeforge.io"
CRD = f"kubemig34s.{GROUP}"
KIND = "KubeMig34"
PLURAL = "kubemig34s"
CHANNEL = "stable"
RENAMES = {
    "demo.kubeforge.io": GROUP,
    "kubedemos": PLURAL,
    "singular: kubedemo\n": "singular: kubemig34\n",
    "KubeDemo": KIND,
    "kube-demo": PACKAGE,
}
# version -> (the kube-demo bundle it is made from, the version it replaces)
VERSIONS = {"0.1.0": ("0.0.1", None), "0.2.0": ("0.0.2", "0.1.0")}
INSTALLED, UPGRADE = "0.1.0", "0.2.0"
CSV = f"{PACKAGE}.v{INSTALLED}"
OPERATOR_IMAGE = re.compile(r"example\.invalid/kubeforge/kube-mig34-operator:v[0-9.]+")
DEPLOYMENT = f"{PACKAGE}-controller-manager"
SERVICE_ACCOUNT = f"{PACKAGE}-controller-manager"
VIEWER_ROLE = f"{PACKAGE}-kubedemo-viewer"
OPERAND_CONFIG_MAP = f"{PACKAGE}-operand-manifests"
POD_LABEL = "app.kubernetes.io/name=kube-mig34-operator"
# 0.2.0's Deployment differs from 0.1.0's by this variable: the upgrade rolls the pods.
UPGRADE_ENV = {"name": "KUBE_MIG34_RELEASE", "value": UPGRADE}
INCOMPATIBLE = "0.1.0-crd-incompatible"
V0_CATALOG_SOURCE = "mig34"
CR_NAME, CR_STATE = "precious", "precious-state"

OPERATORS, V1ALPHA1 = "operators.coreos.com", "v1alpha1"
OLMV1 = "olm.operatorframework.io"
HELM_LABEL = "app.kubernetes.io/managed-by"
HELM_ANNOTATIONS = ("meta.helm.sh/release-name", "meta.helm.sh/release-namespace")
V1_OWNER_KIND, V1_OWNER_NAME = "olm.operatorframework.io/owner-kind", "olm.operatorframework.io/owner-name"
EXTENSION_LABEL = "operators.kubeforge.io/cluster-extension"

# The kinds searched for objects left behind by OLM v0 or v1: (apiVersion, kind).
KINDS = (
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("v1", "Secret"),
    ("apps/v1", "Deployment"),
)
V0_KINDS = KINDS + (
    (f"{OPERATORS}/v1alpha1", "ClusterServiceVersion"),
    (f"{OPERATORS}/v1alpha1", "Subscription"),
    (f"{OPERATORS}/v1alpha1", "InstallPlan"),
    (f"{OPERATORS}/v2", "OperatorCondition"),
)
# Besides: what Scenario.get and Scenario.list read.
OTHER_KINDS = (
    (f"{OPERATORS}/v1", "Operator"),
    (f"{OPERATORS}/v1", "OperatorGroup"),
    (f"{OLMV1}/v1", "ClusterExtension"),
)


def check(result, what):
    """``result`` of a module run that must have succeeded."""
    assert not result.get("failed"), f"{what} failed: {result.get('msg')}"
    return result


def read(fn, *args, **kwargs):
    """``fn(*args)``, or None on 404."""
    try:
        return fn(*args, **kwargs)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def release_objects(namespace):
    """``(kind, namespace or None, name)`` of the five objects OLM v0 made that OLM v1's release of 0.1.0 holds too:
    what the migration adopts."""
    return sorted(
        [
            ("ClusterRole", None, VIEWER_ROLE),
            ("ConfigMap", namespace, OPERAND_CONFIG_MAP),
            ("CustomResourceDefinition", None, CRD),
            ("Deployment", namespace, DEPLOYMENT),
            ("ServiceAccount", namespace, SERVICE_ACCOUNT),
        ],
        key=lambda t: (t[0], t[1] or "", t[2]),
    )


def settled(probe, what, quiet=5, timeout=60):
    """``probe()`` once it returns the same value twice ``quiet`` seconds apart: OLM v0's olm-operator updates the
    objects its catalog operator created a few seconds after an install (its managedFields entry, nothing else), so
    a resourceVersion compared before and after a module run is read once that has happened."""
    readings = []

    def reading():
        readings.append(probe())
        return readings[-2:]

    steady = poll_until(reading, timeout, interval=quiet, describe=f"{what} to stop changing", until=lambda last: len(last) == 2 and last[0] == last[1])
    return steady[-1]


# ------------------------------------------------------------------------------------------------ bundles, catalogs


def _edit_yaml(path, edit):
    doc = yaml.safe_load(path.read_text())
    edit(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def write_bundles(dest, pause_image):
    """kube-mig34's bundle directories under ``dest`` (``<version>/{manifests,metadata}``, INCOMPATIBLE included),
    the operator image ``pause_image``; returns ``dest`` as a Path."""
    root = write_renamed_bundles(dest, RENAMES, VERSIONS)
    for version in VERSIONS:
        for csv in (root / version / "manifests").glob("*.clusterserviceversion.yaml"):
            csv.write_text(OPERATOR_IMAGE.sub(pause_image, csv.read_text()))

    def add_env(csv):
        (deployment,) = csv["spec"]["install"]["spec"]["deployments"]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        container.setdefault("env", []).append(dict(UPGRADE_ENV))

    (upgrade_csv,) = (root / UPGRADE / "manifests").glob("*.clusterserviceversion.yaml")
    _edit_yaml(upgrade_csv, add_env)

    # the same 0.1.0, but its CRD's spec.message an integer: crdify's type rule refuses it against the live CRD
    bad = root / INCOMPATIBLE
    for path in sorted((root / INSTALLED).rglob("*")):
        if path.is_file():
            target = bad / path.relative_to(root / INSTALLED)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())

    def retype(crd):
        (version,) = crd["spec"]["versions"]
        version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["message"]["type"] = "integer"

    _edit_yaml(bad / "manifests" / f"{GROUP}_{PLURAL}.yaml", retype)
    return root


def catalog_template(bundles):
    """A basic catalog template of channel ``stable`` holding ``bundles`` ([(version, image)], oldest first)."""
    versions = [v for v, _image in bundles]
    channel = []
    for version, _image in bundles:
        entry = {"name": f"{PACKAGE}.v{version}"}
        replaces = VERSIONS.get(version, (None, None))[1]
        if replaces in versions:
            entry["replaces"] = f"{PACKAGE}.v{replaces}"
        channel.append(entry)
    return {
        "schema": "olm.template.basic",
        "entries": [
            {"schema": "olm.package", "name": PACKAGE, "defaultChannel": CHANNEL},
            {"schema": "olm.channel", "package": PACKAGE, "name": CHANNEL, "entries": channel},
        ]
        + [{"schema": "olm.bundle", "image": image} for _v, image in bundles],
    }


def publish(work, olmv1, real_node):
    """Push the bundle and catalog images (see the module's docstring); returns ``{bundles_dir, bundle_refs,
    catalogs: {name: image}, registry_auth}`` (``registry_auth`` as olm_cluster_extension takes it)."""
    work = Path(work)
    auth = {"registry_username": olmv1["registry_username"], "registry_password": olmv1["registry_password"], "ca_file": olmv1["registry_ca_file"]}
    repository = f"{olmv1['registry']}/kubeforge/mig34-{os.urandom(3).hex()}"
    root = write_bundles(work / "bundles", real_node["images"]["pause"])
    refs = {}
    for version in (*VERSIONS, INCOMPATIBLE):
        ref = f"{repository}/{PACKAGE}-bundle:v{version}"
        check(run_module_subprocess(work, "bundle_image", dict(auth, path=str(root / version), image=ref, push=True)), f"bundle_image {version}")
        refs[version] = ref
    layouts = {
        "v0": ([INSTALLED], real_node["images"]["opm"]),
        "v1": ([INSTALLED, UPGRADE], None),
        "v1-incompatible": ([INCOMPATIBLE], None),
        "v1-later": ([UPGRADE], None),
    }
    catalogs = {}
    for name, (versions, base) in layouts.items():
        template = work / f"template-{name}.yaml"
        bundles = [(INSTALLED if v == INCOMPATIBLE else v, refs[v]) for v in versions]
        template.write_text(yaml.safe_dump(catalog_template(bundles), sort_keys=False))
        dest = work / f"catalog-{name}"
        rendered = run_module_subprocess(
            work, "catalog_render", dict(auth, template=str(template), dest=str(dest) + "/", migrate_level="bundle-object-to-csv-metadata")
        )
        check(rendered, f"catalog_render {name}")
        image = f"{repository}/catalog:{name}"
        args = dict(auth, path=str(dest), image=image, push=True)
        if base:
            args["base_image"] = base
        check(run_module_subprocess(work, "catalog_image", args), f"catalog_image {name}")
        catalogs[name] = image
    return {
        "bundles_dir": root,
        "bundle_refs": refs,
        "catalogs": catalogs,
        "registry_auth": {"username": auth["registry_username"], "password": auth["registry_password"], "ca_file": auth["ca_file"]},
    }


# ------------------------------------------------------------------------------------------------ one test's scenario


class Scenario:
    """One test's operator: namespace, CatalogSource, ClusterCatalogs and extension name of its own."""

    def __init__(self, api, kubeconfig, workdir, published, olmv1):
        suffix = os.urandom(3).hex()
        self.api, self.kubeconfig, self.work, self.published, self.olmv1 = api, kubeconfig, Path(workdir), published, olmv1
        self.namespace = f"mig34-{suffix}"
        self.extension = f"mig34-{suffix}"
        self.catalogs = {}  # layout name -> ClusterCatalog name
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self.custom, self.ext, self.rbac = client.CustomObjectsApi(api), client.ApiextensionsV1Api(api), client.RbacAuthorizationV1Api(api)
        self.dynamic = DynamicClient(api)
        self.work.mkdir(parents=True, exist_ok=True)

    def run(self, name, args, check_mode=False, diff=False):
        return run_module_subprocess(self.work, name, dict(args, kubeconfig=self.kubeconfig), check_mode=check_mode, diff=diff)

    def serve(self, layout):
        """A ClusterCatalog of this scenario serving the ``layout`` catalog image; returns its name."""
        name = f"mig34-{layout}-{os.urandom(3).hex()}"
        self.catalogs[layout] = name
        check(self.run("olm_cluster_catalog", dict(name=name, image=self.published["catalogs"][layout], wait=True, wait_timeout=180)), "olm_cluster_catalog")
        return name

    def install_v0(self):
        """The operator through OLM v0 in AllNamespaces mode, its pods on the real node, then the data; returns the
        olm_operator result."""
        self.core.create_namespace({"metadata": {"name": self.namespace, "annotations": dict(realnode.NAMESPACE_ANNOTATIONS)}})
        check(
            self.run(
                "olm_catalog_source",
                dict(
                    namespace=self.namespace,
                    name=V0_CATALOG_SOURCE,
                    image=self.published["catalogs"]["v0"],
                    grpc_pod_config={"nodeSelector": dict(realnode.NODE_SELECTOR), "tolerations": [dict(realnode.TOLERATION)]},
                    wait=True,
                    wait_timeout=180,
                ),
            ),
            "olm_catalog_source",
        )
        installed = check(
            self.run(
                "olm_operator",
                dict(
                    namespace=self.namespace,
                    package=PACKAGE,
                    catalog=V0_CATALOG_SOURCE,
                    channel=CHANNEL,
                    target_namespaces=[],
                    approval="Automatic",
                    wait_timeout=300,
                ),
            ),
            "olm_operator",
        )
        assert installed["installed_csv"] == CSV, installed
        cr = self.custom.create_namespaced_custom_object(
            GROUP,
            "v1alpha1",
            self.namespace,
            PLURAL,
            {"apiVersion": f"{GROUP}/v1alpha1", "kind": KIND, "metadata": {"name": CR_NAME}, "spec": {"message": "do not lose me: " + "x" * 64}},
        )
        owner = {"apiVersion": cr["apiVersion"], "kind": KIND, "name": CR_NAME, "uid": cr["metadata"]["uid"]}
        self.core.create_namespaced_config_map(
            self.namespace, {"metadata": {"name": CR_STATE, "ownerReferences": [owner]}, "data": {"state.json": '{"rows": 42}'}}
        )
        poll_until(lambda: self.v0_state() == ("Succeeded", "AtLatestKnown"), 60, describe=f"{CSV} Succeeded and its Subscription AtLatestKnown")
        poll_until(self.pod_running, 120, describe=f"the operator pod of {DEPLOYMENT} Running and Ready on the real node")
        self.settle()
        return installed

    def settle(self):
        """Wait until the release objects stay unchanged (``settled``)."""
        return settled(self.release_metadata, f"the objects of {CSV}")

    # ---------------------------------------------------------------------------------------- reads

    def resource(self, kind):
        api_version = next(k[0] for k in V0_KINDS + OTHER_KINDS if k[1] == kind)
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def get(self, kind, name, namespace=None):
        """The live object (dict) of kind ``kind`` (one of V0_KINDS or OTHER_KINDS), or None."""
        try:
            return self.resource(kind).get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            return None

    def list(self, kind, namespace=None, label_selector=None):
        """Objects (dicts) of ``kind`` in ``namespace`` (or everywhere) matching ``label_selector``."""
        return self.resource(kind).get(namespace=namespace, label_selector=label_selector).to_dict()["items"]

    def subscription(self):
        return read(self.custom.get_namespaced_custom_object, OPERATORS, V1ALPHA1, self.namespace, "subscriptions", PACKAGE)

    def csv(self):
        return read(self.custom.get_namespaced_custom_object, OPERATORS, V1ALPHA1, self.namespace, "clusterserviceversions", CSV)

    def v0_state(self):
        """(CSV phase, Subscription state)."""
        csv, sub = self.csv() or {}, self.subscription() or {}
        return (csv.get("status") or {}).get("phase"), (sub.get("status") or {}).get("state")

    def extension_object(self, name=None):
        return read(self.custom.get_cluster_custom_object, OLMV1, "v1", "clusterextensions", name or self.extension)

    def pods(self):
        return self.core.list_namespaced_pod(self.namespace, label_selector=POD_LABEL).items

    def pod_running(self):
        pods = [p for p in self.pods() if not p.metadata.deletion_timestamp]
        return (
            len(pods) == 1
            and pods[0].status.phase == "Running"
            and pods[0].spec.node_name == realnode.NODE_NAME
            and all(c.ready for c in pods[0].status.container_statuses or [])
        )

    def data(self):
        """The custom resource and the ConfigMap it owns, as the continuity checks compare them."""
        cr = self.custom.get_namespaced_custom_object(GROUP, "v1alpha1", self.namespace, PLURAL, CR_NAME)
        cm = self.core.read_namespaced_config_map(CR_STATE, self.namespace)
        return {
            "cr": (cr["metadata"]["uid"], cr["metadata"]["resourceVersion"], cr["spec"]),
            "config_map": (cm.metadata.uid, cm.metadata.resource_version, cm.data, [(r.kind, r.name) for r in cm.metadata.owner_references]),
        }

    def operator_pod(self):
        """(uid, node, restart count, ReplicaSet owning it) of the one operator pod."""
        (pod,) = [p for p in self.pods() if not p.metadata.deletion_timestamp]
        restarts = sum(c.restart_count for c in pod.status.container_statuses or [])
        (owner,) = [r.name for r in pod.metadata.owner_references or [] if r.kind == "ReplicaSet"]
        return pod.metadata.uid, pod.spec.node_name, restarts, owner

    def replica_sets(self):
        return sorted(rs.metadata.name for rs in self.apps.list_namespaced_replica_set(self.namespace, label_selector=POD_LABEL).items)

    def release_metadata(self):
        """(kind, namespace, name) -> (resourceVersion, labels, annotations, ownerReferences) of the release objects."""
        out = {}
        for kind, namespace, name in release_objects(self.namespace):
            obj = self.get(kind, name, namespace)
            meta = obj["metadata"] if obj else {}
            out[(kind, namespace, name)] = (
                meta.get("resourceVersion"),
                meta.get("labels") or {},
                meta.get("annotations") or {},
                [(r["kind"], r["name"], bool(r.get("controller"))) for r in meta.get("ownerReferences") or []],
            )
        return out

    def labelled(self, selector, kinds=KINDS, everywhere=True):
        """``[(kind, namespace, name)]`` of the objects ``selector`` matches, in every namespace (or only this one)."""
        found = []
        for _api_version, kind in kinds:
            for obj in self.list(kind, None if everywhere else self.namespace, label_selector=selector):
                found.append((kind, obj["metadata"].get("namespace"), obj["metadata"]["name"]))
        return sorted(found, key=lambda t: (t[0], t[1] or "", t[2]))

    def release_secrets(self, extension=None):
        return sorted(
            s.metadata.name
            for s in self.core.list_namespaced_secret(
                self.olmv1["system_namespace"], label_selector=f"owner=operator-controller,name={extension or self.extension}"
            ).items
        )

    def v1_leftovers(self):
        """Everything OLM v1 or an installer of this scenario's extension could have left: the ClusterExtension, its
        release Secrets, objects labelled as owned by it, and the installer ServiceAccount and RBAC named after it."""
        left = []
        if self.extension_object() is not None:
            left.append(("ClusterExtension", None, self.extension))
        left += [("Secret", self.olmv1["system_namespace"], name) for name in self.release_secrets()]
        left += self.labelled(f"{V1_OWNER_NAME}={self.extension}")
        left += self.labelled(f"{EXTENSION_LABEL}={self.extension}")
        for kind in ("ClusterRole", "ClusterRoleBinding"):
            left += [(kind, None, o["metadata"]["name"]) for o in self.list(kind) if o["metadata"]["name"].startswith(self.extension)]
        for kind in ("ServiceAccount", "Role", "RoleBinding"):
            left += [(kind, self.namespace, o["metadata"]["name"]) for o in self.list(kind, self.namespace) if o["metadata"]["name"].startswith(self.extension)]
        return sorted(set(left), key=lambda t: (t[0], t[1] or "", t[2]))

    # ---------------------------------------------------------------------------------------- cleanup

    def cleanup(self):
        """Remove everything of the scenario, in the order of the testbed findings; raise naming what could not be."""
        problems = []

        def attempt(what, fn, *args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except ApiException as exc:
                if exc.status != 404:
                    problems.append(f"{what}: {exc.status} {exc.reason}")
            except Exception as exc:  # noqa: BLE001 - every step runs; the problems are raised together
                problems.append(f"{what}: {exc}")
            return None

        if self.extension_object() is not None:
            removed = attempt(
                "ClusterExtension",
                self.run,
                "olm_cluster_extension",
                dict(name=self.extension, state="absent", delete_crds_and_data=True, wait=True, wait_timeout=180),
            )
            if removed and removed.get("failed"):
                problems.append(f"olm_cluster_extension state=absent: {removed.get('msg')}")
        # no Subscription left to resolve again while the rest goes
        attempt("Subscription", self.custom.delete_namespaced_custom_object, OPERATORS, V1ALPHA1, self.namespace, "subscriptions", PACKAGE)
        for name in self.catalogs.values():
            attempt(f"ClusterCatalog {name}", self.custom.delete_cluster_custom_object, OLMV1, "v1", "clustercatalogs", name)
        attempt("CRD", self.ext.delete_custom_resource_definition, CRD)
        attempt("namespace", self.core.delete_namespace, self.namespace)
        for name in attempt("release Secrets", self.release_secrets) or []:
            attempt(f"Secret {name}", self.core.delete_namespaced_secret, name, self.olmv1["system_namespace"])
        try:
            poll_until(lambda: read(self.core.read_namespace, self.namespace) is None, 240, 1, f"namespace {self.namespace} deleted")
        except AssertionError as exc:
            problems.append(str(exc))
        # after the namespace, and once nothing carries its component label: OLM v0 re-creates the Operator object
        # while an object does
        selectors = (
            f"olm.owner.namespace={self.namespace}",
            f"olm.owner in ({', '.join(f'{PACKAGE}.v{v}' for v in VERSIONS)})",
            f"operators.coreos.com/{PACKAGE}.{self.namespace}",
            f"{V1_OWNER_NAME}={self.extension}",
            f"{EXTENSION_LABEL}={self.extension}",
        )
        for kind, delete in (("ClusterRole", self.rbac.delete_cluster_role), ("ClusterRoleBinding", self.rbac.delete_cluster_role_binding)):
            names = {o["metadata"]["name"] for selector in selectors for o in attempt(f"{kind} list", self.list, kind, label_selector=selector) or []}
            names |= {o["metadata"]["name"] for o in attempt(f"{kind} list", self.list, kind) or [] if o["metadata"]["name"].startswith(self.extension)}
            if kind == "ClusterRole":
                names.add(VIEWER_ROLE)
            for name in sorted(names):
                attempt(f"{kind} {name}", delete, name)
        attempt("Operator", self.custom.delete_cluster_custom_object, OPERATORS, "v1", "operators", f"{PACKAGE}.{self.namespace}")
        try:
            poll_until(lambda: read(self.ext.read_custom_resource_definition, CRD) is None, 120, 1, f"CRD {CRD} deleted")
        except AssertionError as exc:
            problems.append(str(exc))
        if read(self.custom.get_cluster_custom_object, OPERATORS, "v1", "operators", f"{PACKAGE}.{self.namespace}") is not None:
            problems.append(f"Operator {PACKAGE}.{self.namespace} was created again")
        assert not problems, f"cleanup of {self.namespace} left: {problems}"


# ------------------------------------------------------------------------------------------------ continuity


class Continuity:
    """Watches the CRD and samples the operator's pods and ReplicaSets while a module runs (``with``): ``crd_events``
    ([(type, uid, deletionTimestamp)]), ``pods`` ({uid: highest restart count}), ``not_ready`` (samples where the one
    pod was not Running and Ready), ``replica_sets`` (every name seen), ``errors``."""

    def __init__(self, kubeconfig, namespace, interval=0.5):
        self.kubeconfig, self.namespace, self.interval = kubeconfig, namespace, interval
        self.crd_events, self.pods, self.not_ready, self.replica_sets, self.errors = [], {}, [], set(), []
        self._stop = threading.Event()
        self._threads = []
        self._api = None

    def __enter__(self):
        self._api = api_client(self.kubeconfig, pool=4)
        ext = client.ApiextensionsV1Api(self._api)
        listed = ext.list_custom_resource_definition(field_selector=f"metadata.name={CRD}")
        self.crd_events += [("LISTED", c.metadata.uid, c.metadata.deletion_timestamp) for c in listed.items]
        self._threads = [
            threading.Thread(target=self._watch_crd, args=(ext, listed.metadata.resource_version), daemon=True),
            threading.Thread(target=self._sample, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=15)
        self._api.close()
        return False

    def _watch_crd(self, ext, resource_version):
        while not self._stop.is_set():
            try:
                stream = watch.Watch().stream(
                    ext.list_custom_resource_definition, field_selector=f"metadata.name={CRD}", resource_version=resource_version, timeout_seconds=2
                )
                for event in stream:
                    obj = event["object"]
                    resource_version = obj.metadata.resource_version
                    self.crd_events.append((event["type"], obj.metadata.uid, obj.metadata.deletion_timestamp))
            except ApiException as exc:
                if exc.status != 410:
                    self.errors.append(f"CRD watch: {exc.status} {exc.reason}")
                    time.sleep(0.5)
                # 410 Gone: list again (what happened in between shows in the state listed)
                listed = ext.list_custom_resource_definition(field_selector=f"metadata.name={CRD}")
                self.crd_events += [("RELISTED", c.metadata.uid, c.metadata.deletion_timestamp) for c in listed.items]
                if not listed.items:
                    self.crd_events.append(("RELISTED-ABSENT", None, None))
                resource_version = listed.metadata.resource_version
            except Exception as exc:  # noqa: BLE001 - reported through errors
                self.errors.append(f"CRD watch: {exc}")
                time.sleep(0.5)

    def _sample(self):
        core, apps = client.CoreV1Api(self._api), client.AppsV1Api(self._api)
        while not self._stop.is_set():
            try:
                pods = core.list_namespaced_pod(self.namespace, label_selector=POD_LABEL).items
                for pod in pods:
                    restarts = sum(c.restart_count for c in pod.status.container_statuses or [])
                    self.pods[pod.metadata.uid] = max(restarts, self.pods.get(pod.metadata.uid, 0))
                ready = [
                    p
                    for p in pods
                    if not p.metadata.deletion_timestamp and p.status.phase == "Running" and all(c.ready for c in p.status.container_statuses or [])
                ]
                if len(pods) != 1 or len(ready) != 1:
                    self.not_ready.append(sorted((p.metadata.name, p.status.phase) for p in pods))
                self.replica_sets.update(rs.metadata.name for rs in apps.list_namespaced_replica_set(self.namespace, label_selector=POD_LABEL).items)
            except Exception as exc:  # noqa: BLE001 - reported through errors
                self.errors.append(f"pod sampler: {exc}")
            self._stop.wait(self.interval)
