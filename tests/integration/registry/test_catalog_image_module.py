"""The catalog_image module end to end: ansible-playbook (subprocess, connection local) against the test registry."""

import json
import os

from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_image

FBC_DIR = str(data_path("community-operators-prod", "catalogs", "v4.20", "kube-green"))

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    common: &common
      path: "{{ fbc_dir }}"
      image: "{{ registry }}/catalogs/module:v1"
      registry_username: "{{ username }}"
      registry_password: "{{ password }}"
      ca_file: "{{ ca_file }}"
      labels:
        org.example.by: ansible
  tasks:
    - name: first push
      kubeforge.operators.catalog_image:
        <<: *common
        push: true
        oci_layout: "{{ out_dir }}/layout"
      register: first
    - name: second push (idempotent)
      kubeforge.operators.catalog_image:
        <<: *common
        push: true
        oci_layout: "{{ out_dir }}/layout"
      register: second
    - name: check mode with a different label
      kubeforge.operators.catalog_image:
        <<: *common
        labels: {org.example.by: check-mode}
        push: true
      check_mode: true
      register: checked
    - name: wrong password
      kubeforge.operators.catalog_image:
        <<: *common
        registry_password: "{{ bad_password }}"
        push: true
      register: wrong
      ignore_errors: true
    - name: no CA
      kubeforge.operators.catalog_image:
        <<: *common
        ca_file: "{{ omit }}"
        push: true
      register: noca
      ignore_errors: true
    - name: on top of an opm base image from the same registry
      kubeforge.operators.catalog_image:
        <<: *common
        image: "{{ registry }}/catalogs/module-opm:v1"
        base_image: "{{ opm_base }}"
        push: true
      register: onbase
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ {'first': first, 'second': second, 'checked': checked, 'wrong': wrong, 'noca': noca,
                     'onbase': onbase} | to_json }}"
        mode: "0600"
"""


def test_module_via_ansible_playbook(registry, opm_base, tmp_path, run_playbook):
    bad = "Wrong-Pa55word-%s" % os.urandom(3).hex()
    returncode, output = run_playbook(PLAYBOOK, {
        "fbc_dir": FBC_DIR, "registry": registry.host, "username": registry.username, "password": registry.password,
        "ca_file": registry.ca_file, "out_dir": str(tmp_path), "bad_password": bad, "opm_base": opm_base[0]})
    assert returncode == 0, output
    assert registry.password not in output and bad not in output
    res = json.loads((tmp_path / "results.json").read_text())

    first, second, checked, wrong, noca, onbase = (
        res[k] for k in ("first", "second", "checked", "wrong", "noca", "onbase"))
    assert first["changed"] is True and first["pushed"] is True and first["blobs"]["uploaded"] == 2
    assert first["image"] == "%s/catalogs/module:v1@%s" % (registry.host, first["digest"])
    assert first["labels"] == {"operators.operatorframework.io.index.configs.v1": "/configs",
                               "org.example.by": "ansible"}
    assert first["manifest"]["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    assert second["changed"] is False and second["digest"] == first["digest"]
    assert checked["changed"] is True and checked["digest"] != first["digest"]
    assert wrong["failed"] is True and "401" in wrong["msg"] and registry.host in wrong["msg"]
    assert bad not in json.dumps(wrong)
    assert noca["failed"] is True and "certificate verification failed" in noca["msg"]

    assert onbase["changed"] is True and onbase["blobs"]["mounted"] == 1
    assert onbase["config"]["config"]["Entrypoint"] == ["/bin/opm"]
    assert onbase["config"]["config"]["Cmd"] == ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]
    assert 'ENTRYPOINT ["/bin/opm"]' in onbase["dockerfile"] and "FROM scratch" in first["dockerfile"]

    # registry still holds the first image (check mode wrote nothing); layout on disk matches it
    client = registry.client()
    assert client.head_manifest("catalogs/module", "v1")["digest"] == first["digest"]
    index = json.loads((tmp_path / "layout" / "index.json").read_text())
    assert index["manifests"][0]["digest"] == first["digest"]
    pulled = pull_image("%s/catalogs/module:v1" % registry.host, str(tmp_path / "pulled"), client=client)
    assert sorted(os.listdir(tmp_path / "pulled" / "configs")) == sorted(os.listdir(FBC_DIR))
    assert pulled.labels["org.example.by"] == "ansible"
