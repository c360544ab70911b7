"""What AWX does between "launch" and ansible-runner, ported from its source, for tests that check the content of awx/
and run our playbooks as AWX runs them. No AWX server runs here; these functions keep AWX's logic and names so that a
reader can hold them against the original:

- ansible/awx (commit e21dd0a0933fd544d1fe2513c54fe41203775eb5, 2024-10-23):
  awx/main/tasks/jobs.py (BaseTask.build_private_data_dir, build_env, write_inventory_file, write_args_file, run's
  ansible_runner parameters and env/settings; RunJob.build_env, build_args, build_extra_vars_file;
  RunInventoryUpdate.build_env, build_args, pseudo_build_inventory, post_run_hook),
  awx/main/utils/safe_yaml.py (safe_dump), awx/main/models/mixins.py (SurveyJobTemplateMixin: survey defaults and
  answer validation), awx/api/views/__init__.py (JobTemplateSurveySpec._validate_spec_data,
  WorkflowJobTemplateNodeChildrenBaseList.is_valid_relation), awx/main/fields.py (CredentialTypeInputField,
  CredentialTypeInjectorField), awx/main/models/credential.py (CredentialType.inject_credential),
  awx/main/constants.py (ENV_BLOCKLIST, SURVEY_TYPE_MAPPING, STANDARD_INVENTORY_UPDATE_ENV),
  awx/api/serializers.py (CredentialTypeSerializer.validate: custom kinds; LaunchConfigurationBaseSerializer.validate:
  a workflow node's prompts), awx/main/models/jobs.py (JobTemplate._accept_or_ignore_job_kwargs, get_ask_mapping),
  awx/main/models/workflow.py (WorkflowJobNode.get_job_kwargs), awx/main/scheduler/dag_workflow.py
  (WorkflowDAG.bfs_nodes_to_run, has_workflow_failed), awx/main/scheduler/dag_simple.py (has_cycle),
  awx/main/models/inventory.py (Inventory.get_script_data), awx/main/utils/mem_inventory.py (dict_to_mem_data),
  awx/main/models/unified_jobs.py (UnifiedJob.awx_meta_vars);
- ansible/awx-plugins src/awx_plugins/credentials/injectors.py (kubernetes_bearer_token; in AWX itself, as
  awx/main/models/credential/injectors.py, until commit 376cc35a, 2024-09).

Where a job runs in an execution environment container AWX hands the container's paths (/runner/env/...) to the job;
here the job runs on this host, so the paths are the host's. Every job and inventory update has its private data
directory at /runner in its container: a Job or InventoryUpdate given ``private_data_dir`` lays its directory out at
that path (which must not exist), so that runs one after the other see their project at the same path, as in AWX.
"""

import json
import os
import re
import shutil
import stat
import sys
import tempfile

import yaml
from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jsonschema import Draft4Validator

ENV_BLOCKLIST = frozenset(
    (
        "VIRTUAL_ENV",
        "PATH",
        "PYTHONPATH",
        "JOB_ID",
        "INVENTORY_ID",
        "INVENTORY_SOURCE_ID",
        "INVENTORY_UPDATE_ID",
        "AD_HOC_COMMAND_ID",
        "REST_API_URL",
        "REST_API_TOKEN",
        "MAX_EVENT_RES",
        "CALLBACK_QUEUE",
        "CALLBACK_CONNECTION",
        "CACHE",
        "JOB_CALLBACK_DEBUG",
        "INVENTORY_HOSTVARS",
        "AWX_HOST",
        "PROJECT_REVISION",
        "SUPERVISOR_CONFIG_PATH",
    )
)
SURVEY_TYPE_MAPPING = {"text": str, "textarea": str, "password": str, "multiplechoice": str, "multiselect": str, "integer": int, "float": (float, int)}
JOB_VARIABLE_PREFIXES = ("awx", "tower")
# What an inventory update's environment always has (awx/main/constants.py).
STANDARD_INVENTORY_UPDATE_ENV = {
    "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
    "ANSIBLE_INVENTORY_EXPORT": "True",
    "ANSIBLE_VERBOSE_TO_STDERR": "True",
    "ANSIBLE_HOST_PATTERN_MISMATCH": "error",
}
# JobTemplate.get_ask_mapping (the "prompt on launch" flag of each launch-time field) for the prompts of a workflow node.
ASK_MAPPING = {
    "inventory": "ask_inventory_on_launch",
    "limit": "ask_limit_on_launch",
    "scm_branch": "ask_scm_branch_on_launch",
    "job_type": "ask_job_type_on_launch",
    "job_tags": "ask_tags_on_launch",
    "skip_tags": "ask_skip_tags_on_launch",
    "diff_mode": "ask_diff_mode_on_launch",
    "verbosity": "ask_verbosity_on_launch",
    "forks": "ask_forks_on_launch",
    "job_slice_count": "ask_job_slice_count_on_launch",
    "timeout": "ask_timeout_on_launch",
    "execution_environment": "ask_execution_environment_on_launch",
    "credentials": "ask_credential_on_launch",
    "labels": "ask_labels_on_launch",
    "instance_groups": "ask_instance_groups_on_launch",
}
# The model fields' defaults, what a node prompt is compared with when the job template does not set the field.
JOB_TEMPLATE_DEFAULTS = {
    "limit": "",
    "scm_branch": "",
    "job_type": "run",
    "job_tags": "",
    "skip_tags": "",
    "diff_mode": False,
    "verbosity": 0,
    "forks": 0,
    "job_slice_count": 1,
    "timeout": 0,
}
# awx/settings/defaults.py: the ANSIBLE_* settings every job gets.
ANSIBLE_SETTINGS = {
    "ANSIBLE_HOST_KEY_CHECKING": "False",
    "ANSIBLE_PARAMIKO_RECORD_HOST_KEYS": "False",
    "ANSIBLE_FORCE_COLOR": "True",
    "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
}
# The Demo Inventory's one host (awx/main/management/commands/create_preload_data.py).
DEMO_INVENTORY = {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}

_INPUTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "required": {"type": "array", "items": {"type": "string"}},
        "fields": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"enum": ["string", "boolean"]},
                    "format": {"enum": ["ssh_private_key", "url"]},
                    "choices": {"type": "array", "minItems": 1, "items": {"type": "string"}, "uniqueItems": True},
                    "id": {"type": "string", "pattern": "^[a-zA-Z_]+[a-zA-Z0-9_]*$"},
                    "label": {"type": "string"},
                    "help_text": {"type": "string"},
                    "multiline": {"type": "boolean"},
                    "secret": {"type": "boolean"},
                    "ask_at_runtime": {"type": "boolean"},
                    "default": {},
                },
                "additionalProperties": False,
                "required": ["id", "label"],
            },
        },
    },
}
_INJECTORS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "file": {"type": "object", "patternProperties": {r"^template(\.[a-zA-Z_]+[a-zA-Z0-9_]*)?$": {"type": "string"}}, "additionalProperties": False},
        "env": {
            "type": "object",
            "patternProperties": {"^[a-zA-Z_]+[a-zA-Z0-9_]*$": {"type": "string", "pattern": "^[\x00-\x7f]*$"}},
            "additionalProperties": False,
        },
        "extra_vars": {
            "type": "object",
            "patternProperties": {
                r"^[a-zA-Z_\{\}]+[a-zA-Z0-9_\{\}]*$": {"anyOf": [{"type": "string"}, {"type": "array"}, {"$ref": "#/properties/extra_vars"}]}
            },
            "additionalProperties": False,
        },
    },
}


class _Namespace:
    """AWX's TowerNamespace: attributes only (``tower.filename.<label>``)."""


# ---------------------------------------------------------------------------------------------------------------
# Credential types


def env_var_errors(env_var):
    """CredentialTypeInjectorField.validate_env_var_allowed."""
    if env_var.startswith("ANSIBLE_"):
        return [f"Environment variable {env_var} may affect Ansible configuration so its use is not allowed in credentials."]
    if env_var in ENV_BLOCKLIST:
        return [f"Environment variable {env_var} is not allowed to be used in credentials."]
    return []


def credential_type_errors(credential_type):
    """What AWX refuses when a custom credential type is created (serializer, input and injector fields)."""
    errors = []
    if credential_type.get("kind") not in ("cloud", "net"):
        errors.append(f"kind: Must be 'cloud' or 'net', not {credential_type.get('kind')}")
    inputs, injectors = credential_type.get("inputs", {}), credential_type.get("injectors", {})
    errors += [f"inputs: {e.message}" for e in Draft4Validator(_INPUTS_SCHEMA).iter_errors(inputs)]
    errors += [f"injectors: {e.message}" for e in Draft4Validator(_INJECTORS_SCHEMA).iter_errors(injectors)]
    if errors:
        return errors
    ids = []
    for field in inputs.get("fields", []):
        if field["id"] == "tower":
            errors.append('"tower" is a reserved field name')
        if field["id"] in ids:
            errors.append(f"field IDs must be unique ({field['id']})")
        ids.append(field["id"])
        field_type = field.get("type", "string")
        if "default" in field and not isinstance(field["default"], {"string": str, "boolean": bool}[field_type]):
            errors.append(f"{field['default']} is not a {field_type}")
        errors += [
            f"{key} not allowed for {field_type} type ({field['id']})"
            for key in ("choices", "multiline", "format", "secret")
            if key in field and field_type != "string"
        ]
    if errors:
        return errors

    # Every template renders in a namespace of the declared inputs and the files the injectors write.
    namespace = {field: "EXAMPLE" for field in ids}
    tower = namespace["tower"] = _Namespace()
    labels = list(injectors.get("file", {}))
    if "template" in labels:
        tower.filename = "EXAMPLE_FILENAME"
        if len(labels) > 1:
            errors.append("Must use multi-file syntax when injecting multiple files")
    elif labels:
        tower.filename = _Namespace()
        for label in labels:
            setattr(tower.filename, label.split(".")[1], "EXAMPLE_FILENAME")
    sandbox = ImmutableSandboxedEnvironment(undefined=StrictUndefined)

    def template_errors(kind, key, template):
        try:
            sandbox.from_string(template).render(namespace)
        except UndefinedError as exc:
            return [f"{key} uses an undefined field ({exc})"]
        except SecurityError as exc:
            return [f"Encountered unsafe code execution: {exc}"]
        except TemplateSyntaxError as exc:
            return [f"Syntax error rendering template for {key} inside of {kind} ({exc})"]
        return []

    def extra_vars_errors(key, node):
        if isinstance(node, dict):
            found = []
            for sub_key, value in node.items():
                found += template_errors("extra_vars", "a key" if key is None else key, sub_key)
                found += extra_vars_errors(sub_key if key is None else f"{key}.{sub_key}", value)
            return found
        if isinstance(node, list):
            return [error for i, value in enumerate(node) for error in extra_vars_errors(f"{key}[{i}]", value)]
        return template_errors("extra_vars", key, node)

    for kind, injector in injectors.items():
        if kind == "env":
            errors += [error for key in injector for error in env_var_errors(key)]
        if kind == "extra_vars":
            errors += extra_vars_errors(None, injector)
        else:
            errors += [error for key, template in injector.items() for error in template_errors(kind, key, template)]
    return errors


