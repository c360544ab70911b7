"""OpenShift's SecurityContextConstraints admission on the testbed, by OpenShift's own code.

`sccadmission/` is a small Go program (pinned modules, built by scripts/build.sh like the other components) that
serves the plugin ``security.openshift.io/SecurityContextConstraint`` of github.com/openshift/apiserver-library-go
as a mutating and a validating admission webhook on 127.0.0.1, and gives namespaces their
``openshift.io/sa.scc.*`` annotations as OpenShift's namespace-security-allocation controller does. With it:

- the ten default SCCs, their ``system:openshift:scc:<name>`` ClusterRoles and the restricted-v2 binding for
  ``system:authenticated`` exist (scc_defaults.py);
- every pod outside kube-system, kube-public and kube-node-lease is admitted under an SCC (annotation
  ``openshift.io/scc``) or refused with OpenShift's message, on simulated and real nodes alike;
- SCC objects are defaulted when written (fsGroup and supplementalGroups RunAsAny, volumes, ...), as OpenShift's
  API server does;
- the webhook runs as its own user (client certificate) with read access to SCCs and namespaces, patch on
  namespaces, and ``system:auth-delegator`` for the SubjectAccessReviews that decide who may ``use`` an SCC.

The API server still serves no ``project.openshift.io``/``route.openshift.io`` APIs, so our modules do not take the
testbed for OpenShift.
"""

import base64
import hashlib
from pathlib import Path

from testbed import scc_defaults

NAME = "sccadmission"
SOURCE_DIR = Path(__file__).resolve().parent / "sccadmission"
SOURCE_FILES = ("go.mod", "go.sum", "main.go")
USER = "kubeforge-testbed-sccadmission"
WEBHOOK_CONFIGURATION = "kubeforge-testbed-scc-admission"
# Namespaces OpenShift's admission would cover too, but whose pods (none today) the testbed itself would need.
EXEMPT_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")
# The plugin waits up to 10 s for a namespace's annotations; the API server must wait longer for the webhook.
TIMEOUT_SECONDS = 30
UID_RANGE_ANNOTATION = "openshift.io/sa.scc.uid-range"
_MANAGED = {"app.kubernetes.io/managed-by": "kubeforge-testbed"}


def source_digest() -> str:
    """12 hex digits of the program's sources: part of the binary's name, so an edit rebuilds it (build.sh agrees)."""
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        digest.update((SOURCE_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


def binary_name() -> str:
    return f"{NAME}-{source_digest()}"


def _meta(name: str) -> dict:
    return {"name": name, "labels": dict(_MANAGED)}


def cluster_objects() -> list[dict]:
    """The default SCCs and their roles, and the webhook's own least-privilege RBAC."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": _meta(USER),
        "rules": [
            {"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch", "patch"]},
        ],
    }
    bindings = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(f"{USER}:{role_name}"),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": USER}],
        }
        for role_name in (USER, "system:auth-delegator")
    ]
    return [*scc_defaults.default_sccs(), *scc_defaults.scc_cluster_roles(), scc_defaults.restricted_v2_binding(), role, *bindings]


def webhook_configurations(port: int, ca_pem: bytes) -> list[dict]:
    """Mutating (pods, namespaces) and validating (pods) webhooks by URL on 127.0.0.1, trusting the testbed CA."""
    ca_bundle = base64.b64encode(ca_pem).decode()
    selector = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(EXEMPT_NAMESPACES)}]}

    def webhook(name: str, path: str, resources: list[str], operations: list[str], group: str = "") -> dict:
        return {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca_bundle},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "timeoutSeconds": TIMEOUT_SECONDS,
            "namespaceSelector": selector,
            "rules": [{"apiGroups": [group], "apiVersions": ["v1"], "operations": operations, "resources": resources}],
        }

    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": _meta(WEBHOOK_CONFIGURATION),
            "webhooks": [
                webhook("namespaces.scc.security.openshift.io", "/mutate-namespaces", ["namespaces"], ["CREATE"]),
                # OpenShift defaults every SCC when it is written; the plugin refuses all pods while one lacks a strategy.
                webhook("sccs.scc.security.openshift.io", "/mutate-sccs", ["securitycontextconstraints"], ["CREATE", "UPDATE"], "security.openshift.io"),
                # OpenShift runs the SCC plugin after the other mutating admission; a webhook asks to run again
                # when a later one changed the pod.
                dict(webhook("pods.scc.security.openshift.io", "/mutate-pods", ["pods"], ["CREATE", "UPDATE"]), reinvocationPolicy="IfNeeded"),
            ],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": _meta(WEBHOOK_CONFIGURATION),
            "webhooks": [webhook("pods.scc.security.openshift.io", "/validate-pods", ["pods"], ["CREATE", "UPDATE"])],
        },
    ]
