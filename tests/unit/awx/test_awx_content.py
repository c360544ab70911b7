"""AWX content (awx/): the credential type, the job templates' and the fleet workflow's surveys, the workflow's graph
and the fleet inventory source pass the checks AWX itself runs when they are created (tests/lib/awx_model.py, ported from
AWX's source), use only options of the awx.awx modules that create them, and ask only for variables the playbooks and
roles accept; playbooks/awx_configure.yml creates each object from them; the ServiceAccount role grants no more than
the operator's."""

import ast
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lib.awx_model import (
    LaunchRefused,
    credential_type_errors,
    import_inventory,
    inject_custom_credential,
    inventory_script,
    launch_extra_vars,
    run_workflow,
    safe_dump,
    survey_element_errors,
    survey_form,
    survey_spec_errors,
    workflow_errors,
    workflow_job_extra_vars,
)
from lib.runners import ansible_env

ROOT = Path(__file__).resolve().parents[3]
AWX = ROOT / "awx"
CREDENTIAL_TYPE = yaml.safe_load((AWX / "credential_types" / "kubeconfig.yml").read_text())
TEMPLATES = sorted((AWX / "job_templates").glob("*.yml"))
# The job templates with a survey of their own (the fleet rollout's two get the workflow's answers).
SURVEY_TEMPLATES = [p for p in TEMPLATES if "survey_spec" in yaml.safe_load(p.read_text())]
JOB_TEMPLATES = {t["name"]: t for t in (yaml.safe_load(p.read_text()) for p in TEMPLATES)}
WORKFLOW = yaml.safe_load((AWX / "workflow_job_templates" / "fleet_rollout.yml").read_text())
NODES = {node["identifier"]: node for node in WORKFLOW["workflow_nodes"]}
INVENTORY_SOURCE = yaml.safe_load((AWX / "inventory_sources" / "fleet.yml").read_text())
FLEET_PLAYBOOK = AWX / "playbooks" / "fleet_rollout.yml"
KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}}],
    "users": [{"name": "u", "user": {"token": "not-a-real-token"}}],
    "contexts": [{"name": "job", "context": {"cluster": "c", "user": "u"}}],
    "current-context": "job",
}


def awx_module_docs(name):
    """The options of an awx.awx module as its DOCUMENTATION describes them (the `ansible` package ships awx.awx).

    Parsed with ast, not ansible.parsing.plugin_docs: importing controller code flips ansible.module_utils into
    controller mode for the rest of the process, and module warnings then go to Display instead of the result."""
    from ansible_collections.awx.awx.plugins import modules

    tree = ast.parse((Path(modules.__file__).parent / f"{name}.py").read_text())
    docs = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets)
    ]
    return yaml.safe_load(docs[0])["options"]


def awx_module_options(name):
    return set(awx_module_docs(name))


def role_of(template):
    plays = yaml.safe_load((ROOT / template["playbook"]).read_text())
    roles = [r["role"] for play in plays for r in play.get("roles", [])]
    assert len(roles) == 1 and roles[0].startswith("kubeforge.operators."), roles
    spec = yaml.safe_load((ROOT / "roles" / roles[0].split(".")[-1] / "meta" / "argument_specs.yml").read_text())
    return spec["argument_specs"]["main"]["options"]


# ---------------------------------------------------------------------------------------------------------------
# The credential type


def test_credential_type_passes_awx_validation():
    assert credential_type_errors(CREDENTIAL_TYPE) == []
    assert set(CREDENTIAL_TYPE) <= awx_module_options("credential_type")


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda ct: ct["injectors"]["env"].update(K8S_AUTH_CONTEXT="{{ context }}"), "K8S_AUTH_CONTEXT uses an undefined field"),
        (lambda ct: ct["injectors"]["env"].update(K8S_AUTH_KUBECONFIG="{{ tower.filename.config }}"), "uses an undefined field"),
        (lambda ct: ct["injectors"]["env"].update(ANSIBLE_CONFIG="{{ tower.filename.kubeconfig }}"), "may affect Ansible configuration"),
        (lambda ct: ct["injectors"]["env"].update(PATH="/tmp"), "is not allowed to be used in credentials"),
        (lambda ct: ct["injectors"]["file"].update(template="{{ kubeconfig }}"), "Must use multi-file syntax"),
        (lambda ct: ct.update(kind="ssh"), "Must be 'cloud' or 'net'"),
        (lambda ct: ct["inputs"]["fields"].append({"id": "kubeconfig", "label": "again"}), "field IDs must be unique"),
        (lambda ct: ct["inputs"]["fields"][0].update(type="integer"), "inputs:"),
        (lambda ct: ct["inputs"]["fields"].append({"id": "verify", "label": "Verify", "type": "boolean", "secret": True}), "secret not allowed"),
    ],
    ids=["undeclared-input", "undeclared-file", "ansible-variable", "blocked-variable", "single-and-multi-file", "kind", "duplicate", "type", "secret-boolean"],
)
def test_awx_validation_refuses_what_awx_refuses(change, error):
    """The ported validation fails where AWX's does (so its passing above means something)."""
    broken = copy.deepcopy(CREDENTIAL_TYPE)
    change(broken)
    errors = credential_type_errors(broken)
    assert any(error in e for e in errors), errors


