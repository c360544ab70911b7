# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An OLM v1 ClusterExtension as a fleet rollout moves it: through olm_cluster_extension's own present state
(targets.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet_cluster.targets import TargetError, lines
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import get_object
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import Source
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import diagnose as diagnose_v0
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.status import condition, metadata, name_of, spec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import diagnose as diagnose_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import operator as olm_operator
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster.info import group_version_served
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_catalog as cc
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import cluster_extension as ce
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import diagnose as diagnose_v1
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster import cluster_extension as extension_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1_cluster.cluster_catalog_info import fetch_contents

# OLM v1's Helm-based applier labels what it installs with the owning ClusterExtension.
OWNER_NAME_LABEL = ce.OWNER_NAME_LABEL


class _ExtensionModule:
    """olm_cluster_extension's view of this module: that module's options for the move, this module's client."""

    check_mode = False
    _diff = False

    def __init__(self, module, params):
        self.params = params
        self.client = module.client
        self.cluster = module.cluster


class OlmV1:
    """An operator installed by an OLM v1 ClusterExtension named ``name``; moved as olm_cluster_extension moves it."""

    kind = rec.KIND_OLM_V1

    def __init__(self, module, params):
        self.module = module
        self.client = module.client
        self.cluster = module.cluster
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

    def read(self, diagnose=True):
        self.extension = get_object(self.client, self._resource(), self.name)
        if self.extension is None:
            return False, None, None, None
        current = (ce.installed_bundle(self.extension) or {}).get("version")
        installed = condition(self.extension, "Installed") or {}
        problem = None
        if installed.get("status") != "True":
            problem = f"ClusterExtension {self.name} is not Installed ({installed.get('reason')}: {installed.get('message')})"
        elif diagnose:
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
        snapshot, _notes = diagnose_cluster.read_extension_snapshot(self.cluster, self.name, events=20)
        findings = diagnose_v1.diagnose(snapshot)
        causes = sorted({f.cause for f in findings})
        return causes, lines(diagnose_v0.summary(findings, None, subject=f"ClusterExtension {self.name}")) if causes else ""
