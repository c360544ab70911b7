# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Custom least-privilege SCCs from a compact spec (pure).

A compact spec names a default SCC to start from (``base``, a row of ``recommend.DEFAULT_SCCS``, ``restricted-v2``
unless said otherwise) and only what the custom SCC relaxes (or tightens) on top of it::

    {"name": "web-netbind", "add_capabilities": ["NET_BIND_SERVICE", "SYS_NICE"], "run_as_user": "MustRunAsNonRoot"}

``render(spec)`` turns it into a full ``security.openshift.io/v1`` SecurityContextConstraints object with
``priority: null``, so admission never prefers it over ``restricted-v2`` by priority (the anyuid pitfall, scc.md
section 4): among the SCCs a service account may use, it is picked only when the pod needs what it adds. The object
carries ``operators.kubeforge.io/created-by`` so that only SCCs made this way are ever changed or deleted; the names of
OpenShift's default SCCs are refused.

``spec_for_workload(obj)`` derives the compact spec a workload forces: it starts from ``restricted-v2``, asks the
admission checks of ``recommend`` which constraints the workload's pods break, relaxes exactly those (the added
capabilities, the volume types, the UIDs the pods name, ...), and verifies with ``recommend.violations`` that the
result admits every pod spec. The same caveats as ``recommend`` apply (the namespace's UID range and the images' users
are unknown here): an explicit UID becomes a ``MustRunAsRange`` of exactly those UIDs, an explicit fsGroup a
``MustRunAs`` range of exactly those groups, explicit SELinux options ``RunAsAny``.

The validation mirrors the SCC validation of OpenShift (apiserver-library-go ``pkg/securitycontextconstraints/
validation``): strategy types, non-negative ID ranges, no capability both allowed and required to be dropped, no
required drops next to the ``*`` wildcard, sysctl patterns. A CRD-only cluster (the testbed) checks none of it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import recommend
from ansible_collections.kubeforge.operators.plugins.module_utils.scc.access import is_default_scc

API_VERSION = "security.openshift.io/v1"
KIND = "SecurityContextConstraints"

# Marks the SCCs this collection created (the key olm_operator and olm_bundle_run use, with this module's value):
# state=absent deletes only those, and an SCC of the same name without it is never adopted.
CREATED_BY_LABEL = "operators.kubeforge.io/created-by"
CREATED_BY = "kubeforge.operators.scc"
BASE_ANNOTATION = "operators.kubeforge.io/scc-base"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"

DEFAULT_BASE = "restricted-v2"

# Compact spec keys -> the SCC field each one sets (booleans) or changes (the others).
_FLAGS = (
    ("privileged", "allowPrivilegedContainer"),
    ("allow_privilege_escalation", "allowPrivilegeEscalation"),
    ("host_network", "allowHostNetwork"),
    ("host_ports", "allowHostPorts"),
    ("host_pid", "allowHostPID"),
    ("host_ipc", "allowHostIPC"),
    ("read_only_root_filesystem", "readOnlyRootFilesystem"),
)
_LISTS = ("add_capabilities", "volumes", "seccomp_profiles", "allowed_unsafe_sysctls")
_STRATEGIES = ("run_as_user", "fs_group", "supplemental_groups", "selinux_context")
RELAXATION_KEYS = tuple(key for key, _field in _FLAGS) + _LISTS + _STRATEGIES
SPEC_KEYS = ("name", "base", "description") + RELAXATION_KEYS

# The SCC fields of a rendered object, in the order OpenShift's manifests list them (alphabetical).
_OBJECT_FIELDS = (
    "allowHostDirVolumePlugin",
    "allowHostIPC",
    "allowHostNetwork",
    "allowHostPID",
    "allowHostPorts",
    "allowPrivilegeEscalation",
    "allowPrivilegedContainer",
    "allowedCapabilities",
    "allowedUnsafeSysctls",
    "defaultAddCapabilities",
    "defaultAllowPrivilegeEscalation",
    "forbiddenSysctls",
    "fsGroup",
    "priority",
    "readOnlyRootFilesystem",
    "requiredDropCapabilities",
    "runAsUser",
    "seLinuxContext",
    "seccompProfiles",
    "supplementalGroups",
    "userNamespaceLevel",
    "volumes",
)

