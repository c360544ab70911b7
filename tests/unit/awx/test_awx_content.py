"""AWX content (awx/): the credential type and the job templates' surveys pass the checks AWX itself runs when they are
created (tests/awx_model.py, ported from AWX's source), use only options of the awx.awx modules that create them, and
ask only for variables the playbooks and roles accept; the ServiceAccount role grants no more than the operator's."""

import ast
import copy
from pathlib import Path

import pytest
import yaml
from awx_model import (
    LaunchRefused,
    credential_type_errors,
    inject_custom_credential,
    launch_extra_vars,
    survey_element_errors,
    survey_form,
    survey_spec_errors,
)

ROOT = Path(__file__).resolve().parents[3]
AWX = ROOT / "awx"
CREDENTIAL_TYPE = yaml.safe_load((AWX / "credential_types" / "kubeconfig.yml").read_text())
TEMPLATES = sorted((AWX / "job_templates").glob("*.yml"))
KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}}],
    "users": [{"name": "u", "user": {"token": "not-a-real-token"}}],
    "contexts": [{"name": "job", "context": {"cluster": "c", "user": "u"}}],
    "current-context": "job",
}


def awx_module_options(name):
    """Options of an awx.awx module, read from its DOCUMENTATION (the `ansible` package ships awx.awx).

    Parsed with ast, not ansible.parsing.plugin_docs: importing controller code flips ansible.module_utils into
    controller mode for the rest of the process, and module warnings then go to Display instead of the result."""
    from ansible_collections.awx.awx.plugins import modules

    tree = ast.parse((Path(modules.__file__).parent / f"{name}.py").read_text())
    docs = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets)
    ]
    return set(yaml.safe_load(docs[0])["options"])


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


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_job_template_passes_awx_validation(path):
    template = yaml.safe_load(path.read_text())
    assert set(template) <= awx_module_options("job_template")
    assert (ROOT / template["playbook"]).is_file(), template["playbook"]
    survey = template["survey_spec"]
    assert survey_spec_errors(survey) == []
    for element in survey["spec"]:
        if "default" in element:  # a default AWX would drop at launch is a mistake
            assert survey_element_errors(element, {element["variable"]: element["default"]}) == [], element


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_survey_asks_for_what_the_role_accepts(path):
    template = yaml.safe_load(path.read_text())
    options = role_of(template)
    playbook = (ROOT / template["playbook"]).read_text()
    asked = {}
    for element in template["survey_spec"]["spec"]:
        variable = element["variable"]
        asked[variable] = element
        if variable in options:
            # A survey answer is a string (text, multiplechoice): the role must take one, and only its choices.
            assert options[variable].get("type", "str") in ("str", "raw"), variable
            if "choices" in options[variable]:
                assert element["type"] == "multiplechoice" and set(element["choices"]) <= set(options[variable]["choices"]), variable
        else:
            # Not a role variable: a survey_* variable the playbook turns into one.
            assert variable.startswith("survey_") and variable in playbook, variable
    for name, option in options.items():
        if option.get("required"):
            assert name in asked and asked[name]["required"], f"{name} is required by the role but not asked by the survey"


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
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
# The configuration playbook and the RBAC


def test_awx_configure_uses_real_module_options():
    (play,) = yaml.safe_load((ROOT / "playbooks" / "awx_configure.yml").read_text())
    modules = {}
    for task in play["tasks"]:
        for key, args in task.items():
            if key.startswith("awx.awx."):
                modules.setdefault(key, set()).update(args)
    assert set(modules) == {f"awx.awx.{m}" for m in ("credential_type", "credential", "execution_environment", "project", "job_template")}
    for module, used in modules.items():
        assert used <= awx_module_options(module.split(".")[-1]), (module, used - awx_module_options(module.split(".")[-1]))
    # The data files it reads are the ones in awx/.
    text = (ROOT / "playbooks" / "awx_configure.yml").read_text()
    assert "/../awx/credential_types/kubeconfig.yml" in text and "/../awx/job_templates/*.yml" in text


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
