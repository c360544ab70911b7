"""The catalog_* modules end to end: ansible-playbook (subprocess, connection local) on copies of the committed
community-operators-prod data (tests/data), and catalog_release against real git repositories created with ``git init``."""

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from lib.runners import ansible_env
from lib.testdata import data_path

ROOT = Path(__file__).resolve().parents[3]

PROD = data_path("community-operators-prod")
CATALOGS = PROD / "catalogs"
OPERATORS = PROD / "operators"
REG = "quay.io/community-operator-pipeline-prod"
GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def playbook_env(tmp_path):
    """lib.runners.ansible_env with git's identity and this collection's roles."""
    return dict(ansible_env(tmp_path), **GIT_ENV, ANSIBLE_ROLES_PATH=str(ROOT / "roles"))


def playbook(tmp_path, text, extra, check=False, diff=False, path=None):
    """Run a playbook; it must save its registered results to {{ out_dir }}/results.json. Returns (results, output)."""
    if path is None:
        path = tmp_path / "play.yml"
        path.write_text(text)
    extra = dict(extra, out_dir=str(tmp_path), ansible_python_interpreter=sys.executable)
    (tmp_path / "vars.json").write_text(json.dumps(extra))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "@" + str(tmp_path / "vars.json"), str(path)]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=playbook_env(tmp_path), timeout=600,
                          check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    results = tmp_path / "results.json"
    return (json.loads(results.read_text()) if results.exists() else None), output


SAVE = """
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ results | to_json }}"
        mode: "0600"
"""

RENDER = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: render (first)
      kubeforge.operators.catalog_render:
        template: "{{ item.template }}"
        dest: "{{ out_dir }}/catalogs"
        ocp_versions: ["v4.16", "v4.20"]
        bundle_lookup: "{{ item.lookup }}"
        pull: false
      loop: "{{ cases }}"
      register: first
    - name: render (second, idempotent)
      kubeforge.operators.catalog_render:
        template: "{{ item.template }}"
        dest: "{{ out_dir }}/catalogs"
        ocp_versions: ["v4.16", "v4.20"]
        bundle_lookup: "{{ item.lookup }}"
        pull: false
      loop: "{{ cases }}"
      register: second
    - name: render in check mode into a new directory
      kubeforge.operators.catalog_render:
        template: "{{ cases[0].template }}"
        dest: "{{ out_dir }}/check"
        ocp_versions: ["v4.20"]
        bundle_lookup: "{{ cases[0].lookup }}"
        pull: false
      check_mode: true
      register: checked
    - name: offline render with a missing image fails
      kubeforge.operators.catalog_render:
        template: "{{ cases[0].template }}"
        dest: "{{ out_dir }}/failed.yaml"
        bundle_lookup: []
        pull: false
      register: missing
      ignore_errors: true
    - name: validate the rendered catalogs
      kubeforge.operators.catalog_validate:
        path: "{{ out_dir }}/catalogs/{{ item }}"
      loop: ["v4.16", "v4.20"]
      register: validated
    - name: collect
      ansible.builtin.set_fact:
        results: {first: "{{ first }}", second: "{{ second }}", checked: "{{ checked }}", missing: "{{ missing }}",
                  validated: "{{ validated }}"}
""" + SAVE


def test_render_kube_green_and_kairos(tmp_path):
    cases = [{"template": str(OPERATORS / op / "catalog-templates" / tpl),
              "lookup": [str(CATALOGS / "v4.16" / op), str(CATALOGS / "v4.20" / op)]}
             for op, tpl in (("kube-green", "basic-template.yaml"), ("kairos-operator", "semver.yaml"))]
    res = playbook(tmp_path, RENDER, {"cases": cases})[0]
    assert all(r["changed"] for r in res["first"]["results"])
    assert not any(r["changed"] for r in res["second"]["results"])
    for op in ("kube-green", "kairos-operator"):
        for cat in ("v4.16", "v4.20"):
            got = tmp_path / "catalogs" / cat / op / "catalog.yaml"
            assert got.read_bytes() == (CATALOGS / cat / op / "catalog.yaml").read_bytes(), (op, cat)
    kg = res["first"]["results"][0]
    assert kg["packages"] == ["kube-green"] and len(kg["bundles"]) == 10
    assert [r["migrate_level"] for r in kg["renders"]] == ["none", "bundle-object-to-csv-metadata"]
    assert res["checked"]["changed"] is True and not (tmp_path / "check").exists()
    assert res["missing"]["failed"] is True and "pulling is disabled" in res["missing"]["msg"]
    assert not (tmp_path / "failed.yaml").exists()
    assert [r["valid"] for r in res["validated"]["results"]] == [True, True]
    assert [r["packages"] for r in res["validated"]["results"]] == [2, 2]


VALIDATE = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: validate every committed catalog directory
      kubeforge.operators.catalog_validate:
        path: "{{ item }}"
      loop: "{{ catalog_dirs }}"
      register: dirs
    - name: validate every committed package catalog file
      kubeforge.operators.catalog_validate:
        path: "{{ item }}"
      loop: "{{ catalog_files }}"
      register: files
    - name: a broken copy
      kubeforge.operators.catalog_validate:
        path: "{{ broken }}"
        fail_on_invalid: false
      register: broken_result
    - name: collect
      ansible.builtin.set_fact:
        results: {dirs: "{{ dirs }}", files: "{{ files }}", broken: "{{ broken_result }}"}
""" + SAVE


