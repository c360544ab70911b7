"""AWX content (awx/): the credential type's injectors, the job templates and their surveys agree with AWX's rules,
the awx.awx modules that create them, and the playbooks and roles they drive."""

import re
from pathlib import Path

import pytest
import yaml
from jinja2 import Environment, meta

ROOT = Path(__file__).resolve().parents[3]
AWX = ROOT / "awx"
CREDENTIAL_TYPE = yaml.safe_load((AWX / "credential_types" / "kubeconfig.yml").read_text())
TEMPLATES = sorted((AWX / "job_templates").glob("*.yml"))
# AWX's survey question types (awx/main/models/mixins.py SurveyJobTemplateMixin).
SURVEY_TYPES = {"text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"}


def awx_module_options(name):
    """Options of an awx.awx module, read from its documentation (the `ansible` package ships awx.awx)."""
    import ansible_collections.awx.awx.plugins.modules as modules
    from ansible.parsing.plugin_docs import read_docstring

    return set(read_docstring(str(Path(modules.__file__).parent / f"{name}.py"))["doc"]["options"])


def template_variables(text):
    return meta.find_undeclared_variables(Environment().parse(text))


def test_credential_type_injects_only_declared_inputs():
    inputs = {field["id"] for field in CREDENTIAL_TYPE["inputs"]["fields"]}
    assert set(CREDENTIAL_TYPE["inputs"]["required"]) <= inputs
    assert CREDENTIAL_TYPE["kind"] == "cloud"
    files = {key.split(".", 1)[1] for key in CREDENTIAL_TYPE["injectors"]["file"]}
    for template in CREDENTIAL_TYPE["injectors"]["file"].values():
        assert template_variables(template) <= inputs
    for value in CREDENTIAL_TYPE["injectors"]["env"].values():
        assert template_variables(value) <= inputs | {"tower"}
        for ref in re.findall(r"tower\.filename\.(\w+)", value):
            assert ref in files, f"{ref} names no file injector"
    assert CREDENTIAL_TYPE["injectors"]["env"]["K8S_AUTH_KUBECONFIG"] == "{{ tower.filename.kubeconfig }}"
    secret = {f["id"] for f in CREDENTIAL_TYPE["inputs"]["fields"] if f.get("secret")}
    assert "kubeconfig" in secret, "a kubeconfig holds credentials: AWX must store it encrypted"


def test_credential_type_keys_are_awx_module_options():
    options = awx_module_options("credential_type")
    assert set(CREDENTIAL_TYPE) <= options


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.stem for p in TEMPLATES])
def test_job_template(path):
    template = yaml.safe_load(path.read_text())
    assert set(template) <= awx_module_options("job_template")
    playbook = ROOT / template["playbook"]
    assert playbook.is_file(), template["playbook"]
    plays = yaml.safe_load(playbook.read_text())
    roles = [r["role"] for play in plays for r in play.get("roles", [])]
    assert len(roles) == 1 and roles[0].startswith("kubeforge.operators.")
    role_spec = yaml.safe_load((ROOT / "roles" / roles[0].split(".")[-1] / "meta" / "argument_specs.yml").read_text())
    options = role_spec["argument_specs"]["main"]["options"]
    survey = template["survey_spec"]
    assert survey["name"] and "description" in survey and survey["spec"]
    names = [q["variable"] for q in survey["spec"]]
    assert len(names) == len(set(names))
    playbook_text = playbook.read_text()
    for question in survey["spec"]:
        assert question["question_name"] and question["type"] in SURVEY_TYPES and isinstance(question["required"], bool)
        variable = question["variable"]
        # A role variable, or a survey variable the playbook turns into one.
        assert variable in options or (variable.startswith("survey_") and variable in playbook_text), variable
        if variable in options and "choices" in options[variable]:
            assert set(question["choices"]) <= set(options[variable]["choices"]), variable
        if question["type"] in ("multiplechoice", "multiselect"):
            assert question["choices"] and question.get("default", question["choices"][0]) in question["choices"]
        if question["type"] == "text":
            assert 0 <= question["min"] <= question["max"]
