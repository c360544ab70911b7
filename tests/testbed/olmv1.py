"""OLM v1 (catalogd + operator-controller from github.com/operator-framework/operator-controller) on the testbed.

Started on demand on a running testbed (`Testbed.ensure_olmv1()`, `python -m testbed up --olmv1`), as local
processes like the packageserver: each runs as its own ServiceAccount in namespace olmv1-system (in-cluster config
from a token shown in a private mount namespace, no `namespace` file), with least-privilege RBAC taken from
upstream's config/base RBAC (no metrics/auth-proxy and no leader-election rules: both are off here).

- CRDs from the module source in the Go module cache (config/base/*/crd/standard), not manifests/standard.yaml.
- catalogd serves catalog content over TLS (a certificate from the testbed PKI, SAN IP 127.0.0.1) on
  127.0.0.1:<port>, which is also its --external-address: ClusterCatalog status.urls.base is
  https://127.0.0.1:<port>/catalogs/<name>.
- catalogd's mutating webhook (it sets the label olm.operatorframework.io/metadata.name) is registered with
  url https://127.0.0.1:<webhook port>/... and the testbed CA: no Service. controller-runtime binds the webhook
  server on all interfaces (catalogd has no flag for the host), like OLM v0's hard-coded health ports.
- Image pulls (catalog and bundle images) from the testbed registry: its CA in --pull-cas-dir (as `*.crt`) and
  its credentials in a kubernetes.io/dockerconfigjson Secret named by --global-pull-secret.
- Every port is an explicit free 127.0.0.1 port recorded in state.json; metrics and pprof are off; each process has
  its own cache directory (emptied by the process at start) and TMPDIR under <run>/olmv1/<process>/.
"""

import base64
import json
import os
import shutil
import time
import urllib.request
from pathlib import Path

from testbed import procs

MODULE = "github.com/operator-framework/operator-controller"
NAMESPACE = "olmv1-system"
# The registry credentials for image pulls: --global-pull-secret=olmv1-system/<PULL_SECRET>.
PULL_SECRET = "kubeforge-testbed-registry"
# Process name -> ServiceAccount (upstream's names once its kustomize prefixes are applied).
SERVICE_ACCOUNTS = {"catalogd": "catalogd-controller-manager", "operator-controller": "operator-controller-controller-manager"}
PROCESSES = tuple(SERVICE_ACCOUNTS)
# state["ports"] keys.
PORTS = ("olmv1_catalogd", "olmv1_catalogd_webhook", "olmv1_catalogd_health", "olmv1_operator_controller_health")
CRD_FILES = (
    "config/base/catalogd/crd/standard/olm.operatorframework.io_clustercatalogs.yaml",
    "config/base/operator-controller/crd/standard/olm.operatorframework.io_clusterextensions.yaml",
)
WEBHOOK_CONFIGURATION = "kubeforge-testbed-catalogd"
WEBHOOK_PATH = "/mutate-olm-operatorframework-io-v1-clustercatalog"
LABELS = {"app.kubernetes.io/managed-by": "kubeforge-testbed", "app.kubernetes.io/part-of": "olmv1"}


def source_dir(gomodcache: Path, version: str) -> Path:
    """The operator-controller module source (CRDs) in the Go module cache."""
    return gomodcache / f"{MODULE}@{version}"


def _meta(name: str, namespace: str = "") -> dict:
    meta = {"name": name, "labels": dict(LABELS)}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rule(groups: list, resources: list, verbs: list) -> dict:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