def test_validate_every_committed_catalog(tmp_path):
    dirs = sorted(str(p) for p in CATALOGS.iterdir())
    files = sorted(str(p) for p in CATALOGS.glob("*/*/catalog.yaml"))
    broken = tmp_path / "broken"
    shutil.copytree(CATALOGS / "v4.20" / "kube-green", broken / "kube-green")
    cat = broken / "kube-green" / "catalog.yaml"
    cat.write_text(cat.read_text().replace("replaces: kube-green.v0.7.0", "replaces: kube-green.v0.0.0-missing"))
    res = playbook(tmp_path, VALIDATE, {"catalog_dirs": dirs, "catalog_files": files, "broken": str(broken)})[0]
    assert len(res["dirs"]["results"]) == 3 and len(res["files"]["results"]) == 13
    for r in res["dirs"]["results"] + res["files"]["results"]:
        assert r["valid"] is True and r["errors"] == [] and r["changed"] is False, r["item"]
    total = sum(r["bundles"] for r in res["files"]["results"])
    assert total == sum(r["bundles"] for r in res["dirs"]["results"]) > 200
    assert res["broken"]["valid"] is False and res["broken"]["errors"]


GRAPH_TEMPLATE = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: graph
      kubeforge.operators.catalog_graph:
        path: "{{ catalogs }}/v4.20/kube-green"
        package: kube-green
        from_version: 0.6.0
      register: graph
    - name: which bundle does the next release replace?
      kubeforge.operators.catalog_template:
        path: "{{ template }}"
        latest_in_channel: alpha
      register: head
    - name: add the next release
      kubeforge.operators.catalog_template:
        path: "{{ template }}"
        add_bundle:
          image: quay.io/community-operator-pipeline-prod/kube-green:0.7.2
          name: kube-green.v0.7.2
          channels: [alpha]
          replaces: "{{ head.latest }}"
      register: added
    - name: add it again
      kubeforge.operators.catalog_template:
        path: "{{ template }}"
        add_bundle:
          image: quay.io/community-operator-pipeline-prod/kube-green:0.7.2
          name: kube-green.v0.7.2
          channels: [alpha]
          replaces: "{{ head.latest }}"
      register: again
    - name: convert the committed catalog back into a template
      kubeforge.operators.catalog_template:
        path: "{{ out_dir }}/converted.yaml"
        convert_from: "{{ catalogs }}/v4.20/kube-green/catalog.yaml"
      register: converted
    - name: collect
      ansible.builtin.set_fact:
        results: {graph: "{{ graph }}", head: "{{ head }}", added: "{{ added }}", again: "{{ again }}",
                  converted: "{{ converted }}"}
