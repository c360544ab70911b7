"""An SCC for the integration tests: the testbed serves the SCC API through a CRD and has no default SCCs."""


def scc_object(name, users=(), run_as_user="RunAsAny", volumes=("configMap", "emptyDir", "secret")):
    """A minimal SCC (every field the CRD's schema requires), ``users`` listed in it."""
    return {
        "apiVersion": "security.openshift.io/v1",
        "kind": "SecurityContextConstraints",
        "metadata": {"name": name},
        "allowHostDirVolumePlugin": False,
        "allowHostIPC": False,
        "allowHostNetwork": False,
        "allowHostPID": False,
        "allowHostPorts": False,
        "allowPrivilegedContainer": False,
        "allowedCapabilities": None,
        "defaultAddCapabilities": None,
        "priority": None,
        "readOnlyRootFilesystem": False,
        "requiredDropCapabilities": ["MKNOD"],
        "runAsUser": {"type": run_as_user},
        "seLinuxContext": {"type": "MustRunAs"},
        "users": list(users),
        "groups": [],
        "volumes": list(volumes),
    }
