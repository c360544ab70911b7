"""Our playbooks run the way AWX runs a job: ansible-runner on a private data directory laid out as AWX lays it out
(project/, inventory/hosts, env/extravars with the survey answers, env/envvars with what the job's credential
injects), authenticated with a real ServiceAccount token of the testbed - through AWX's built-in "OpenShift or
Kubernetes API Bearer Token" credential, and through the kubeconfig credential type of awx/credential_types/.

The ServiceAccount gets the kubeforge-operator's ClusterRole (operator/config/rbac/role.yaml), not cluster-admin:
the same least privilege serves AWX jobs and the operator.
"""

import base64
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import ansible_runner
import pytest
import yaml
from jinja2 import Environment
from kubernetes import client
from kubernetes.client.rest import ApiException
from module_runner import COLLECTIONS_DIR

pytestmark = pytest.mark.testbed

ROOT = Path(__file__).resolve().parents[3]
# Unique per run: a namespace of an earlier run may still be terminating.
SA_NAMESPACE, SA_NAME = "kubeforge-awx-" + os.urandom(3).hex(), "awx-job"
CLUSTER_ROLE = SA_NAMESPACE + "-job"
V1, V2 = "example.invalid/kubeforge/agent:v1", "example.invalid/kubeforge/agent:v2"


@pytest.fixture(scope="module")
def job_token(api, testbed):
    """A token of a ServiceAccount bound to the operator's ClusterRole (what the three playbooks' roles call)."""
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    role = yaml.safe_load((ROOT / "operator" / "config" / "rbac" / "role.yaml").read_text())
    role["metadata"] = {"name": CLUSTER_ROLE}
    for create in (
        lambda: core.create_namespace({"metadata": {"name": SA_NAMESPACE}}),
        lambda: core.create_namespaced_service_account(SA_NAMESPACE, {"metadata": {"name": SA_NAME}}),
        lambda: rbac.create_cluster_role(role),
        lambda: rbac.create_cluster_role_binding(
            {
                "metadata": {"name": CLUSTER_ROLE},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_ROLE},
                "subjects": [{"kind": "ServiceAccount", "name": SA_NAME, "namespace": SA_NAMESPACE}],
            }
        ),
    ):
        try:
            create()
        except ApiException as exc:
            assert exc.status == 409, exc
    rbac.patch_cluster_role(CLUSTER_ROLE, {"rules": role["rules"]})
    token = testbed.kubectl("create", "token", SA_NAME, "-n", SA_NAMESPACE, "--duration=1h").stdout.strip()
    yield token
    rbac.delete_cluster_role_binding(CLUSTER_ROLE)
    rbac.delete_cluster_role(CLUSTER_ROLE)
    core.delete_namespace(SA_NAMESPACE)


def server_and_ca(testbed):
    doc = yaml.safe_load(Path(testbed.kubeconfig).read_text())
    cluster = doc["clusters"][0]["cluster"]
    return cluster["server"], base64.b64decode(cluster["certificate-authority-data"]).decode()


