"""scc/custom.py: compact specs rendered to full SCC objects on top of the default SCCs of recommend.DEFAULT_SCCS,
validation with bounded messages, the relaxations against the base, ownership, and for_workload derivations checked
against recommend's admission predicates (the derived SCC admits the workload, restricted-v2 does not)."""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc import custom
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import recommend as rec


def row(name):
    return next(r for r in rec.DEFAULT_SCCS if r["name"] == name)


def deployment(spec, name="app", kind="Deployment"):
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "demo"}, "spec": {"template": {"spec": spec}}}


def pod(*containers, **extra):
    spec = {"containers": list(containers) or [{"name": "app", "image": "quay.io/demo/app:1"}]}
    spec.update(extra)
    return spec


def ctr(name="app", sc=None, **extra):
    out = {"name": name, "image": "quay.io/demo/%s:1" % name}
    if sc is not None:
        out["securityContext"] = sc
    out.update(extra)
    return out


# ------------------------------------------------------------------------------------------------ rendering
def test_minimal_spec_is_restricted_v2_with_priority_null_and_our_label():
    obj = custom.render({"name": "my-scc"})
    base = row("restricted-v2")
    assert (obj["apiVersion"], obj["kind"], obj["metadata"]["name"]) == ("security.openshift.io/v1", "SecurityContextConstraints", "my-scc")
    assert "priority" in obj and obj["priority"] is None
    assert obj["metadata"]["labels"] == {custom.CREATED_BY_LABEL: custom.CREATED_BY}
    assert obj["metadata"]["annotations"] == {custom.BASE_ANNOTATION: "restricted-v2"}
    assert obj["allowedCapabilities"] == list(base["allowedCapabilities"])
    assert obj["requiredDropCapabilities"] == ["ALL"]
    assert obj["runAsUser"] == base["runAsUser"] and obj["seccompProfiles"] == ["runtime/default"]
    assert obj["volumes"] == sorted(base["volumes"])
    assert obj["allowHostDirVolumePlugin"] is False and obj["defaultAddCapabilities"] is None
    assert "users" not in obj and "groups" not in obj  # grants go through RBAC (scc_access)
    assert custom.relaxations({"name": "my-scc"}) == []


def test_anyuid_base_keeps_its_settings_but_not_its_priority():
    obj = custom.render({"name": "my-anyuid", "base": "anyuid"})
    assert row("anyuid")["priority"] == 10 and obj["priority"] is None
    assert obj["runAsUser"] == {"type": "RunAsAny"} and obj["requiredDropCapabilities"] == ["MKNOD"]
    assert custom.relaxations({"name": "my-anyuid", "base": "anyuid"}) == []