# Upstream v1.5.1 config/base/<controller>/rbac/standard/role.yaml (manager-role), unchanged: (cluster rules,
# rules in olmv1-system). No wildcards upstream.
_OLM = "olm.operatorframework.io"
RULES = {
    "catalogd": (
        [
            _rule([_OLM], ["clustercatalogs"], ["create", "delete", "get", "list", "patch", "update", "watch"]),
            _rule([_OLM], ["clustercatalogs/finalizers"], ["update"]),
            _rule([_OLM], ["clustercatalogs/status"], ["get", "patch", "update"]),
        ],
        # The global pull secret and its own ServiceAccount's imagePullSecrets.
        [_rule([""], ["secrets", "serviceaccounts"], ["get", "list", "watch"])],
    ),
    "operator-controller": (
        [
            # It acts with TokenRequest tokens of each ClusterExtension's ServiceAccount (spec.serviceAccount).
            _rule([""], ["serviceaccounts/token"], ["create"]),
            # CRD upgrade-safety preflight.
            _rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["get"]),
            _rule([_OLM], ["clustercatalogs"], ["get", "list", "watch"]),
            _rule([_OLM], ["clusterextensions"], ["get", "list", "patch", "update", "watch"]),
            _rule([_OLM], ["clusterextensions/finalizers"], ["update"]),
            _rule([_OLM], ["clusterextensions/status"], ["patch", "update"]),
            _rule(["rbac.authorization.k8s.io"], ["clusterrolebindings", "clusterroles", "rolebindings", "roles"], ["list", "watch"]),
        ],
        [
            # Helm release secrets of the installed bundles live in olmv1-system.
            _rule([""], ["secrets"], ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]),
            _rule([""], ["serviceaccounts"], ["get", "list", "watch"]),
        ],
    ),
}


def rbac_objects() -> list[dict]:
    """The namespace, both ServiceAccounts and their ClusterRoles/Roles and bindings."""
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(NAMESPACE)}]
    rbac = "rbac.authorization.k8s.io"
    for process, service_account in SERVICE_ACCOUNTS.items():
        name = f"kubeforge-testbed-olmv1-{process}"
        subjects = [{"kind": "ServiceAccount", "name": service_account, "namespace": NAMESPACE}]
        cluster_rules, namespace_rules = RULES[process]
        objects += [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(service_account, NAMESPACE)},
            {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": _meta(name), "rules": cluster_rules},
            {
                "apiVersion": f"{rbac}/v1",
                "kind": "ClusterRoleBinding",
                "metadata": _meta(name),
                "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": name},
                "subjects": subjects,
            },
            {"apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": _meta(name, NAMESPACE), "rules": namespace_rules},
            {
                "apiVersion": f"{rbac}/v1",
                "kind": "RoleBinding",
                "metadata": _meta(name, NAMESPACE),
                "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
                "subjects": subjects,
            },
        ]
    return objects


def pull_secret(host: str, username: str, password: str) -> dict:
    """A kubernetes.io/dockerconfigjson Secret with the registry's credentials."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    config = json.dumps({"auths": {host: {"auth": auth}}})
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(PULL_SECRET, NAMESPACE),
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(config.encode()).decode()},
    }


def webhook_configuration(port: int, ca_pem: bytes) -> dict:
    """catalogd's mutating webhook (upstream config/base/catalogd/webhook/standard), by URL on 127.0.0.1."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": _meta(WEBHOOK_CONFIGURATION),
        "webhooks": [
            {
                "name": "inject-metadata-name.olm.operatorframework.io",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}{WEBHOOK_PATH}", "caBundle": base64.b64encode(ca_pem).decode()},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "timeoutSeconds": 10,
                "rules": [{"apiGroups": [_OLM], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["clustercatalogs"]}],
                "matchConditions": [
                    {
                        "name": "MissingOrIncorrectMetadataNameLabel",
                        "expression": "'name' in object.metadata && (!has(object.metadata.labels) || "
                        "!('olm.operatorframework.io/metadata.name' in object.metadata.labels) || "
                        "object.metadata.labels['olm.operatorframework.io/metadata.name'] != object.metadata.name)",
                    }
                ],
            }
        ],
    }


# Both processes pull with containers/image, which reads $HOME/.config/containers/registries.conf when it exists (in
# place of /etc/containers/registries.conf): each gets a HOME of its own, so the testbed can show them mirrors
# without touching the host's /etc. containers/image reads the file once per process: set_mirrors restarts them.
HOME = "home"
EMPTY_REGISTRIES_CONF = "# the testbed's: no mirrors\n"


