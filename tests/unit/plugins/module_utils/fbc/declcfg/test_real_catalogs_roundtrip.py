# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real community-operators-prod catalogs: load, validate, JSON stability and byte-exact YAML round trip."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from lib.fbc import COMMUNITY_CATALOGS, require_data

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.mermaid import render_mermaid
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import write as W
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_catalog

CATALOG_FILES = sorted(require_data(COMMUNITY_CATALOGS).glob("*/*/catalog.yaml"))
CATALOG_DIRS = sorted(p for p in COMMUNITY_CATALOGS.iterdir() if p.is_dir())
IDS = ["%s/%s" % (p.parent.parent.name, p.parent.name) for p in CATALOG_FILES]


def test_all_committed_catalogs_are_present():
    assert len(CATALOG_FILES) == 13
    assert [d.name for d in CATALOG_DIRS] == ["v4.12", "v4.16", "v4.20"]


@pytest.mark.parametrize("path", CATALOG_FILES, ids=IDS)
def test_yaml_write_reproduces_committed_file(path):
    original = path.read_text(encoding="utf-8")
    assert W.dumps_yaml(L.load_file(path)) == original


@pytest.mark.parametrize("path", CATALOG_FILES, ids=IDS)
def test_json_write_is_stable_and_equivalent(path):
    cfg = L.load_file(path)
    text = W.dumps_json(cfg)
    again = L.load_bytes(text)
    assert W.dumps_json(again) == text
    assert W.dumps_yaml(again) == W.dumps_yaml(cfg)


@pytest.mark.parametrize("directory", CATALOG_DIRS, ids=[d.name for d in CATALOG_DIRS])
def test_catalog_directories_validate(directory):
    result = validate_catalog(directory)
    assert result.valid, result.errors
    assert result.errors == [] and result.opm_error is None
    assert result.packages == len(list(directory.iterdir()))
    convert_to_model(L.load_fs(directory))  # strict (opm) mode agrees


def test_catalog_counts():
    result = validate_catalog(COMMUNITY_CATALOGS / "v4.20")
    assert (result.packages, result.bundles) == (9, 223)


@pytest.mark.parametrize("path", CATALOG_FILES, ids=IDS)
def test_mermaid_renders(path):
    out = render_mermaid(L.load_file(path))
    assert out.startswith("graph LR\n")