def private_data_dir(tmp_path, extra_vars):
    """project/ (the repository's playbooks), inventory/hosts and env/extravars, as AWX writes them."""
    pdd = tmp_path / "awx_job"
    shutil.copytree(ROOT / "playbooks", pdd / "project" / "playbooks")
    (pdd / "inventory").mkdir(parents=True)
    (pdd / "inventory" / "hosts").write_text(f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    (pdd / "env").mkdir()
    (pdd / "env" / "extravars").write_text(json.dumps(extra_vars))
    return pdd


def private_file(pdd, content):
    """A 0600 file in env/, as AWX writes a credential's files (tempfile.mkstemp in the private data directory)."""
    handle, path = tempfile.mkstemp(dir=pdd / "env")
    with os.fdopen(handle, "w") as out:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        out.write(content)
    return path


def bearer_token_env(pdd, testbed, token):
    """What AWX's "OpenShift or Kubernetes API Bearer Token" credential injects (verify_ssl with a CA)."""
    server, ca = server_and_ca(testbed)
    return {"K8S_AUTH_HOST": server, "K8S_AUTH_API_KEY": token, "K8S_AUTH_VERIFY_SSL": "True", "K8S_AUTH_SSL_CA_CERT": private_file(pdd, ca)}


def kubeconfig_credential_env(pdd, testbed, token):
    """What the kubeconfig credential type injects, rendered from its injectors as AWX renders them."""
    server, ca = server_and_ca(testbed)
    kubeconfig = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca.encode()).decode()}}],
            "users": [{"name": "u", "user": {"token": token}}],
            "contexts": [{"name": "job", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "job",
        }
    )
    credential_type = yaml.safe_load((ROOT / "awx" / "credential_types" / "kubeconfig.yml").read_text())
    inputs = {"kubeconfig": kubeconfig, "context": "job"}
    env = Environment()
    files = {key.split(".", 1)[1]: private_file(pdd, env.from_string(value).render(**inputs)) for key, value in credential_type["injectors"]["file"].items()}
    tower = {"filename": files}
    return {key: env.from_string(value).render(tower=tower, **inputs) for key, value in credential_type["injectors"]["env"].items()}


def run_job(pdd, playbook, env, token):
    site = [p for p in sys.path if p.endswith("site-packages")]
    # PATH: the execution environment's ansible-playbook (this virtualenv's).
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    envvars = dict(env, ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([COLLECTIONS_DIR] + site), ANSIBLE_NOCOLOR="1", PATH=path)
    (pdd / "env" / "envvars").write_text(json.dumps(envvars))
    result = ansible_runner.run(private_data_dir=str(pdd), playbook=playbook, quiet=True, timeout=600)
    stdout = result.stdout.read()
    assert result.status == "successful" and result.rc == 0, stdout[-4000:]
    events = list(result.events)
    assert any(e["event"] == "playbook_on_stats" for e in events)
    # The token is in env/ (and runner's own record of the command's environment), as in AWX, which deletes the
    # directory after the job; never in what the job reports - its events and output, which AWX stores and shows.
    reported = [p for p in (pdd / "artifacts").rglob("*") if p.is_file() and (p.parent.name == "job_events" or p.name == "stdout")]
    assert reported and not any(token in p.read_text(errors="replace") for p in reported), "the token leaked into the job's events"
    assert token not in stdout
    return events


def module_results(events, action):
    """The results of one module's runs (a looped task reports each item, then a summary with all of them)."""
    results = []
    for event in events:
        data = event.get("event_data") or {}
        ours = data.get("resolved_action", data.get("task_action")) == action
        if ours and event["event"] in ("runner_on_ok", "runner_item_on_ok") and "results" not in data["res"]:
            results.append(data["res"])
    return results


def test_install_operator_job_template(tmp_path, testbed, api, namespace, job_token):
    client.CustomObjectsApi(api).create_namespaced_custom_object(
        "operators.coreos.com",
        "v1alpha1",
        namespace,
        "catalogsources",
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "testbed-catalog"},
            "spec": {"sourceType": "grpc", "address": testbed.catalog_address},
        },
    )
    survey = {
        "olm_operator_package": "kube-demo",
        "olm_operator_namespace": namespace,
        "olm_operator_catalog": "testbed-catalog",
        "olm_operator_catalog_namespace": "",
        "olm_operator_channel": "stable",
        "olm_operator_version": "0.0.1",
        "olm_operator_state": "present",
    }
    pdd = private_data_dir(tmp_path, survey)
    events = run_job(pdd, "playbooks/install_operator.yml", bearer_token_env(pdd, testbed, job_token), job_token)
    (result,) = module_results(events, "kubeforge.operators.olm_operator")
    assert result["installed_csv"] == "kube-demo.v0.0.1" and result["phase"] == "Succeeded", result
    csv = client.CustomObjectsApi(api).get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", "kube-demo.v0.0.1")
    assert csv["status"]["phase"] == "Succeeded"

    pdd = private_data_dir(tmp_path / "absent", dict(survey, olm_operator_state="absent"))
    events = run_job(pdd, "playbooks/install_operator.yml", bearer_token_env(pdd, testbed, job_token), job_token)
    (removed,) = module_results(events, "kubeforge.operators.olm_operator")
    assert removed["changed"] and removed["removed"]["subscription"] == "kube-demo", removed