def registries_conf(work: Path) -> Path:
    return work / HOME / ".config" / "containers" / "registries.conf"


def set_mirrors(bed, text: str) -> None:
    """Write the registries.conf both processes read (None or "": none) for their next start."""
    root = bed.run_dir / "olmv1"
    for name in PROCESSES:
        path = registries_conf(root / name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text or EMPTY_REGISTRIES_CONF)
        os.replace(tmp, path)


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _ca_dir(path: Path, name: str, source: Path) -> Path:
    """A directory holding one CA file (`*.crt`: containers/image reads only those as CAs)."""
    _private_dir(path)
    for stale in path.iterdir():
        if stale.name != name:
            stale.unlink()
    shutil.copyfile(source, path / name)
    return path


def healthy(port: int) -> bool:
    """The controller-runtime /readyz of a process answers 200."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def running(bed) -> bool:
    """Both processes are alive and ready."""
    state = bed.state
    if not state.get("olmv1"):
        return False
    for name in PROCESSES:
        record = state.get("processes", {}).get(name)
        if not record or not procs.alive(record["pid"], record["binary"]):
            return False
    return healthy(state["ports"]["olmv1_catalogd_health"]) and healthy(state["ports"]["olmv1_operator_controller_health"])


def facts(bed) -> dict:
    """What tests and playbooks need to use OLM v1 on the testbed."""
    info = bed.state["olmv1"]
    ports = bed.state["ports"]
    return {
        "version": info["version"],
        "system_namespace": NAMESPACE,
        "pull_secret": PULL_SECRET,
        "pull_secret_namespace": NAMESPACE,
        "catalogd_address": f"127.0.0.1:{ports['olmv1_catalogd']}",
        "catalogd_ca_file": str(bed.pki.path("ca.crt")),
        "catalogd_webhook": f"https://127.0.0.1:{ports['olmv1_catalogd_webhook']}{WEBHOOK_PATH}",
        "service_accounts": {name: f"{NAMESPACE}/{sa}" for name, sa in SERVICE_ACCOUNTS.items()},
        "up_seconds": info.get("up_seconds"),
    }


def ansible_vars(bed) -> dict:
    """testbed_olmv1_* variables for ansible-vars.json."""
    if not bed.state.get("olmv1"):
        return {"testbed_olmv1": False}
    info = facts(bed)
    return {
        "testbed_olmv1": True,
        "testbed_olmv1_version": info["version"],
        "testbed_olmv1_system_namespace": NAMESPACE,
        "testbed_olmv1_pull_secret": PULL_SECRET,
        "testbed_olmv1_catalogd_address": info["catalogd_address"],
        "testbed_olmv1_catalogd_ca_file": info["catalogd_ca_file"],
    }


def stop(bed) -> None:
    """Stop both processes (operator-controller first) and forget them."""
    for name in reversed(PROCESSES):
        record = bed.state.get("processes", {}).pop(name, None)
        if record:
            procs.stop(record)
    bed.state.pop("olmv1", None)
    bed._save_state()


def start(bed, bins: Path, version: str, gomodcache: Path, error=RuntimeError) -> dict:
    """Install OLM v1's CRDs, namespace, RBAC and pull secret, start both processes and wait until they are ready.

    Called with the testbed's lock held, on a running testbed; `error` is the exception class to raise.
    Returns facts().
    """
    started = time.monotonic()
    src = source_dir(gomodcache, version)
    crds = [src / rel for rel in CRD_FILES]
    missing = [str(p) for p in crds if not p.is_file()]
    if missing:
        raise error(f"OLM v1 CRDs not found (module cache incomplete? run `make testbed-build`): {', '.join(missing)}")
    for name in PROCESSES:
        if not (bins / name).is_file():
            raise error(f"{bins / name} is missing: run `make testbed-build`")
    if bed.state.get("processes", {}).keys() & set(PROCESSES):
        stop(bed)  # a half-started or crashed OLM v1: start it afresh
    bed.pki.ensure()  # issues catalogd's serving certificate in a PKI created before OLM v1 existed
    ports = bed.state["ports"]
    for key in PORTS:
        # Ports of an earlier start are kept (clients and ClusterCatalog URLs keep working) unless taken meanwhile.
        if not ports.get(key) or procs.port_open(ports[key]):
            ports[key] = procs.free_port()
    bed.state["olmv1"] = {"version": version}
    bed._save_state()

    bed.kubectl("apply", "--server-side", "--force-conflicts", *[arg for crd in crds for arg in ("-f", str(crd))])
    registry = bed.state["registry"]
    password = Path(registry["password_file"]).read_text().strip()
    bed._apply(*rbac_objects())
    bed._apply(pull_secret(registry["host"], registry["username"], password))
    bed._wait("OLM v1's CRDs Established", bed._crds_established, 60)

    root = bed.run_dir / "olmv1"
    pull_cas = _ca_dir(root / "pull-cas", "testbed-registry-ca.crt", Path(registry["ca_file"]))
    catalogd_cas = _ca_dir(root / "catalogd-cas", "testbed-ca.crt", bed.pki.path("ca.crt"))
    common = [f"--system-namespace={NAMESPACE}", f"--pull-cas-dir={pull_cas}", f"--global-pull-secret={NAMESPACE}/{PULL_SECRET}", "--pprof-bind-address=0"]

    work = {name: root / name for name in PROCESSES}
    for path in work.values():
        _private_dir(path / "cache")
        _private_dir(path / "tmp")
        registries_conf(path).parent.mkdir(parents=True, exist_ok=True)
        if not registries_conf(path).exists():
            registries_conf(path).write_text(EMPTY_REGISTRIES_CONF)
    catalogd = bins / "catalogd"
    bed._start_as_serviceaccount(
        "catalogd",
        str(catalogd),
        [
            f"--cache-dir={work['catalogd'] / 'cache'}",
            f"--tls-cert={bed.pki.path('catalogd-serving.crt')}",
            f"--tls-key={bed.pki.path('catalogd-serving.key')}",
            f"--catalogs-server-addr=127.0.0.1:{ports['olmv1_catalogd']}",
            f"--external-address=127.0.0.1:{ports['olmv1_catalogd']}",
            f"--webhook-server-port={ports['olmv1_catalogd_webhook']}",
            f"--health-probe-bind-address=127.0.0.1:{ports['olmv1_catalogd_health']}",
            "--metrics-bind-address=0",
        ]
        + common,
        (NAMESPACE, SERVICE_ACCOUNTS["catalogd"]),
        namespace_file=False,
        env={"TMPDIR": str(work["catalogd"] / "tmp"), "HOME": str(work["catalogd"] / HOME)},
    )
    bed._start_as_serviceaccount(
        "operator-controller",
        str(bins / "operator-controller"),
        [
            f"--cache-path={work['operator-controller'] / 'cache'}",
            f"--catalogd-cas-dir={catalogd_cas}",
            f"--health-probe-bind-address=127.0.0.1:{ports['olmv1_operator_controller_health']}",
        ]
        + common,
        (NAMESPACE, SERVICE_ACCOUNTS["operator-controller"]),
        namespace_file=False,
        env={"TMPDIR": str(work["operator-controller"] / "tmp"), "HOME": str(work["operator-controller"] / HOME)},
    )
    bed._wait("catalogd /readyz", lambda: healthy(ports["olmv1_catalogd_health"]), 60, "catalogd")
    bed._wait(f"catalogd webhook on :{ports['olmv1_catalogd_webhook']}", lambda: procs.port_open(ports["olmv1_catalogd_webhook"]), 60, "catalogd")
    bed._apply(webhook_configuration(ports["olmv1_catalogd_webhook"], bed.pki.path("ca.crt").read_bytes()))
    bed._wait("operator-controller /readyz", lambda: healthy(ports["olmv1_operator_controller_health"]), 60, "operator-controller")
    bed.state["olmv1"]["up_seconds"] = round(time.monotonic() - started, 1)
    bed._save_state()
    return facts(bed)