def test_credential_type_injects_the_kubeconfig_as_a_private_file(tmp_path):
    """Rendered as AWX renders it: the kubeconfig, byte for byte, in a 0600 file of env/, K8S_AUTH_KUBECONFIG naming
    it, nothing else in the environment; the Kubernetes client loads it."""
    from kubernetes import client, config

    (tmp_path / "env").mkdir()
    fields = {f["id"]: f for f in CREDENTIAL_TYPE["inputs"]["fields"]}
    assert fields["kubeconfig"]["secret"] and fields["kubeconfig"]["multiline"] and CREDENTIAL_TYPE["inputs"]["required"] == ["kubeconfig"]
    text = yaml.safe_dump(KUBECONFIG)
    env = {}
    assert inject_custom_credential(CREDENTIAL_TYPE, {"kubeconfig": text}, env, str(tmp_path)) == {}
    assert set(env) == {"K8S_AUTH_KUBECONFIG"}
    path = Path(env["K8S_AUTH_KUBECONFIG"])
    assert path.parent == tmp_path / "env" and path.read_text() == text and path.stat().st_mode & 0o777 == 0o600
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=configuration)
    assert configuration.host == "https://127.0.0.1:6443"


def test_an_optional_context_input_would_break_jobs(tmp_path):
    """Why the type has no optional context: AWX renders an input left empty as "" and still sets the variable, and the
    Kubernetes client then looks for a context named "" (what kubernetes.core passes for K8S_AUTH_CONTEXT="")."""
    from kubernetes import config

    (tmp_path / "env").mkdir()
    with_context = copy.deepcopy(CREDENTIAL_TYPE)
    with_context["inputs"]["fields"].append({"id": "context", "type": "string", "label": "Context"})
    with_context["injectors"]["env"]["K8S_AUTH_CONTEXT"] = "{{ context }}"
    assert credential_type_errors(with_context) == []  # AWX would accept it
    env = {}
    inject_custom_credential(with_context, {"kubeconfig": yaml.safe_dump(KUBECONFIG)}, env, str(tmp_path))
    assert env["K8S_AUTH_CONTEXT"] == ""
    with pytest.raises(config.ConfigException, match="Expected object with name  in"):
        config.load_kube_config(config_file=env["K8S_AUTH_KUBECONFIG"], context=env["K8S_AUTH_CONTEXT"])


# ---------------------------------------------------------------------------------------------------------------
# Job templates and surveys


def survey_defaults_valid(survey):
    for element in survey["spec"]:
        if "default" in element:  # a default AWX would drop at launch is a mistake
            assert survey_element_errors(element, {element["variable"]: element["default"]}) == [], element


def check_survey_variables(survey, options, playbooks):
    """Each question sets a role variable of the type its answer has (text and choices: a string, integer: an int;
    choices within the role's), or a variable of the playbooks (``playbooks``: their text): a survey_* variable they turn
    into a role variable, or one of their own. Every variable the role requires is asked, as required."""
    asked = {}
    for element in survey["spec"]:
        variable = element["variable"]
        asked[variable] = element
        if variable in options:
            expected = ("int",) if element["type"] == "integer" else ("str", "raw")
            assert options[variable].get("type", "str") in expected, variable
            if "choices" in options[variable]:
                assert element["type"] == "multiplechoice" and set(element["choices"]) <= set(options[variable]["choices"]), variable
        else:
            assert any(variable in text for text in playbooks), variable
    for name, option in options.items():
        if option.get("required"):
            assert name in asked and asked[name]["required"], f"{name} is required by the role but not asked by the survey"


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_job_template_passes_awx_validation(path):
    template = yaml.safe_load(path.read_text())
    assert set(template) <= awx_module_options("job_template")
    assert (ROOT / template["playbook"]).is_file(), template["playbook"]
    if "survey_spec" in template:
        assert survey_spec_errors(template["survey_spec"]) == []
        survey_defaults_valid(template["survey_spec"])