_MAX_ITEMS = 64
_MAX_ID = 2**31 - 1  # UIDs and GIDs are int64 in the API, but Linux IDs stop at 2^32-2; keep them int32-safe
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_CAPABILITY = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_SYSCTL_PATTERN = re.compile(r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$")
_SECCOMP = re.compile(r"^(runtime/default|docker/default|unconfined|localhost/[^\s]{1,253}|\*)$")
_RUN_AS_USER_TYPES = ("MustRunAs", "MustRunAsRange", "MustRunAsNonRoot", "RunAsAny")
_GROUP_TYPES = ("MustRunAs", "RunAsAny")
_SELINUX_TYPES = ("MustRunAs", "RunAsAny")
_SELINUX_OPTION_KEYS = ("user", "role", "type", "level")

# A derived (for_workload) spec with its evidence: ``forced_by`` maps each spec key to the pod spec fields that need it.
Derived = namedtuple("Derived", ["spec", "forced_by", "recommendation"])


class CustomSCCError(KubeforgeError):
    """A compact spec that cannot become a valid custom SCC, or an SCC this collection must not touch."""


# ------------------------------------------------------------------------------------------------ table access
def base_row(name):
    """The ``recommend.DEFAULT_SCCS`` row of ``name`` (a copy with lists), or CustomSCCError."""
    for row in recommend.DEFAULT_SCCS:
        if row["name"] == name:
            return _copy_row(row)
    names = ", ".join(row["name"] for row in recommend.DEFAULT_SCCS)
    raise CustomSCCError("base must be one of the default SCCs %s, got %s" % (names, excerpt(repr(name), 80)))


def _copy_row(row):
    out = {}
    for key, value in row.items():
        if isinstance(value, tuple):
            out[key] = list(value)
        elif isinstance(value, dict):
            out[key] = dict(value)
        else:
            out[key] = value
    return out


def reserved_name(name):
    """True for the names of OpenShift's default SCCs (recommend's table and access's list)."""
    return is_default_scc(name) or any(row["name"] == name for row in recommend.DEFAULT_SCCS)


# ------------------------------------------------------------------------------------------------ validation
def validate_name(name):
    """The SCC name, or CustomSCCError: a DNS subdomain that is not a default SCC's name."""
    if not isinstance(name, str) or not name:
        raise CustomSCCError("name of the custom SCC must be a non-empty string, got %s" % excerpt(repr(name), 80))
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise CustomSCCError("name %s is not a valid SCC name (lower-case DNS subdomain, at most 253 characters)" % excerpt(repr(name), 80))
    if reserved_name(name):
        raise CustomSCCError(
            "%s is a default OpenShift SCC: this module never creates, modifies or deletes default SCCs; choose another "
            "name (base=%s starts from its settings)" % (name, name)
        )
    return name


def _where(key):
    return "option %s" % key


def _bool(key, value):
    if not isinstance(value, bool):
        raise CustomSCCError("%s must be true or false, got %s" % (_where(key), excerpt(repr(value), 80)))
    return value


def _int(key, value, minimum=0):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or value > _MAX_ID:
        raise CustomSCCError("%s must be an integer from %d to %d, got %s" % (_where(key), minimum, _MAX_ID, excerpt(repr(value), 80)))
    return value


def _str_list(key, value, check):
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise CustomSCCError("%s must be a list of strings, got %s" % (_where(key), excerpt(repr(value), 80)))
    if len(value) > _MAX_ITEMS:
        raise CustomSCCError("%s has %d entries; at most %d are accepted" % (_where(key), len(value), _MAX_ITEMS))
    out = []
    for item in value:
        if not isinstance(item, str):
            raise CustomSCCError("%s must be a list of strings, got an entry %s" % (_where(key), excerpt(repr(item), 80)))
        check(item)
        if item not in out:
            out.append(item)
    return out


def _check_capability(cap):
    if cap == "*":
        return
    if cap.upper().startswith("CAP_"):
        raise CustomSCCError("capability %s: write capabilities as Kubernetes does, without CAP_ (%s)" % (excerpt(cap, 80), excerpt(cap[4:].upper(), 80)))
    if cap == "ALL":
        raise CustomSCCError("capability ALL cannot be allowed by name; '*' allows every capability")
    if not _CAPABILITY.match(cap):
        raise CustomSCCError("capability %s is not a capability name (upper case, like NET_BIND_SERVICE)" % excerpt(repr(cap), 80))


def _check_volume(fstype):
    known = set(recommend.VOLUME_FSTYPES.values())
    if fstype != "*" and fstype not in known:
        raise CustomSCCError("volume type %s is not an SCC volume type; one of: *, %s" % (excerpt(repr(fstype), 80), ", ".join(sorted(known))))


def _check_seccomp(profile):
    if not _SECCOMP.match(profile):
        raise CustomSCCError("seccomp profile %s is not one of runtime/default, docker/default, unconfined, localhost/<path> or *" % excerpt(repr(profile), 80))


def _check_sysctl(pattern):
    if len(pattern) > 253 or not _SYSCTL_PATTERN.match(pattern):
        raise CustomSCCError("sysctl %s is not a sysctl name or a pattern ending in * (like net.core.*)" % excerpt(repr(pattern), 80))


def _strategy(key, value, types, allowed_keys):
    """A strategy given as its type or as a mapping: the mapping, with its keys and type checked."""
    if isinstance(value, str):
        value = {"type": value}
    if not isinstance(value, dict):
        raise CustomSCCError("%s must be a strategy type (%s) or a mapping with type, got %s" % (_where(key), ", ".join(types), excerpt(repr(value), 80)))
    unknown = sorted(str(k) for k in value if k not in allowed_keys)
    if unknown:
        raise CustomSCCError("%s has unknown keys %s; accepted: %s" % (_where(key), excerpt(", ".join(unknown), 120), ", ".join(allowed_keys)))
    if value.get("type") not in types:
        raise CustomSCCError("%s type must be one of %s, got %s" % (_where(key), ", ".join(types), excerpt(repr(value.get("type")), 80)))
    return dict(value)


def _run_as_user(value):
    key = "run_as_user"
    strategy = _strategy(key, value, _RUN_AS_USER_TYPES, ("type", "uid", "uidRangeMin", "uidRangeMax"))
    kind = strategy["type"]
    out = {"type": kind}
    if kind == "MustRunAs":
        if "uid" not in strategy or "uidRangeMin" in strategy or "uidRangeMax" in strategy:
            raise CustomSCCError("run_as_user type MustRunAs takes uid (the one UID pods run as) and no uidRangeMin/uidRangeMax")
        out["uid"] = _int("run_as_user.uid", strategy["uid"])
    elif kind == "MustRunAsRange":
        if "uid" in strategy:
            raise CustomSCCError("run_as_user type MustRunAsRange takes uidRangeMin and uidRangeMax, not uid")
        if ("uidRangeMin" in strategy) != ("uidRangeMax" in strategy):
            raise CustomSCCError("run_as_user type MustRunAsRange takes both uidRangeMin and uidRangeMax, or neither (the namespace's range)")
        if "uidRangeMin" in strategy:
            low, high = _int("run_as_user.uidRangeMin", strategy["uidRangeMin"]), _int("run_as_user.uidRangeMax", strategy["uidRangeMax"])
            if low > high:
                raise CustomSCCError("run_as_user uidRangeMin %d is greater than uidRangeMax %d" % (low, high))
            out.update(uidRangeMin=low, uidRangeMax=high)
    elif len(strategy) > 1:
        raise CustomSCCError("run_as_user type %s takes no uid or range" % kind)
    return out


def _groups(key, value):
    strategy = _strategy(key, value, _GROUP_TYPES, ("type", "ranges"))
    out = {"type": strategy["type"]}
    ranges = strategy.get("ranges")
    if ranges in (None, []):
        return out
    if strategy["type"] != "MustRunAs":
        raise CustomSCCError("%s type RunAsAny takes no ranges" % _where(key))
    if not isinstance(ranges, list) or len(ranges) > _MAX_ITEMS:
        raise CustomSCCError("%s ranges must be a list of at most %d {min, max} mappings" % (_where(key), _MAX_ITEMS))
    out["ranges"] = []
    for item in ranges:
        if not isinstance(item, dict) or sorted(item) != ["max", "min"]:
            raise CustomSCCError("%s ranges entries must be {min, max} mappings, got %s" % (_where(key), excerpt(repr(item), 80)))
        low, high = _int(key + ".ranges.min", item["min"]), _int(key + ".ranges.max", item["max"])
        if low > high:
            raise CustomSCCError("%s range min %d is greater than max %d" % (_where(key), low, high))
        out["ranges"].append({"min": low, "max": high})
    return out


def _selinux(value):
    key = "selinux_context"
    strategy = _strategy(key, value, _SELINUX_TYPES, ("type", "seLinuxOptions"))
    out = {"type": strategy["type"]}
    options = strategy.get("seLinuxOptions")
    if options in (None, {}):
        return out
    if strategy["type"] != "MustRunAs":
        raise CustomSCCError("selinux_context type RunAsAny takes no seLinuxOptions")
    if not isinstance(options, dict) or any(k not in _SELINUX_OPTION_KEYS for k in options):
        raise CustomSCCError("selinux_context seLinuxOptions must be a mapping of %s, got %s" % (", ".join(_SELINUX_OPTION_KEYS), excerpt(repr(options), 120)))
    for option, text in options.items():
        if not isinstance(text, str) or len(text) > 253:
            raise CustomSCCError("selinux_context seLinuxOptions.%s must be a string, got %s" % (option, excerpt(repr(text), 80)))
    out["seLinuxOptions"] = dict(options)
    return out


_LIST_CHECKS = {
    "add_capabilities": _check_capability,
    "volumes": _check_volume,
    "seccomp_profiles": _check_seccomp,
    "allowed_unsafe_sysctls": _check_sysctl,
}


def normalize_spec(spec):
    """The validated compact spec: known keys only, ``base`` filled in, strategies as mappings; or CustomSCCError."""
    if not isinstance(spec, dict):
        raise CustomSCCError("a custom SCC spec must be a mapping, got %s" % excerpt(repr(spec), 80))
    unknown = sorted(str(k) for k in spec if k not in SPEC_KEYS)
    if unknown:
        raise CustomSCCError("unknown keys in the custom SCC spec: %s; accepted: %s" % (excerpt(", ".join(unknown), 160), ", ".join(SPEC_KEYS)))
    out = {"name": validate_name(spec.get("name")), "base": spec.get("base") or DEFAULT_BASE}
    base_row(out["base"])
    description = spec.get("description")
    if description is not None:
        if not isinstance(description, str) or len(description) > 1024:
            raise CustomSCCError("description must be a string of at most 1024 characters")
        out["description"] = description
    for key, _field in _FLAGS:
        if spec.get(key) is not None:
            out[key] = _bool(key, spec[key])
    for key in _LISTS:
        if spec.get(key) is not None:
            out[key] = _str_list(key, spec[key], _LIST_CHECKS[key])
    if spec.get("run_as_user") is not None:
        out["run_as_user"] = _run_as_user(spec["run_as_user"])
    for key in ("fs_group", "supplemental_groups"):
        if spec.get(key) is not None:
            out[key] = _groups(key, spec[key])
    if spec.get("selinux_context") is not None:
        out["selinux_context"] = _selinux(spec["selinux_context"])
    if out.get("privileged") and out.get("allow_privilege_escalation") is False:
        raise CustomSCCError(
            "privileged=true with allow_privilege_escalation=false admits no privileged container (Kubernetes refuses "
            "privileged containers that may not escalate): drop allow_privilege_escalation"
        )
    return out


# ------------------------------------------------------------------------------------------------ rendering
def row_of(spec):
    """The SCC of a normalized spec as a ``recommend`` table row (for ``recommend.violations``)."""
    row = base_row(spec["base"])
    row["name"] = spec["name"]
    row["priority"] = None
    for key, field in _FLAGS:
        if key in spec:
            row[field] = spec[key]
    if spec.get("privileged") and "allow_privilege_escalation" not in spec:
        row["allowPrivilegeEscalation"] = True  # a privileged container always may escalate
    caps = spec.get("add_capabilities") or []
    if "*" in caps or "*" in row["allowedCapabilities"]:
        # OpenShift refuses required drops next to the wildcard, and * covers the default additions.
        row.update(allowedCapabilities=["*"], requiredDropCapabilities=[], defaultAddCapabilities=[])
    else:
        row["allowedCapabilities"] = _union(row["allowedCapabilities"], caps)
        # A capability may not be both allowed and required to be dropped (anyuid drops MKNOD, hostnetwork SETUID...).
        row["requiredDropCapabilities"] = [c for c in row["requiredDropCapabilities"] if c not in caps]
    volumes = spec.get("volumes") or []
    row["volumes"] = ["*"] if "*" in volumes or "*" in row["volumes"] else sorted(_union(row["volumes"], volumes))
    profiles = spec.get("seccomp_profiles") or []
    if row["seccompProfiles"] or profiles:
        # The first profile is the default admission assigns: keep the base's (runtime/default) first.
        row["seccompProfiles"] = ["*"] if "*" in profiles or "*" in row["seccompProfiles"] else _union(row["seccompProfiles"] or ["runtime/default"], profiles)
    sysctls = spec.get("allowed_unsafe_sysctls") or []
    row["allowedUnsafeSysctls"] = ["*"] if "*" in sysctls or "*" in row["allowedUnsafeSysctls"] else _union(row["allowedUnsafeSysctls"], sysctls)
    for key, field in (
        ("run_as_user", "runAsUser"),
        ("fs_group", "fsGroup"),
        ("supplemental_groups", "supplementalGroups"),
        ("selinux_context", "seLinuxContext"),
    ):
        if key in spec:
            row[field] = dict(spec[key])
    return row


def _union(first, second):
    out = list(first)
    for item in second:
        if item not in out:
            out.append(item)
    return out


def _allows_host_dir(volumes):
    return "hostPath" in volumes or "*" in volumes


def render(spec):
    """The full SecurityContextConstraints object of a compact spec (validated here), with ``priority: null``."""
    spec = normalize_spec(spec)
    row = row_of(spec)
    annotations = {BASE_ANNOTATION: spec["base"]}
    if spec.get("description"):
        annotations[DESCRIPTION_ANNOTATION] = spec["description"]
    obj = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": spec["name"], "labels": {CREATED_BY_LABEL: CREATED_BY}, "annotations": annotations},
    }
    fields = {
        "allowHostDirVolumePlugin": _allows_host_dir(row["volumes"]),
        "allowHostIPC": row["allowHostIPC"],
        "allowHostNetwork": row["allowHostNetwork"],
        "allowHostPID": row["allowHostPID"],
        "allowHostPorts": row["allowHostPorts"],
        "allowPrivilegeEscalation": row["allowPrivilegeEscalation"],
        "allowPrivilegedContainer": row["allowPrivilegedContainer"],
        "allowedCapabilities": list(row["allowedCapabilities"]) or None,
        "allowedUnsafeSysctls": list(row["allowedUnsafeSysctls"]) or None,
        "defaultAddCapabilities": list(row["defaultAddCapabilities"]) or None,
        "defaultAllowPrivilegeEscalation": None,
        "forbiddenSysctls": list(row["forbiddenSysctls"]) or None,
        "fsGroup": dict(row["fsGroup"]),
        "priority": None,
        "readOnlyRootFilesystem": row["readOnlyRootFilesystem"],
        "requiredDropCapabilities": list(row["requiredDropCapabilities"]) or None,
        "runAsUser": dict(row["runAsUser"]),
        "seLinuxContext": dict(row["seLinuxContext"]),
        "seccompProfiles": list(row["seccompProfiles"]) or None,
        "supplementalGroups": dict(row["supplementalGroups"]),
        "userNamespaceLevel": row["userNamespaceLevel"],
        "volumes": list(row["volumes"]),
    }
    for field in _OBJECT_FIELDS:
        obj[field] = fields[field]
    return obj


