"""The olm_operator role's renamed variable: olm_operator_delete_crds_and_data (the module's name) is what the role
passes; olm_operator_remove_crds, its former name, still counts when set. The role default is a Jinja expression over
the play's variables, rendered here with Jinja itself (unit tests do not import Ansible's controller code)."""

from pathlib import Path

import jinja2
import pytest
import yaml

ROLE = Path(__file__).resolve().parents[3] / "roles" / "olm_operator"


@pytest.mark.parametrize(
    "given, expected",
    [({}, False), ({"olm_operator_remove_crds": True}, True), ({"olm_operator_delete_crds_and_data": True}, True)],
    ids=["neither", "former name", "new name"],
)
def test_delete_crds_and_data_reads_the_former_name_too(given, expected):
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    variables = dict(defaults, **given)
    value = variables["olm_operator_delete_crds_and_data"]
    rendered = jinja2.Environment(autoescape=False).from_string(value).render(**variables) if isinstance(value, str) else value  # noqa: S701 - not HTML
    assert str(rendered) == str(expected)
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert "olm_operator_delete_crds_and_data" in specs and "former name" in specs["olm_operator_remove_crds"]["description"][0]
    tasks = (ROLE / "tasks" / "main.yml").read_text()
    assert "olm_operator_delete_crds_and_data | bool" in tasks and "olm_operator_remove_crds" not in tasks