@pytest.mark.parametrize("path", SURVEY_TEMPLATES, ids=[p.stem for p in SURVEY_TEMPLATES])
def test_survey_asks_for_what_the_role_accepts(path):
    template = yaml.safe_load(path.read_text())
    playbook = (ROOT / template["playbook"]).read_text()
    check_survey_variables(template["survey_spec"], role_of(template), [playbook])
    for element in template["survey_spec"]["spec"]:
        assert element["variable"] in role_of(template) or element["variable"].startswith("survey_"), element


@pytest.mark.parametrize("path", SURVEY_TEMPLATES, ids=[p.stem for p in SURVEY_TEMPLATES])
def test_survey_launch(path):
    """A launch with only the required questions answered runs with the defaults; a wrong answer is refused."""
    template = yaml.safe_load(path.read_text())
    spec = template["survey_spec"]["spec"]
    answers = {e["variable"]: "x" for e in spec if e["required"] and e["type"] == "text"}
    extra_vars = launch_extra_vars(template, survey_form(template, answers))
    assert {e["variable"] for e in spec if "default" in e or e["required"]} <= set(extra_vars)
    with pytest.raises(LaunchRefused, match="value missing"):
        launch_extra_vars(template, {})
    choice = next(e for e in spec if e["type"] == "multiplechoice")
    with pytest.raises(LaunchRefused, match="expected to be one of"):
        launch_extra_vars(template, survey_form(template, dict(answers, **{choice["variable"]: "privileged"})))
    with pytest.raises(LaunchRefused, match="not allowed on launch"):
        launch_extra_vars(template, survey_form(template, dict(answers, ansible_python_interpreter="/bin/sh")))


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda s: s["spec"][0].pop("required"), "'required' missing"),
        (lambda s: s["spec"][0].update(type="list"), "allowed question types"),
        (lambda s: s["spec"].append(dict(s["spec"][0])), "duplicated"),
        (lambda s: s["spec"][0].update(min="1"), "expected to be integer"),
        (lambda s: s["spec"][-1].update(default="neither"), "Default choice must be answered from the choices"),
        (lambda s: s.pop("description"), "'description' is missing"),
    ],
    ids=["required", "type", "duplicate", "min", "default-choice", "description"],
)
def test_survey_validation_refuses_what_awx_refuses(change, error):
    survey = copy.deepcopy(yaml.safe_load((AWX / "job_templates" / "install_operator.yml").read_text())["survey_spec"])
    change(survey)
    errors = survey_spec_errors(survey)
    assert any(error in e for e in errors), errors


# ---------------------------------------------------------------------------------------------------------------
# The fleet rollout: the workflow, its two job templates, the playbook they run and the fleet inventory's source