def relaxations(spec):
    """What the custom SCC changes against its base: ``[{field, base, value}]`` in the object's field order."""
    spec = normalize_spec(spec)
    base = render(dict(spec, **{key: None for key in RELAXATION_KEYS}))
    custom = render(spec)
    return [{"field": field, "base": base[field], "value": custom[field]} for field in _OBJECT_FIELDS if base[field] != custom[field]]


# ------------------------------------------------------------------------------------------------ ownership
def is_ours(obj):
    """True when the SCC object carries this collection's created-by label."""
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return labels.get(CREATED_BY_LABEL) == CREATED_BY


def ensure_ours(obj, name, action):
    """CustomSCCError unless the existing SCC ``name`` was created by this module."""
    if obj is not None and not is_ours(obj):
        raise CustomSCCError(
            "refusing to %s SecurityContextConstraints %s: it was not created by kubeforge.operators.scc (no label %s=%s); "
            "this module only changes or deletes the custom SCCs it created" % (action, name, CREATED_BY_LABEL, CREATED_BY)
        )


# ------------------------------------------------------------------------------------------------ for_workload
def _refs(workloads):
    objs = workloads if isinstance(workloads, list) else [workloads]
    if not objs:
        raise CustomSCCError("for_workload is an empty list: name at least one workload")
    if len(objs) > _MAX_ITEMS:
        raise CustomSCCError("for_workload has %d workloads; at most %d are accepted" % (len(objs), _MAX_ITEMS))
    refs = []
    for obj in objs:
        refs.extend(recommend.pod_specs_of(obj))
    return refs