def _private_file(private_data_dir, data):
    """A 0600 file in env/, as the injectors write credentials' files (tempfile.mkstemp in the private data dir)."""
    handle, path = tempfile.mkstemp(dir=os.path.join(private_data_dir, "env"))
    with os.fdopen(handle, "w") as out:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        out.write(data)
    return path


def inject_kubernetes_bearer_token(inputs, env, private_data_dir):
    """awx_plugins.credentials.injectors.kubernetes_bearer_token: the built-in "OpenShift or Kubernetes API Bearer
    Token" type (inputs host, bearer_token, verify_ssl - default true, ssl_ca_cert)."""
    env["K8S_AUTH_HOST"] = str(inputs.get("host", ""))
    env["K8S_AUTH_API_KEY"] = str(inputs.get("bearer_token", ""))
    if inputs.get("verify_ssl", True) and inputs.get("ssl_ca_cert"):
        env["K8S_AUTH_VERIFY_SSL"] = "True"
        env["K8S_AUTH_SSL_CA_CERT"] = _private_file(private_data_dir, str(inputs["ssl_ca_cert"]))
    else:
        env["K8S_AUTH_VERIFY_SSL"] = "False"


def inject_custom_credential(credential_type, inputs, env, private_data_dir):
    """CredentialType.inject_credential for a custom type: files first (0600, in env/), then the environment, with
    the inputs that have a value; AWX logs and skips variables it does not allow. Returns the extra variables of an
    ``extra_vars`` injector."""
    tower = _Namespace()
    namespace = {"tower": tower}
    for name, value in inputs.items():
        if isinstance(value, bool) or len(value):
            namespace[name] = value
    for field in credential_type["inputs"].get("fields", []):
        if field.get("type") == "boolean" and field["id"] not in inputs:
            namespace[field["id"]] = False
    sandbox = ImmutableSandboxedEnvironment()
    for label, template in credential_type["injectors"].get("file", {}).items():
        data = sandbox.from_string(template).render(**namespace)
        handle, path = tempfile.mkstemp(dir=os.path.join(private_data_dir, "env"))
        os.close(handle)
        with open(path, "w") as out:
            out.write(data)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        if "." not in label:
            tower.filename = path
        else:
            if not hasattr(tower, "filename"):
                tower.filename = _Namespace()
            setattr(tower.filename, label.split(".")[1], path)
    for env_var, template in credential_type["injectors"].get("env", {}).items():
        if not env_var_errors(env_var):
            env[env_var] = sandbox.from_string(template).render(**namespace)

    def build(node):
        if isinstance(node, dict):
            return {build(key): build(value) for key, value in node.items()}
        if isinstance(node, list):
            return [build(value) for value in node]
        return sandbox.from_string(node).render(**namespace)

    return build(credential_type["injectors"].get("extra_vars", {}))


# ---------------------------------------------------------------------------------------------------------------
# Surveys


