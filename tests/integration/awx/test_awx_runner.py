"""The job templates of awx/ run the way AWX runs a job (tests/lib/awx_model.py, ported from AWX's source): the launch's
survey answers checked against the survey and completed with its defaults, a private data directory with project/,
inventory/hosts (the Demo Inventory's script), env/extravars (!unsafe, with AWX's meta variables), env/cmdline,
env/settings and the credentials' files, then ansible_runner.interface.run with AWX's parameters (envvars,
suppress_env_files, an event handler keeping the events). The cluster credential is a real ServiceAccount token of
the testbed, injected as AWX's built-in "OpenShift or Kubernetes API Bearer Token" credential injects it, or a
kubeconfig holding it, injected by the custom credential type of awx/credential_types/.

The ServiceAccount is bound to awx/rbac/clusterrole.yml and nothing else.

The fleet rollout workflow (awx/workflow_job_templates/fleet_rollout.yml) runs on a fleet of one, the testbed's main
cluster as the canary: the "kubeforge fleet" inventory updated from its source as AWX runs an scm inventory update
(ansible-inventory --list --export in a private data directory, imported), then the canary job, the approval and the
waves job, each a job of the workflow with the workflow's survey answers, the fleet credential and the inventory AWX
would hand it. Its credential is the testbed's admin (awx/rbac/clusterrole.yml does not cover fleet_rollout's records).
"""

import base64
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from lib.awx_model import (
    InventoryUpdate,
    Job,
    inject_custom_credential,
    inject_kubernetes_bearer_token,
    launch_extra_vars,
    run_workflow,
    strip_ansi,
    survey_form,
)
from lib.runners import COLLECTIONS_DIR, run_module_subprocess
from lib.scc import scc_object

pytestmark = pytest.mark.testbed

ROOT = Path(__file__).resolve().parents[3]
AWX = ROOT / "awx"
# Unique per run: a namespace of an earlier run may still be terminating.
SA_NAMESPACE, SA_NAME = "kubeforge-awx-" + os.urandom(3).hex(), "awx-job"
CLUSTER_ROLE = SA_NAMESPACE + "-job"
# Where the execution environment has its collections: this collection (built link) and kubernetes.core.
EE_COLLECTIONS = [COLLECTIONS_DIR] + [p for p in sys.path if p.endswith("site-packages")]
V1, V2 = "example.invalid/kubeforge/agent:v1", "example.invalid/kubeforge/agent:v2"


class Unsafe(str):
    """A string AWX wrote !unsafe."""


class UnsafeLoader(yaml.SafeLoader):
    pass


UnsafeLoader.add_constructor("!unsafe", lambda loader, node: Unsafe(loader.construct_scalar(node)))


def job_template(name):
    return yaml.safe_load((AWX / "job_templates" / f"{name}.yml").read_text())


@pytest.fixture(scope="module")
def job_token(api):
    """A 10-minute token (TokenRequest) of a ServiceAccount bound to awx/rbac/clusterrole.yml only."""
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    role = yaml.safe_load((AWX / "rbac" / "clusterrole.yml").read_text())
    role["metadata"] = {"name": CLUSTER_ROLE}
    core.create_namespace({"metadata": {"name": SA_NAMESPACE}})
    try:
        core.create_namespaced_service_account(SA_NAMESPACE, {"metadata": {"name": SA_NAME}})
        rbac.create_cluster_role(role)
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": CLUSTER_ROLE},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_ROLE},
                "subjects": [{"kind": "ServiceAccount", "name": SA_NAME, "namespace": SA_NAMESPACE}],
            }
        )
        request = core.create_namespaced_service_account_token(SA_NAME, SA_NAMESPACE, {"spec": {"expirationSeconds": 600}})
        yield request.status.token
    finally:
        for delete in (
            lambda: rbac.delete_cluster_role_binding(CLUSTER_ROLE),
            lambda: rbac.delete_cluster_role(CLUSTER_ROLE),
            lambda: core.delete_namespace(SA_NAMESPACE),
        ):
            try:
                delete()
            except ApiException as exc:
                assert exc.status == 404, exc