def scc_object(name):
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
        "runAsUser": {"type": "MustRunAsNonRoot"},
        "seLinuxContext": {"type": "MustRunAs"},
        "users": [],
        "groups": [],
        "volumes": ["configMap", "emptyDir", "secret"],
    }


def test_scc_relax_job_template_with_both_credentials(tmp_path, testbed, api, namespace, job_token):
    """Granted through the bearer-token credential, taken back through the kubeconfig credential type."""
    name = "kf-awx-" + os.urandom(3).hex()
    custom = client.CustomObjectsApi(api)
    custom.create_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", scc_object(name))
    try:
        survey = {"survey_scc": name, "survey_namespace": namespace, "survey_service_accounts": "app, worker", "scc_relax_state": "present"}
        pdd = private_data_dir(tmp_path, survey)
        events = run_job(pdd, "playbooks/scc_relax.yml", bearer_token_env(pdd, testbed, job_token), job_token)
        (granted,) = module_results(events, "kubeforge.operators.scc_access")
        assert granted["changed"] and granted["binding"]["namespace"] == namespace, granted
        binding = client.RbacAuthorizationV1Api(api).read_namespaced_role_binding(f"system:openshift:scc:{name}", namespace)
        assert sorted(s.name for s in binding.subjects) == ["app", "worker"]

        pdd = private_data_dir(tmp_path / "absent", dict(survey, scc_relax_state="absent"))
        env = kubeconfig_credential_env(pdd, testbed, job_token)
        assert Path(env["K8S_AUTH_KUBECONFIG"]).stat().st_mode & 0o777 == 0o600 and env["K8S_AUTH_CONTEXT"] == "job"
        events = run_job(pdd, "playbooks/scc_relax.yml", env, job_token)
        (revoked,) = module_results(events, "kubeforge.operators.scc_access")
        assert revoked["changed"] and revoked["binding"] is None, revoked
        with pytest.raises(ApiException):
            client.RbacAuthorizationV1Api(api).read_namespaced_role_binding(f"system:openshift:scc:{name}", namespace)
    finally:
        custom.delete_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)
        client.RbacAuthorizationV1Api(api).delete_cluster_role(f"system:openshift:scc:{name}")


def test_canary_rollout_job_template(tmp_path, testbed, api, namespace, job_token):
    apps = client.AppsV1Api(api)
    labels = {"app": "agent"}
    apps.create_namespaced_daemon_set(
        namespace,
        {
            "metadata": {"name": "agent"},
            "spec": {
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"nodeSelector": {"type": "kwok"}, "containers": [{"name": "agent", "image": V1}]}},
            },
        },
    )
    survey = {
        "canary_rollout_name": "agent",
        "canary_rollout_namespace": namespace,
        "survey_container": "agent",
        "survey_image": V2,
        "canary_rollout_on_failure": "halt",
    }
    pdd = private_data_dir(tmp_path, survey)
    events = run_job(pdd, "playbooks/canary_rollout.yml", bearer_token_env(pdd, testbed, job_token), job_token)
    (result,) = module_results(events, "kubeforge.operators.daemonset_canary")
    assert result["phase"] == "done" and result["updated_number_scheduled"] == result["desired_number_scheduled"] > 0, result
    assert apps.read_namespaced_daemon_set("agent", namespace).spec.template.spec.containers[0].image == V2
