# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a fleet rollout moves on one cluster, one class per kind: an OLM v0 operator (its Subscription), an OLM v1
ClusterExtension, or a DaemonSet. Each reads what runs now (``read``), makes the change through the layer of the
module that owns it (``olm_operator``'s, ``olm_cluster_extension``'s, ``daemonset_canary``'s), moves back
(``rollback``), names the objects its health gate watches (``gate_sources``) and says why it fails (``diagnose``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as canary_core
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster import rollout as canary_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.args import rollout_defaults
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import gate as fleet_gate
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as diagnose_v0
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose_v1
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import info as olm_info
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, csv_deployment_names, metadata, name_of, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import cluster_extension as extension_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import diagnose as diagnose_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as olm_operator
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.cluster_catalog_info import fetch_contents
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import group_version_served, operator_info

OPERATORS_API = "operators.coreos.com/v1alpha1"
# OLM v1's Helm-based applier labels what it installs with the owning ClusterExtension.
OWNER_NAME_LABEL = ce.OWNER_NAME_LABEL


class TargetError(KubeforgeError):
    """What the rollout moves cannot be read or moved here; the message says why."""


def _lines(findings_summary):
    return "; ".join(line.strip() for line in findings_summary if line and line.strip())


class OlmV0:
    """An operator installed through an OLM v0 Subscription: ``name`` is its package, ``namespace`` the
    Subscription's."""

    kind = rec.KIND_OLM_V0

    def __init__(self, module, params):
        client = module.client
        self.client = client
        self.cluster = olm_operator.Cluster(client)
        self.package, self.namespace = params["name"], params["namespace"]
        self.params = params
        self.info = None

    def record_namespace(self):
        return self.namespace

    def read(self):
        """``(installed, current version, versions offered in upgrade order, problem)``."""
        served, why = group_version_served(self.client, OPERATORS_API)
        if not served:
            raise TargetError(f"OLM v0 is not installed on this cluster ({why}): no Subscription can be moved here")
        self.info = operator_info(self.client, self.namespace, package=self.package)["operator"]
        sub, csv = self.info.get("subscription"), self.info.get("csv")
        if sub is None:
            return False, None, None, None
        channel = olm_info.find_channel(self.info.get("catalog"), sub.get("channel"))
        offered = list(channel["versions"]) if channel else []
        if not self.info.get("catalog"):
            offered = []
        problem = None
        if not self.info.get("installed"):
            problem = f"CSV {(csv or {}).get('name') or sub.get('installed_csv') or '-'} is {(csv or {}).get('phase') or 'not installed'}"
        else:
            causes, summary = self.diagnose()
            if causes:
                problem = f"olm_diagnose: {summary}"
        return True, self.info.get("installed_version"), offered, problem

    def describe_catalog(self):
        sub = self.info.get("subscription") or {}
        return f"channel {sub.get('channel') or 'default'} of CatalogSource {sub.get('source_namespace') or self.namespace}/{sub.get('source')}"

    def change(self, version, timeout):
        sub = self.info["subscription"]
        params = {
            "namespace": self.namespace,
            "package": self.package,
            "subscription_name": sub["name"],
            "catalog": sub["source"],
            "catalog_namespace": sub.get("source_namespace") or self.namespace,
            "channel": sub.get("channel"),
            "version": version,
            "approval": "Manual",
            "approve_dependencies": self.params.get("approve_dependencies", True),
        }
        result = olm_operator.install(self.cluster, params, False, True, timeout)
        self.installed_csv = result.get("installed_csv")
        return result

    def rollback(self, version, timeout):
        raise TargetError("OLM v0 cannot downgrade an installed operator")

    def gate_sources(self):
        csv_name = getattr(self, "installed_csv", None) or (self.info.get("subscription") or {}).get("installed_csv")
        csv = get_object(self.client, self.cluster.resource("ClusterServiceVersion", OPERATORS_API), csv_name, self.namespace) if csv_name else None
        owner = Source("owner", OPERATORS_API, "ClusterServiceVersion", self.namespace, csv_name)
        return owner, csv_deployment_names(csv) if csv else None, None

    def diagnose(self):
        snapshot, _notes = diagnose_cluster.read_snapshot(self.client, self.namespace, self.package, events=20)
        findings = diagnose_v0.diagnose(snapshot)
        causes = sorted({f.cause for f in findings})
        return causes, _lines(diagnose_v0.summary(findings, self.namespace, self.package)) if causes else ""


class _ExtensionModule:
    """olm_cluster_extension's view of this module: that module's options for the move, this module's client."""

    check_mode = False
    _diff = False

    def __init__(self, module, params):
        self._module = module
        self.params = params
        self.client = module.client

    def resource(self, kind, api_version):
        return self._module.resource(kind, api_version)


class OlmV1:
    """An operator installed by an OLM v1 ClusterExtension named ``name``; moved as olm_cluster_extension moves it."""

    kind = rec.KIND_OLM_V1

    def __init__(self, module, params):
        self.module = module
        client = module.client
        self.client = client
        self.cluster = Cluster(client)
        self.name = params["name"]
        self.params = params
        self.extension = None

    def _resource(self):
        served, why = group_version_served(self.client, ce.API_VERSION)
        if not served:
            raise TargetError(f"OLM v1 is not installed on this cluster ({why}): no ClusterExtension can be moved here")
        return self.cluster.resource(ce.KIND, ce.API_VERSION)

    def record_namespace(self):
        return spec(self.extension).get("namespace")

    def read(self):
        self.extension = get_object(self.client, self._resource(), self.name)
        if self.extension is None:
            return False, None, None, None
        current = (ce.installed_bundle(self.extension) or {}).get("version")
        installed = condition(self.extension, "Installed") or {}
        problem = None
        if installed.get("status") != "True":
            problem = f"ClusterExtension {self.name} is not Installed ({installed.get('reason')}: {installed.get('message')})"
        else:
            causes, summary = self.diagnose()
            if causes:
                problem = f"olm_diagnose: {summary}"
        return True, current, self.offered_versions(), problem

    def package(self):
        return ((spec(self.extension).get("source") or {}).get("catalog") or {}).get("packageName")

    def offered_versions(self):
        """The package's versions across the ClusterCatalogs catalogd serves (oldest first), read from catalogd."""
        package, versions, errors = self.package(), set(), []
        listing = self.cluster.list(cc.KIND, None, cc.API_VERSION)
        for catalog in listing:
            base = cc.base_url(catalog)
            if not base or (condition(catalog, "Serving") or {}).get("status") != "True":
                continue
            try:
                cfg = load_bytes(fetch_contents(self.client, base, self.params.get("catalogd_ca_cert")), source=base)
                packages, _problems = cc.contents_summary(cc.only_package(cfg, package))
            except (ValueError, FBCError) as exc:
                errors.append(f"ClusterCatalog {name_of(catalog)}: {exc}")
                continue
            for pkg in packages:
                for channel in pkg["channels"]:
                    versions.update(channel["versions"])
        if errors and not versions:
            raise TargetError(f"the versions of package {package} could not be read from catalogd: {excerpt('; '.join(errors))}")
        return sorted(versions, key=semver.parse)

    def describe_catalog(self):
        return f"the ClusterCatalogs catalogd serves (package {self.package()})"

    def _installer_is_ours(self, sa_name, namespace):
        """Whether olm_cluster_extension created the installer ServiceAccount (then its RBAC is derived again for the
        new version, as that module does)."""
        account = self.cluster.get("ServiceAccount", sa_name, namespace) if sa_name else None
        return (metadata(account).get("labels") or {}).get(olm_operator.CREATED_BY_LABEL) == extension_cluster.CREATED_BY

    def _move(self, version, timeout, policy=None):
        """olm_cluster_extension's present state for the extension's own spec with ``version`` (and ``policy``)."""
        catalog = (spec(self.extension).get("source") or {}).get("catalog") or {}
        namespace = spec(self.extension).get("namespace")
        sa_name = (spec(self.extension).get("serviceAccount") or {}).get("name")
        params = {
            "name": self.name,
            "state": "present",
            "namespace": namespace,
            "package": catalog.get("packageName"),
            "version": version,
            "channels": catalog.get("channels"),
            "catalog_selector": catalog.get("selector"),
            "upgrade_constraint_policy": policy or catalog.get("upgradeConstraintPolicy"),
            "crd_upgrade_safety": ((spec(self.extension).get("install") or {}).get("preflight") or {}).get("crdUpgradeSafety", {}).get("enforcement"),
            "config": None,
            "service_account": sa_name,
            "create_service_account": self._installer_is_ours(sa_name, namespace),
            "force_conflicts": False,
            "registry_auth": self.params.get("registry_auth"),
            "wait": True,
            "wait_timeout": timeout,
        }
        result = extension_cluster.present(_ExtensionModule(self.module, params))
        self.extension = result.get("cluster_extension") or self.extension
        return result

    def change(self, version, timeout):
        return self._move(version, timeout)

    def rollback(self, version, timeout):
        """Pin the version it came from; a move back is not an upgrade edge of the catalog, so operator-controller is
        told the versions are self-certified for this move, and the extension's own policy is put back afterwards."""
        policy = ((spec(self.extension).get("source") or {}).get("catalog") or {}).get("upgradeConstraintPolicy") or "CatalogProvided"
        result = self._move(version, timeout, policy="SelfCertified")
        self._move(version, timeout, policy=policy)
        return result

    def gate_sources(self):
        namespace = spec(self.extension).get("namespace")
        owner = Source("owner", ce.API_VERSION, ce.KIND, None, self.name)
        deployments = Source("deployments", "apps/v1", "Deployment", namespace, label_selector=f"{OWNER_NAME_LABEL}={self.name}")
        return owner, None, deployments

    def diagnose(self):
        snapshot, _notes = diagnose_cluster.read_extension_snapshot(self.client, self.name, events=20)
        findings = diagnose_v1.diagnose(snapshot)
        causes = sorted({f.cause for f in findings})
        return causes, _lines(diagnose_v0.summary(findings, None, subject=f"ClusterExtension {self.name}")) if causes else ""


class DaemonSet:
    """A DaemonSet moved to new images through ``daemonset_canary`` (one canary node first, then batches)."""

    kind = rec.KIND_DAEMONSET

    def __init__(self, module, params):
        self.client = module.client
        self.cluster = Cluster(self.client)
        self.name, self.namespace = params["name"], params["namespace"]
        self.images = params["images"] or {}
        self.params = params
        self.daemonset = None

    def record_namespace(self):
        return self.namespace

    def current_images(self):
        pod_spec = ((spec(self.daemonset).get("template") or {}).get("spec")) or {}
        containers = (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])
        return {c.get("name"): c.get("image") for c in containers if c.get("name") in self.images}

    def read(self):
        self.daemonset = self.cluster.get("DaemonSet", self.name, self.namespace, "apps/v1")
        if self.daemonset is None:
            return False, None, None, None
        missing = sorted(set(self.images) - set(self.current_images()))
        if missing:
            raise TargetError(f"DaemonSet {self.namespace}/{self.name} has no container named {', '.join(missing)}")
        current = rec.target_text(self.kind, self.current_images())
        ready, _failed, message = fleet_gate.owner_state(self.kind, self.daemonset, self.current_images())
        phase = (metadata(self.daemonset).get("annotations") or {}).get(canary_core.PHASE)
        problem = None
        if phase and phase != canary_core.ROLLED_BACK:
            problem = f"a daemonset_canary rollout of it is {phase}"
        elif not ready:
            problem = message
        return True, current, None, problem

    def describe_catalog(self):
        return "no catalog (images)"

    def _canary(self, images, timeout, on_failure):
        params = dict(
            rollout_defaults(),
            **(self.params.get("canary") or {}),
            name=self.name,
            namespace=self.namespace,
            images=images,
            template=None,
            undo=False,
            pause_after_canary=False,
            wait=True,
            wait_timeout=timeout,
            operator_condition=None,
            operator_condition_namespace=None,
            canary_nodes=None,
            canary_node_selector=None,
            on_failure=on_failure,
        )
        try:
            return canary_cluster.run(self.client, params, False)
        finally:
            self.daemonset = self.cluster.get("DaemonSet", self.name, self.namespace, "apps/v1")

    def change(self, target, timeout):
        """daemonset_canary to the new images; with on_failure=rollback its own rollback (the previous revision's
        template) undoes a canary that fails."""
        return self._canary(target, timeout, self.params.get("on_failure") or "halt")

    def rollback(self, images, timeout):
        return self._canary(images, timeout, "halt")

    def gate_sources(self):
        owner = Source("owner", "apps/v1", "DaemonSet", self.namespace, self.name)
        return owner, [], None

    def diagnose(self):
        return [], ""


TARGETS = {cls.kind: cls for cls in (OlmV0, OlmV1, DaemonSet)}