FLEET_ROLE = yaml.safe_load((ROOT / "roles" / "fleet_rollout" / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def node_template(identifier):
    return JOB_TEMPLATES[NODES[identifier]["unified_job_template"]["name"]]


def wrapper_import():
    """The import_playbook entry of awx/playbooks/fleet_rollout.yml."""
    (entry,) = [play for play in yaml.safe_load(FLEET_PLAYBOOK.read_text()) if "ansible.builtin.import_playbook" in play]
    return entry


def test_fleet_workflow_passes_awx_validation():
    assert set(WORKFLOW) <= awx_module_options("workflow_job_template")
    node_options = awx_module_docs("workflow_job_template")["workflow_nodes"]["suboptions"]
    for node in WORKFLOW["workflow_nodes"]:
        assert set(node) <= set(node_options), node
        assert set(node["unified_job_template"]) <= set(node_options["unified_job_template"]["suboptions"]), node
        assert set(node.get("related", {})) <= set(node_options["related"]["suboptions"]), node
    assert workflow_errors(WORKFLOW, JOB_TEMPLATES) == []
    assert survey_spec_errors(WORKFLOW["survey_spec"]) == []
    survey_defaults_valid(WORKFLOW["survey_spec"])


def test_the_approval_sits_between_the_canary_and_the_waves():
    """canary job -(success)-> approval -(success)-> waves job, and no other edge; the two jobs run the same playbook,
    on group canary, then on the whole fleet with the canary first; neither has a survey or a prompt of its own (the
    workflow's survey answers reach both) nor slices."""
    edges = sorted(
        (node["identifier"], relationship, child["identifier"])
        for node in WORKFLOW["workflow_nodes"]
        for relationship, children in node.get("related", {}).items()
        for child in children
    )
    assert edges == [("approval", "success_nodes", "waves"), ("canary", "success_nodes", "approval")]
    approval = NODES["approval"]["unified_job_template"]
    assert approval["type"] == "workflow_approval" and approval["timeout"] > 0 and approval["description"]
    canary, waves = node_template("canary"), node_template("waves")
    assert canary["playbook"] == waves["playbook"] == str(FLEET_PLAYBOOK.relative_to(ROOT))
    assert canary["extra_vars"] == {"fleet_hosts": "canary"} and waves["extra_vars"] == {"fleet_hosts": "canary:clusters"}
    for template in (canary, waves):
        assert "survey_spec" not in template and not any(key.startswith("ask_") for key in template), template
        assert template["job_slice_count"] == 1
    # The playbook is playbooks/fleet_rollout.yml, after a check that fleet_hosts names clusters.
    assert wrapper_import()["ansible.builtin.import_playbook"] == "../../playbooks/fleet_rollout.yml"
    assert (FLEET_PLAYBOOK.parent / wrapper_import()["ansible.builtin.import_playbook"]).resolve() == ROOT / "playbooks" / "fleet_rollout.yml"


@pytest.mark.parametrize(
    ("outcomes", "ran", "failed"),
    [
        ({"canary": "successful", "approval": "successful", "waves": "successful"}, ["canary", "approval", "waves"], False),
        ({"canary": "failed"}, ["canary"], True),
        ({"canary": "successful", "approval": "failed"}, ["canary", "approval"], True),
        ({"canary": "successful", "approval": "successful", "waves": "failed"}, ["canary", "approval", "waves"], True),
    ],
    ids=["approved", "canary-failed", "approval-denied", "waves-failed"],
)
def test_the_waves_run_only_after_a_successful_canary_and_an_approval(outcomes, ran, failed):
    """As AWX's workflow manager runs the graph: a failed canary job never asks for the approval, a denied (or
    timed-out) approval never starts the waves; either fails the workflow (no failure path)."""
    status, workflow_failed = run_workflow(WORKFLOW, lambda node: outcomes[node["identifier"]])
    assert list(status) == ran and workflow_failed is failed


def test_both_jobs_run_the_same_rollout():
    """The survey is the workflow's: both jobs get the same answers over their own fleet_hosts, so the waves job
    continues the canary's rollout (same id, same records). A launch cannot set fleet_hosts (no variables on launch);
    AWX writes the job template's fleet_hosts as it is and every answer !unsafe."""
    answers = {"fleet_rollout_name": "kube-demo", "survey_namespace": "operators", "survey_version": "0.0.2"}
    workflow_vars = launch_extra_vars(WORKFLOW, survey_form(WORKFLOW, answers))
    jobs = {identifier: workflow_job_extra_vars(node_template(identifier), workflow_vars) for identifier in ("canary", "waves")}
    for identifier, extra_vars in jobs.items():
        assert {k: v for k, v in extra_vars.items() if k != "fleet_hosts"} == workflow_vars, identifier
        assert extra_vars["fleet_hosts"] == node_template(identifier)["extra_vars"]["fleet_hosts"]
    dumped = safe_dump(jobs["waves"], node_template("waves")["extra_vars"])
    assert "fleet_hosts: canary:clusters\n" in dumped and "!unsafe 'fleet_rollout_name': !unsafe 'kube-demo'\n" in dumped
    with pytest.raises(LaunchRefused, match="Variables fleet_hosts are not allowed on launch"):
        launch_extra_vars(WORKFLOW, survey_form(WORKFLOW, dict(answers, fleet_hosts="all")))


def test_fleet_survey_asks_for_what_the_role_and_playbooks_accept():
    """Every question sets a variable of the fleet_rollout role (of its type), of playbooks/fleet_rollout.yml
    (fleet_max_fail_percentage) or a survey_* variable awx/playbooks/fleet_rollout.yml turns into one; what the wrapper
    sets is the role's or the playbook's own."""
    wrapper = FLEET_PLAYBOOK.read_text()
    playbook = (ROOT / "playbooks" / "fleet_rollout.yml").read_text()
    check_survey_variables(WORKFLOW["survey_spec"], FLEET_ROLE, [wrapper, playbook])
    for element in WORKFLOW["survey_spec"]["spec"]:
        if element["variable"] not in FLEET_ROLE and element["variable"].startswith("survey_"):
            assert element["variable"] in str(wrapper_import()["vars"]), element
    assert set(wrapper_import()["vars"]) - set(FLEET_ROLE) == {"fleet_waves"} and "fleet_waves" in playbook
    # The role's required variables are set: fleet_rollout_kind and fleet_rollout_name by the survey.
    assert {name for name, option in FLEET_ROLE.items() if option.get("required")} == {"fleet_rollout_kind", "fleet_rollout_name"}


def test_fleet_survey_launch():
    extra_vars = launch_extra_vars(WORKFLOW, survey_form(WORKFLOW, {"fleet_rollout_name": "kube-demo"}))
    assert extra_vars["fleet_rollout_kind"] == "olm_v0" and extra_vars["survey_waves"] == "1, 25%, 100%"
    assert extra_vars["fleet_max_fail_percentage"] == 0 and extra_vars["fleet_rollout_soak_seconds"] == 60
    with pytest.raises(LaunchRefused, match="value missing"):
        launch_extra_vars(WORKFLOW, {})
    for wrong, error in (
        ({"fleet_rollout_kind": "helm"}, "expected to be one of"),
        ({"fleet_max_fail_percentage": 101}, "too large"),
        ({"fleet_rollout_soak_seconds": "60"}, "expected to be an integer"),
    ):
        with pytest.raises(LaunchRefused, match=error):
            launch_extra_vars(WORKFLOW, survey_form(WORKFLOW, dict({"fleet_rollout_name": "kube-demo"}, **wrong)))


def _node(workflow, identifier):
    return next(node for node in workflow["workflow_nodes"] if node["identifier"] == identifier)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda w: _node(w, "canary").update(limit="canary"), "canary: limit: Field is not configured to prompt on launch."),
        (lambda w: _node(w, "waves").update(extra_data={"fleet_hosts": "all"}), "Variables fleet_hosts are not allowed on launch"),
        (lambda w: _node(w, "waves").update(related={"success_nodes": [{"identifier": "canary"}]}), "Cycle detected."),
        (lambda w: _node(w, "approval")["related"]["success_nodes"].append({"identifier": "approval"}), "approval: Cycle detected."),
        (lambda w: _node(w, "canary")["related"].update(failure_nodes=[{"identifier": "approval"}]), "Relationship not allowed."),
        (lambda w: _node(w, "waves")["unified_job_template"].update(name="kubeforge - fleet rollout"), "Unable to Find unified_job_template"),
        (lambda w: w["workflow_nodes"].append(copy.deepcopy(_node(w, "waves"))), "identifier 'waves' is not unique"),
    ],
    ids=["node-limit", "node-extra-data", "cycle", "self", "two-relationships", "unknown-template", "duplicate"],
)
def test_workflow_validation_refuses_what_awx_refuses(change, error):
    """The ported checks fail where AWX does - among them why the canary job's hosts are its job template's
    fleet_hosts and not a node's limit: the job template would have to prompt for a limit at every launch."""
    broken = copy.deepcopy(WORKFLOW)
    change(broken)
    errors = workflow_errors(broken, JOB_TEMPLATES)
    assert any(error in e for e in errors), errors