def server_and_ca(testbed):
    doc = yaml.safe_load(Path(testbed.kubeconfig).read_text())
    cluster = doc["clusters"][0]["cluster"]
    return cluster["server"], base64.b64decode(cluster["certificate-authority-data"]).decode()


def bearer_token_inputs(testbed, token):
    """The inputs of an "OpenShift or Kubernetes API Bearer Token" credential for the testbed."""
    server, ca = server_and_ca(testbed)
    return {"host": server, "bearer_token": token, "verify_ssl": True, "ssl_ca_cert": ca}


def kubeconfig_inputs(testbed, token):
    """The inputs of a kubeconfig credential (the custom type): the testbed's API server and CA, the token."""
    server, ca = server_and_ca(testbed)
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testbed", "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca.encode()).decode()}}],
        "users": [{"name": "awx-job", "user": {"token": token}}],
        "contexts": [{"name": "awx-job@testbed", "context": {"cluster": "testbed", "user": "awx-job"}}],
        "current-context": "awx-job@testbed",
    }
    return {"kubeconfig": yaml.safe_dump(kubeconfig)}


def run_job(tmp_path, name, answers, credential, token, testbed, status="successful"):
    """Launch job template `name` from its survey form filled with these answers, with one credential ("bearer" or
    "kubeconfig"); assert what holds for every job that ends with this status; return its events."""
    template = job_template(name)
    job = Job(tmp_path, int.from_bytes(os.urandom(2), "big") + 1, template, ROOT, ["playbooks"], EE_COLLECTIONS)
    try:
        job.add_extra_vars(survey_form(template, answers))
        inventory = job.add_inventory()
        if credential == "bearer":
            inject_kubernetes_bearer_token(bearer_token_inputs(testbed, token), job.env, job.private_data_dir)
            assert Path(job.env["K8S_AUTH_SSL_CA_CERT"]).parent == Path(job.private_data_dir) / "env"
            assert job.env["K8S_AUTH_VERIFY_SSL"] == "True"
            credential_files = [os.path.relpath(job.env["K8S_AUTH_SSL_CA_CERT"], job.private_data_dir)]
        else:
            credential_type = yaml.safe_load((AWX / "credential_types" / "kubeconfig.yml").read_text())
            extra = inject_custom_credential(credential_type, kubeconfig_inputs(testbed, token), job.env, job.private_data_dir)
            assert extra == {} and set(job.env) == {"K8S_AUTH_KUBECONFIG"}, job.env
            credential_files = [os.path.relpath(job.env["K8S_AUTH_KUBECONFIG"], job.private_data_dir)]
        for path in credential_files:
            assert (Path(job.private_data_dir) / path).stat().st_mode & 0o777 == 0o600

        result, events, stdout = job.run(inventory)
        assert result.status == status and (result.rc == 0) == (status == "successful"), strip_ansi(stdout)[-4000:]
        (stats,) = [e["event_data"] for e in events if e["event"] == "playbook_on_stats"]
        assert stats["ok"].get("localhost", 0) > 0 and not stats["dark"] and bool(stats["failures"]) == (status == "failed"), stats
        # The play ran on extra variables as AWX writes them: the survey's answers and defaults, every string !unsafe.
        extra_vars = yaml.load((Path(job.private_data_dir) / "env" / "extravars").read_text(), Loader=UnsafeLoader)
        survey = {element["variable"] for element in template["survey_spec"]["spec"]}
        assert survey <= set(extra_vars) and extra_vars["awx_job_id"] == job.job_id
        assert all(isinstance(key, Unsafe) and isinstance(value, Unsafe) for key, value in extra_vars.items() if key in survey)
        # The token is in no job event and no output (what AWX stores and shows). On disk, with AWX's parameters, it is
        # in one 0600 file, deleted with the private data directory: the bearer token, injected as K8S_AUTH_API_KEY,
        # in runner's record of the command and its environment (artifacts/<job id>/command); the kubeconfig's, in
        # the credential's file only (the environment holds its path).
        assert token not in stdout and not any(token in repr(event) for event in events), "the token leaked into the job's events"
        expected = {f"artifacts/{job.job_id}/command"} if credential == "bearer" else set(credential_files)
        assert set(job.files_containing(token)) == expected
        return events
    finally:
        job.cleanup()


