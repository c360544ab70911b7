"""The ten default OpenShift SecurityContextConstraints, their `use` ClusterRoles and the restricted-v2 grant, as full objects.

OpenShift's SCC admission plugin (openshift/apiserver-library-go, sccadmission `standardSCCNames`) refuses every pod
until the SCCs named in DEFAULT_SCC_NAMES exist, and on a vanilla kube-apiserver nothing creates them, so the testbed
writes them itself. Values follow openshift/cluster-kube-apiserver-operator at commit
c813e820bb94cf2af88a6343c8554624c334c04c (2026-08-21), bindata/bootkube/scc-manifests/
0000_20_kube-apiserver-operator_00_scc-<name>.yaml, ..._00_cr-scc-<name>.yaml and
..._00_crb-systemauthenticated-scc-restricted-v2.yaml, restated here as a base SCC plus per-SCC differences (the
`include.release.openshift.io/*` profile annotations are left out: nothing here selects cluster profiles).
restricted-v3 and nested-container are left out: the plugin does not require them and they need user namespaces.
"""

import copy
from typing import Any

DEFAULT_SCC_NAMES: tuple[str, ...] = (
    "anyuid",
    "hostaccess",
    "hostmount-anyuid",
    "hostnetwork",
    "hostnetwork-v2",
    "nonroot",
    "nonroot-v2",
    "privileged",
    "restricted",
    "restricted-v2",
)

_API_VERSION = "security.openshift.io/v1"
_DESCRIPTION = "kubernetes.io/description"
# CVO creates these once and never overwrites them (the -v2 SCCs are reconciled and carry no such annotation).
_CREATE_ONLY = "release.openshift.io/create-only"

# Volumes every non-privileged default SCC allows. "ephemeral" and "csi" are in every manifest at the commit read, and
# the operator's sccreconcilecontroller adds them to the six create-only SCCs (anyuid, hostaccess, hostmount-anyuid,
# hostnetwork, nonroot, restricted) on clusters installed before they existed, so every 4.x cluster shows them.
# "image" came with upstream commit 79795a664 (2025-11, "SCC: allow image volume type for all SCCs").
_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret")


def _volumes(*extra: str) -> list[str]:
    # Upstream lists volumes sorted; keep that so objects compare equal to a live cluster's.
    return sorted(_VOLUMES + extra)


# The legacy `restricted` SCC: every other default SCC is stated as its differences from this one. Keys the API
# serialises without omitempty are always present (null where upstream leaves them empty). userNamespaceLevel is not
# set upstream either; the CRD defaults it to AllowHostLevel on both OpenShift and the testbed.
_BASE: dict[str, Any] = {
    "allowHostDirVolumePlugin": False,
    "allowHostIPC": False,
    "allowHostNetwork": False,
    "allowHostPID": False,
    "allowHostPorts": False,
    "allowPrivilegeEscalation": True,
    "allowPrivilegedContainer": False,
    "allowedCapabilities": None,
    "defaultAddCapabilities": None,
    "fsGroup": {"type": "MustRunAs"},
    "groups": [],
    "priority": None,
    "readOnlyRootFilesystem": False,
    "requiredDropCapabilities": ["KILL", "MKNOD", "SETUID", "SETGID"],
    "runAsUser": {"type": "MustRunAsRange"},
    "seLinuxContext": {"type": "MustRunAs"},
    "supplementalGroups": {"type": "RunAsAny"},
    "users": [],
    "volumes": _volumes(),
}

# What the -v2 SCCs add on top of their legacy counterpart (restricted, nonroot, hostnetwork).
_V2: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "allowedCapabilities": ["NET_BIND_SERVICE"],
    "requiredDropCapabilities": ["ALL"],
    "seccompProfiles": ["runtime/default"],
}

_NONROOT: dict[str, Any] = {"fsGroup": {"type": "RunAsAny"}, "runAsUser": {"type": "MustRunAsNonRoot"}}
_HOSTNETWORK: dict[str, Any] = {"allowHostNetwork": True, "allowHostPorts": True, "supplementalGroups": {"type": "MustRunAs"}}
_ANYUID: dict[str, Any] = {"fsGroup": {"type": "RunAsAny"}, "requiredDropCapabilities": ["MKNOD"], "runAsUser": {"type": "RunAsAny"}}

