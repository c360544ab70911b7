# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which default OpenShift SCC would admit a pod: a data table of SCCs and a table of pure predicates.

``recommend_scc(obj)`` names the least-privileged default SCC whose constraints a pod spec satisfies, and the
fields that rule out the less privileged ones. ``obj`` may be a Pod, a Deployment/DaemonSet/StatefulSet/ReplicaSet/
Job/CronJob, a pod template, a bare pod spec or a ClusterServiceVersion (``spec.install.spec.deployments``); see
``pod_specs_of``. No Ansible or kubernetes imports: everything here is testable with literal dicts.

Semantics follow SCC admission in openshift/apiserver-library-go (``sccmatching/provider.go`` and the strategies
under ``pkg/securitycontextconstraints``): admission first *defaults* unset fields from the SCC (UID, fsGroup,
supplemental groups, SELinux level, seccomp profile, required capability drops, ``allowPrivilegeEscalation: false``)
and then validates. So an unset field never rules an SCC out; only values the pod sets explicitly do.

Assumptions (the namespace is not known here):

- ``MustRunAsRange`` (UID) and ``MustRunAs`` (fsGroup, supplementalGroups) take their range from the namespace
  annotations ``openshift.io/sa.scc.uid-range`` / ``openshift.io/sa.scc.supplemental-groups``. An unset value is
  generated from that range and is always satisfiable. An explicit value is satisfiable only when it lies inside
  ``uid_range`` / ``gid_range`` given by the caller; without a given range an explicit value is treated as outside
  (OpenShift allocates namespace ranges from 1000000000 up, far from the UIDs images hard-code).