def module_results(events, action):
    """The results of one module's runs (a looped task reports each item, then a summary with all of them)."""
    results = []
    for event in events:
        data = event.get("event_data") or {}
        ours = data.get("resolved_action", data.get("task_action")) == action
        if ours and event["event"] in ("runner_on_ok", "runner_item_on_ok") and "results" not in data["res"]:
            results.append(data["res"])
    return results


def test_the_job_token_is_not_cluster_admin(tmp_path, testbed, job_token):
    """The token of the jobs below cannot read Secrets, delete namespaces, impersonate or escalate."""
    server, ca = server_and_ca(testbed)
    (tmp_path / "ca.crt").write_text(ca)
    config = client.Configuration(host=server)
    config.api_key = {"authorization": "Bearer " + job_token}
    config.ssl_ca_cert = str(tmp_path / "ca.crt")
    with client.ApiClient(config) as as_job:
        authz = client.AuthorizationV1Api(as_job)

        def allowed(**attributes):
            review = authz.create_self_subject_access_review({"spec": {"resourceAttributes": attributes}})
            return review.status.allowed

        assert allowed(verb="patch", group="apps", resource="daemonsets", namespace="default")
        for attributes in (
            {"verb": "list", "resource": "secrets"},
            {"verb": "get", "resource": "secrets", "namespace": "kube-system"},
            {"verb": "delete", "resource": "namespaces"},
            {"verb": "impersonate", "resource": "users"},
            {"verb": "escalate", "group": "rbac.authorization.k8s.io", "resource": "clusterroles"},
            {"verb": "bind", "group": "rbac.authorization.k8s.io", "resource": "clusterroles", "name": "cluster-admin"},
            {"verb": "delete", "group": "apiextensions.k8s.io", "resource": "customresourcedefinitions"},
        ):
            assert not allowed(**attributes), attributes


def test_install_operator_job_template(tmp_path, testbed, api, namespace, job_token):
    custom = client.CustomObjectsApi(api)
    custom.create_namespaced_custom_object(
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
    # The survey's answers; channel, catalog namespace and state keep the form's defaults (default channel, the
    # operator's namespace, present).
    answers = {
        "olm_operator_package": "kube-demo",
        "olm_operator_namespace": namespace,
        "olm_operator_catalog": "testbed-catalog",
        "olm_operator_version": "0.0.1",
    }
    events = run_job(tmp_path, "install_operator", answers, "bearer", job_token, testbed)
    (result,) = module_results(events, "kubeforge.operators.olm_operator")
    assert result["changed"] and result["installed_csv"] == "kube-demo.v0.0.1" and result["phase"] == "Succeeded", result
    csv = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", "kube-demo.v0.0.1")
    assert csv["status"]["phase"] == "Succeeded"
    subscription = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "subscriptions", "kube-demo")
    assert subscription["spec"]["source"] == "testbed-catalog" and subscription["spec"]["installPlanApproval"] == "Manual"

    events = run_job(tmp_path, "install_operator", dict(answers, olm_operator_state="absent"), "bearer", job_token, testbed)
    (removed,) = module_results(events, "kubeforge.operators.olm_operator")
    assert removed["changed"] and removed["removed"]["subscription"] == "kube-demo", removed
    with pytest.raises(ApiException) as missing:
        custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "subscriptions", "kube-demo")
    assert missing.value.status == 404