def survey_spec_errors(spec):
    """JobTemplateSurveySpec._validate_spec_data: what AWX's API refuses when a survey is saved."""
    for field, expect_type in (("name", str), ("description", str), ("spec", list)):
        if field not in spec:
            return [f"Field '{field}' is missing from survey spec."]
        if not isinstance(spec[field], expect_type):
            return [f"Expected {expect_type.__name__} for field '{field}', received {type(spec[field]).__name__} type."]
    if not spec["spec"]:
        return ["'spec' doesn't contain any items."]
    variables = set()
    for idx, item in enumerate(spec["spec"]):
        if not isinstance(item, dict):
            return [f"Survey question {idx} is not a json object."]
        for field_name in ("type", "question_name", "variable", "required"):
            if field_name not in item:
                return [f"'{field_name}' missing from survey question {idx}"]
            if not isinstance(item[field_name], bool if field_name == "required" else str):
                return [f"'{field_name}' in survey question {idx} expected to be {'boolean' if field_name == 'required' else 'string'}."]
        if item["variable"] in variables:
            return [f"'variable' '{item['variable']}' duplicated in survey question {idx}."]
        variables.add(item["variable"])
        qtype = item["type"]
        if qtype not in SURVEY_TYPE_MAPPING:
            return [f"'{qtype}' in survey question {idx} is not one of '{', '.join(SURVEY_TYPE_MAPPING)}' allowed question types."]
        if item.get("default", "") != "" and not isinstance(item["default"], SURVEY_TYPE_MAPPING[qtype]):
            return [f"Default value {item['default']} in survey question {idx} expected to be {qtype if qtype in ('integer', 'float') else 'string'}."]
        for key in ("min", "max"):
            if item.get(key) is not None and not isinstance(item[key], int):
                return [f"The {key} limit in survey question {idx} expected to be integer."]
        if qtype in ("multiselect", "multiplechoice"):
            if "choices" not in item:
                return [f"Survey question {idx} of type {qtype} must specify choices."]
            if "default" in item:
                defaults = item["default"].splitlines() if isinstance(item["default"], str) else item["default"]
                if qtype == "multiplechoice" and len(defaults) > 1:
                    return ["Multiple Choice (Single Select) can only have one default value."]
                if any(value not in _choices(item) for value in defaults):
                    return ["Default choice must be answered from the choices listed."]
        if str(item.get("default", "")).startswith("$encrypted$") and qtype != "password":
            return [f"$encrypted$ is a reserved keyword for password question defaults, survey question {idx} is type {qtype}."]
    return []


def _choices(item):
    choices = item["choices"]
    return [choice for choice in choices.splitlines() if choice.strip()] if isinstance(choices, str) else list(choices)


def survey_element_errors(element, data):
    """SurveyJobTemplateMixin._survey_element_validation: an answer (or a default) against its question."""
    variable = element["variable"]
    if variable not in data:
        return [f"'{variable}' value missing"] if element["required"] else []
    value, qtype = data[variable], element["type"]
    if qtype in ("textarea", "text", "password"):
        if not isinstance(value, str):
            return [f"Value {value} for '{variable}' expected to be a string."]
        errors = []
        if element.get("min") not in ("", None) and len(value) < int(element["min"]):
            errors.append(f"'{variable}' value {value} is too small (length is {len(value)} must be at least {element['min']}).")
        if element.get("max") not in ("", None) and len(value) > int(element["max"]):
            errors.append(f"'{variable}' value {value} is too large (must be no more than {element['max']}).")
        return errors
    if qtype in ("integer", "float"):
        if type(value) not in ((int,) if qtype == "integer" else (float, int)):  # AWX compares types exactly (no bool)
            return [f"Value {value} for '{variable}' expected to be {'an integer' if qtype == 'integer' else 'a numeric type'}."]
        errors = []
        if element.get("min") not in ("", None) and value < element["min"]:
            errors.append(f"'{variable}' value {value} is too small (must be at least {element['min']}).")
        if element.get("max") not in ("", None) and value > element["max"]:
            errors.append(f"'{variable}' value {value} is too large (must be no more than {element['max']}).")
        return errors
    if qtype == "multiselect":
        if not isinstance(value, list):
            return [f"'{variable}' value is expected to be a list."]
        return [f"Value {item} for '{variable}' expected to be one of {_choices(element)}." for item in value if item not in _choices(element)]
    if qtype == "multiplechoice" and value not in _choices(element):
        return [f"Value {value} for '{variable}' expected to be one of {_choices(element)}."]
    return []


def survey_form(job_template, answers):
    """What AWX's launch form sends: its fields start at the questions' defaults, the user's answers replace them
    (AWX's API itself does not fill in defaults of required questions: variables_needed_to_start)."""
    spec = job_template.get("survey_spec", {}).get("spec", [])
    return dict({element["variable"]: element["default"] for element in spec if "default" in element}, **answers)


class LaunchRefused(Exception):
    """AWX would not start the job (variables_needed_to_start, or extra variables that are not allowed)."""


def launch_extra_vars(job_template, answers):
    """The job's extra variables for a launch with these survey answers (and extra variables): the job template's
    extra_vars, then the survey defaults that pass validation, then the answers (_update_unified_job_kwargs), after
    AWX accepted them (_accept_or_ignore_variables). AWX's meta variables are added by write_extra_vars."""
    spec = job_template.get("survey_spec", {}).get("spec", []) if job_template.get("survey_enabled", True) else []
    errors, rest = [], dict(answers)
    for element in spec:
        errors += survey_element_errors(element, answers)
        rest.pop(element["variable"], None)
    if errors:
        raise LaunchRefused(errors)
    if rest and not job_template.get("ask_variables_on_launch"):
        raise LaunchRefused([f"Variables {', '.join(rest)} are not allowed on launch."])
    extra_vars = dict(job_template.get("extra_vars") or {})
    for element in spec:
        if element.get("default") is not None and not survey_element_errors(element, {element["variable"]: element["default"]}):
            extra_vars[element["variable"]] = element["default"]
    extra_vars.update(answers)
    return extra_vars


# ---------------------------------------------------------------------------------------------------------------
# The job


