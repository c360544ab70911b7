"""recommend_scc: realistic pod specs against the default OpenShift SCCs (values of scc.md section 2 / the CKAO
manifests), with the semantics of SCC admission in openshift/apiserver-library-go."""

import copy

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.scc import recommend as rec

NGINX = "docker.io/library/nginx:1.27"


def container(name="app", image="quay.io/demo/app:1", sc=None, ports=None, **extra):
    c = {"name": name, "image": image}
    if sc is not None:
        c["securityContext"] = sc
    if ports is not None:
        c["ports"] = ports
    c.update(extra)
    return c


def pod_spec(*containers, sc=None, volumes=None, **extra):
    spec = {"containers": list(containers) or [container()]}
    if sc is not None:
        spec["securityContext"] = sc
    if volumes is not None:
        spec["volumes"] = volumes
    spec.update(extra)
    return spec


def deployment(spec, kind="Deployment", name="demo", annotations=None):
    template = {"metadata": {"labels": {"app": name}}, "spec": spec}
    if annotations:
        template["metadata"]["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "demo"}, "spec": {"template": template}}


RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True}
TOKEN_PROJECTION = {
    "name": "kube-api-access",
    "projected": {
        "sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]
    },
}

# (id, object, keyword arguments, expected SCC, a field the recommendation must name or None)
CASES = [
    ("plain-deployment-no-sc", deployment(pod_spec()), {}, "restricted-v2", None),
    (
        "restricted-compliant",
        deployment(pod_spec(container(sc=RESTRICTED_SC), sc={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}})),
        {},
        "restricted-v2",
        None,
    ),
    (
        "net-bind-service-allowed-by-restricted-v2",
        deployment(pod_spec(container(sc={"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}))),
        {},
        "restricted-v2",
        None,
    ),
    ("nginx-as-root", deployment(pod_spec(container("nginx", NGINX, sc={"runAsUser": 0}))), {}, "anyuid", "spec.containers[0].securityContext.runAsUser"),
    ("pod-level-root", deployment(pod_spec(sc={"runAsUser": 0})), {}, "anyuid", "spec.containers[0].securityContext.runAsUser"),
    (
        "image-user-root-must-be-kept",
        deployment(pod_spec(container("nginx", NGINX))),
        {"image_users": {"nginx": 0}},
        "anyuid",
        "spec.containers[0].image (runs as user 0)",
    ),
    (
        "image-user-nonroot-kept",
        deployment(pod_spec(container("app"))),
        {"image_users": {"*": 1001}},
        "nonroot-v2",
        "spec.containers[0].image (runs as user 1001)",
    ),
    ("fixed-uid-1000", deployment(pod_spec(sc={"runAsUser": 1000})), {}, "nonroot-v2", "spec.containers[0].securityContext.runAsUser"),
    ("fixed-uid-inside-namespace-range", deployment(pod_spec(sc={"runAsUser": 1000650001})), {"uid_range": (1000650000, 1000659999)}, "restricted-v2", None),
    (
        "fixed-uid-outside-given-range",
        deployment(pod_spec(sc={"runAsUser": 1000})),
        {"uid_range": (1000650000, 1000659999)},
        "nonroot-v2",
        "spec.containers[0].securityContext.runAsUser",
    ),
    (
        "root-plus-net-bind-service-needs-privileged",
        deployment(pod_spec(container(sc={"runAsUser": 0, "capabilities": {"add": ["NET_BIND_SERVICE"]}}))),
        {},
        "privileged",
        "spec.containers[0].securityContext.capabilities.add",
    ),
    (
        "net-admin-cap",
        deployment(pod_spec(container(sc={"capabilities": {"add": ["NET_ADMIN"]}}))),
        {},
        "privileged",
        "spec.containers[0].securityContext.capabilities.add",
    ),
    ("host-network", deployment(pod_spec(hostNetwork=True)), {}, "hostnetwork-v2", "spec.hostNetwork"),
    (
        "host-port",
        deployment(pod_spec(container(ports=[{"containerPort": 8080, "hostPort": 8080}]))),
        {},
        "hostnetwork-v2",
        "spec.containers[0].ports[0].hostPort",
    ),
    (
        "host-network-with-privilege-escalation",
        deployment(pod_spec(container(sc={"allowPrivilegeEscalation": True}), hostNetwork=True)),
        {},
        "hostnetwork",
        "spec.containers[0].securityContext.allowPrivilegeEscalation",
    ),
    ("host-pid", deployment(pod_spec(hostPID=True)), {}, "hostaccess", "spec.hostPID"),
    ("hostpath-volume", deployment(pod_spec(volumes=[{"name": "logs", "hostPath": {"path": "/var/log"}}])), {}, "hostmount-anyuid", "spec.volumes[0]"),
    (
        "nfs-volume",
        deployment(pod_spec(volumes=[{"name": "share", "nfs": {"server": "nfs.example", "path": "/export"}}])),
        {},
        "hostmount-anyuid",
        "spec.volumes[0]",
    ),
    (
        "hostpath-with-host-network",
        deployment(pod_spec(volumes=[{"name": "root", "hostPath": {"path": "/"}}], hostNetwork=True), kind="DaemonSet"),
        {},
        "hostaccess",
        "spec.hostNetwork",
    ),
    (
        "hostpath-with-spc-selinux-type",
        deployment(pod_spec(sc={"seLinuxOptions": {"type": "spc_t"}}, volumes=[{"name": "sock", "hostPath": {"path": "/run/crio"}}])),
        {},
        "hostmount-anyuid-v2",
        "spec.securityContext.seLinuxOptions.type",
    ),
    (
        "privileged-container",
        deployment(pod_spec(container(sc={"privileged": True})), kind="DaemonSet"),
        {},
        "privileged",
        "spec.containers[0].securityContext.privileged",
    ),
    (
        "privilege-escalation-true",
        deployment(pod_spec(container(sc={"allowPrivilegeEscalation": True}))),
        {},
        "anyuid",
        "spec.containers[0].securityContext.allowPrivilegeEscalation",
    ),
    ("seccomp-unconfined", deployment(pod_spec(sc={"seccompProfile": {"type": "Unconfined"}})), {}, "privileged", "spec.securityContext.seccompProfile"),
    (
        "root-with-runtime-default-seccomp-is-not-anyuid",
        deployment(pod_spec(sc={"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}})),
        {},
        "privileged",
        "spec.securityContext.seccompProfile",
    ),
    (
        "seccomp-annotation-docker-default",
        deployment(pod_spec(), annotations={"seccomp.security.alpha.kubernetes.io/pod": "docker/default"}),
        {},
        "restricted-v2",
        None,
    ),
    ("fsgroup-fixed", deployment(pod_spec(sc={"fsGroup": 2000})), {}, "nonroot-v2", "spec.securityContext.fsGroup"),
    ("fsgroup-in-namespace-range", deployment(pod_spec(sc={"fsGroup": 1000650000})), {"gid_range": (1000650000, 1000659999)}, "restricted-v2", None),
    (
        "supplemental-groups-with-host-network",
        deployment(pod_spec(sc={"supplementalGroups": [5555]}, hostNetwork=True)),
        {},
        "hostaccess",
        "spec.securityContext.supplementalGroups",
    ),
    (
        "selinux-level-unknown",
        deployment(pod_spec(sc={"seLinuxOptions": {"level": "s0:c1,c2"}})),
        {},
        "hostmount-anyuid-v2",
        "spec.securityContext.seLinuxOptions.level",
    ),
    ("selinux-level-of-namespace", deployment(pod_spec(sc={"seLinuxOptions": {"level": "s0:c2,c1"}})), {"mcs_level": "s0:c1,c2"}, "restricted-v2", None),
    ("safe-sysctl", deployment(pod_spec(sc={"sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "80"}]})), {}, "restricted-v2", None),
    (
        "unsafe-sysctl",
        deployment(pod_spec(sc={"sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]})),
        {},
        "privileged",
        "spec.securityContext.sysctls[0]",
    ),
    ("token-projection-allowed", deployment(pod_spec(volumes=[TOKEN_PROJECTION])), {}, "restricted-v2", None),
    (
        "init-container-root",
        deployment(pod_spec(initContainers=[container("chown", "busybox", sc={"runAsUser": 0})])),
        {},
        "anyuid",
        "spec.initContainers[0].securityContext.runAsUser",
    ),
    (
        "run-as-non-root-false-fixed-uid",
        deployment(pod_spec(sc={"runAsNonRoot": False, "runAsUser": 1001})),
        {},
        "anyuid",
        "spec.containers[0].securityContext.runAsNonRoot",
    ),
    ("apparmor-is-no-scc-constraint", deployment(pod_spec(sc={"appArmorProfile": {"type": "Unconfined"}})), {}, "restricted-v2", None),
    ("git-repo-volume", deployment(pod_spec(volumes=[{"name": "src", "gitRepo": {"repository": "https://example/x"}}])), {}, "privileged", "spec.volumes[0]"),
]


@pytest.mark.parametrize("obj, kwargs, expected, field", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recommend_scc(obj, kwargs, expected, field):
    before = copy.deepcopy(obj)
    result = rec.recommend_scc(obj, **kwargs)
    assert result.scc == expected, result
    assert obj == before  # inputs are never modified
    order = [s["name"] for s in rec.ordered()]
    assert list(result.rejected) == order[: order.index(expected)]
    if field is None:
        assert result.fields == [] and result.reasons == []
    else:
        assert field in result.fields, result.fields
        assert result.reasons


def test_uid_range_is_named_in_the_reason():
    result = rec.recommend_scc(deployment(pod_spec(sc={"runAsUser": 1000})), uid_range=(1000650000, 1000659999))
    assert "UID 1000 is outside the namespace's UID range (1000650000-1000659999)" in result.reasons
    unknown = rec.recommend_scc(deployment(pod_spec(sc={"runAsUser": 1000})))
    assert any("pass uid_range" in r for r in unknown.reasons)


def test_restricted_v2_needs_no_grant():
    assert rec.recommend_scc(deployment(pod_spec())).scc in rec.DEFAULT_GRANTED
    assert "anyuid" not in rec.DEFAULT_GRANTED


def test_order_follows_admission_restrictiveness():
    # byrestrictions.go weights applied to the manifests' values (least privileged first).
    assert [s["name"] for s in rec.ordered()] == [
        "restricted-v2",
        "nonroot-v2",
        "anyuid",
        "hostmount-anyuid",
        "hostmount-anyuid-v2",
        "hostnetwork-v2",
        "hostnetwork",
        "hostaccess",
        "privileged",
    ]
    points = {s["name"]: rec.restrictiveness(s) for s in rec.DEFAULT_SCCS}
    assert points["restricted-v2"] == 100000 + 10000 + 20000 + (5000 + 10 - 3000)
    assert points["privileged"] == 1600000 + 200000 + 400000 + 800000 + 9000 + 40000 + 40000


def test_default_table_values_from_scc_md():
    table = {s["name"]: s for s in rec.DEFAULT_SCCS}
    assert table["anyuid"]["priority"] == 10
    assert all(s["priority"] is None for n, s in table.items() if n != "anyuid")
    assert table["restricted-v2"]["requiredDropCapabilities"] == ("ALL",)
    assert table["restricted-v2"]["allowedCapabilities"] == ("NET_BIND_SERVICE",)
    assert table["restricted-v2"]["seccompProfiles"] == ("runtime/default",)
    assert table["nonroot-v2"]["runAsUser"]["type"] == "MustRunAsNonRoot" and table["nonroot-v2"]["fsGroup"]["type"] == "RunAsAny"
    assert table["hostmount-anyuid-v2"]["seLinuxContext"]["type"] == "RunAsAny"
    assert {"hostPath", "nfs"} <= set(table["hostmount-anyuid"]["volumes"])
    assert table["privileged"]["volumes"] == ("*",) and table["privileged"]["allowedCapabilities"] == ("*",)


def test_csv_install_strategy_takes_most_demanding_deployment():
    csv = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "demo.v1.0.0"},
        "spec": {
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {"name": "controller-manager", "spec": {"template": {"spec": pod_spec(container(sc=RESTRICTED_SC))}}},
                        {"name": "node-agent", "spec": {"template": {"spec": pod_spec(hostNetwork=True)}}},
                    ]
                },
            }
        },
    }
    refs = rec.pod_specs_of(csv)
    assert [r.label for r in refs] == ["deployment controller-manager", "deployment node-agent"]
    result = rec.recommend_scc(csv)
    assert result.scc == "hostnetwork-v2"
    assert "deployment node-agent: spec.hostNetwork" in result.fields


@pytest.mark.parametrize(
    "obj, label",
    [
        ({"kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec()}, "pod p"),
        (deployment(pod_spec(), kind="StatefulSet", name="db"), "statefulset db"),
        ({"kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": {"spec": {"template": {"spec": pod_spec()}}}}}, "cronjob c"),
        ({"metadata": {}, "spec": pod_spec()}, "pod template"),
        (pod_spec(), "pod spec"),
        ({"name": "op", "spec": {"template": {"spec": pod_spec()}}}, "deployment op"),
    ],
)
def test_pod_specs_of_shapes(obj, label):
    refs = rec.pod_specs_of(obj)
    assert [r.label for r in refs] == [label]
    assert refs[0].spec["containers"][0]["name"] == "app"


@pytest.mark.parametrize(
    "obj, message",
    [
        ([], "mapping"),
        ({"kind": "ConfigMap", "data": {}}, "cannot find a pod spec"),
        ({"kind": "ClusterServiceVersion", "metadata": {"name": "x"}, "spec": {"install": {"spec": {}}}}, "no spec.install.spec.deployments"),
        ({"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {}}}}, "no pod template with containers"),
    ],
)
def test_pod_specs_of_rejects(obj, message):
    with pytest.raises(rec.PodSpecError, match=message):
        rec.pod_specs_of(obj)


def test_required_scc_annotation():
    ref = rec.pod_specs_of(deployment(pod_spec(), annotations={"openshift.io/required-scc": "nonroot-v2"}))[0]
    assert rec.required_scc(ref) == "nonroot-v2"
    assert rec.required_scc(rec.pod_specs_of(deployment(pod_spec()))[0]) is None


def test_violations_of_one_scc_name_every_field():
    table = {s["name"]: s for s in rec.DEFAULT_SCCS}
    ref = rec.pod_specs_of(deployment(pod_spec(container(sc={"privileged": True, "runAsUser": 0}), hostNetwork=True, hostIPC=True)))[0]
    fields = {v.field for v in rec.violations(table["restricted-v2"], ref)}
    assert fields == {
        "spec.containers[0].securityContext.privileged",
        "spec.containers[0].securityContext.runAsUser",
        "spec.hostNetwork",
        "spec.hostIPC",
    }
    assert rec.violations(table["privileged"], ref) == []


def test_reasons_are_deduplicated_across_rejected_sccs():
    result = rec.recommend_scc(deployment(pod_spec(container("nginx", NGINX, sc={"runAsUser": 0}))))
    assert result.reasons == ["running with the root UID is forbidden"]
    assert set(result.rejected) == {"restricted-v2", "nonroot-v2"}


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, {"uid_range": None, "gid_range": None, "mcs_level": None}),
        (
            {"openshift.io/sa.scc.uid-range": "1000650000/10000", "openshift.io/sa.scc.mcs": "s0:c26,c5"},
            {"uid_range": (1000650000, 1000659999), "gid_range": (1000650000, 1000659999), "mcs_level": "s0:c26,c5"},
        ),
        (
            {"openshift.io/sa.scc.uid-range": "1000650000/10000", "openshift.io/sa.scc.supplemental-groups": "5000-5999,7000/10"},
            {"uid_range": (1000650000, 1000659999), "gid_range": (5000, 5999), "mcs_level": None},
        ),
        ({"openshift.io/sa.scc.uid-range": "bad", "openshift.io/sa.scc.supplemental-groups": "10/0"}, dict.fromkeys(("uid_range", "gid_range", "mcs_level"))),
        ({"openshift.io/sa.scc.uid-range": "20-10"}, {"uid_range": None, "gid_range": None, "mcs_level": None}),
    ],
)
def test_namespace_context(annotations, expected):
    assert rec.namespace_context(annotations) == expected


def test_a_uid_inside_the_namespace_range_keeps_restricted_v2():
    pod = {"kind": "Pod", "spec": {"securityContext": {"fsGroup": 1000650000}, "containers": [{"name": "c", "securityContext": {"runAsUser": 1000650005}}]}}
    assert rec.recommend_scc(pod).scc == "nonroot-v2"  # outside an unknown range
    context = rec.namespace_context({"openshift.io/sa.scc.uid-range": "1000650000/10000"})
    assert rec.recommend_scc(pod, **context).scc == "restricted-v2"
