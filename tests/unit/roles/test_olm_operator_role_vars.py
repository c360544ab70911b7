"""The olm_operator role's renamed variable: olm_operator_delete_crds_and_data (the module's name) is what the role
passes; olm_operator_remove_crds, its former name, still counts when set. Templated as Ansible does (a role default
is a Jinja expression over the play's variables)."""

from pathlib import Path

import pytest
import yaml
from ansible.template import Templar, trust_as_template

ROLE = Path(__file__).resolve().parents[3] / "roles" / "olm_operator"


@pytest.mark.parametrize(
    "given, expected",
    [({}, False), ({"olm_operator_remove_crds": True}, True), ({"olm_operator_delete_crds_and_data": True}, True)],
    ids=["neither", "former name", "new name"],
)
def test_delete_crds_and_data_reads_the_former_name_too(given, expected):
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    variables = dict(defaults, **given)
    templar = Templar(loader=None, variables=variables)
    # a role's defaults file is trusted template source (ansible-core 2.19 renders only trusted strings)
    value = variables["olm_operator_delete_crds_and_data"]
    assert (templar.template(trust_as_template(value)) if isinstance(value, str) else value) is expected
    specs = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert "olm_operator_delete_crds_and_data" in specs and "former name" in specs["olm_operator_remove_crds"]["description"][0]
    tasks = (ROLE / "tasks" / "main.yml").read_text()
    assert "olm_operator_delete_crds_and_data | bool" in tasks and "olm_operator_remove_crds" not in tasks