class _UnsafeDumper(yaml.SafeDumper):
    """awx.main.utils.safe_yaml.SafeStringDumper: every string as !unsafe (Ansible never templates it)."""

    def represent_data(self, data):
        if isinstance(data, str):
            return self.represent_scalar("!unsafe", data)
        return super().represent_data(data)


def safe_dump(extra_vars, safe_dict=None):
    """awx.main.utils.safe_yaml.safe_dump: top-level variables not set (with that value) in the job template's own
    extra_vars are written !unsafe, keys and values."""
    safe_dict = safe_dict or {}
    return "".join(
        yaml.dump_all(
            [{key: value}],
            None,
            Dumper=yaml.SafeDumper if key in safe_dict and safe_dict[key] == value else _UnsafeDumper,
            default_flow_style=False,
        )
        for key, value in extra_vars.items()
    )


def meta_vars(job_id, job_template_name, user="admin", workflow=None):
    """Job.awx_meta_vars for a launch from a job template (awx_* and tower_* alike): manual, or as a node of the
    workflow job ``workflow`` ((id, name), launched manually)."""
    values = {
        "job_id": job_id,
        "job_launch_type": "workflow" if workflow else "manual",
        "user_id": 1,
        "user_name": user,
        "user_email": "",
        "user_first_name": "",
        "user_last_name": "",
        "inventory_id": 1,
        "inventory_name": "Demo Inventory",
        "project_revision": "0" * 40,
        "project_scm_branch": "main",
        "job_template_id": 1,
        "job_template_name": job_template_name,
    }
    if workflow:
        values.update(workflow_job_id=workflow[0], workflow_job_name=workflow[1], workflow_job_launch_type="manual")
    return {f"{prefix}_{key}": value for prefix in JOB_VARIABLE_PREFIXES for key, value in values.items()}


def _write(private_data_dir, name, content, sub_dir="env", mode=0o600):
    """BaseTask.write_private_data_file."""
    path = os.path.join(private_data_dir, sub_dir, name)
    with os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, mode), "w") as out:
        out.write(content)
    return path


def _private_data_dir(base_dir, prefix, path, project_root, project_files):
    """BaseTask.build_private_data_dir (a 0700 directory with inventory/ and env/: a new temporary one, or ``path``)
    and build_project_dir (AWX copies the project's revision into project/; here the ``project_files`` of
    ``project_root``: names of directories or files)."""
    if path is None:
        path = tempfile.mkdtemp(prefix=prefix, dir=base_dir)
    else:
        os.mkdir(path)
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR | stat.S_IXUSR)
    for sub_dir in ("inventory", "env"):
        os.mkdir(os.path.join(path, sub_dir))
    project = os.path.join(path, "project")
    os.mkdir(project)
    for name in project_files:
        source, target = os.path.join(project_root, name), os.path.join(project, name)
        if os.path.isdir(source):
            shutil.copytree(source, target)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(source, target)
    return path


def _base_env(private_data_dir, collections):
    """What BaseTask.build_env gives every job and inventory update here."""
    env = dict(ANSIBLE_SETTINGS)
    env["AWX_PRIVATE_DATA_DIR"] = private_data_dir
    env.update(ANSIBLE_RETRY_FILES_ENABLED="False", MAX_EVENT_RES="700000", AWX_HOST="https://awx.example.invalid")
    control_path = os.path.join(private_data_dir, "cp")
    os.mkdir(control_path, 0o700)
    env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = control_path
    # Every job runs in a new execution-environment container, whose /tmp starts empty: so does kubernetes.core's
    # API discovery cache there, whatever other jobs (or tests running beside this one) cached.
    tmp = os.path.join(private_data_dir, "tmp")
    os.mkdir(tmp, 0o700)
    env["TMPDIR"] = tmp
    # requirements_collections / requirements_roles (the project's requirements, none here), then the EE's paths.
    paths = os.pathsep.join([os.path.join(private_data_dir, "requirements_collections")] + list(collections))
    env.update(ANSIBLE_COLLECTIONS_PATHS=paths, ANSIBLE_COLLECTIONS_PATH=paths)
    env["ANSIBLE_ROLES_PATH"] = os.pathsep.join([os.path.join(private_data_dir, "requirements_roles"), "~/.ansible/roles"])
    # The execution environment's own PATH: its ansible-playbook (here the one of this virtualenv).
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    return env


def workflow_job_extra_vars(job_template, workflow_extra_vars):
    """The extra variables of a job that a workflow node starts (WorkflowJobNode.get_job_kwargs): the job template's own,
    then the workflow job's (its extra_vars, survey defaults and answers) over them, whatever the job template prompts
    for - AWX's "special historical case": a workflow's variables bypass the job template's ask_variables_on_launch."""
    return dict(job_template.get("extra_vars") or {}, **workflow_extra_vars)