def _run_as_user_relaxation(refs):
    uids = set()
    for ref in refs:
        for _path, container in recommend.pod_containers(ref.spec):
            uid = recommend.effective_field(ref.spec, container, "runAsUser")
            if isinstance(uid, int) and not isinstance(uid, bool):
                uids.add(uid)
    # Root cannot be part of a range without making root the default of every container that names no UID.
    if 0 in uids or not uids:
        return {"type": "RunAsAny"}
    return {"type": "MustRunAsRange", "uidRangeMin": min(uids), "uidRangeMax": max(uids)}


def _group_relaxation(field):
    def relax(refs):
        gids = set()
        for ref in refs:
            value = recommend.pod_security_context(ref.spec).get(field)
            for gid in value if isinstance(value, list) else [value]:
                if isinstance(gid, int) and not isinstance(gid, bool):
                    gids.add(gid)
        return {"type": "MustRunAs", "ranges": [{"min": gid, "max": gid} for gid in sorted(gids)]} if gids else {"type": "RunAsAny"}

    return relax


def _added_capabilities(refs, row):
    allowed = set(row["allowedCapabilities"]) | set(row["defaultAddCapabilities"])
    caps = []
    for ref in refs:
        for _path, container in recommend.pod_containers(ref.spec):
            for cap in (recommend.container_security_context(container).get("capabilities") or {}).get("add") or []:
                if cap not in allowed and cap not in caps:
                    caps.append(cap)
    return caps