def test_a_rejected_token_fails_the_job_without_showing_it(tmp_path, testbed, namespace):
    """The credential is what the job authenticates with: a token the API server does not know fails the job with
    the server's answer, and the job's events do not show that token either."""
    token = "kubeforge-" + os.urandom(16).hex()
    answers = {"canary_rollout_name": "agent", "canary_rollout_namespace": namespace, "survey_container": "agent", "survey_image": V2}
    events = run_job(tmp_path, "canary_rollout", answers, "bearer", token, testbed, status="failed")
    failed = {e["event_data"]["resolved_action"]: e["event_data"]["res"]["msg"] for e in events if e["event"] == "runner_on_failed"}
    # A new job's discovery cache is empty (a new container): the token is refused while the client is created.
    assert failed["kubeforge.operators.daemonset_canary"] == "Could not create API client: the API server answered 401: Unauthorized", failed
    assert failed["ansible.builtin.fail"].startswith(f"canary_rollout: rollout of DaemonSet {namespace}/agent failed"), failed


def test_scc_relax_job_template_with_both_credentials(tmp_path, testbed, api, namespace, job_token):
    """Granted through the bearer-token credential, taken back through the kubeconfig credential type. The SCC is
    one of the survey's choices (nonroot-v2), created here as the testbed has no default SCCs."""
    custom, rbac = client.CustomObjectsApi(api), client.RbacAuthorizationV1Api(api)
    name = "nonroot-v2"
    binding_name = f"system:openshift:scc:{name}"
    created, role_existed = False, True
    try:
        rbac.read_cluster_role(binding_name)
    except ApiException as exc:
        assert exc.status == 404, exc
        role_existed = False
    try:
        custom.create_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", scc_object(name, run_as_user="MustRunAsNonRoot"))
        created = True
    except ApiException as exc:
        assert exc.status == 409, exc
    try:
        answers = {"survey_scc": name, "survey_namespace": namespace, "survey_service_accounts": "app, worker"}
        events = run_job(tmp_path, "scc_relax", answers, "bearer", job_token, testbed)
        (granted,) = module_results(events, "kubeforge.operators.scc_access")
        assert granted["changed"] and granted["binding"]["namespace"] == namespace, granted
        binding = rbac.read_namespaced_role_binding(binding_name, namespace)
        assert binding.role_ref.name == binding_name and sorted(s.name for s in binding.subjects) == ["app", "worker"]

        events = run_job(tmp_path, "scc_relax", dict(answers, scc_relax_state="absent"), "kubeconfig", job_token, testbed)
        (revoked,) = module_results(events, "kubeforge.operators.scc_access")
        assert revoked["changed"] and revoked["binding"] is None, revoked
        with pytest.raises(ApiException) as missing:
            rbac.read_namespaced_role_binding(binding_name, namespace)
        assert missing.value.status == 404
    finally:
        if created:
            custom.delete_cluster_custom_object("security.openshift.io", "v1", "securitycontextconstraints", name)
        if not role_existed:  # the grant created system:openshift:scc:nonroot-v2, as `oc adm policy` would
            try:
                rbac.delete_cluster_role(binding_name)
            except ApiException as exc:
                assert exc.status == 404, exc


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
    answers = {"canary_rollout_name": "agent", "canary_rollout_namespace": namespace, "survey_container": "agent", "survey_image": V2}
    events = run_job(tmp_path, "canary_rollout", answers, "kubeconfig", job_token, testbed)
    (result,) = module_results(events, "kubeforge.operators.daemonset_canary")
    assert result["changed"] and result["phase"] == "done", result
    assert result["updated_number_scheduled"] == result["desired_number_scheduled"] > 0, result
    daemon_set = apps.read_namespaced_daemon_set("agent", namespace)
    assert daemon_set.spec.template.spec.containers[0].image == V2
    assert daemon_set.status.updated_number_scheduled == daemon_set.status.desired_number_scheduled > 0
    assert daemon_set.spec.update_strategy.type == "RollingUpdate"