# (id, spec on top of name, {SCC field: expected value})
RENDER_CASES = [
    ("add-cap", {"add_capabilities": ["SYS_NICE"]}, {"allowedCapabilities": ["NET_BIND_SERVICE", "SYS_NICE"], "requiredDropCapabilities": ["ALL"]}),
    ("add-cap-dropped-by-anyuid", {"base": "anyuid", "add_capabilities": ["MKNOD"]}, {"allowedCapabilities": ["MKNOD"], "requiredDropCapabilities": None}),
    (
        "add-cap-dropped-by-hostnetwork",
        {"base": "hostnetwork", "add_capabilities": ["SETUID"]},
        {"allowedCapabilities": ["SETUID"], "requiredDropCapabilities": ["KILL", "MKNOD", "SETGID"]},
    ),
    ("wildcard-cap-clears-drops", {"add_capabilities": ["*"]}, {"allowedCapabilities": ["*"], "requiredDropCapabilities": None}),
    ("run-as-user-string", {"run_as_user": "MustRunAsNonRoot"}, {"runAsUser": {"type": "MustRunAsNonRoot"}}),
    ("run-as-user-uid", {"run_as_user": {"type": "MustRunAs", "uid": 1001}}, {"runAsUser": {"type": "MustRunAs", "uid": 1001}}),
    (
        "run-as-user-range",
        {"run_as_user": {"type": "MustRunAsRange", "uidRangeMin": "1000", "uidRangeMax": 1999}},
        {"runAsUser": {"type": "MustRunAsRange", "uidRangeMin": 1000, "uidRangeMax": 1999}},
    ),
    ("host-path-volume", {"volumes": ["hostPath"]}, {"allowHostDirVolumePlugin": True}),
    ("all-volumes", {"volumes": ["*"]}, {"volumes": ["*"], "allowHostDirVolumePlugin": True}),
    (
        "host-namespaces",
        {"host_network": True, "host_ports": True, "host_pid": True, "host_ipc": True},
        {"allowHostNetwork": True, "allowHostPorts": True, "allowHostPID": True, "allowHostIPC": True},
    ),
    ("privileged-implies-escalation", {"privileged": True}, {"allowPrivilegedContainer": True, "allowPrivilegeEscalation": True}),
    ("escalation", {"allow_privilege_escalation": True}, {"allowPrivilegeEscalation": True, "allowPrivilegedContainer": False}),
    ("read-only-root", {"read_only_root_filesystem": True}, {"readOnlyRootFilesystem": True}),
    ("tighten-hostnetwork-v2", {"base": "hostnetwork-v2", "host_ports": False}, {"allowHostNetwork": True, "allowHostPorts": False}),
    (
        "seccomp-appended-after-default",
        {"seccomp_profiles": ["localhost/profiles/app.json"]},
        {"seccompProfiles": ["runtime/default", "localhost/profiles/app.json"]},
    ),
    ("seccomp-on-a-base-without-profiles", {"base": "anyuid", "seccomp_profiles": ["unconfined"]}, {"seccompProfiles": ["runtime/default", "unconfined"]}),
    ("sysctls", {"allowed_unsafe_sysctls": ["net.core.somaxconn", "kernel.msg*"]}, {"allowedUnsafeSysctls": ["net.core.somaxconn", "kernel.msg*"]}),
    (
        "fs-group-ranges",
        {"fs_group": {"type": "MustRunAs", "ranges": [{"min": 2000, "max": 2010}]}},
        {"fsGroup": {"type": "MustRunAs", "ranges": [{"min": 2000, "max": 2010}]}},
    ),
    ("supplemental-any", {"supplemental_groups": "RunAsAny"}, {"supplementalGroups": {"type": "RunAsAny"}}),
    ("selinux-any", {"selinux_context": "RunAsAny"}, {"seLinuxContext": {"type": "RunAsAny"}}),
    (
        "selinux-options",
        {"selinux_context": {"type": "MustRunAs", "seLinuxOptions": {"type": "spc_t"}}},
        {"seLinuxContext": {"type": "MustRunAs", "seLinuxOptions": {"type": "spc_t"}}},
    ),
    ("duplicates-collapse", {"add_capabilities": ["SYS_NICE", "SYS_NICE", "NET_BIND_SERVICE"]}, {"allowedCapabilities": ["NET_BIND_SERVICE", "SYS_NICE"]}),
]


@pytest.mark.parametrize("spec, expected", [c[1:] for c in RENDER_CASES], ids=[c[0] for c in RENDER_CASES])
def test_render(spec, expected):
    full = dict(spec, name="custom")
    obj = custom.render(full)
    assert {field: obj[field] for field in expected} == expected
    assert obj["priority"] is None
    changed = {r["field"]: r for r in custom.relaxations(full)}
    base = custom.render({"name": "custom", "base": spec.get("base")})
    for field, value in expected.items():
        if base[field] != value:
            assert changed[field] == {"field": field, "base": base[field], "value": value}
    assert set(changed) == {f for f in obj if f not in ("metadata",) and obj[f] != base[f]}


def test_render_does_not_change_the_table():
    before = copy.deepcopy(rec.DEFAULT_SCCS)
    custom.render({"name": "x", "base": "hostnetwork", "add_capabilities": ["SETUID", "SYS_NICE"], "volumes": ["nfs"]})
    assert rec.DEFAULT_SCCS == before


def test_description_annotation():
    obj = custom.render({"name": "x", "description": "for the agent"})
    assert obj["metadata"]["annotations"][custom.DESCRIPTION_ANNOTATION] == "for the agent"