def _volume_types(refs, row, ctx):
    found = []
    for ref in refs:
        for index, volume in enumerate(ref.spec.get("volumes") or []):
            single = recommend.PodSpecRef(ref.label, {"containers": [], "volumes": [volume]}, {})
            if not recommend.check_volumes(row, single, ctx):
                continue
            _key, fstype = recommend.volume_type(volume if isinstance(volume, dict) else {})
            if fstype is None:
                raise CustomSCCError("%s: spec.volumes[%d] has a volume type no SCC can allow" % (ref.label, index))
            if fstype not in found:
                found.append(fstype)
    return found


def _seccomp_relaxation(refs, row, ctx):
    profiles = []
    for ref in refs:
        for _field, profile in recommend.pod_seccomp_profiles(ref):
            probe = recommend.PodSpecRef(ref.label, {"containers": []}, {recommend.POD_SECCOMP_ANNOTATION: profile})
            if profile and recommend.check_seccomp(row, probe, ctx) and profile not in profiles:
                profiles.append(profile)
    return profiles


def _sysctls(refs):
    names = []
    for ref in refs:
        for sysctl in recommend.pod_security_context(ref.spec).get("sysctls") or []:
            name = str((sysctl or {}).get("name"))
            if name not in recommend.SAFE_SYSCTLS and name not in names:
                names.append(name)
    return names