- SELinux ``MustRunAs`` takes its level from ``openshift.io/sa.scc.mcs``: explicit ``user``/``role``/``type``
  never match (the SCC's options carry only a level); an explicit ``level`` matches only ``mcs_level`` if given.
- The user an image runs as is unknown. A container without ``runAsUser`` is admitted by ``restricted-v2`` (which
  assigns a namespace UID). Pass ``image_users={container_name: uid}`` (``"*"`` for every container) when the pod
  must keep the image's user: that UID is then matched as if it were ``runAsUser``.
- AppArmor is not an SCC constraint (apiserver-library-go has no AppArmor strategy); Pod Security admission, which
  OpenShift also runs, is out of scope here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt

Violation = namedtuple("Violation", ["field", "message"])

# scc: the recommended SCC name (None if no default SCC admits the pod); reasons: messages of the constraints that
# rule out every less privileged SCC; fields: the pod spec paths behind them; rejected: {scc: [Violation, ...]} for
# each less privileged SCC, in order.
Recommendation = namedtuple("Recommendation", ["scc", "reasons", "fields", "rejected"])

PodSpecRef = namedtuple("PodSpecRef", ["label", "spec", "annotations"])


class PodSpecError(KubeforgeError):
    """The object holds no pod spec the recommendation can read."""


# ------------------------------------------------------------------------------------------- default SCCs
# Values from openshift/cluster-kube-apiserver-operator c813e820 (the revision scc.md section 2 cites),
# bindata/bootkube/scc-manifests/0000_20_kube-apiserver-operator_00_scc-<name>.yaml; summarised in scc.md section 2
# (table rows restricted-v2, nonroot-v2, hostnetwork-v2, anyuid, privileged, hostaccess, hostmount-anyuid(-v2),
# hostnetwork). Only the fields admission validates are kept. restricted-v3 and nested-container (need
# hostUsers: false) and the legacy restricted/nonroot are not candidates for a recommendation.
_V2_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret")
_HOST_VOLUMES = _V2_VOLUMES + ("hostPath",)
_HOSTMOUNT_VOLUMES = _V2_VOLUMES + ("hostPath", "nfs")


def _scc(name, **fields):
    base = {
        "name": name,
        "priority": None,
        "allowPrivilegedContainer": False,
        "allowHostNetwork": False,
        "allowHostPorts": False,
        "allowHostPID": False,
        "allowHostIPC": False,
        "allowPrivilegeEscalation": True,
        "defaultAddCapabilities": (),
        "allowedCapabilities": (),
        "requiredDropCapabilities": (),
        "runAsUser": {"type": "MustRunAsRange"},
        "seLinuxContext": {"type": "MustRunAs"},
        "fsGroup": {"type": "MustRunAs"},
        "supplementalGroups": {"type": "RunAsAny"},
        "seccompProfiles": (),
        "allowedUnsafeSysctls": (),
        "forbiddenSysctls": (),
        "readOnlyRootFilesystem": False,
        "userNamespaceLevel": "AllowHostLevel",
        "volumes": _V2_VOLUMES,
    }
    base.update(fields)
    return base


DEFAULT_SCCS = (
    # scc.md section 2, row restricted-v2 (manifest ...00_scc-restricted-v2.yaml)
    _scc(
        "restricted-v2",
        allowPrivilegeEscalation=False,
        allowedCapabilities=("NET_BIND_SERVICE",),
        requiredDropCapabilities=("ALL",),
        seccompProfiles=("runtime/default",),
    ),
    # row nonroot-v2 (...00_scc-nonroot-v2.yaml)
    _scc(
        "nonroot-v2",
        allowPrivilegeEscalation=False,
        allowedCapabilities=("NET_BIND_SERVICE",),
        requiredDropCapabilities=("ALL",),
        runAsUser={"type": "MustRunAsNonRoot"},
        fsGroup={"type": "RunAsAny"},
        seccompProfiles=("runtime/default",),
    ),
    # row hostnetwork-v2 (...00_scc-hostnetwork-v2.yaml; supplementalGroups is MustRunAs there, unlike restricted-v2)
    _scc(
        "hostnetwork-v2",
        allowHostNetwork=True,
        allowHostPorts=True,
        allowPrivilegeEscalation=False,
        allowedCapabilities=("NET_BIND_SERVICE",),
        requiredDropCapabilities=("ALL",),
        supplementalGroups={"type": "MustRunAs"},
        seccompProfiles=("runtime/default",),
    ),
    # row anyuid (...00_scc-anyuid.yaml): priority 10
    _scc(
        "anyuid",
        priority=10,
        requiredDropCapabilities=("MKNOD",),
        runAsUser={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
    ),
    # row hostmount-anyuid(-v2) (...00_scc-hostmount-anyuid.yaml, ...00_scc-hostmount-anyuid-v2.yaml)
    _scc(
        "hostmount-anyuid",
        requiredDropCapabilities=("MKNOD",),
        runAsUser={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
        volumes=_HOSTMOUNT_VOLUMES,
    ),
    _scc(
        "hostmount-anyuid-v2",
        requiredDropCapabilities=("MKNOD",),
        runAsUser={"type": "RunAsAny"},
        seLinuxContext={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
        volumes=_HOSTMOUNT_VOLUMES,
    ),
    # row "hostnetwork (legacy v1)" (...00_scc-hostnetwork.yaml)
    _scc(
        "hostnetwork",
        allowHostNetwork=True,
        allowHostPorts=True,
        requiredDropCapabilities=("KILL", "MKNOD", "SETUID", "SETGID"),
        supplementalGroups={"type": "MustRunAs"},
    ),
    # row hostaccess (...00_scc-hostaccess.yaml)
    _scc(
        "hostaccess",
        allowHostNetwork=True,
        allowHostPorts=True,
        allowHostPID=True,
        allowHostIPC=True,
        requiredDropCapabilities=("KILL", "MKNOD", "SETUID", "SETGID"),
        volumes=_HOST_VOLUMES,
    ),
    # row privileged (...00_scc-privileged.yaml)
    _scc(
        "privileged",
        allowPrivilegedContainer=True,
        allowHostNetwork=True,
        allowHostPorts=True,
        allowHostPID=True,
        allowHostIPC=True,
        allowedCapabilities=("*",),
        runAsUser={"type": "RunAsAny"},
        seLinuxContext={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
        seccompProfiles=("*",),
        allowedUnsafeSysctls=("*",),
        volumes=("*",),
    ),
)

# Granted to system:authenticated by a default ClusterRoleBinding (scc.md section 2): nothing to grant.
DEFAULT_GRANTED = frozenset(("restricted-v2",))

# Safe sysctls every SCC admits (apiserver-library-go sysctl/mustmatchpatterns.go; the last three only on new kernels).
SAFE_SYSCTLS = frozenset(
    (
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    )
)

# Pod spec volume keys -> SCC FSType names (openshift/api security/v1 types.go FSType constants).
VOLUME_FSTYPES = {
    "hostPath": "hostPath",
    "emptyDir": "emptyDir",
    "gcePersistentDisk": "gcePersistentDisk",
    "awsElasticBlockStore": "awsElasticBlockStore",
    "gitRepo": "gitRepo",
    "secret": "secret",
    "nfs": "nfs",
    "iscsi": "iscsi",
    "glusterfs": "glusterfs",
    "persistentVolumeClaim": "persistentVolumeClaim",
    "rbd": "rbd",
    "flexVolume": "flexVolume",
    "cinder": "cinder",
    "cephfs": "cephFS",
    "flocker": "flocker",
    "downwardAPI": "downwardAPI",
    "fc": "fc",
    "azureFile": "azureFile",
    "configMap": "configMap",
    "vsphereVolume": "vsphere",
    "quobyte": "quobyte",
    "azureDisk": "azureDisk",
    "photonPersistentDisk": "photonPersistentDisk",
    "projected": "projected",
    "portworxVolume": "portworxVolume",
    "scaleIO": "scaleIO",
    "storageos": "storageOS",
    "csi": "csi",
    "ephemeral": "ephemeral",
    "image": "image",
}

# ---------------------------------------------------------------------------------- restrictiveness order
# The weights SCC admission sorts by when priorities tie (apiserver-library-go util/sort/byrestrictions.go): lower is
# more restrictive. The recommendation walks the table in this order, so "least privileged" means what the
# admission plugin itself calls most restrictive. Host PID/IPC carry no weight there.
_TRIVIAL_VOLUMES = frozenset(("secret", "configMap", "emptyDir", "downwardAPI", "projected", "none"))
_STRATEGY_POINTS = {"MustRunAs": 10000, "MustRunAsRange": 20000, "MustRunAsNonRoot": 30000, "RunAsAny": 40000}


def restrictiveness(scc):
    """Points of an SCC dict: lower means more restrictive."""
    total = 1600000 if scc.get("allowPrivilegedContainer") else 0
    volumes = set(scc.get("volumes") or ())
    if volumes & {"hostPath", "*"}:
        total += 200000
    elif volumes - _TRIVIAL_VOLUMES:
        total += 100000
    total += 400000 if scc.get("allowHostNetwork") else 0
    total += 800000 if scc.get("allowHostPorts") else 0
    allowed = [c.upper() for c in scc.get("allowedCapabilities") or ()]
    drops = [c.upper() for c in scc.get("requiredDropCapabilities") or ()]
    caps = 5000 + 300 * len(scc.get("defaultAddCapabilities") or ())
    caps += 4000 if ("*" in allowed or "ALL" in allowed) else 10 * len(allowed)
    caps += -3000 if "ALL" in drops else -50 * len(drops)
    total += min(max(caps, 0), 9999)
    total += _STRATEGY_POINTS.get((scc.get("seLinuxContext") or {}).get("type"), 0)
    total += _STRATEGY_POINTS.get((scc.get("runAsUser") or {}).get("type"), 0)
    return total


def ordered(sccs=DEFAULT_SCCS):
    """SCC dicts from most to least restrictive (ties by name, as admission breaks them)."""
    return sorted(sccs, key=lambda s: (restrictiveness(s), s["name"]))


def is_recommendable(name):
    return any(s["name"] == name for s in DEFAULT_SCCS)


# --------------------------------------------------------------------------------------- pod spec access
_TEMPLATE_KINDS = frozenset(("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicationController", "Job"))


def _dict(value):
    return value if isinstance(value, dict) else {}


def _annotations(template):
    return dict(_dict(_dict(template.get("metadata")).get("annotations")))


def _from_template(label, template):
    template = _dict(template)
    spec = template.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list):
        raise PodSpecError("%s has no pod template with containers" % label)
    return PodSpecRef(label, spec, _annotations(template))


def pod_specs_of(obj):
    """The pod specs ``obj`` holds, as ``PodSpecRef(label, spec, annotations)``.

    Accepts a Pod, a workload (Deployment, DaemonSet, StatefulSet, ReplicaSet, ReplicationController, Job,
    CronJob), a pod template (``{metadata, spec}``), a pod spec (``{containers: ...}``), a ClusterServiceVersion or
    its install strategy deployment list entries (``spec.install.spec.deployments[].spec.template``).
    """
    if not isinstance(obj, dict):
        raise PodSpecError("expected a Kubernetes object or pod spec (a mapping), got %s" % type(obj).__name__)
    kind = obj.get("kind")
    spec = _dict(obj.get("spec"))
    name = _dict(obj.get("metadata")).get("name") or obj.get("name")
    if kind == "ClusterServiceVersion" or "install" in spec:
        deployments = _dict(_dict(_dict(spec.get("install")).get("spec"))).get("deployments")
        if not isinstance(deployments, list) or not deployments:
            raise PodSpecError("ClusterServiceVersion %s has no spec.install.spec.deployments" % excerpt(name or "?"))
        refs = []
        for index, dep in enumerate(deployments):
            dep = _dict(dep)
            label = "deployment %s" % (dep.get("name") or "#%d" % index)
            refs.append(_from_template(label, _dict(dep.get("spec")).get("template")))
        return refs
    if kind == "Pod":
        return [_from_template("pod %s" % (name or "?"), obj)]
    if kind == "CronJob":
        job_spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
        return [_from_template("cronjob %s" % (name or "?"), job_spec.get("template"))]
    if kind in _TEMPLATE_KINDS:
        return [_from_template("%s %s" % (kind.lower(), name or "?"), spec.get("template"))]
    if kind is None and isinstance(obj.get("containers"), list):
        return [PodSpecRef("pod spec", obj, {})]
    if kind is None and isinstance(spec.get("containers"), list):
        return [_from_template("pod template", obj)]
    if kind is None and "template" in spec:
        # a deployment spec without kind (e.g. one entry of a CSV install strategy)
        return [_from_template("deployment %s" % (name or "?"), spec.get("template"))]
    raise PodSpecError("cannot find a pod spec in %s" % excerpt(kind or sorted(obj)))


# ------------------------------------------------------------------------------------------ pod facts
def pod_containers(spec):
    """(path, container) for every container admission validates: init, regular and ephemeral containers."""
    out = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(spec.get(key) or []):
            if isinstance(container, dict):
                out.append(("spec.%s[%d]" % (key, index), container))
    return out


def pod_security_context(spec):
    return _dict(spec.get("securityContext"))


def container_security_context(container):
    return _dict(container.get("securityContext"))


def effective_field(spec, container, key):
    """The container's securityContext value, else the pod's (the effective value admission validates)."""
    value = container_security_context(container).get(key)
    return pod_security_context(spec).get(key) if value is None else value


def _seccomp_name(profile):
    profile = _dict(profile)
    kind = profile.get("type")
    if kind == "RuntimeDefault":
        return "runtime/default"
    if kind == "Unconfined":
        return "unconfined"
    if kind == "Localhost":
        return "localhost/%s" % profile.get("localhostProfile", "")
    return ""


POD_SECCOMP_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_CONTAINER_SECCOMP_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"


def pod_seccomp_profiles(ref):
    """(field, profile) the pod and each container ask for explicitly ('' when unset, i.e. defaulted)."""
    spec, annotations = ref.spec, ref.annotations
    pod_profile = annotations.get(POD_SECCOMP_ANNOTATION) or _seccomp_name(pod_security_context(spec).get("seccompProfile"))
    out = [("spec.securityContext.seccompProfile", pod_profile)]
    for path, container in pod_containers(spec):
        own = container_security_context(container).get("seccompProfile")
        if own is not None:
            out.append(("%s.securityContext.seccompProfile" % path, _seccomp_name(own)))
        elif _CONTAINER_SECCOMP_ANNOTATION + str(container.get("name")) in annotations:
            out.append(("%s.securityContext.seccompProfile" % path, annotations[_CONTAINER_SECCOMP_ANNOTATION + str(container.get("name"))]))
        else:
            out.append(("%s.securityContext.seccompProfile" % path, pod_profile))
    return out


class CheckContext:
    """What the caller knows about the namespace and images (see the module docstring)."""

    def __init__(self, uid_range=None, gid_range=None, mcs_level=None, image_users=None):
        self.uid_range = uid_range
        self.gid_range = gid_range
        self.mcs_level = mcs_level
        self.image_users = dict(image_users or {})

    def image_user(self, container):
        users = self.image_users
        return users.get(container.get("name"), users.get("*"))


def _in_range(value, bounds):
    return bounds is not None and bounds[0] <= value <= bounds[1]


# ------------------------------------------------------------------------------------------ predicates
# Each check is (name, check(scc, ref, ctx) -> [Violation]); an SCC admits a pod spec when no check reports one.


def _check_privileged(scc, ref, ctx):
    if scc["allowPrivilegedContainer"]:
        return []
    return [
        Violation("%s.securityContext.privileged" % path, "privileged containers are not allowed")
        for path, c in pod_containers(ref.spec)
        if container_security_context(c).get("privileged") is True
    ]


def _check_capabilities(scc, ref, ctx):
    allowed = set(scc["allowedCapabilities"]) | set(scc["defaultAddCapabilities"])
    if "*" in allowed:
        return []
    out = []
    for path, c in pod_containers(ref.spec):
        for cap in _dict(container_security_context(c).get("capabilities")).get("add") or []:
            if cap not in allowed:
                out.append(Violation("%s.securityContext.capabilities.add" % path, "capability %s may not be added" % cap))
    return out


def _host_namespace_check(field, allow_key, what):
    def check(scc, ref, ctx):
        if scc[allow_key] or ref.spec.get(field) is not True:
            return []
        return [Violation("spec.%s" % field, "%s is not allowed" % what)]

    return check


def _check_host_ports(scc, ref, ctx):
    if scc["allowHostPorts"]:
        return []
    out = []
    for path, c in pod_containers(ref.spec):
        for index, port in enumerate(c.get("ports") or []):
            if isinstance(port, dict) and (port.get("hostPort") or 0) > 0:
                out.append(Violation("%s.ports[%d].hostPort" % (path, index), "host port %s is not allowed" % port.get("hostPort")))
    return out


def _only_token_sources(projected):
    """A projected volume of only the bound service account token sources (allowed wherever secrets are)."""
    for source in _dict(projected).get("sources") or []:
        source = _dict(source)
        if not (source.get("serviceAccountToken") or source.get("configMap") or source.get("downwardAPI")):
            return False
        token = source.get("serviceAccountToken")
        if token is not None and (_dict(token).get("path") != "token" or _dict(token).get("audience")):
            return False
        config_map = source.get("configMap")
        if config_map is not None:
            expected = {"kube-root-ca.crt": "ca.crt", "openshift-service-ca.crt": "service-ca.crt"}.get(_dict(config_map).get("name"))
            if expected is None or _dict(config_map).get("items") != [{"key": expected, "path": expected}]:
                return False
        for item in _dict(source.get("downwardAPI")).get("items") or []:
            field_ref = _dict(_dict(item).get("fieldRef"))
            if _dict(item).get("path") != "namespace" or field_ref.get("fieldPath") != "metadata.namespace" or field_ref.get("apiVersion", "v1") != "v1":
                return False
    return True


def volume_type(volume):
    for key, fstype in VOLUME_FSTYPES.items():
        if volume.get(key) is not None:
            return key, fstype
    return None, None


def check_volumes(scc, ref, ctx):
    allowed = set(scc["volumes"])
    if "*" in allowed:
        return []
    out = []
    for index, volume in enumerate(ref.spec.get("volumes") or []):
        volume = _dict(volume)
        key, fstype = volume_type(volume)
        if fstype in allowed:
            continue
        if fstype == "projected" and "secret" in allowed and _only_token_sources(volume.get(key)):
            continue
        what = fstype or "volumes of unknown type"
        out.append(Violation("spec.volumes[%d]" % index, "%s volumes are not allowed (volume %s)" % (what, volume.get("name"))))
    return out


def _check_privilege_escalation(scc, ref, ctx):
    if scc["allowPrivilegeEscalation"]:
        return []
    return [
        Violation("%s.securityContext.allowPrivilegeEscalation" % path, "privilege escalation is not allowed")
        for path, c in pod_containers(ref.spec)
        if container_security_context(c).get("allowPrivilegeEscalation") is True
    ]


def _check_run_as_user(scc, ref, ctx):
    strategy = scc["runAsUser"]
    kind = strategy.get("type")
    if kind == "RunAsAny":
        return []
    out = []
    for path, c in pod_containers(ref.spec):
        uid = effective_field(ref.spec, c, "runAsUser")
        field = "%s.securityContext.runAsUser" % path
        if uid is None and ctx.image_user(c) is not None:
            uid, field = ctx.image_user(c), "%s.image (runs as user %s)" % (path, ctx.image_user(c))
        non_root = effective_field(ref.spec, c, "runAsNonRoot")
        if kind == "MustRunAsNonRoot":
            if non_root is False:
                out.append(Violation("%s.securityContext.runAsNonRoot" % path, "runAsNonRoot must be true"))
            elif uid == 0:
                out.append(Violation(field, "running with the root UID is forbidden"))
        elif uid is not None:
            bounds = ctx.uid_range
            if "uidRangeMin" in strategy:
                bounds = (strategy["uidRangeMin"], strategy["uidRangeMax"])
            if uid == 0 and not _in_range(0, bounds):
                out.append(Violation(field, "running with the root UID is forbidden"))
            elif not _in_range(uid, bounds):
                where = "%d-%d" % tuple(bounds) if bounds else "unknown; pass uid_range"
                out.append(Violation(field, "UID %s is outside the namespace's UID range (%s)" % (uid, where)))
    return out


def _group_check(field, scc_key, what):
    def check(scc, ref, ctx):
        strategy = scc[scc_key]
        if strategy.get("type") != "MustRunAs":
            return []
        value = pod_security_context(ref.spec).get(field)
        values = value if isinstance(value, list) else ([] if value is None else [value])
        ranges = [(r["min"], r["max"]) for r in strategy.get("ranges") or []] or ([tuple(ctx.gid_range)] if ctx.gid_range else [])
        out = []
        for gid in values:
            if not any(_in_range(gid, r) for r in ranges):
                where = ", ".join("%d-%d" % r for r in ranges) if ranges else "unknown; pass gid_range"
                out.append(Violation("spec.securityContext.%s" % field, "%s %s is outside the namespace's range (%s)" % (what, gid, where)))
        return out

    return check


def _same_level(expected, actual):
    if expected == actual:
        return True
    exp, act = str(expected).split(":", 1), str(actual).split(":", 1)
    return len(exp) == 2 and len(act) == 2 and exp[0] == act[0] and sorted(exp[1].split(",")) == sorted(act[1].split(","))


def _check_selinux(scc, ref, ctx):
    if scc["seLinuxContext"].get("type") != "MustRunAs":
        return []
    expected = scc["seLinuxContext"].get("seLinuxOptions") or {}
    places = [("spec.securityContext.seLinuxOptions", pod_security_context(ref.spec).get("seLinuxOptions"))]
    places += [("%s.securityContext.seLinuxOptions" % path, container_security_context(c).get("seLinuxOptions")) for path, c in pod_containers(ref.spec)]
    out = []
    for field, options in places:
        options = _dict(options)
        for key in ("user", "role", "type"):
            if options.get(key, "") != expected.get(key, ""):
                out.append(Violation("%s.%s" % (field, key), "SELinux %s %s is not allowed (MustRunAs)" % (key, options.get(key))))
        level = options.get("level")
        if level and not (ctx.mcs_level and _same_level(ctx.mcs_level, level)):
            out.append(
                Violation("%s.level" % field, "SELinux level %s is not the namespace's MCS level (%s)" % (level, ctx.mcs_level or "unknown; pass mcs_level"))
            )
    return out


def check_seccomp(scc, ref, ctx):
    allowed = list(scc["seccompProfiles"])
    if "*" in allowed:
        return []
    runtime_default = {"runtime/default", "docker/default"}
    out = []
    for field, profile in pod_seccomp_profiles(ref):
        if not profile:
            continue
        if not allowed:
            out.append(Violation(field, "seccomp profile %s may not be set (the SCC sets no seccomp profile)" % profile))
        elif profile not in allowed and not (profile in runtime_default and runtime_default & set(allowed)):
            out.append(Violation(field, "seccomp profile %s is not allowed (allowed: %s)" % (profile, ", ".join(allowed))))
    return out


def _matches(name, patterns):
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def _check_sysctls(scc, ref, ctx):
    out = []
    for index, sysctl in enumerate(pod_security_context(ref.spec).get("sysctls") or []):
        name = str(_dict(sysctl).get("name"))
        field = "spec.securityContext.sysctls[%d]" % index
        if _matches(name, scc["forbiddenSysctls"]):
            out.append(Violation(field, "sysctl %s is forbidden" % name))
        elif name not in SAFE_SYSCTLS and not _matches(name, scc["allowedUnsafeSysctls"]):
            out.append(Violation(field, "unsafe sysctl %s is not allowed" % name))
    return out


def _check_user_namespace(scc, ref, ctx):
    if scc["userNamespaceLevel"] != "RequirePodLevel" or ref.spec.get("hostUsers") is False:
        return []
    return [Violation("spec.hostUsers", "hostUsers must be false (a user namespace is required)")]


def _check_read_only_root(scc, ref, ctx):
    if not scc["readOnlyRootFilesystem"]:
        return []
    return [
        Violation("%s.securityContext.readOnlyRootFilesystem" % path, "the root filesystem must be read-only")
        for path, c in pod_containers(ref.spec)
        if container_security_context(c).get("readOnlyRootFilesystem") is False
    ]


CHECKS = (
    ("privileged", _check_privileged),
    ("capabilities", _check_capabilities),
    ("hostNetwork", _host_namespace_check("hostNetwork", "allowHostNetwork", "host network")),
    ("hostPID", _host_namespace_check("hostPID", "allowHostPID", "host PID")),
    ("hostIPC", _host_namespace_check("hostIPC", "allowHostIPC", "host IPC")),
    ("hostPorts", _check_host_ports),
    ("volumes", check_volumes),
    ("allowPrivilegeEscalation", _check_privilege_escalation),
    ("runAsUser", _check_run_as_user),
    ("fsGroup", _group_check("fsGroup", "fsGroup", "fsGroup")),
    ("supplementalGroups", _group_check("supplementalGroups", "supplementalGroups", "supplemental group")),
    ("seLinuxContext", _check_selinux),
    ("seccompProfiles", check_seccomp),
    ("sysctls", _check_sysctls),
    ("userNamespaceLevel", _check_user_namespace),
    ("readOnlyRootFilesystem", _check_read_only_root),
)


def violations(scc, ref, uid_range=None, gid_range=None, mcs_level=None, image_users=None, context=None):
    """Every Violation of ``scc`` (a dict like DEFAULT_SCCS rows) by the pod spec ``ref`` (a PodSpecRef)."""
    ctx = context or CheckContext(uid_range, gid_range, mcs_level, image_users)
    out = []
    for _name, check in CHECKS:
        out.extend(check(scc, ref, ctx))
    return out


def _labelled(ref, items, several):
    if not several:
        return items
    return [Violation("%s: %s" % (ref.label, v.field), v.message) for v in items]


UID_RANGE_ANNOTATION = "openshift.io/sa.scc.uid-range"
SUPPLEMENTAL_GROUPS_ANNOTATION = "openshift.io/sa.scc.supplemental-groups"
MCS_ANNOTATION = "openshift.io/sa.scc.mcs"


def _first_block(value):
    """``(min, max)`` of the first ``<start>/<size>`` or ``<start>-<end>`` block of an annotation, or None."""
    block = (value or "").split(",")[0].strip()
    try:
        if "/" in block:
            start, size = (int(x) for x in block.split("/", 1))
            return (start, start + size - 1) if size > 0 else None
        if "-" in block:
            start, end = (int(x) for x in block.split("-", 1))
            return (start, end) if end >= start else None
    except ValueError:
        return None
    return None


def namespace_context(annotations):
    """``recommend_scc`` keyword arguments from a namespace's ``openshift.io/sa.scc.*`` annotations (pure).

    Supplemental groups fall back to the UID range, as admission does; unknown or malformed values stay None."""
    annotations = annotations or {}
    uid_range = _first_block(annotations.get(UID_RANGE_ANNOTATION))
    gid_range = _first_block(annotations.get(SUPPLEMENTAL_GROUPS_ANNOTATION)) or uid_range
    return {"uid_range": uid_range, "gid_range": gid_range, "mcs_level": annotations.get(MCS_ANNOTATION) or None}


def recommend_scc(obj, uid_range=None, gid_range=None, mcs_level=None, image_users=None, sccs=DEFAULT_SCCS):
    """The least-privileged SCC of ``sccs`` admitting every pod spec of ``obj`` (see ``pod_specs_of``).

    ``uid_range``/``gid_range``: ``(min, max)`` of the namespace (from ``openshift.io/sa.scc.uid-range`` and
    ``openshift.io/sa.scc.supplemental-groups``); ``mcs_level``: ``openshift.io/sa.scc.mcs``; ``image_users``:
    ``{container name or "*": uid}``. Returns a Recommendation; ``scc`` is None when no SCC admits the pods.
    """
    refs = pod_specs_of(obj)
    ctx = CheckContext(uid_range, gid_range, mcs_level, image_users)
    several = len(refs) > 1
    rejected = {}
    for scc in ordered(sccs):
        found = []
        for ref in refs:
            found.extend(_labelled(ref, violations(scc, ref, context=ctx), several))
        if not found:
            return _recommendation(scc["name"], rejected)
        rejected[scc["name"]] = found
    return _recommendation(None, rejected)


def _recommendation(name, rejected):
    reasons, fields = [], []
    for found in rejected.values():
        for item in found:
            if item.message not in reasons:
                reasons.append(item.message)
            if item.field not in fields:
                fields.append(item.field)
    return Recommendation(name, reasons, fields, copy.deepcopy(rejected))


def required_scc(ref):
    """The SCC a pod template pins with the ``openshift.io/required-scc`` annotation (OpenShift 4.14+), or None."""
    return ref.annotations.get("openshift.io/required-scc") or None