# name -> (create-only, differences from _BASE, kubernetes.io/description).
_SCCS: dict[str, tuple[bool, dict[str, Any], str]] = {
    "anyuid": (
        True,
        # priority 10: admission tries anyuid before the nil-priority SCCs for anyone allowed to use it.
        {**_ANYUID, "groups": ["system:cluster-admins"], "priority": 10},
        "anyuid provides all features of the restricted SCC but allows users to run with any UID and any GID.",
    ),
    "hostaccess": (
        True,
        {
            "allowHostDirVolumePlugin": True,
            "allowHostIPC": True,
            "allowHostNetwork": True,
            "allowHostPID": True,
            "allowHostPorts": True,
            "volumes": _volumes("hostPath"),
        },
        "hostaccess allows access to all host namespaces but still requires pods to be run with a UID and SELinux "
        "context that are allocated to the namespace. WARNING: this SCC allows host access to namespaces, file "
        "systems, and PIDS.  It should only be used by trusted pods.  Grant with caution.",
    ),
    "hostmount-anyuid": (
        True,
        {
            **_ANYUID,
            "allowHostDirVolumePlugin": True,
            "users": ["system:serviceaccount:openshift-infra:pv-recycler-controller"],
            "volumes": _volumes("hostPath", "nfs"),
        },
        # Upstream writes this one as a YAML literal block, so its line breaks are part of the value.
        "hostmount-anyuid provides all the features of the\n"
        "restricted SCC but allows host mounts and any UID by a pod.  This is primarily\n"
        "used by the persistent volume recycler. WARNING: this SCC allows host file\n"
        "system access as any UID, including UID 0.  Grant with caution.",
    ),
    "hostnetwork": (
        True,
        _HOSTNETWORK,
        "hostnetwork allows using host networking and host ports but still requires pods to be run with a UID and "
        "SELinux context that are allocated to the namespace.",
    ),
    "hostnetwork-v2": (
        False,
        {**_HOSTNETWORK, **_V2},
        "hostnetwork allows using host networking and host ports but still requires pods to be run with a UID and "
        "SELinux context that are allocated to the namespace. On top of the legacy 'hostnetwork' SCC, it also requires "
        "to drop ALL capabilities and does not allow privilege escalation binaries. It will also default the seccomp "
        "profile to runtime/default if unset, otherwise this seccomp profile is required.",
    ),
    "nonroot": (
        True,
        _NONROOT,
        "nonroot provides all features of the restricted SCC but allows users to run with any non-root UID.  The user "
        "must specify the UID or it must be specified on the by the manifest of the container runtime.",
    ),
    "nonroot-v2": (
        False,
        {**_NONROOT, **_V2},
        "nonroot provides all features of the restricted SCC but allows users to run with any non-root UID.  The user "
        "must specify the UID or it must be specified on the by the manifest of the container runtime. On top of the "
        "legacy 'nonroot' SCC, it also requires to drop ALL capabilities and does not allow privilege escalation "
        "binaries. It will also default the seccomp profile to runtime/default if unset, otherwise this seccomp "
        "profile is required.",
    ),
    "privileged": (
        True,
        {
            "allowHostDirVolumePlugin": True,
            "allowHostIPC": True,
            "allowHostNetwork": True,
            "allowHostPID": True,
            "allowHostPorts": True,
            "allowPrivilegedContainer": True,
            "allowedCapabilities": ["*"],
            "allowedUnsafeSysctls": ["*"],
            "fsGroup": {"type": "RunAsAny"},
            # Legacy direct grants; on OpenShift cluster admins, nodes and the build controller rely on them.
            "groups": ["system:cluster-admins", "system:nodes", "system:masters"],
            "requiredDropCapabilities": None,
            "runAsUser": {"type": "RunAsAny"},
            "seLinuxContext": {"type": "RunAsAny"},
            "seccompProfiles": ["*"],
            "supplementalGroups": {"type": "RunAsAny"},
            "users": ["system:admin", "system:serviceaccount:openshift-infra:build-controller"],
            "volumes": ["*"],
        },
        "privileged allows access to all privileged and host features and the ability to run as any user, any group, "
        "any fsGroup, and with any SELinux context.  WARNING: this is the most relaxed SCC and should be used only for "
        "cluster administration. Grant with caution.",
    ),
    "restricted": (
        True,
        {},
        "restricted denies access to all host features and requires pods to be run with a UID, and SELinux context that are allocated to the namespace.",
    ),
    "restricted-v2": (
        False,
        _V2,
        "restricted-v2 denies access to all host features and requires pods to be run with a UID, and SELinux context "
        "that are allocated to the namespace. This is the most restrictive SCC and it is used by default for "
        "authenticated users. On top of the legacy 'restricted' SCC, it also requires to drop ALL capabilities and "
        "does not allow privilege escalation binaries. It will also default the seccomp profile to runtime/default if "
        "unset, otherwise this seccomp profile is required.",
    ),
}


def default_sccs(descriptions: bool = True) -> list[dict]:
    """Full SecurityContextConstraints objects, in DEFAULT_SCC_NAMES order; fresh copies on every call.

    `descriptions=False` leaves out the kubernetes.io/description annotations (admission does not read them).
    """
    result = []
    for name in DEFAULT_SCC_NAMES:
        create_only, differences, description = _SCCS[name]
        annotations = {}
        if create_only:
            annotations[_CREATE_ONLY] = "true"
        if descriptions:
            annotations[_DESCRIPTION] = description
        metadata: dict[str, Any] = {"name": name}
        if annotations:
            metadata["annotations"] = annotations
        fields = copy.deepcopy({**_BASE, **differences})
        result.append({"apiVersion": _API_VERSION, "kind": "SecurityContextConstraints", "metadata": metadata, **dict(sorted(fields.items()))})
    return result


def scc_cluster_roles() -> list[dict]:
    """ClusterRole system:openshift:scc:<name> for each default SCC (what upstream's gensccroles.sh generates)."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "system:openshift:scc:" + name, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": [
                {
                    "apiGroups": ["security.openshift.io"],
                    "resources": ["securitycontextconstraints"],
                    "resourceNames": [name],
                    "verbs": ["use"],
                }
            ],
        }
        for name in DEFAULT_SCC_NAMES
    ]


def restricted_v2_binding() -> dict:
    """The ClusterRoleBinding that lets every authenticated user (and so every service account) use restricted-v2."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "system:openshift:scc:restricted-v2"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:openshift:scc:restricted-v2"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}],
    }