# recommend.CHECKS name -> (spec key, how the relaxation is derived from the pod specs)
_RELAXATIONS = {
    "privileged": ("privileged", lambda refs, row, ctx: True),
    "capabilities": ("add_capabilities", lambda refs, row, ctx: _added_capabilities(refs, row)),
    "hostNetwork": ("host_network", lambda refs, row, ctx: True),
    "hostPID": ("host_pid", lambda refs, row, ctx: True),
    "hostIPC": ("host_ipc", lambda refs, row, ctx: True),
    "hostPorts": ("host_ports", lambda refs, row, ctx: True),
    "volumes": ("volumes", _volume_types),
    "allowPrivilegeEscalation": ("allow_privilege_escalation", lambda refs, row, ctx: True),
    "runAsUser": ("run_as_user", lambda refs, row, ctx: _run_as_user_relaxation(refs)),
    "fsGroup": ("fs_group", lambda refs, row, ctx: _group_relaxation("fsGroup")(refs)),
    "supplementalGroups": ("supplemental_groups", lambda refs, row, ctx: _group_relaxation("supplementalGroups")(refs)),
    "seLinuxContext": ("selinux_context", lambda refs, row, ctx: {"type": "RunAsAny"}),
    "seccompProfiles": ("seccomp_profiles", _seccomp_relaxation),
    "sysctls": ("allowed_unsafe_sysctls", lambda refs, row, ctx: _sysctls(refs)),
}