# ---------------------------------------------------------------------------------------------------------------
# The fleet rollout workflow, on a fleet of one


def fleet_project(tmp_path, testbed):
    """The project AWX runs: the repository's playbooks/ and awx/, and inventories/ as a user makes it from
    awx/inventories/ - the example inventory source as it is, and a kubeconfig of the fleet without secrets: the
    testbed's cluster (labelled wave=canary) and its context, whose user only the fleet credential defines. Returns the
    project and the credential's kubeconfig (the users, with the client key)."""
    project = tmp_path / "project-source"
    for name in ("playbooks", "awx"):
        shutil.copytree(ROOT / name, project / name)
    shutil.copytree(AWX / "inventories", project / "inventories", ignore=shutil.ignore_patterns("*.yaml"))
    doc = yaml.safe_load(Path(testbed.kubeconfig).read_text())
    (context,) = doc["contexts"]
    (cluster,) = [c for c in doc["clusters"] if c["name"] == context["context"]["cluster"]]
    cluster["cluster"]["extensions"] = [{"name": "kubeforge.io/cluster", "extension": {"labels": {"wave": "canary"}}}]
    fleet_map = {"apiVersion": "v1", "kind": "Config", "clusters": [cluster], "contexts": [context]}
    (project / "inventories" / "fleet" / "testbed.yaml").write_text(yaml.safe_dump(fleet_map))
    users = {"apiVersion": "v1", "kind": "Config", "users": [u for u in doc["users"] if u["name"] == context["context"]["user"]]}
    return project, context["name"], yaml.safe_dump(users)


