"""catalog_diff through ansible-playbook (subprocess, connection local) on the committed community-operators-prod
catalogs (tests/data): v4.16 against v4.20, its result checked against name sets read from the catalog files with
PyYAML, independently of the collection's FBC engine."""

import json
import os
import subprocess
import sys

import yaml
from lib.runners import ansible_env
from lib.testdata import data_path

CATALOGS = data_path("community-operators-prod", "catalogs")

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: what changed from v4.16 to v4.20
      kubeforge.operators.catalog_diff:
        old: "{{ catalogs }}/v4.16"
        new: "{{ catalogs }}/v4.20"
      register: forward
    - name: the same in check mode, the other way round
      kubeforge.operators.catalog_diff:
        old: "{{ catalogs }}/v4.20"
        new: "{{ catalogs }}/v4.16"
      check_mode: true
      register: backward
    - name: show the summary
      ansible.builtin.debug:
        msg: "{{ forward.summary }}"
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ {'forward': forward, 'backward': backward} | to_json }}"
        mode: "0600"
"""


def _facts(version):
    """Packages with their default channel, channel entries and bundle names of a catalog directory, read with PyYAML."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = {"packages": {}, "entries": set(), "bundles": set()}
    for path in sorted((CATALOGS / version).glob("*/catalog.yaml")):
        with open(path) as f:
            for doc in yaml.load_all(f, Loader=loader):
                if doc["schema"] == "olm.package":
                    out["packages"][doc["name"]] = doc["defaultChannel"]
                elif doc["schema"] == "olm.channel":
                    out["entries"].update((doc["package"], doc["name"], e["name"]) for e in doc["entries"])
                elif doc["schema"] == "olm.bundle":
                    out["bundles"].add((doc["package"], doc["name"]))
    return out


def test_v416_to_v420(tmp_path):
    play = tmp_path / "play.yml"
    play.write_text(PLAYBOOK)
    (tmp_path / "vars.json").write_text(json.dumps({"catalogs": str(CATALOGS), "out_dir": str(tmp_path), "ansible_python_interpreter": sys.executable}))
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        "@" + str(tmp_path / "vars.json"),
        str(play),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ansible_env(tmp_path), timeout=600, check=False)  # noqa: S603
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    res = json.loads((tmp_path / "results.json").read_text())
    forward, backward = res["forward"], res["backward"]
    old, new = _facts("v4.16"), _facts("v4.20")

    assert forward["changed"] is False and backward["changed"] is False and forward["differs"] is True
    assert forward["packages"] == {"added": sorted(set(new["packages"]) - set(old["packages"])), "removed": []}
    assert sorted((b["package"], b["bundle"]) for b in forward["bundles"]["added"]) == sorted(new["bundles"] - old["bundles"])
    assert sorted((b["package"], b["bundle"]) for b in forward["bundles"]["removed"]) == sorted(old["bundles"] - new["bundles"])
    both = set(old["packages"]) & set(new["packages"])
    assert [(d["package"], d["old"], d["new"]) for d in forward["default_channels"]] == sorted(
        (p, old["packages"][p], new["packages"][p]) for p in both if old["packages"][p] != new["packages"][p]
    )
    old_channels = {e[:2] for e in old["entries"]}
    new_channels = {e[:2] for e in new["entries"]}
    shared = old_channels & new_channels
    assert sorted((c["package"], c["channel"], c["bundle"]) for c in forward["channel_bundles"]["added"]) == sorted(
        e for e in new["entries"] - old["entries"] if e[:2] in shared
    )
    assert forward["totals"]["new"]["bundles"] == len(new["bundles"]) and forward["totals"]["old"]["packages"] == len(old["packages"])
    # the other way round, additions are removals
    assert backward["packages"] == {"added": [], "removed": forward["packages"]["added"]}
    assert backward["bundles"]["removed"] == forward["bundles"]["added"]
    # the summary a person reads is in the play's output
    assert forward["summary"][1].startswith("packages: %d added, 0 removed (+ " % len(forward["packages"]["added"]))
    assert forward["summary"][1] in output