def evaluate_wrapper_vars(tmp_path, answers, kubeconfig_env):
    """The variables awx/playbooks/fleet_rollout.yml gives playbooks/fleet_rollout.yml, as ansible-playbook evaluates them
    for one cluster of the fleet inventory (its kubeconfig host variable a file of the project) with the answers written
    as AWX writes a job's extra variables (!unsafe), and K8S_AUTH_KUBECONFIG as the fleet credential injects it."""
    content = "{" + ", ".join(f"'{name}': {name}" for name in sorted(wrapper_import()["vars"])) + "}"
    (tmp_path / "extravars").write_text(safe_dump(answers))
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "kubeconfig": "/runner/project/inventories/fleet/clusters.yaml"}
    inventory = {"all": {"hosts": {"eu-prod": host}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    play = {
        "name": "The wrapper's variables",
        "hosts": "eu-prod",
        "gather_facts": False,
        "vars": wrapper_import()["vars"],
        "tasks": [{"name": "Write them", "ansible.builtin.copy": {"content": "{{ " + content + " | to_json }}", "dest": "out"}}],
    }
    (tmp_path / "play.yml").write_text(yaml.safe_dump([play], sort_keys=False))
    env = ansible_env(tmp_path)
    env.pop("K8S_AUTH_KUBECONFIG", None)
    env.update(kubeconfig_env)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "inventory.yml", "-e", "@extravars", "play.yml"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, check=False)  # noqa: S603
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tmp_path / "out").read_text())