def test_fleet_rollout_workflow(tmp_path, testbed, api, namespace):
    """kube-demo 0.0.1 -> 0.0.2 through the workflow: the canary job upgrades the canary (the testbed) and records it;
    the approval sees that record; the waves job runs the fleet, canary first, and skips it as done without a write.
    Each job and the inventory update have their private data directory at one path in turn (AWX's /runner), so the
    kubeconfig path the inventory recorded is the job's project file, which the job merges with the credential's."""
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    auth = {"kubeconfig": testbed.kubeconfig}
    work = tmp_path / "modules"
    work.mkdir()
    catalog = dict(auth, name="kube-demo-catalog", namespace=namespace, address=testbed.catalog_address, wait_timeout=120)
    assert not run_module_subprocess(work, "olm_catalog_source", catalog).get("failed")
    operator = dict(auth, package="kube-demo", namespace=namespace, catalog="kube-demo-catalog", channel="stable", version="0.0.1")
    installed = run_module_subprocess(work, "olm_operator", operator)
    assert not installed.get("failed"), installed.get("msg")

    project, context, credential = fleet_project(tmp_path, testbed)
    runner = str(tmp_path / "runner")  # every private data directory's path in its container: /runner
    workflow = yaml.safe_load((AWX / "workflow_job_templates" / "fleet_rollout.yml").read_text())
    source = yaml.safe_load((AWX / "inventory_sources" / "fleet.yml").read_text())

    # The inventory update: no credential; one host, in groups clusters and canary, no credential in its variables.
    update = InventoryUpdate(tmp_path, 7001, source, project, ["playbooks", "awx", "inventories"], EE_COLLECTIONS, private_data_dir=runner)
    try:
        result, output, imported = update.run()
        assert result.status == "successful", output
    finally:
        update.cleanup()
    hosts, groups = imported
    assert groups["canary"] == [context] and groups["clusters"] == [context], groups
    assert hosts[context]["kubeconfig"] == {"__ansible_unsafe": os.path.join(runner, "project", "inventories", "fleet", "testbed.yaml")}
    client_key = yaml.safe_load(credential)["users"][0]["user"]["client-key-data"]
    assert client_key not in json.dumps(hosts) + output

    answers = {"fleet_rollout_name": "kube-demo", "survey_namespace": namespace, "survey_version": "0.0.2", "fleet_rollout_soak_seconds": 1}
    workflow_vars = launch_extra_vars(workflow, survey_form(workflow, answers))
    record_name = "kubeforge-fleet-olm-kube-demo"
    seen = {}

    def resource_versions():
        """The record's resourceVersion and the Subscription's spec and generation: what a write of ours would change
        (OLM itself writes the Subscription's status whenever it syncs, which changes its resourceVersion)."""
        record = core.read_namespaced_config_map(record_name, namespace)
        subscription = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "subscriptions", "kube-demo")
        return record, (record.metadata.resource_version, subscription["metadata"]["generation"], subscription["spec"])

    def run_node(node):
        template = node["unified_job_template"]
        if template["type"] == "workflow_approval":
            # What the approver reads: the canary's record (and the canary job's report, asserted below).
            record, seen["before_waves"] = resource_versions()
            assert record.metadata.labels["fleet.kubeforge.io/result"] == "succeeded", record.metadata.labels
            return "successful"
        (job_template,) = [t for t in map(yaml.safe_load, map(Path.read_text, (AWX / "job_templates").glob("*.yml"))) if t["name"] == template["name"]]
        job = Job(tmp_path, 7100 + len(seen), job_template, project, ["playbooks", "awx", "inventories"], EE_COLLECTIONS, private_data_dir=runner)
        try:
            job.add_workflow_extra_vars(workflow_vars, (7000, workflow["name"]))
            inventory = job.add_inventory(hosts, groups)
            credential_type = yaml.safe_load((AWX / "credential_types" / "kubeconfig.yml").read_text())
            assert inject_custom_credential(credential_type, {"kubeconfig": credential}, job.env, job.private_data_dir) == {}
            result, events, stdout = job.run(inventory)
            assert result.status == "successful", strip_ansi(stdout)[-6000:]
            # fleet_rollout_report_dir's default: fleet-report in the directory ansible-playbook runs in, the job's
            # project (deleted with it); the job's output ends with the report.
            report = json.loads((Path(job.private_data_dir) / "project" / "fleet-report" / "report.json").read_text())
            # The credential's key is in no event and no output; on disk only in the credential's file.
            assert client_key not in stdout and not any(client_key in repr(event) for event in events)
            assert job.files_containing(client_key) == [os.path.relpath(job.env["K8S_AUTH_KUBECONFIG"], job.private_data_dir)]
            seen[node["identifier"]] = (events, strip_ansi(stdout), report)
            return "successful"
        finally:
            job.cleanup()

    status, failed = run_workflow(workflow, run_node)
    assert list(status) == ["canary", "approval", "waves"] and not failed, status

    def turn(identifier):
        """The fleet_rollout module's result of the cluster's turn (the play of the waves, not the plan's check)."""
        ok = [e["event_data"] for e in seen[identifier][0] if e["event"] == "runner_on_ok"]
        ours = [data for data in ok if data.get("resolved_action") == "kubeforge.operators.fleet_rollout"]
        (result,) = [data["res"] for data in ours if data["play"].startswith("Roll the fleet out")]
        return result

    canary = turn("canary")
    assert canary["changed"] and canary["result"] == "succeeded" and (canary["from_version"], canary["to_version"]) == ("0.0.1", "0.0.2"), canary
    assert "kube-demo@0.0.2" in seen["canary"][1] and context in seen["canary"][1]  # the report, at the end of the job's output
    assert [(r["cluster"], r["result"]) for r in seen["canary"][2]["clusters"]] == [(context, "succeeded")]
    csv = custom.get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", "kube-demo.v0.0.2")
    assert csv["status"]["phase"] == "Succeeded"

    waves = turn("waves")
    assert not waves["changed"] and waves["result"] == "skipped", waves
    assert resource_versions()[1] == seen["before_waves"]  # no write: the record and the Subscription as they were
    assert [(r["cluster"], r["result"]) for r in seen["waves"][2]["clusters"]] == [(context, "skipped")]