def script_data(hosts, groups=None):
    """Inventory.get_script_data(hostvars=True, towervars=True): hosts by name with their variables, ``groups`` (group
    name -> host names, in the order AWX holds them) as groups; hosts of no group are listed under all."""
    groups = groups or {}
    grouped = {host for members in groups.values() for host in members}
    data = {"all": {"hosts": [name for name in sorted(hosts) if name not in grouped]}}
    for name, members in groups.items():
        if members:
            data[name] = {"hosts": list(members)}
    if groups:
        data["all"]["children"] = list(groups)
    data["_meta"] = {"hostvars": {}}
    for host_id, (name, variables) in enumerate(sorted(hosts.items()), start=1):
        data["_meta"]["hostvars"][name] = dict(variables)
        for prefix in ("host", "tower"):
            data["_meta"]["hostvars"][name].update({f"remote_{prefix}_enabled": "true", f"remote_{prefix}_id": host_id})
    return data


def inventory_script(hosts, groups=None):
    """The text of the inventory script BaseTask.write_inventory_file writes: it prints script_data's JSON."""
    return f"#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint({json.dumps(script_data(hosts, groups))!r})\n"


class Job:
    """One job of a job template, laid out and run as RunJob does.

    ``project_files``: directories (or files) of the project checkout (AWX copies the project's revision into
    project/). ``collections``: the execution environment's collection paths (where the image installs the
    collections). ``private_data_dir``: where to lay it out (see the module's docstring), else a temporary directory."""

    def __init__(self, base_dir, job_id, job_template, project_root, project_files, collections, private_data_dir=None):
        self.job_id, self.job_template = job_id, job_template
        self.private_data_dir = _private_data_dir(base_dir, f"awx_{job_id}_", private_data_dir, project_root, project_files)
        self.collections = collections
        self.env = {}

    def add_extra_vars(self, answers):
        """RunJob.build_extra_vars_file: the launch's variables plus AWX's meta variables, in env/extravars."""
        extra_vars = launch_extra_vars(self.job_template, answers)
        extra_vars.update(meta_vars(self.job_id, self.job_template["name"]))
        safe = self.job_template.get("extra_vars") or {}
        return _write(self.private_data_dir, "extravars", safe_dump(extra_vars, safe))

    def add_workflow_extra_vars(self, workflow_extra_vars, workflow):
        """RunJob.build_extra_vars_file for a job of a workflow node: workflow_job_extra_vars plus AWX's meta variables
        (``workflow``: the workflow job's id and name). The job template's own extra_vars stay the "safe" ones (not
        !unsafe) where the workflow did not change them."""
        extra_vars = workflow_job_extra_vars(self.job_template, workflow_extra_vars)
        extra_vars.update(meta_vars(self.job_id, self.job_template["name"], workflow=workflow))
        safe = self.job_template.get("extra_vars") or {}
        return _write(self.private_data_dir, "extravars", safe_dump(extra_vars, safe))

    def add_inventory(self, hosts=None, groups=None):
        """BaseTask.write_inventory_file: inventory/hosts, an executable script printing the inventory's JSON."""
        return _write(self.private_data_dir, "hosts", inventory_script(DEMO_INVENTORY if hosts is None else hosts, groups), sub_dir="inventory", mode=0o700)

    def build_env(self):
        """BaseTask.build_env + RunJob.build_env (no cloud, network or OpenStack credentials)."""
        env = _base_env(self.private_data_dir, self.collections)
        env.update(JOB_ID=str(self.job_id), INVENTORY_ID="1", PROJECT_REVISION="0" * 40)
        return env

    def run(self, inventory, timeout=600):
        """The rest of BaseTask.run: env/cmdline, env/settings, then ansible_runner.interface.run with AWX's
        parameters. Events go to an event handler that keeps them (AWX stores them in its database) and returns
        False, so runner writes none to disk - as with AWX. Returns (runner result, events, stdout as AWX shows it)."""
        import ansible_runner
        from ansible_runner.utils import args2cmdline

        env = self.build_env()
        env.update(self.env)  # the credentials' injections come last, as inject_credential runs after build_env
        _write(self.private_data_dir, "cmdline", args2cmdline("-u", "root"))
        settings = {"job_timeout": timeout, "suppress_ansible_output": True, "suppress_output_file": True}
        _write(self.private_data_dir, "settings", json.dumps(settings))
        prompts = (r"Enter passphrase for .*:\s*?$", r"BECOME password.*:\s*?$", r"SSH password:\s*?$", r"Password:\s*?$", r"Vault password:\s*?$")
        events = []

        def event_handler(event):
            events.append(event)
            return False

        result = ansible_runner.interface.run(
            ident=self.job_id,
            private_data_dir=self.private_data_dir,
            playbook=self.job_template["playbook"],
            inventory=inventory,
            passwords=dict.fromkeys(prompts, ""),
            suppress_env_files=True,
            envvars=env,
            event_handler=event_handler,
            quiet=True,
        )
        return result, events, "".join(event.get("stdout", "") + "\n" for event in events if event.get("stdout"))

    def files_containing(self, secret):
        """Paths (relative to the private data directory) of the files that hold this text."""
        found = []
        for folder, _dirs, files in os.walk(self.private_data_dir):
            for name in files:
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as handle:
                    if secret in handle.read():
                        found.append(os.path.relpath(path, self.private_data_dir))
        return sorted(found)

    def cleanup(self):
        """AWX_CLEANUP_PATHS: the private data directory goes when the job ends."""
        shutil.rmtree(self.private_data_dir, ignore_errors=True)