""" + SAVE


def test_graph_and_template(tmp_path):
    template = tmp_path / "basic-template.yaml"
    shutil.copy(OPERATORS / "kube-green" / "catalog-templates" / "basic-template.yaml", template)
    res, output = playbook(tmp_path, GRAPH_TEMPLATE, {"catalogs": str(CATALOGS), "template": str(template)},
                           diff=True)
    assert res["graph"]["upgrade_path"] == ["kube-green.v0.6.0", "kube-green.v0.7.0", "kube-green.v0.7.1"]
    assert res["graph"]["mermaid"].startswith("graph LR\n")
    assert res["head"]["latest"] == "kube-green.v0.7.1" and res["head"]["changed"] is False
    assert res["added"]["changed"] is True and res["again"]["changed"] is False
    assert "+  - name: kube-green.v0.7.2" in output  # --diff output of the template edit
    assert yaml.safe_load((tmp_path / "converted.yaml").read_text()) == yaml.safe_load(
        (OPERATORS / "kube-green" / "catalog-templates" / "basic-template.yaml").read_text())


# ----------------------------------------------------------------------------------------------- release


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo)] + list(args), check=True, capture_output=True, text=True,
                          env=dict(os.environ, **GIT_ENV)).stdout.strip()


def make_repo(tmp_path, op):
    """community-operators-prod-shaped repository with one operator (files copied from tests/data)."""
    root = tmp_path / "community-operators-prod"
    shutil.copytree(OPERATORS / op, root / "operators" / op)
    for cat in sorted(CATALOGS.iterdir()):
        if (cat / op).is_dir():
            shutil.copytree(cat / op, root / "catalogs" / cat.name / op)
    (root / "config.yaml").write_text("organization: community-operators\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "import %s" % op)
    return root


def make_bundle(tmp_path, op, from_name, new_version, replaces):
    """An unpacked bundle directory for a new release, built from a committed bundle's olm.bundle.object
    properties (the v4.16 catalog carries the full manifests) with the CSV renamed to the new version."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load

    cfg = load(str(CATALOGS / "v4.16" / op))
    blob = [b for b in cfg.bundles if b["name"] == from_name][0]
    bundle = tmp_path / "bundle"
    (bundle / "manifests").mkdir(parents=True)
    (bundle / "metadata").mkdir()
    (bundle / "tests" / "scorecard").mkdir(parents=True)
    csv_name = "%s.v%s" % (op, new_version)
    for prop in blob["properties"]:
        if prop["type"] != "olm.bundle.object":
            continue
        obj = json.loads(base64.b64decode(prop["value"]["data"]))
        if obj["kind"] == "ClusterServiceVersion":
            obj["metadata"]["name"] = csv_name
            obj["spec"]["version"] = new_version
            obj["spec"]["replaces"] = replaces
            if "skips" in obj["spec"]:
                del obj["spec"]["skips"]
            fn = "%s.clusterserviceversion.yaml" % op
        else:
            fn = "%s_%s.yaml" % (obj["metadata"]["name"], obj["kind"].lower())
        (bundle / "manifests" / fn).write_text(yaml.safe_dump(obj, sort_keys=False))
    channel = cfg.channels[0]["name"]
    (bundle / "metadata" / "annotations.yaml").write_text(yaml.safe_dump({"annotations": {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": op,
        "operators.operatorframework.io.bundle.channels.v1": channel}}))
    (bundle / "tests" / "scorecard" / "config.yaml").write_text("kind: Configuration\napiversion: scorecard.operatorframework.io/v1alpha3\n")
    return bundle, csv_name


RELEASE = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: release (check mode)
      kubeforge.operators.catalog_release: &release
        repo_path: "{{ repo }}"
        package: "{{ package }}"
        version: "{{ version }}"
        bundle_path: "{{ bundle }}"
        release_config: "{{ release_config }}"
        pull: false
        author_name: Release Bot
        author_email: bot@example.com
      check_mode: true
      register: checked
    - name: release
      kubeforge.operators.catalog_release: *release
      register: first
    - name: release again (idempotent)
      kubeforge.operators.catalog_release: *release
      register: second
    - name: collect
      ansible.builtin.set_fact:
        results: {checked: "{{ checked }}", first: "{{ first }}", second: "{{ second }}"}