def remaining_violations(row, refs):
    """Every violation of the SCC row by the pod specs, labelled with the pod spec's workload."""
    return ["%s: %s (%s)" % (ref.label, v.message, v.field) for ref in refs for v in recommend.violations(row, ref)]


def spec_for_workload(workloads, name, description=None):
    """The least-relaxed compact spec on top of ``restricted-v2`` that admits every pod spec of ``workloads``.

    ``workloads`` is one object or a list (see ``recommend.pod_specs_of``). Returns ``Derived(spec, forced_by,
    recommendation)``: ``forced_by`` maps each relaxed spec key to the pod spec fields that need it;
    ``recommendation`` is the least-privileged *default* SCC that would admit the workloads (None if none does).
    CustomSCCError when no SCC this module can render admits them (for example a volume of unknown type).
    """
    refs = _refs(workloads)
    spec = {"name": name, "base": DEFAULT_BASE}
    if description is not None:
        spec["description"] = description
    ctx = recommend.CheckContext()
    base = row_of(normalize_spec(spec))
    forced_by = {}
    for check_name, check in recommend.CHECKS:
        found = [(ref, v) for ref in refs for v in check(base, ref, ctx)]
        if not found:
            continue
        relaxation = _RELAXATIONS.get(check_name)
        if relaxation is None:
            raise CustomSCCError("no custom SCC on restricted-v2 admits the workload: " + "; ".join(excerpt(v.message, 120) for _ref, v in found[:5]))
        key, derive = relaxation
        spec[key] = derive(refs, base, ctx)
        forced_by[key] = _fields(found, several=len(refs) > 1)
    spec = normalize_spec(spec)
    left = remaining_violations(row_of(spec), refs)
    if left:
        raise CustomSCCError("the derived SCC still rejects the workload: " + excerpt("; ".join(left), 400))
    return Derived(spec, forced_by, least_default_scc(refs))


def _fields(found, several):
    out = []
    for ref, violation in found:
        field = "%s: %s" % (ref.label, violation.field) if several else violation.field
        if field not in out:
            out.append(field)
    return out[:_MAX_ITEMS]


def least_default_scc(refs):
    """The least-privileged default SCC admitting every pod spec of ``refs`` (recommend's order), or None."""
    for row in recommend.ordered():
        if not any(recommend.violations(row, ref) for ref in refs):
            return row["name"]
    return None