class InventoryUpdate:
    """An update of an inventory source of type scm (a file of the project: source_path), laid out and run as
    RunInventoryUpdate does: the project in project/, the source's credentials injected like a job's, the command
    ``ansible-inventory --list --export -i <project/source_path> --output artifacts/<id>/output.json --playbook-dir
    <its directory>`` in the file args for ansible-runner, then the import (post_run_hook: inventory_import of output.json).

    ``source``: the inventory source's options (source_path, source_vars)."""

    def __init__(self, base_dir, update_id, source, project_root, project_files, collections, private_data_dir=None):
        assert source["source"] == "scm", source
        self.update_id, self.source = update_id, source
        self.private_data_dir = _private_data_dir(base_dir, f"awx_{update_id}_", private_data_dir, project_root, project_files)
        self.collections = collections
        self.env = {}

    def build_env(self):
        """BaseTask.build_env + RunInventoryUpdate.build_env: the update's ids, STANDARD_INVENTORY_UPDATE_ENV, and an
        scm source's source_vars as environment variables (those not set already)."""
        env = _base_env(self.private_data_dir, self.collections)
        env.update(INVENTORY_SOURCE_ID="1", INVENTORY_UPDATE_ID=str(self.update_id))
        env.update(STANDARD_INVENTORY_UPDATE_ENV)
        for key, value in (self.source.get("source_vars") or {}).items():
            if str(key) not in env:
                env[str(key)] = str(value)
        return env

    def build_args(self):
        """RunInventoryUpdate.build_args (and pseudo_build_inventory: project/<source_path>)."""
        location = os.path.join(self.private_data_dir, "project", self.source.get("source_path", ""))
        output = os.path.join(self.private_data_dir, "artifacts", str(self.update_id), "output.json")
        playbook_dir = location if os.path.isdir(location) else os.path.dirname(location)
        return ["ansible-inventory", "--list", "--export", "-i", location, "--output", output, "--playbook-dir", playbook_dir]

    def run(self, timeout=600):
        """ansible_runner.interface.run with the command in args (RunInventoryUpdate.write_args_file); returns
        (runner result, stdout and stderr as AWX shows them, the imported inventory: import_inventory of output.json,
        or None when the update failed)."""
        import ansible_runner

        env = self.build_env()
        env.update(self.env)
        _write(self.private_data_dir, "args", " ".join(self.build_args()), sub_dir="")  # private_data_dir/args
        settings = {"job_timeout": timeout, "suppress_ansible_output": True, "suppress_output_file": True}
        _write(self.private_data_dir, "settings", json.dumps(settings))
        events = []

        def event_handler(event):
            events.append(event)
            return False

        result = ansible_runner.interface.run(
            ident=self.update_id,
            private_data_dir=self.private_data_dir,
            suppress_env_files=True,
            envvars=env,
            event_handler=event_handler,
            quiet=True,
        )
        stdout = "".join(event.get("stdout", "") + "\n" for event in events if event.get("stdout"))
        output = os.path.join(self.private_data_dir, "artifacts", str(self.update_id), "output.json")
        if result.status != "successful":
            return result, stdout, None
        with open(output) as handle:
            return result, stdout, import_inventory(json.load(handle))

    def cleanup(self):
        shutil.rmtree(self.private_data_dir, ignore_errors=True)


def import_inventory(data):
    """What AWX stores of ``ansible-inventory --list --export`` output (dict_to_mem_data, then the database): hosts with
    their variables as the JSON has them (an {"__ansible_unsafe": ...} value stays that mapping), and groups with their
    hosts; all and ungrouped are not groups. Returns (hosts: name -> variables, groups: name -> host names)."""
    data = dict(data)
    meta = data.pop("_meta", {})
    hosts, groups = {}, {}
    for name, group in data.items():
        members = group.get("hosts", []) if isinstance(group, dict) else group
        members = list(members) if isinstance(members, (list, tuple, dict)) else []
        for host in members:
            hosts.setdefault(host, {})
            if isinstance(group, dict) and isinstance(group.get("hosts"), dict) and isinstance(group["hosts"][host], dict):
                hosts[host].update(group["hosts"][host])
        if name not in ("all", "ungrouped"):
            groups[name] = members
    for host, variables in hosts.items():
        variables.update(meta.get("hostvars", {}).get(host, {}))
    return hosts, groups


# ---------------------------------------------------------------------------------------------------------------
# Workflows


def node_prompt_errors(job_template, node):
    """What AWX refuses of a workflow node's prompts (LaunchConfigurationBaseSerializer.validate through
    JobTemplate._accept_or_ignore_job_kwargs): a launch-time field the job template does not prompt for
    (ask_*_on_launch), unless it equals the template's own value, and extra_data the template neither asks for nor
    has a survey question of."""
    errors = []
    for field, ask in ASK_MAPPING.items():
        if node.get(field) is None:
            continue
        if node[field] == job_template.get(field, JOB_TEMPLATE_DEFAULTS.get(field)):
            continue  # counted as neither accepted nor ignored
        if not job_template.get(ask):
            errors.append(f"{field}: Field is not configured to prompt on launch.")
    extra_data = node.get("extra_data") or {}
    survey = set()
    if job_template.get("survey_enabled", "survey_spec" in job_template):
        survey = {element["variable"] for element in job_template.get("survey_spec", {}).get("spec", [])}
    rejected = [key for key in extra_data if key not in survey]
    if rejected and not job_template.get("ask_variables_on_launch"):
        errors.append(f"extra_data: Variables {', '.join(rejected)} are not allowed on launch.")
    return errors