""" + SAVE


def _check_release(repo, res, package, version, catalogs, template):
    head = git(repo, "rev-parse", "main")
    first, second, checked = res["first"], res["second"], res["checked"]
    assert checked["changed"] is True and checked["commit"] is None and checked["files"] == first["files"]
    assert first["changed"] is True and first["branch"] == "%s-%s" % (package, version)
    assert first["base"] == head and git(repo, "rev-parse", first["branch"]) == first["commit"]
    assert git(repo, "rev-parse", first["commit"] + "^") == head
    assert second["changed"] is False and second["commit"] == first["commit"] and second["files"] == []
    assert git(repo, "status", "--porcelain") == "" and git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert git(repo, "log", "-1", "--format=%s|%an|%ae", first["commit"]) == (
        "operator %s (%s)|Release Bot|bot@example.com" % (package, version))
    changed = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", first["commit"]).splitlines()
    assert changed == first["files"]
    assert first["catalogs"] == catalogs and first["templates"] == [template]
    assert all(v == {"valid": True, "errors": []} for v in first["validation"].values())
    expected = {"catalogs/%s/%s/catalog.yaml" % (c, package) for c in catalogs}
    expected |= {"operators/%s/catalog-templates/%s" % (package, template),
                 "operators/%s/%s/release-config.yaml" % (package, version),
                 "operators/%s/%s/metadata/annotations.yaml" % (package, version),
                 "operators/%s/%s/tests/scorecard/config.yaml" % (package, version)}
    assert expected <= set(changed)
    assert all(p in expected or p.startswith("operators/%s/%s/manifests/" % (package, version)) for p in changed)
    return first


def _load_from_branch(repo, ref, path):
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_bytes

    data = subprocess.run(["git", "-C", str(repo), "show", "%s:%s" % (ref, path)], check=True,
                          capture_output=True).stdout
    return load_bytes(data)


def test_release_kube_green_basic(tmp_path):
    repo = make_repo(tmp_path, "kube-green")
    bundle, csv_name = make_bundle(tmp_path, "kube-green", "kube-green.v0.7.1", "0.7.2", "kube-green.v0.7.1")
    rc = {"catalog_templates": [{"template_name": "basic-template.yaml", "channels": ["alpha"],
                                 "replaces": "kube-green.v0.7.1"}]}
    res = playbook(tmp_path, RELEASE, {"repo": str(repo), "package": "kube-green", "version": "0.7.2",
                                       "bundle": str(bundle), "release_config": rc})[0]
    catalogs = ["v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21"]
    first = _check_release(repo, res, "kube-green", "0.7.2", catalogs, "basic-template.yaml")
    assert first["csv_name"] == csv_name and first["bundle_image"] == REG + "/kube-green:0.7.2"
    for cat in ("v4.16", "v4.20"):
        new = _load_from_branch(repo, first["branch"], "catalogs/%s/kube-green/catalog.yaml" % cat)
        old = _load_from_branch(repo, "main", "catalogs/%s/kube-green/catalog.yaml" % cat)
        assert {b["name"] for b in new.bundles} == {b["name"] for b in old.bundles} | {csv_name}
        old_blobs = {b["name"]: b for b in old.bundles}
        assert all(b == old_blobs[b["name"]] for b in new.bundles if b["name"] != csv_name)
        entries = new.channels[0]["entries"]
        assert {"name": csv_name, "replaces": "kube-green.v0.7.1"} in entries
    assert "olm.bundle.object" not in git(repo, "show", "%s:catalogs/v4.17/kube-green/catalog.yaml" % first["branch"])
    v415 = git(repo, "show", "%s:catalogs/v4.15/kube-green/catalog.yaml" % first["branch"])
    assert v415 == git(repo, "show", "%s:catalogs/v4.16/kube-green/catalog.yaml" % first["branch"])
    # the committed release-config.yaml round-trips
    assert yaml.safe_load(git(repo, "show", "%s:operators/kube-green/0.7.2/release-config.yaml" % first["branch"])) == rc


def test_release_kairos_semver(tmp_path):
    repo = make_repo(tmp_path, "kairos-operator")
    bundle, csv_name = make_bundle(tmp_path, "kairos-operator", "kairos-operator.v2.2.0", "2.3.0",
                                   "kairos-operator.v2.2.0")
    rc = yaml.safe_load((OPERATORS / "kairos-operator" / "2.2.0" / "release-config.yaml").read_text())
    res = playbook(tmp_path, RELEASE, {"repo": str(repo), "package": "kairos-operator", "version": "2.3.0",
                                       "bundle": str(bundle), "release_config": rc})[0]
    catalogs = ["v4.%d" % n for n in range(12, 23)]
    first = _check_release(repo, res, "kairos-operator", "2.3.0", catalogs, "semver.yaml")
    tpl = git(repo, "show", "%s:operators/kairos-operator/catalog-templates/semver.yaml" % first["branch"])
    assert tpl.startswith("---\nSchema: olm.semver\n")  # key order of the committed template kept
    assert tpl.endswith("  - Image: %s/kairos-operator:2.2.0\n  - Image: %s/kairos-operator:2.3.0" % (REG, REG))
    new = _load_from_branch(repo, first["branch"], "catalogs/v4.20/kairos-operator/catalog.yaml")
    assert csv_name in {b["name"] for b in new.bundles}
    heads = [e["name"] for c in new.channels for e in c["entries"]]
    assert csv_name in heads and new.packages[0]["defaultChannel"] == "candidate-v2"


# ----------------------------------------------------------------------------------------------- role + playbook

WRAPPER = """
- name: Publish
  ansible.builtin.import_playbook: {playbook}

