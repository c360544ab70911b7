"""The testbed's SCC admission objects (scc_defaults.py, scc_admission.py): pure, no cluster."""

import base64
import subprocess
from pathlib import Path

import pytest
from testbed import scc_admission, scc_defaults

# The plugin refuses every pod unless all of these exist (apiserver-library-go sccadmission.standardSCCNames).
PLUGIN_REQUIRED = {"anyuid", "hostaccess", "hostmount-anyuid", "hostnetwork", "hostnetwork-v2", "nonroot", "nonroot-v2", "privileged", "restricted"}
PLUGIN_REQUIRED |= {"restricted-v2"}
SCC_FIELDS = {
    "allowHostDirVolumePlugin",
    "allowHostIPC",
    "allowHostNetwork",
    "allowHostPID",
    "allowHostPorts",
    "allowPrivilegeEscalation",
    "allowPrivilegedContainer",
    "allowedCapabilities",
    "defaultAddCapabilities",
    "requiredDropCapabilities",
    "fsGroup",
    "runAsUser",
    "seLinuxContext",
    "supplementalGroups",
    "readOnlyRootFilesystem",
    "priority",
    "users",
    "groups",
    "volumes",
}


def test_the_ten_default_sccs_are_complete():
    sccs = {s["metadata"]["name"]: s for s in scc_defaults.default_sccs()}
    assert set(sccs) == PLUGIN_REQUIRED == set(scc_defaults.DEFAULT_SCC_NAMES)
    for name, scc in sccs.items():
        assert SCC_FIELDS <= set(scc), (name, SCC_FIELDS - set(scc))
        assert scc["apiVersion"] == "security.openshift.io/v1" and scc["kind"] == "SecurityContextConstraints"


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("anyuid", "priority", 10),
        ("anyuid", "runAsUser", {"type": "RunAsAny"}),
        ("restricted-v2", "requiredDropCapabilities", ["ALL"]),
        ("restricted-v2", "allowPrivilegeEscalation", False),
        ("restricted-v2", "runAsUser", {"type": "MustRunAsRange"}),
        ("restricted-v2", "users", []),
        ("restricted-v2", "groups", []),
        ("privileged", "allowPrivilegedContainer", True),
        ("nonroot-v2", "runAsUser", {"type": "MustRunAsNonRoot"}),
        ("hostnetwork-v2", "allowHostNetwork", True),
    ],
)
def test_default_scc_values(name, field, value):
    scc = next(s for s in scc_defaults.default_sccs() if s["metadata"]["name"] == name)
    assert scc[field] == value


def test_roles_and_the_restricted_v2_binding():
    roles = {r["metadata"]["name"]: r for r in scc_defaults.scc_cluster_roles()}
    assert set(roles) == {f"system:openshift:scc:{n}" for n in PLUGIN_REQUIRED}
    rule = roles["system:openshift:scc:anyuid"]["rules"][0]
    assert rule == {"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"], "resourceNames": ["anyuid"], "verbs": ["use"]}
    binding = scc_defaults.restricted_v2_binding()
    assert binding["roleRef"]["name"] == "system:openshift:scc:restricted-v2"
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"}]


def test_the_webhook_identity_has_no_wildcards():
    objects = scc_admission.cluster_objects()
    ours = [o for o in objects if o["metadata"]["name"].startswith(scc_admission.USER)]
    assert {o["kind"] for o in ours} == {"ClusterRole", "ClusterRoleBinding"}
    for role in (o for o in ours if o["kind"] == "ClusterRole"):
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], rule
    bound = sorted(o["roleRef"]["name"] for o in ours if o["kind"] == "ClusterRoleBinding")
    assert bound == sorted([scc_admission.USER, "system:auth-delegator"])


def test_webhooks_cover_pods_and_namespaces_by_loopback_url():
    mutating, validating = scc_admission.webhook_configurations(4567, b"PEM")
    assert mutating["kind"] == "MutatingWebhookConfiguration" and validating["kind"] == "ValidatingWebhookConfiguration"
    hooks = mutating["webhooks"] + validating["webhooks"]
    assert {h["clientConfig"]["url"] for h in hooks} == {
        "https://127.0.0.1:4567/mutate-namespaces",
        "https://127.0.0.1:4567/mutate-sccs",
        "https://127.0.0.1:4567/mutate-pods",
        "https://127.0.0.1:4567/validate-pods",
    }
    for hook in hooks:
        assert hook["failurePolicy"] == "Fail" and hook["timeoutSeconds"] > 10  # the plugin waits up to 10 s itself
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"PEM"
        assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == list(scc_admission.EXEMPT_NAMESPACES)


def test_binary_name_matches_the_build_script():
    """build.sh names the binary from the same sources: a mismatch would leave the testbed without it."""
    script = Path(scc_admission.__file__).parent / "scripts" / "build.sh"
    line = next(x for x in script.read_text().splitlines() if x.startswith("SCC_BINARY="))
    name = subprocess.run(  # noqa: S603
        ["bash", "-c", f"SCC_DIR={scc_admission.SOURCE_DIR}; {line}; echo $SCC_BINARY"],
        stdout=subprocess.PIPE,
        text=True,
        check=True,  # noqa: S607
    ).stdout.strip()
    assert scc_admission.binary_name() == name