# ------------------------------------------------------------------------------------------------ validation
# (id, spec on top of name, a part of the message)
INVALID = [
    ("unknown-key", {"hostNetwork": True}, "unknown keys in the custom SCC spec: hostNetwork"),
    ("bad-base", {"base": "restricted-v3"}, "base must be one of the default SCCs restricted-v2, nonroot-v2"),
    ("cap-prefix", {"add_capabilities": ["CAP_NET_ADMIN"]}, "without CAP_ (NET_ADMIN)"),
    ("cap-lower", {"add_capabilities": ["net_admin"]}, "is not a capability name"),
    ("cap-all", {"add_capabilities": ["ALL"]}, "'*' allows every capability"),
    ("caps-not-list", {"add_capabilities": "SYS_NICE"}, "option add_capabilities must be a list of strings"),
    ("too-many-caps", {"add_capabilities": ["CAP%d" % i for i in range(65)]}, "at most 64 are accepted"),
    ("bad-volume", {"volumes": ["hostpath"]}, "volume type 'hostpath' is not an SCC volume type"),
    ("bad-seccomp", {"seccomp_profiles": ["RuntimeDefault"]}, "seccomp profile 'RuntimeDefault' is not one of"),
    ("bad-sysctl", {"allowed_unsafe_sysctls": ["Net.Core"]}, "is not a sysctl name"),
    ("bool", {"host_network": "yes"}, "option host_network must be true or false"),
    ("run-as-user-type", {"run_as_user": "MustRunAsRoot"}, "run_as_user type must be one of MustRunAs, MustRunAsRange"),
    ("run-as-user-key", {"run_as_user": {"type": "RunAsAny", "uidMin": 1}}, "option run_as_user has unknown keys uidMin"),
    ("must-run-as-needs-uid", {"run_as_user": {"type": "MustRunAs"}}, "MustRunAs takes uid"),
    ("range-half", {"run_as_user": {"type": "MustRunAsRange", "uidRangeMin": 5}}, "both uidRangeMin and uidRangeMax"),
    ("range-order", {"run_as_user": {"type": "MustRunAsRange", "uidRangeMin": 5, "uidRangeMax": 1}}, "uidRangeMin 5 is greater than uidRangeMax 1"),
    ("negative-uid", {"run_as_user": {"type": "MustRunAs", "uid": -1}}, "must be an integer from 0"),
    ("run-as-any-with-uid", {"run_as_user": {"type": "RunAsAny", "uid": 3}}, "takes no uid or range"),
    ("group-type", {"fs_group": "MustRunAsRange"}, "option fs_group type must be one of MustRunAs, RunAsAny"),
    ("group-ranges-any", {"supplemental_groups": {"type": "RunAsAny", "ranges": [{"min": 1, "max": 2}]}}, "RunAsAny takes no ranges"),
    ("group-range-shape", {"fs_group": {"type": "MustRunAs", "ranges": [{"min": 1}]}}, "{min, max} mappings"),
    ("group-range-order", {"fs_group": {"type": "MustRunAs", "ranges": [{"min": 9, "max": 2}]}}, "range min 9 is greater than max 2"),
    ("selinux-options-any", {"selinux_context": {"type": "RunAsAny", "seLinuxOptions": {"type": "spc_t"}}}, "RunAsAny takes no seLinuxOptions"),
    ("selinux-options-key", {"selinux_context": {"type": "MustRunAs", "seLinuxOptions": {"domain": "x"}}}, "seLinuxOptions must be a mapping of user, role"),
    ("privileged-without-escalation", {"privileged": True, "allow_privilege_escalation": False}, "admits no privileged container"),
    ("long-description", {"description": "x" * 1025}, "at most 1024 characters"),
]