- name: Save the role result
  hosts: localhost
  gather_facts: false
  tasks:
    - name: save results
      ansible.builtin.copy:
        dest: "{{{{ out_dir }}}}/results.json"
        content: "{{{{ catalog_publish_result | to_json }}}}"
        mode: "0600"
      changed_when: false
"""


def _recap_changed(output):
    line = [ln for ln in output.splitlines() if ln.startswith("localhost")][-1]
    return int(line.split("changed=")[1].split()[0])


def test_publish_playbook_and_role(tmp_path):
    repo = make_repo(tmp_path, "kube-green")
    bundle, csv_name = make_bundle(tmp_path, "kube-green", "kube-green.v0.7.1", "0.7.2", "kube-green.v0.7.1")
    wrapper = tmp_path / "wrapper.yml"
    wrapper.write_text(WRAPPER.format(playbook=ROOT / "playbooks" / "publish_catalog.yml"))
    extra = {
        "catalog_publish_template": str(OPERATORS / "kube-green" / "catalog-templates" / "basic-template.yaml"),
        "catalog_publish_dest": str(tmp_path / "catalogs"),
        "catalog_publish_ocp_versions": ["v4.16", "v4.20"],
        "catalog_publish_bundle_lookup": [str(CATALOGS / "v4.16" / "kube-green"), str(CATALOGS / "v4.20" / "kube-green")],
        "catalog_publish_pull": False,
        "catalog_publish_community_checks": True,
        "catalog_publish_image_build": True,
        "catalog_publish_image_push": False,
        "catalog_publish_image_repository": "registry.example/catalogs/kube-green",
        "catalog_publish_oci_layout_dir": str(tmp_path / "layouts"),
        "catalog_publish_release": True,
        "catalog_publish_release_repo_path": str(repo),
        "catalog_publish_release_package": "kube-green",
        "catalog_publish_release_version": "0.7.2",
        "catalog_publish_release_bundle_path": str(bundle),
        # snake_cased the way ansible-operator passes custom resource fields
        "catalog_publish_release_config": {"catalog_templates": [{
            "template_name": "basic-template.yaml", "channels": ["alpha"], "replaces": "kube-green.v0.7.1",
            "skip_range": ">=0.7.0 <0.7.2"}]},
    }
    res, output = playbook(tmp_path, None, extra, path=wrapper)
    assert _recap_changed(output) == 3  # render, image layouts, release commit
    for cat in ("v4.16", "v4.20"):
        out = tmp_path / "catalogs" / cat / "kube-green" / "catalog.yaml"
        assert out.read_bytes() == (CATALOGS / cat / "kube-green" / "catalog.yaml").read_bytes()
        assert (tmp_path / "layouts" / cat / "index.json").is_file()
    assert res["valid"] is True and res["packages"] == ["kube-green"] and len(res["bundles"]) == 10
    assert [i.split("@")[0] for i in res["images"]] == ["registry.example/catalogs/kube-green:v4.16",
                                                        "registry.example/catalogs/kube-green:v4.20"]
    assert res["release_branch"] == "kube-green-0.7.2" and git(repo, "rev-parse", "kube-green-0.7.2") == res["release_commit"]
    rc = yaml.safe_load(git(repo, "show", "kube-green-0.7.2:operators/kube-green/0.7.2/release-config.yaml"))
    assert rc["catalog_templates"][0]["skipRange"] == ">=0.7.0 <0.7.2"
    # second run: nothing changes anywhere
    res2, output2 = playbook(tmp_path, None, extra, path=wrapper)
    assert _recap_changed(output2) == 0 and res2["release_commit"] == res["release_commit"]
    assert res2["images"] == res["images"]
    # check mode with another version set: reports the change, writes nothing
    output3 = playbook(tmp_path, None, dict(extra, catalog_publish_ocp_versions=["v4.18"],
                                            catalog_publish_image_build=False, catalog_publish_release=False),
                       path=wrapper, check=True)[1]
    assert _recap_changed(output3) == 1 and not (tmp_path / "catalogs" / "v4.18").exists()


def test_role_argument_validation(tmp_path):
    wrapper = tmp_path / "wrapper.yml"
    wrapper.write_text(WRAPPER.format(playbook=ROOT / "playbooks" / "publish_catalog.yml"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable, str(wrapper)],
                          capture_output=True, text=True, env=playbook_env(tmp_path), timeout=300,
                          check=False)
    assert proc.returncode != 0
    assert "catalog_publish_template" in proc.stdout and "missing required arguments" in proc.stdout