@pytest.mark.parametrize(
    ("answers", "kubeconfig_env", "expected"),
    [
        (
            {
                "survey_namespace": "agents",
                "survey_version": "",
                "survey_waves": " 1, 50% ,, 100%",
                "survey_acknowledge": "eu-prod , us-prod,",
                "survey_container": "agent",
                "survey_image": "{{ lookup('pipe', 'id') }}",
            },
            {"K8S_AUTH_KUBECONFIG": "/runner/env/tmpabcdef"},
            {
                "fleet_waves": ["1", "50%", "100%"],
                "fleet_rollout_namespace": "agents",
                "fleet_rollout_version": "",
                "fleet_rollout_acknowledge": ["eu-prod", "us-prod"],
                "fleet_rollout_images": {"agent": "{{ lookup('pipe', 'id') }}"},
                "fleet_rollout_kubeconfig": "/runner/env/tmpabcdef:/runner/project/inventories/fleet/clusters.yaml",
            },
        ),
        (
            dict({k: v for k, v in survey_form(WORKFLOW, {}).items() if k.startswith("survey_")}, survey_version="2", survey_acknowledge="10"),
            {},
            {
                "fleet_waves": ["1", "25%", "100%"],
                "fleet_rollout_namespace": "",
                "fleet_rollout_version": "2",
                "fleet_rollout_acknowledge": ["10"],
                "fleet_rollout_images": {},
                "fleet_rollout_kubeconfig": "/runner/project/inventories/fleet/clusters.yaml",
            },
        ),
    ],
    ids=["answers-and-credential", "defaults-numbers-no-credential"],
)
def test_the_playbook_turns_survey_answers_into_role_variables(tmp_path, answers, kubeconfig_env, expected):
    """Lists and the image mapping from text answers (an answer is data: a template in it stays text), text where
    ansible-core reads AWX's answers as null or a number (an empty answer, "2"), and each cluster's kubeconfig: the
    fleet credential's file, then the project's."""
    assert evaluate_wrapper_vars(tmp_path, answers, kubeconfig_env) == expected


def test_fleet_inventory_source(tmp_path):
    """The inventory source reads a file of the project with the clusters plugin, and needs no credential: what AWX
    imports of it (ansible-inventory --list --export, as RunInventoryUpdate runs it) has the groups canary and clusters
    and no credential, and a job reads the host variables back from AWX's inventory script as plain strings."""
    assert set(INVENTORY_SOURCE) <= awx_module_options("inventory_source")
    assert INVENTORY_SOURCE["source"] == "scm" and "credential" not in INVENTORY_SOURCE and INVENTORY_SOURCE["update_on_launch"]
    # The example the user copies from awx/ into the project: awx/inventories/ -> inventories/.
    example = AWX / INVENTORY_SOURCE["source_path"]
    assert INVENTORY_SOURCE["source_path"].startswith("inventories/") and example.is_file()
    source = yaml.safe_load(example.read_text())
    assert source["plugin"] == "kubeforge.operators.clusters" and "group" not in source and "canary" in source["groups"]
    for kubeconfig in (example.parent / "fleet").iterdir():
        assert "users" not in yaml.safe_load(kubeconfig.read_text()), kubeconfig  # no secret in the project

    bin_dir = os.path.dirname(sys.executable)
    output = tmp_path / "output.json"
    argv = [os.path.join(bin_dir, "ansible-inventory"), "--list", "--export", "-i", str(example), "--output", str(output)]
    argv += ["--playbook-dir", str(example.parent)]
    subprocess.run(argv, capture_output=True, text=True, env=ansible_env(tmp_path), check=True)  # noqa: S603
    hosts, groups = import_inventory(json.loads(output.read_text()))
    assert groups["canary"] == ["eu-canary"] and sorted(groups["clusters"]) == sorted(hosts) == ["eu-canary", "eu-prod", "us-prod"]
    allowed = {"kubeconfig", "context", "cluster_name", "cluster_server", "cluster_namespace", "cluster_labels"}
    allowed |= {"ansible_connection", "ansible_python_interpreter"}
    assert all(set(variables) <= allowed for variables in hosts.values()), hosts

    script = tmp_path / "hosts"
    script.write_text(inventory_script(hosts, groups))
    script.chmod(0o700)
    argv = [os.path.join(bin_dir, "ansible-inventory"), "-i", str(script), "--host", "eu-canary"]
    shown = json.loads(subprocess.run(argv, capture_output=True, text=True, env=ansible_env(tmp_path), check=True).stdout)  # noqa: S603
    assert shown["context"] == "eu-canary" and shown["kubeconfig"] == str(example.parent / "fleet" / "clusters.yaml")
    assert shown["cluster_labels"] == {"region": "eu", "wave": "canary"}