def _edges(workflow):
    """(parent identifier, relationship, child identifier) of a workflow in awx.awx.workflow_job_template's
    workflow_nodes form (related: success_nodes, failure_nodes, always_nodes: [{identifier}])."""
    return [
        (node["identifier"], relationship, child["identifier"])
        for node in workflow["workflow_nodes"]
        for relationship in ("success_nodes", "failure_nodes", "always_nodes")
        for child in (node.get("related") or {}).get(relationship, [])
    ]


def _has_cycle(identifiers, edges):
    """SimpleDAG.has_cycle: a depth-first search from every node."""
    children = {identifier: [c for p, _r, c in edges if p == identifier] for identifier in identifiers}
    state = {}

    def visit(identifier):
        if state.get(identifier) == "visiting":
            return True
        if state.get(identifier) == "done":
            return False
        state[identifier] = "visiting"
        if any(visit(child) for child in children.get(identifier, [])):
            return True
        state[identifier] = "done"
        return False

    return any(visit(identifier) for identifier in identifiers)


def workflow_errors(workflow, job_templates):
    """What AWX refuses when a workflow's nodes and edges are saved (through awx.awx.workflow_job_template): identifiers
    are unique in the workflow; an edge names nodes of it, not the node itself, and one parent-child pair has one
    relationship (is_valid_relation: "Relationship not allowed."); no cycle; a job template node names a job template
    (``job_templates``: name -> its options) and prompts only for what it asks (node_prompt_errors); an approval node
    has a name. The survey is checked by survey_spec_errors."""
    nodes = workflow.get("workflow_nodes") or []
    identifiers = [node["identifier"] for node in nodes]
    errors = [f"identifier {i!r} is not unique" for i in sorted(set(identifiers)) if identifiers.count(i) > 1]
    edges = _edges(workflow)
    for parent, relationship, child in edges:
        if child not in identifiers:
            errors.append(f"{parent}: {relationship} names {child!r}, which is no node of the workflow")
        elif parent == child:
            errors.append(f"{parent}: Cycle detected.")
        elif len({r for p, r, c in edges if (p, c) == (parent, child)}) > 1:
            errors.append(f"{parent} -> {child}: Relationship not allowed.")
    if not errors and _has_cycle(identifiers, edges):
        errors.append("Cycle detected.")
    for node in nodes:
        template = node.get("unified_job_template") or {}
        if template.get("type") == "workflow_approval":
            if not template.get("name"):
                errors.append(f"{node['identifier']}: an approval node needs a name")
        elif template.get("type") == "job_template":
            if template.get("name") not in job_templates:
                errors.append(f"{node['identifier']}: Unable to Find unified_job_template: {template.get('name')}")
            else:
                errors += [f"{node['identifier']}: {e}" for e in node_prompt_errors(job_templates[template["name"]], node)]
        else:
            errors.append(f"{node['identifier']}: unified_job_template type {template.get('type')!r} is not modelled here")
    return errors


def run_workflow(workflow, run_node):
    """A workflow job, node by node as the workflow manager starts them (WorkflowDAG.bfs_nodes_to_run: the root nodes,
    then the children of each finished node along its status - success_nodes and always_nodes of a successful node,
    failure_nodes and always_nodes of a failed one), then has_workflow_failed: a failed node without a failure or
    always path fails the workflow. ``run_node(node)`` runs a job node or decides an approval node (approved:
    "successful"; denied or timed out: "failed") and returns that status. Returns ({identifier: status} of the nodes
    that ran, in the order they ran, and whether the workflow failed)."""
    nodes = {node["identifier"]: node for node in workflow["workflow_nodes"]}
    edges = _edges(workflow)
    status = {}

    def children(identifier, *relationships):
        return [c for p, r, c in edges if p == identifier and r in relationships]

    while True:
        ready, queue, seen = [], [i for i in nodes if not any(c == i for _p, _r, c in edges)], set()
        while queue:
            identifier = queue.pop(0)
            if identifier in seen:
                continue
            seen.add(identifier)
            if identifier in status:
                followed = ("success_nodes", "always_nodes") if status[identifier] == "successful" else ("failure_nodes", "always_nodes")
                queue.extend(children(identifier, *followed))
            else:
                ready.append(identifier)
        if not ready:
            break
        for identifier in ready:
            status[identifier] = run_node(nodes[identifier])
            assert status[identifier] in ("successful", "failed"), status
    failed = any(s == "failed" and not children(i, "failure_nodes", "always_nodes") for i, s in status.items())
    return status, failed


def strip_ansi(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
