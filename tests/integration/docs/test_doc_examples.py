"""The documentation's examples run as written on the testbed (lib.doc_examples: the blocks marked
``<!-- example: run <id> -->``), in the order of ``EXAMPLES`` - later ones build on earlier ones, as a reader would
run them. Each gets what its page assumes exists (a namespace, a DaemonSet, a checkout of community-operators-prod)
and nothing else; the one value replaced is the catalog server address the pages show as the testbed's, which is a
free port on each testbed. Authentication comes from K8S_AUTH_KUBECONFIG, as the pages say it may.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.doc_examples import ROOT, RUN_ELSEWHERE, runnable
from lib.polling import poll_until
from lib.runners import ansible_env, run_module_subprocess

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("doc-examples")]

DOCUMENTED_CATALOG_ADDRESS = "127.0.0.1:50051"
COMMUNITY_OPERATORS = ROOT / "tests" / "data" / "community-operators-prod"
NAMESPACES = ("kube-demo", "kubeflow", "kubeflow-user-example-com", "web", "operators-restricted", "istio-system")
CUSTOM_SCCS = ("web-netbind", "kubeflow-anyuid")
DIAGNOSE_TARBALL = Path("/tmp/kube-demo-olm.tar.gz")


def _delete(call, *args):
    try:
        call(*args)
    except ApiException as exc:
        if exc.status != 404:
            raise


def _absent(read, *args):
    try:
        read(*args)
    except ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


@pytest.fixture(scope="module")
def examples(testbed, api, kubeconfig, tmp_path_factory):
    """The working directory (a copy of community-operators-prod, as the publishing guide assumes) and what the
    examples need on the cluster; everything they created is removed afterwards."""
    workdir = tmp_path_factory.mktemp("doc-examples")
    shutil.copytree(COMMUNITY_OPERATORS, workdir, dirs_exist_ok=True)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    for name in NAMESPACES:  # a namespace of an earlier run may still be terminating
        poll_until(lambda name=name: _absent(core.read_namespace, name), 120, 1, f"namespace {name} to be gone")
    for name in ("kubeflow", "kubeflow-user-example-com", "istio-system", "web"):  # Kubeflow and the web app, installed
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    # scc.md pins the Deployment web/frontend
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "frontend"},
        "spec": {
            "selector": {"matchLabels": {"app": "frontend"}},
            "template": {"metadata": {"labels": {"app": "frontend"}}, "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:v1"}]}},
        },
    }
    apps.create_namespaced_deployment("web", deployment)
    # the canary examples roll the DaemonSet kube-system/node-agent (container agent) over the KWOK nodes
    labels = {"app": "node-agent"}
    node_agent = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "node-agent"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeSelector": {"type": "kwok"}, "containers": [{"name": "agent", "image": "registry.example.com/agent:v1"}]},
            },
        },
    }
    apps.create_namespaced_daemon_set("kube-system", node_agent)
    poll_until(
        lambda: apps.read_namespaced_daemon_set("node-agent", "kube-system").status,
        60,
        describe="DaemonSet node-agent on every KWOK node",
        until=lambda st: (st.desired_number_scheduled or 0) > 0 and st.number_available == st.desired_number_scheduled,
    )
    # roles/canary_rollout/README.md picks its canary nodes by label
    labelled = sorted(n.metadata.name for n in core.list_node(label_selector="type=kwok").items)[:2]
    for node in labelled:
        core.patch_node(node, {"metadata": {"labels": {"topology.kubernetes.io/zone": "a", "canary": "true"}}})
    env = dict(ansible_env(workdir), K8S_AUTH_KUBECONFIG=kubeconfig)
    try:
        yield {"workdir": workdir, "env": env, "catalog_address": testbed.catalog_address, "api": api, "testbed": testbed}
    finally:
        _delete(apps.delete_namespaced_daemon_set, "node-agent", "kube-system")
        for node in labelled:
            core.patch_node(node, {"metadata": {"labels": {"topology.kubernetes.io/zone": None, "canary": None}}})
        for name in CUSTOM_SCCS:
            _delete(client.CustomObjectsApi(api).delete_cluster_custom_object, "security.openshift.io", "v1", "securitycontextconstraints", name)
            _delete(client.RbacAuthorizationV1Api(api).delete_cluster_role, f"system:openshift:scc:{name}")
        for name in NAMESPACES:
            _delete(core.delete_namespace, name)
        DIAGNOSE_TARBALL.unlink(missing_ok=True)


def run_example(block, ctx, replace=None):
    """ansible-playbook of the example (its plays, or its tasks in a play on localhost) in the working directory."""
    text = block.body
    for placeholder, value in (replace or {}).items():
        text = text.replace(placeholder, value)
    content = yaml.safe_load(text)
    assert isinstance(content, list) and content, f"{block.path}:{block.line} is not a list of plays or tasks"
    if not any("hosts" in item or "ansible.builtin.import_playbook" in item for item in content):
        content = [{"name": f"{block.path}:{block.line}", "hosts": "localhost", "connection": "local", "gather_facts": False, "tasks": content}]
    playbook = ctx["workdir"] / f"example-{block.line}.yml"
    playbook.write_text(yaml.safe_dump(content, sort_keys=False))
    proc = subprocess.run(  # noqa: S603
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)],
        capture_output=True,
        text=True,
        cwd=ctx["workdir"],
        env=dict(ctx["env"], ANSIBLE_PYTHON_INTERPRETER=sys.executable),
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{block.path}:{block.line} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def node_agent_image(ctx):
    ds = client.AppsV1Api(ctx["api"]).read_namespaced_daemon_set("node-agent", "kube-system")
    return ds.spec.template.spec.containers[0].image


# An image the testbed's KWOK nodes run as a crash loop (testbed/config.py CRASHLOOP_IMAGE).
CRASHLOOP_IMAGE = "example.invalid/kubeforge/crashloop:v1"


def halted_rollout(ctx):
    """What the undo examples start from: a rollout of node-agent halted on its crash-looping canary."""
    args = {"namespace": "kube-system", "name": "node-agent", "images": {"agent": CRASHLOOP_IMAGE}, "wait_timeout": 120}
    result = run_module_subprocess(ctx["workdir"], "daemonset_canary", dict(args, kubeconfig=ctx["env"]["K8S_AUTH_KUBECONFIG"]))
    assert result.get("failed") and result.get("phase") == "halted", result


def undone(ctx):
    """node-agent runs v2 (the revision before the halted one) everywhere, with no rollout annotation left."""
    ds = client.AppsV1Api(ctx["api"]).read_namespaced_daemon_set("node-agent", "kube-system")
    annotations = [key for key in (ds.metadata.annotations or {}) if key.startswith("operators.kubeforge.io/canary")]
    return node_agent_image(ctx) == "registry.example.com/agent:v2" and not annotations


def enforced(ctx, namespace):
    labels = client.CoreV1Api(ctx["api"]).read_namespace(namespace).metadata.labels or {}
    return labels.get("pod-security.kubernetes.io/enforce")


def granted(ctx, namespace, scc):
    """The ServiceAccounts of the RoleBinding that grants ``scc`` in ``namespace`` (oc's name for it)."""
    binding = client.RbacAuthorizationV1Api(ctx["api"]).read_namespaced_role_binding(f"system:openshift:scc:{scc}", namespace)
    return sorted(s.name for s in binding.subjects or [] if s.kind == "ServiceAccount")


def pinned(ctx):
    template = client.AppsV1Api(ctx["api"]).read_namespaced_deployment("frontend", "web").spec.template
    return (template.metadata.annotations or {}).get("openshift.io/required-scc")


def subscription(ctx):
    try:
        return client.CustomObjectsApi(ctx["api"]).get_namespaced_custom_object("operators.coreos.com", "v1alpha1", "kube-demo", "subscriptions", "kube-demo")
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def installed_csv(ctx):
    """The Subscription's installedCSV: OLM rewrites its status now and then, for a moment without it."""
    return poll_until(lambda: ((subscription(ctx) or {}).get("status") or {}).get("installedCSV"), 30, 0.5, "the Subscription's installedCSV")


def link_testbed_catalog(ctx):
    """docs/upgrade_readiness.md: testbed-catalog is the directory the testbed's opm serve serves (kube-demo-catalog)."""
    link = ctx["workdir"] / "testbed-catalog"
    if not link.is_symlink():
        link.symlink_to(ctx["testbed"].run_dir / "catalog")


def readiness_report(ctx):
    """docs/upgrade_readiness.md: both files written; kube-demo's row in both, judged against the catalog given for
    its CatalogSource, with nothing blocking it (the testbed's bundles declare no maximum)."""
    directory = ctx["workdir"] / "upgrade-readiness"
    doc = json.loads((directory / "report.json").read_text())
    rows = [r for r in doc["operators"] if r["namespace"] == "kube-demo" and r["name"] == "kube-demo.v0.0.1"]
    assert doc["target"] == "4.21" and len(rows) == 1, doc
    assert rows[0]["blocks_upgrade"] is False and rows[0]["target_catalog"] == {"package": True, "channel": True}, rows
    return "| localhost | kube-demo/kube-demo.v0.0.1 | kube-demo | 0.0.1 | stable | - | no |" in (directory / "report.md").read_text()


def catalog_file(ctx, version):
    return ctx["workdir"] / "catalogs" / version / "kube-green" / "catalog.yaml"


# id -> (check after the run (ctx, output) or None, whether the documented catalog address is the testbed's, what
# the page assumes has happened before (ctx) or None), in the order they run.
EXAMPLES = {
    "auth-module-defaults": (None, False, None),
    "olm-operator-role-play": (lambda ctx, out: installed_csv(ctx) == "kube-demo.v0.0.1", True, None),
    "olm-operator-role": (lambda ctx, out: "changed=0" in out, True, None),
    "olm-operator-info": (None, False, None),
    "olm-operator-info-cluster": (lambda ctx, out: "kube-demo" in out and "0.0.1" in out, False, None),
    "mirror-select": (lambda ctx, out: '"name": "kube-demo"' in out and '"installed_version": "0.0.1"' in out, False, None),
    "upgrade-readiness": (lambda ctx, out: readiness_report(ctx), False, link_testbed_catalog),
    "olm-diagnose": (lambda ctx, out: DIAGNOSE_TARBALL.is_file() and "no known failure found" in out, False, None),
    "olm-operator-remove": (lambda ctx, out: subscription(ctx) is None, True, None),
    "pod-security": (lambda ctx, out: enforced(ctx, "kube-demo") == "restricted", False, None),
    "scc-access": (lambda ctx, out: granted(ctx, "kubeflow", "anyuid") == ["ml-pipeline"], False, None),
    "scc-custom-and-pin": (lambda ctx, out: granted(ctx, "web", "web-netbind") == ["frontend"] and pinned(ctx) == "web-netbind", False, None),
    "scc-info": (lambda ctx, out: "ServiceAccount kubeflow/ml-pipeline: kubeflow (RoleBinding/kubeflow/system:openshift:scc:anyuid" in out, False, None),
    "scc-relax-kubeflow": (
        lambda ctx, out: granted(ctx, "kubeflow", "kubeflow-anyuid") == ["ml-pipeline"] and enforced(ctx, "kubeflow-user-example-com") == "baseline",
        False,
        None,
    ),
    "scc-relax-role-play": (lambda ctx, out: granted(ctx, "istio-system", "anyuid") == ["default", "istio-ingressgateway-service-account"], False, None),
    "scc-relax-custom-anyuid": (None, False, None),
    "olm-cluster-catalog-info": (lambda ctx, out: '"msg": [' in out, False, lambda ctx: ctx["testbed"].ensure_olmv1()),
    "cluster-setup-namespaces": (lambda ctx, out: enforced(ctx, "operators-restricted") == "restricted", False, None),
    "catalog-render-template": (lambda ctx, out: catalog_file(ctx, "v4.16").is_file() and catalog_file(ctx, "v4.20").is_file(), False, None),
    "catalog-render-source": (lambda ctx, out: (ctx["workdir"] / "build" / "index.json").is_file(), False, None),
    "catalog-validate": (None, False, None),
    "catalog-template-edit": (
        lambda ctx, out: "kube-green.v0.7.2" in (ctx["workdir"] / "operators/kube-green/catalog-templates/basic-template.yaml").read_text(),
        False,
        None,
    ),
    "catalog-graph": (None, False, None),
    "canary-module": (lambda ctx, out: node_agent_image(ctx) == "registry.example.com/agent:v2", False, None),
    "canary-role-selector": (lambda ctx, out: node_agent_image(ctx) == "registry.example.com/agent:v3", False, None),
    "canary-role-play": (lambda ctx, out: node_agent_image(ctx) == "registry.example.com/agent:v2", False, None),
    "canary-module-undo": (lambda ctx, out: undone(ctx), False, halted_rollout),
    "canary-role-undo": (lambda ctx, out: undone(ctx), False, halted_rollout),
}


# Examples run by a test of their own, which gives them what this module cannot (the real node, an operator image).
def test_every_runnable_example_is_run_here():
    assert sorted(runnable()) == sorted(list(EXAMPLES) + list(RUN_ELSEWHERE))
    for example_id, test_file in RUN_ELSEWHERE.items():
        assert f'"{example_id}"' in (ROOT / test_file).read_text(), (example_id, test_file)


@pytest.mark.parametrize("example_id", list(EXAMPLES))
def test_example_runs_as_written(examples, example_id):
    block = runnable()[example_id]
    check, testbed_address, prepare = EXAMPLES[example_id]
    if prepare is not None:
        prepare(examples)
    replace = {DOCUMENTED_CATALOG_ADDRESS: examples["catalog_address"]} if testbed_address else None
    output = run_example(block, examples, replace)
    if check is not None:
        assert check(examples, output), f"{block.path}:{block.line} ran but did not do what the page says:\n{output[-4000:]}"