# ---------------------------------------------------------------------------------------------------------------
# The configuration playbook and the RBAC


AWX_CONFIGURE_MODULES = (
    "credential_type",
    "credential",
    "execution_environment",
    "project",
    "job_template",
    "inventory",
    "inventory_source",
    "workflow_job_template",
)


def test_awx_configure_uses_real_module_options():
    (play,) = yaml.safe_load((ROOT / "playbooks" / "awx_configure.yml").read_text())
    modules = {}
    for task in play["tasks"]:
        for key, args in task.items():
            if key.startswith("awx.awx."):
                modules.setdefault(key, set()).update(args)
    assert set(modules) == {f"awx.awx.{m}" for m in AWX_CONFIGURE_MODULES}
    for module, used in modules.items():
        assert used <= awx_module_options(module.split(".")[-1]), (module, used - awx_module_options(module.split(".")[-1]))
    # The data files it reads are the ones in awx/.
    text = (ROOT / "playbooks" / "awx_configure.yml").read_text()
    assert "/../awx/credential_types/kubeconfig.yml" in text and "/../awx/job_templates/*.yml" in text
    assert "/../awx/inventory_sources/fleet.yml" in text and "/../awx/workflow_job_templates/fleet_rollout.yml" in text


# A stand-in for each awx.awx module awx_configure.yml calls: it records its arguments (one JSON line per call) instead
# of calling a controller. A module with WANT_JSON gets its arguments as a JSON file.
FAKE_AWX_MODULE = """#!/usr/bin/python
# WANT_JSON
import json
import os
import sys

with open(sys.argv[1]) as handle:
    args = {key: value for key, value in json.load(handle).items() if not key.startswith("_ansible")}
with open(os.environ["AWX_FAKE_RECORD"], "a") as out:
    out.write(json.dumps({"module": "MODULE", "args": args}) + "\\n")
print(json.dumps({"changed": True}))
"""