@pytest.mark.parametrize("spec, message", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_specs(spec, message):
    with pytest.raises(custom.CustomSCCError) as info:
        custom.render(dict(spec, name="custom"))
    assert message in str(info.value)
    assert len(str(info.value)) < 1200


@pytest.mark.parametrize("name", sorted({r["name"] for r in rec.DEFAULT_SCCS} | {"restricted-v3", "nested-container", "restricted", "nonroot"}))
def test_default_scc_names_are_refused(name):
    with pytest.raises(custom.CustomSCCError, match="never creates, modifies or deletes default SCCs"):
        custom.render({"name": name})


@pytest.mark.parametrize("name", ["", "Upper", "with space", "a" * 254, None, "-lead", "trail-"])
def test_invalid_names(name):
    with pytest.raises(custom.CustomSCCError, match="name"):
        custom.validate_name(name)


def test_a_huge_bad_value_is_quoted_briefly():
    with pytest.raises(custom.CustomSCCError) as info:
        custom.render({"name": "x", "volumes": ["v" * 5000]})
    assert len(str(info.value)) < 1200 and "more characters" in str(info.value)


# ------------------------------------------------------------------------------------------------ ownership
@pytest.mark.parametrize(
    "obj, ours",
    [
        (custom.render({"name": "x"}), True),
        ({"metadata": {"name": "x"}}, False),
        ({"metadata": {"name": "x", "labels": {custom.CREATED_BY_LABEL: "kubeforge.operators.olm_operator"}}}, False),
        (None, False),
    ],
)
def test_is_ours(obj, ours):
    assert custom.is_ours(obj) is ours
    if ours or obj is None:
        custom.ensure_ours(obj, "x", "delete")
    else:
        with pytest.raises(custom.CustomSCCError, match="refusing to delete SecurityContextConstraints x"):
            custom.ensure_ours(obj, "x", "delete")


# ------------------------------------------------------------------------------------------------ for_workload
HOST_AGENT = deployment(
    pod(
        ctr("agent", sc={"runAsUser": 1001, "capabilities": {"add": ["NET_ADMIN"]}}, ports=[{"containerPort": 9100, "hostPort": 9100}]),
        hostNetwork=True,
        securityContext={"fsGroup": 2000},
        volumes=[{"name": "proc", "hostPath": {"path": "/proc"}}, {"name": "cfg", "configMap": {"name": "cfg"}}],
    ),
    kind="DaemonSet",
    name="agent",
)

# (id, workload(s), expected derived spec without name/base, the least default SCC recommend names)
WORKLOAD_CASES = [
    ("fits-restricted-v2", deployment(pod()), {}, "restricted-v2"),
    ("extra-capability", deployment(pod(ctr(sc={"capabilities": {"add": ["SYS_NICE"]}}))), {"add_capabilities": ["SYS_NICE"]}, "privileged"),
    (
        "only-the-capability-not-yet-allowed",
        deployment(pod(ctr(sc={"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_NICE"]}}))),
        {"add_capabilities": ["SYS_NICE"]},
        "privileged",
    ),
    ("net-bind-is-already-allowed", deployment(pod(ctr(sc={"capabilities": {"add": ["NET_BIND_SERVICE"]}}))), {}, "restricted-v2"),
    (
        "one-uid",
        deployment(pod(ctr(sc={"runAsUser": 1001}))),
        {"run_as_user": {"type": "MustRunAsRange", "uidRangeMin": 1001, "uidRangeMax": 1001}},
        "nonroot-v2",
    ),
    (
        "several-uids",
        deployment(pod(ctr("a", sc={"runAsUser": 1001}), ctr("b", sc={"runAsUser": 1500}))),
        {"run_as_user": {"type": "MustRunAsRange", "uidRangeMin": 1001, "uidRangeMax": 1500}},
        "nonroot-v2",
    ),
    ("root", deployment(pod(ctr(sc={"runAsUser": 0}))), {"run_as_user": {"type": "RunAsAny"}}, "anyuid"),
    ("host-pid-ipc", deployment(pod(hostPID=True, hostIPC=True)), {"host_pid": True, "host_ipc": True}, "hostaccess"),
    ("privileged", deployment(pod(ctr(sc={"privileged": True}))), {"privileged": True}, "privileged"),
    ("escalation", deployment(pod(ctr(sc={"allowPrivilegeEscalation": True}))), {"allow_privilege_escalation": True}, "anyuid"),
    ("nfs", deployment(pod(volumes=[{"name": "data", "nfs": {"server": "nfs.example", "path": "/d"}}])), {"volumes": ["nfs"]}, "hostmount-anyuid"),
    (
        "token-projection-needs-nothing",
        deployment(pod(volumes=[{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}])),
        {},
        "restricted-v2",
    ),
    ("seccomp-unconfined", deployment(pod(securityContext={"seccompProfile": {"type": "Unconfined"}})), {"seccomp_profiles": ["unconfined"]}, "privileged"),
    (
        "seccomp-localhost",
        deployment(pod(ctr(sc={"seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/a.json"}}))),
        {"seccomp_profiles": ["localhost/profiles/a.json"]},
        "privileged",
    ),
    (
        "unsafe-sysctl",
        deployment(pod(securityContext={"sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]})),
        {"allowed_unsafe_sysctls": ["net.core.somaxconn"]},
        "privileged",
    ),
    ("safe-sysctl", deployment(pod(securityContext={"sysctls": [{"name": "net.ipv4.ip_local_port_range", "value": "1 2"}]})), {}, "restricted-v2"),
    ("selinux-type", deployment(pod(securityContext={"seLinuxOptions": {"type": "spc_t"}})), {"selinux_context": {"type": "RunAsAny"}}, "hostmount-anyuid-v2"),
    ("fs-group", deployment(pod(securityContext={"fsGroup": 2000})), {"fs_group": {"type": "MustRunAs", "ranges": [{"min": 2000, "max": 2000}]}}, "nonroot-v2"),
    (
        "host-agent",
        HOST_AGENT,
        {
            "host_network": True,
            "host_ports": True,
            "add_capabilities": ["NET_ADMIN"],
            "volumes": ["hostPath"],
            "run_as_user": {"type": "MustRunAsRange", "uidRangeMin": 1001, "uidRangeMax": 1001},
            "fs_group": {"type": "MustRunAs", "ranges": [{"min": 2000, "max": 2000}]},
        },
        "privileged",
    ),
    (
        "two-workloads",
        [
            deployment(pod(hostNetwork=True), name="a"),
            {"kind": "CronJob", "metadata": {"name": "b"}, "spec": {"jobTemplate": {"spec": {"template": {"spec": pod(ctr(sc={"runAsUser": 0}))}}}}},
        ],
        {"host_network": True, "run_as_user": {"type": "RunAsAny"}},
        "privileged",
    ),
]


@pytest.mark.parametrize("workload, expected, least_default", [c[1:] for c in WORKLOAD_CASES], ids=[c[0] for c in WORKLOAD_CASES])
def test_for_workload(workload, expected, least_default):
    derived = custom.spec_for_workload(copy.deepcopy(workload), "derived")
    assert derived.spec == dict(expected, name="derived", base="restricted-v2")
    assert sorted(derived.forced_by) == sorted(expected)
    assert all(derived.forced_by[key] for key in expected)
    assert derived.recommendation == least_default
    refs = [r for obj in (workload if isinstance(workload, list) else [workload]) for r in rec.pod_specs_of(obj)]
    derived_row = custom.row_of(derived.spec)
    # The derived SCC admits every pod spec; restricted-v2 rejects one whenever something was relaxed.
    assert custom.remaining_violations(derived_row, refs) == []
    assert bool(custom.remaining_violations(row("restricted-v2"), refs)) is bool(expected)
    # Least: taking back any single relaxation makes the SCC reject the workload again.
    for key in expected:
        narrower = {k: v for k, v in derived.spec.items() if k != key}
        assert custom.remaining_violations(custom.row_of(custom.normalize_spec(narrower)), refs), key
    # The derived spec renders like any compact spec, with priority null.
    assert custom.render(derived.spec)["priority"] is None


def test_for_workload_names_the_forcing_fields():
    derived = custom.spec_for_workload(HOST_AGENT, "agent")
    assert derived.forced_by["host_network"] == ["spec.hostNetwork"]
    assert derived.forced_by["host_ports"] == ["spec.containers[0].ports[0].hostPort"]
    assert derived.forced_by["volumes"] == ["spec.volumes[0]"]
    several = custom.spec_for_workload([HOST_AGENT, deployment(pod(hostNetwork=True), name="web")], "agent")
    assert several.forced_by["host_network"] == ["daemonset agent: spec.hostNetwork", "deployment web: spec.hostNetwork"]


@pytest.mark.parametrize(
    "workload, message",
    [
        (deployment(pod(volumes=[{"name": "odd", "somethingNew": {}}])), "has a volume type no SCC can allow"),
        ({"kind": "ConfigMap", "data": {}}, "cannot find a pod spec"),
        ([], "empty list"),
        (deployment(pod(hostUsers=False)), None),
    ],
)
def test_for_workload_errors(workload, message):
    if message is None:
        assert custom.spec_for_workload(workload, "x").spec == {"name": "x", "base": "restricted-v2"}
        return
    with pytest.raises(Exception) as info:
        custom.spec_for_workload(workload, "x")
    assert message in str(info.value)