def run_awx_configure(tmp_path, **extra_vars):
    """playbooks/awx_configure.yml against the stand-in awx.awx collection: the modules' calls, in order."""
    modules = tmp_path / "collections" / "ansible_collections" / "awx" / "awx" / "plugins" / "modules"
    modules.mkdir(parents=True)
    for name in AWX_CONFIGURE_MODULES:
        (modules / f"{name}.py").write_text(FAKE_AWX_MODULE.replace("MODULE", name))
    record = tmp_path / "calls.jsonl"
    env = ansible_env(tmp_path)
    env["ANSIBLE_COLLECTIONS_PATH"] = os.pathsep.join([str(tmp_path / "collections"), env["ANSIBLE_COLLECTIONS_PATH"]])
    env["AWX_FAKE_RECORD"] = str(record)
    base = {"awx_project_url": "https://git.example.com/ops.git", "awx_ee_image": "quay.io/example/ee:1", "awx_cluster_kubeconfig": "kind: Config"}
    (tmp_path / "vars.json").write_text(json.dumps(dict(base, **extra_vars)))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-e", "@" + str(tmp_path / "vars.json")]
    argv.append(str(ROOT / "playbooks" / "awx_configure.yml"))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)  # noqa: S603
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_awx_configure_creates_the_fleet_rollout(tmp_path):
    """Every object, from the files of awx/, each naming the objects created before it: the fleet inventory and its
    source (the project's file, the execution environment with the plugin, no credential), the fleet credential of the
    kubeconfig type, the two fleet job templates on the fleet inventory with that credential (the other job templates
    stay on awx_inventory), the workflow with its survey and its nodes naming those job templates."""
    calls = run_awx_configure(tmp_path, awx_fleet_kubeconfig="kind: Config\nusers: []\n")
    order = [(c["module"], c["args"]["name"]) for c in calls]
    fleet_names = [NODES[i]["unified_job_template"]["name"] for i in ("canary", "waves")]
    assert order == [
        ("credential_type", CREDENTIAL_TYPE["name"]),
        ("credential", "cluster"),
        ("execution_environment", "kubeforge-operators"),
        ("project", "kubeforge operations"),
        *[("job_template", name) for name in JOB_TEMPLATES if name not in fleet_names],  # in file name order
        ("inventory", "kubeforge fleet"),
        ("inventory_source", INVENTORY_SOURCE["name"]),
        ("credential", "kubeforge fleet"),
        *[("job_template", name) for name in sorted(fleet_names)],
        ("workflow_job_template", WORKFLOW["name"]),
    ]
    for call in calls:
        assert set(call["args"]) <= awx_module_options(call["module"]), call
    by_name = {(c["module"], c["args"]["name"]): c["args"] for c in calls}
    source = by_name[("inventory_source", INVENTORY_SOURCE["name"])]
    assert source["inventory"] == "kubeforge fleet" and source["source_project"] == "kubeforge operations"
    assert source["execution_environment"] == "kubeforge-operators"  # the image with the clusters plugin
    assert {k: source[k] for k in INVENTORY_SOURCE} == INVENTORY_SOURCE and "credential" not in source
    fleet_credential = by_name[("credential", "kubeforge fleet")]
    assert fleet_credential["credential_type"] == CREDENTIAL_TYPE["name"] and fleet_credential["inputs"] == {"kubeconfig": "kind: Config\nusers: []\n"}
    for name in JOB_TEMPLATES:
        template = by_name[("job_template", name)]
        assert template["playbook"] == JOB_TEMPLATES[name]["playbook"] and template["project"] == "kubeforge operations"
        if name in fleet_names:
            assert template["inventory"] == "kubeforge fleet" and template["credentials"] == ["kubeforge fleet"] and not template["survey_enabled"]
            assert template["extra_vars"] == JOB_TEMPLATES[name]["extra_vars"] and template["job_slice_count"] == 1
        else:
            assert template["inventory"] == "Demo Inventory" and template["credentials"] == ["cluster"] and template["survey_enabled"]
    workflow = by_name[("workflow_job_template", WORKFLOW["name"])]
    assert workflow["workflow_nodes"] == WORKFLOW["workflow_nodes"] and workflow["survey_spec"] == WORKFLOW["survey_spec"]
    assert workflow["survey_enabled"] and not workflow["ask_variables_on_launch"] and workflow["organization"] == "Default"


def test_awx_configure_fleet_options(tmp_path):
    """Without awx_fleet_kubeconfig no fleet credential is made and the fleet job templates' credentials are left as
    they are (a cloud credential for exec plugins, say); with awx_fleet=false nothing of the fleet is made."""
    without_kubeconfig = run_awx_configure(tmp_path / "a")
    modules = [c["module"] for c in without_kubeconfig]
    assert modules.count("credential") == 1 and {"inventory", "inventory_source", "workflow_job_template"} <= set(modules)
    fleet = [c["args"] for c in without_kubeconfig if c["module"] == "job_template" and c["args"]["inventory"] == "kubeforge fleet"]
    assert len(fleet) == 2 and not any("credentials" in args for args in fleet)
    off = run_awx_configure(tmp_path / "b", awx_fleet=False)
    assert not {"inventory", "inventory_source", "workflow_job_template"} & {c["module"] for c in off}
    assert [c["args"]["inventory"] for c in off if c["module"] == "job_template"] == ["Demo Inventory"] * (len(JOB_TEMPLATES) - 2)


def _grants(rules):
    """(apiGroup, resource, resourceName or '', verb) the rules grant."""
    return {
        (group, resource, name, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in rule.get("resourceNames", [""])
        for verb in rule["verbs"]
    }


def test_job_role_grants_no_more_than_the_operator():
    role = yaml.safe_load((AWX / "rbac" / "clusterrole.yml").read_text())
    operator = yaml.safe_load((ROOT / "operator" / "config" / "rbac" / "role.yaml").read_text())
    ours, theirs = _grants(role["rules"]), _grants(operator["rules"])
    assert ours and ours <= theirs, ours - theirs
    assert not any("*" in grant for grant in ours)
    assert not any(resource == "secrets" for _g, resource, _n, _v in ours)
    assert not any(group == "operators.kubeforge.io" for group, _r, _n, _v in ours)
    # Scoped rules stay scoped (a grant on named APIServices does not widen to all).
    assert ("apiregistration.k8s.io", "apiservices", "", "get") not in ours
