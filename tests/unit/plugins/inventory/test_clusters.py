"""The kubeforge.operators.clusters inventory plugin (plugins/inventory/clusters.py): one host per kubeconfig context.

The plugin runs where Ansible runs it, not in the pytest process: ``build`` sends an inventory source to
inventory_worker.py (ansible-core's InventoryManager in a process of its own, one per test module; see there why) and
gets hosts, variables, groups, warnings and the plugin's error back; a few tests run ``ansible-inventory`` and
``ansible-playbook`` themselves. Every kubeconfig is written into tmp_path by the test that reads it.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lib.runners import ansible_env

ROOT = Path(__file__).resolve().parents[4]
PLUGIN = ROOT / "plugins" / "inventory" / "clusters.py"
FLEET_GUIDE = ROOT / "docs" / "fleet.md"
WORKER = Path(__file__).with_name("inventory_worker.py")
LABELS = "kubeforge.io/cluster"
INTERPRETER = "{{ ansible_playbook_python }}"


# ---------------------------------------------------------------------------------------------------------------------
# kubeconfigs and inventory sources


def ctx(name, cluster="prod", namespace=None, labels=None, user="admin", body=None):
    """A contexts[] entry; ``labels`` go into the kubeforge.io/cluster extension; ``body`` replaces the context."""
    context = {"cluster": cluster, "user": user}
    if namespace is not None:
        context["namespace"] = namespace
    if labels is not None:
        context["extensions"] = [{"name": "example.com/other", "extension": {"labels": {"ignored": "yes"}}}, {"name": LABELS, "extension": {"labels": labels}}]
    return {"name": name, "context": context if body is None else body}


def cluster(name="prod", server="https://api.prod.example.com:6443", labels=None, **more):
    entry = {"server": server, "certificate-authority-data": "Q0EgZGF0YQ==", **more}
    if labels is not None:
        entry["extensions"] = [{"name": LABELS, "extension": {"labels": labels}}]
    return {"name": name, "cluster": entry}


def kubeconfig(*contexts, clusters=None):
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster()] if clusters is None else clusters,
        "contexts": list(contexts),
        "users": [{"name": "admin", "user": {"token": "not-a-real-token"}}],
        "current-context": contexts[0]["name"] if contexts else "",
    }


def write(path, content):
    """Write a kubeconfig (a dict, as YAML), text or bytes to ``path``; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
    return path


def source(directory, name="fleet.clusters.yml", **options):
    """An inventory source of the plugin with ``options``."""
    return write(directory / name, {"plugin": "kubeforge.operators.clusters", **options})


def ok(result):
    assert result["error"] is None, result["error"]
    return result


def hosts(result):
    return list(ok(result)["hosts"])


def members(result, group):
    return result["groups"][group]["hosts"] if group in result["groups"] else []


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """HOME of the Ansible processes of this module (``~`` in kubeconfigs paths)."""
    return tmp_path_factory.mktemp("home")


def run_env(tmp_path, home):
    env = ansible_env(tmp_path)
    env["HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def build(tmp_path_factory, home):
    """``build(source, cache=True) -> result`` through inventory_worker.py (see its docstring for the result)."""
    workdir = tmp_path_factory.mktemp("worker")
    env = run_env(workdir, home)
    env["ANSIBLE_INVENTORY_ENABLED"] = "auto"
    with subprocess.Popen(  # noqa: S603
        [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=str(workdir)
    ) as worker:

        def run(path, cache=True):
            worker.stdin.write(json.dumps({"source": str(path), "cache": cache}) + "\n")
            worker.stdin.flush()
            line = worker.stdout.readline()
            assert line, f"the inventory worker exited with {worker.wait()}"
            return json.loads(line)

        yield run
        worker.stdin.close()
        worker.wait(timeout=60)


def ansible(tmp_path, home, *args, tool="ansible-inventory", check=True):
    """Run an Ansible command line tool of the venv in ``tmp_path``; return the CompletedProcess."""
    command = [str(Path(sys.executable).with_name(tool)), *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=run_env(tmp_path, home), cwd=str(tmp_path), timeout=300, check=False)  # noqa: S603
    if check:
        assert proc.returncode == 0, f"{command} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


# ---------------------------------------------------------------------------------------------------------------------
# host variables


def test_host_variables_are_exactly_these(build, tmp_path):
    path = write(
        tmp_path / "kc" / "eu.yaml",
        kubeconfig(
            ctx("admin@prod", namespace="operators", labels={"wave": "canary"}),
            clusters=[cluster(server="https://admin:pw@api.prod.example.com:6443", labels={"region": "eu", "wave": "main"})],
        ),
    )
    result = ok(build(source(tmp_path, kubeconfigs=["kc/eu.yaml"])))
    assert result["hosts"] == {
        "admin@prod": {
            "kubeconfig": str(path),
            "context": "admin@prod",
            "cluster_name": "prod",
            "cluster_server": "https://api.prod.example.com:6443",
            "cluster_namespace": "operators",
            "cluster_labels": {"region": "eu", "wave": "canary"},
            "ansible_connection": "local",
            "ansible_python_interpreter": INTERPRETER,
        }
    }
    # what came from the kubeconfig is data; the interpreter (and the connection) come from the inventory source
    assert result["trusted"] == {"admin@prod": ["ansible_connection", "ansible_python_interpreter"]}
    assert result["groups"]["clusters"] == {"hosts": ["admin@prod"], "children": []}
    assert result["warnings"] == []


def test_a_context_without_namespace_has_no_cluster_namespace(build, tmp_path):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod"), ctx("empty", namespace="")))
    result = ok(build(source(tmp_path, kubeconfigs=["kc.yaml"])))
    assert [("cluster_namespace" in result["hosts"][h]) for h in ("prod", "empty")] == [False, False]
    assert result["hosts"]["prod"]["cluster_labels"] == {}


@pytest.mark.parametrize(
    "server, shown",
    [
        ("https://api.example.com:6443", "https://api.example.com:6443"),
        ("https://admin:s3cret@api.example.com:6443/k8s", "https://api.example.com:6443/k8s"),
        ("https://user@api.example.com", "https://api.example.com"),
        ("https://u:p@ss@api.example.com:443", "https://api.example.com:443"),
        ("https://[fd00::1]:6443", "https://[fd00::1]:6443"),
        ("https://api.example.com/prefix@v1?x=1", "https://api.example.com/prefix@v1?x=1"),
        ("user:pw@api.example.com:6443", "api.example.com:6443"),
    ],
)
def test_cluster_server_never_holds_user_information(build, tmp_path, server, shown):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod"), clusters=[cluster(server=server)]))
    assert ok(build(source(tmp_path, kubeconfigs=["kc.yaml"])))["hosts"]["prod"]["cluster_server"] == shown


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, {"ansible_connection": "local", "ansible_python_interpreter": INTERPRETER}),
        (
            {"connection": "ansible.builtin.local", "python_interpreter": "/usr/bin/python3"},
            {"ansible_connection": "ansible.builtin.local", "ansible_python_interpreter": "/usr/bin/python3"},
        ),
        ({"python_interpreter": ""}, {"ansible_connection": "local"}),
        ({"connection": "", "python_interpreter": ""}, {}),
    ],
)
def test_connection_and_interpreter(build, tmp_path, options, expected):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod")))
    found = ok(build(source(tmp_path, kubeconfigs=["kc.yaml"], **options)))["hosts"]["prod"]
    assert {k: v for k, v in found.items() if k.startswith("ansible_")} == expected


# ---------------------------------------------------------------------------------------------------------------------
# kubeconfig files and directories


@pytest.mark.parametrize(
    "files, kubeconfigs, expected",
    [
        # a directory: its regular files in name order; hidden files and subdirectories are left out
        (
            {"kc/b.yaml": ["b1"], "kc/a.yaml": ["a1", "a2"], "kc/.hidden.yaml": ["h1"], "kc/sub/c.yaml": ["c1"], "kc/config": ["d1"]},
            ["kc"],
            ["a1", "a2", "b1", "d1"],
        ),
        # a file of it
        ({"kc/a.yaml": ["a1", "a2"], "kc/b.yaml": ["b1"]}, ["kc/b.yaml"], ["b1"]),
        # files and directories in the order given
        ({"kc/a.yaml": ["a1"], "more/z.yaml": ["z1"]}, ["more/z.yaml", "kc"], ["z1", "a1"]),
        # a file reached twice (named, and in a named directory) is read once, at its first place
        ({"kc/a.yaml": ["a1"], "kc/b.yaml": ["b1"]}, ["kc/b.yaml", "kc"], ["b1", "a1"]),
        # relative to the inventory source's directory (the source is in inventory/)
        ({"kc/a.yaml": ["a1"]}, ["../kc/a.yaml"], ["a1"]),
        # JSON, as kubectl config view -o json writes it, and a one-line JSON document YAML also reads
        ({"kc/a.json": ["j1"]}, ["kc/a.json"], ["j1"]),
    ],
)
def test_kubeconfig_files_and_directories(build, tmp_path, files, kubeconfigs, expected):
    for name, contexts in files.items():
        data = kubeconfig(*(ctx(c) for c in contexts))
        write(tmp_path / name, json.dumps(data, indent="\t") if name.endswith(".json") else data)
    directory = tmp_path / "inventory" if any(k.startswith("..") for k in kubeconfigs) else tmp_path
    assert hosts(build(source(directory, kubeconfigs=kubeconfigs))) == expected


def test_absolute_and_home_paths(build, tmp_path, home):
    absolute = write(tmp_path / "abs" / "a.yaml", kubeconfig(ctx("a1")))
    in_home = write(home / ".kube" / "fleet-test.yaml", kubeconfig(ctx("h1")))
    result = ok(build(source(tmp_path, kubeconfigs=[str(absolute), "~/.kube/fleet-test.yaml"])))
    assert list(result["hosts"]) == ["a1", "h1"]
    assert result["hosts"]["h1"]["kubeconfig"] == str(in_home)


NOT_KUBECONFIGS = [
    ("notes.yaml", "just: [unclosed\n", "is not valid YAML (line 2, column 1: expected ',' or ']', but got '<stream end>')"),
    ("list.yaml", "- a\n- b\n", "is a list, not a mapping with kind: Config and contexts"),
    ("deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\n", "has neither kind: Config nor contexts"),
    ("empty.yaml", "", "is empty"),
    ("comment.yaml", "# nothing\n", "is empty"),
    ("scalar.txt", "hello\n", "is a string, not a mapping with kind: Config and contexts"),
    ("binary.bin", b"\xff\xfe\x00\x01", "is not UTF-8 text"),
    ("broken.json", '{"kind": "Config",\n\t"contexts": [}\n', "is not valid YAML or JSON (line 2, column 15: Expecting value)"),
]


@pytest.mark.parametrize("name, content, reason", NOT_KUBECONFIGS, ids=[n for n, _c, _r in NOT_KUBECONFIGS])
def test_a_directory_skips_what_is_not_a_kubeconfig_with_a_warning(build, tmp_path, name, content, reason):
    write(tmp_path / "kc" / "good.yaml", kubeconfig(ctx("prod")))
    bad = write(tmp_path / "kc" / name, content)
    result = ok(build(source(tmp_path, kubeconfigs=["kc"])))
    assert list(result["hosts"]) == ["prod"]
    assert result["warnings"] == [f"kubeconfigs: skipping {bad}, which {reason}"]


@pytest.mark.parametrize("name, content, reason", NOT_KUBECONFIGS, ids=[n for n, _c, _r in NOT_KUBECONFIGS])
def test_a_named_file_that_is_not_a_kubeconfig_is_an_error(build, tmp_path, name, content, reason):
    bad = write(tmp_path / "kc" / name, content)
    result = build(source(tmp_path, kubeconfigs=[f"kc/{name}"]))
    assert result["error"] == f"AnsibleParserError: kubeconfig {bad} {reason}"
    assert result["hosts"] == {}


def test_a_kubeconfig_with_contexts_and_no_kind_is_one(build, tmp_path):
    data = kubeconfig(ctx("prod"))
    del data["kind"], data["apiVersion"]
    write(tmp_path / "kc" / "a.yaml", data)
    assert hosts(build(source(tmp_path, kubeconfigs=["kc"]))) == ["prod"]


@pytest.mark.parametrize(
    "kubeconfigs, error",
    [
        (["missing.yaml"], "kubeconfigs: {tmp}/missing.yaml does not exist"),
        (["kc", "missing-dir"], "kubeconfigs: {tmp}/missing-dir does not exist"),
        ([], "kubeconfigs is empty: name at least one kubeconfig file or directory"),
    ],
)
def test_missing_paths_are_errors(build, tmp_path, kubeconfigs, error):
    write(tmp_path / "kc" / "a.yaml", kubeconfig(ctx("prod")))
    assert build(source(tmp_path, kubeconfigs=kubeconfigs))["error"] == "AnsibleParserError: " + error.format(tmp=tmp_path)


def test_a_directory_without_kubeconfigs_warns(build, tmp_path):
    write(tmp_path / "kc" / "README.md", "# not a kubeconfig\n\nkind: notes\n")
    result = ok(build(source(tmp_path, kubeconfigs=["kc"])))
    assert result["hosts"] == {}
    assert result["warnings"][1:] == [
        f"kubeconfigs: the directory {tmp_path}/kc holds no kubeconfig file",
        "no context of the kubeconfigs was found: the inventory has no cluster",
    ]


@pytest.mark.parametrize(
    "contexts, error",
    [
        ({"contexts": {"prod": {}}}, "kubeconfig {path}: contexts is a mapping, not a list"),
        ({"contexts": [{"context": {"cluster": "prod"}}]}, "kubeconfig {path}: contexts[0] has no name (a non-empty string)"),
        ({"contexts": [ctx("prod")], "clusters": "prod"}, "kubeconfig {path}: clusters is a string, not a list"),
    ],
)
def test_a_broken_kubeconfig_is_an_error_also_in_a_directory(build, tmp_path, contexts, error):
    path = write(tmp_path / "kc" / "broken.yaml", {"kind": "Config", "clusters": [cluster()], **contexts})
    assert build(source(tmp_path, kubeconfigs=["kc"]))["error"] == "AnsibleParserError: " + error.format(path=path)


@pytest.mark.parametrize(
    "entry, clusters, problem",
    [
        (ctx("c1", cluster="ghost"), [cluster()], "the cluster 'ghost' it names is not defined in the file"),
        (ctx("c1", body={"user": "admin"}), [cluster()], "it names no cluster"),
        (ctx("c1", body="prod"), [cluster()], "it has no context mapping"),
        (ctx("c1"), [{"name": "prod", "cluster": {"insecure-skip-tls-verify": True}}], "its cluster 'prod' has no server"),
        (ctx("c1", namespace=5), [cluster()], "its namespace is a number, not a string"),
    ],
)
def test_a_broken_context_is_an_error_when_selected(build, tmp_path, entry, clusters, problem):
    path = write(tmp_path / "kc.yaml", kubeconfig(ctx("fine", cluster="fine"), entry, clusters=[cluster("fine"), *clusters]))
    result = build(source(tmp_path, kubeconfigs=["kc.yaml"]))
    assert result["error"] == f"AnsibleParserError: context 'c1' of the kubeconfig {path}: {problem}"
    # and no concern when left out
    assert hosts(build(source(tmp_path, kubeconfigs=["kc.yaml"], exclude_contexts=["c1"]))) == ["fine"]


# ---------------------------------------------------------------------------------------------------------------------
# selecting contexts

FLEET = ["prod-eu", "prod-us", "prod-admin", "staging-eu", "dev"]


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, FLEET),
        ({"contexts": ["*"]}, FLEET),
        ({"contexts": ["prod-*"]}, ["prod-eu", "prod-us", "prod-admin"]),
        ({"contexts": ["prod-*", "dev"], "exclude_contexts": ["*-admin"]}, ["prod-eu", "prod-us", "dev"]),
        ({"contexts": ["prod-[eu]?"]}, ["prod-eu", "prod-us"]),
        ({"contexts": ["?ev", "staging-eu"]}, ["staging-eu", "dev"]),
        ({"exclude_contexts": ["prod-*", "dev"]}, ["staging-eu"]),
        # a pattern that matches nothing is no error, a name that is excluded neither
        ({"contexts": ["qa-*", "dev"]}, ["dev"]),
        ({"contexts": ["dev"], "exclude_contexts": ["dev"]}, []),
        # case matters
        ({"contexts": ["PROD-*"]}, []),
    ],
)
def test_contexts_and_exclude_contexts(build, tmp_path, options, expected):
    write(tmp_path / "kc.yaml", kubeconfig(*(ctx(name) for name in FLEET)))
    result = ok(build(source(tmp_path, kubeconfigs=["kc.yaml"], **options)))
    assert list(result["hosts"]) == expected
    assert result["warnings"] == ([] if expected else ["no context of the kubeconfigs matches contexts and exclude_contexts: the inventory has no cluster"])


def test_an_unknown_context_name_is_an_error_listing_those_found(build, tmp_path):
    write(tmp_path / "kc" / "a.yaml", kubeconfig(*(ctx(name) for name in FLEET[:3])))
    write(tmp_path / "kc" / "b.yaml", kubeconfig(*(ctx(name) for name in FLEET[3:])))
    result = build(source(tmp_path, kubeconfigs=["kc"], contexts=["prod-*", "qa", "prod-eu", "stage"]))
    assert result["error"] == (
        "AnsibleParserError: contexts: no kubeconfig has a context named 'qa', 'stage'; the contexts found are: dev, prod-admin, prod-eu, prod-us, staging-eu"
    )


def test_the_list_of_contexts_found_is_bounded(build, tmp_path):
    write(tmp_path / "kc.yaml", kubeconfig(*(ctx(f"c{i:02d}") for i in range(25))))
    error = build(source(tmp_path, kubeconfigs=["kc.yaml"], contexts=["nope"]))["error"]
    assert error.endswith("the contexts found are: " + ", ".join(f"c{i:02d}" for i in range(20)) + ", ... and 5 more")


def test_an_empty_contexts_list_is_refused(build, tmp_path):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod")))
    assert build(source(tmp_path, kubeconfigs=["kc.yaml"], contexts=[]))["error"] == (
        "AnsibleParserError: contexts is empty, which would select no cluster: leave it out to take every context"
    )


# ---------------------------------------------------------------------------------------------------------------------
# host names


def test_the_same_context_in_two_files_is_an_error_until_host_name_is_file_and_context(build, tmp_path):
    eu = write(tmp_path / "kc" / "eu-1.yaml", kubeconfig(ctx("admin"), ctx("eu-only")))
    us = write(tmp_path / "kc" / "us-2.yaml", kubeconfig(ctx("admin")))
    result = build(source(tmp_path, kubeconfigs=["kc"]))
    assert result["error"] == (
        f"AnsibleParserError: the context 'admin' of {eu} and the context 'admin' of {us} both make the host name 'admin': "
        "set host_name: file_and_context to name the hosts <file stem>_<context>, or leave one out with exclude_contexts"
    )
    result = ok(build(source(tmp_path, kubeconfigs=["kc"], host_name="file_and_context")))
    assert list(result["hosts"]) == ["eu-1_admin", "eu-1_eu-only", "us-2_admin"]
    assert [result["hosts"][h]["kubeconfig"] for h in ("eu-1_admin", "us-2_admin")] == [str(eu), str(us)]
    assert result["hosts"]["us-2_admin"]["context"] == "admin"


@pytest.mark.parametrize(
    "files, host_name, error",
    [
        ({"kc.yaml": ["admin", "admin"]}, "context", "the kubeconfig {tmp}/kc.yaml has two contexts named 'admin': remove one of them"),
        (
            {"kc.yaml": ["a:b", "a_b"]},
            "context",
            "the context 'a:b' of {tmp}/kc.yaml and the context 'a_b' of {tmp}/kc.yaml both make the host name 'a_b' "
            "(characters that host patterns cannot hold become _): rename one of them or leave one out with exclude_contexts",
        ),
        (
            {"one/kc.yaml": ["admin"], "two/kc.yaml": ["admin"]},
            "file_and_context",
            "the context 'admin' of {tmp}/one/kc.yaml and the context 'admin' of {tmp}/two/kc.yaml both make the host name 'kc_admin' "
            "(characters that host patterns cannot hold become _): rename one of them or leave one out with exclude_contexts",
        ),
    ],
)
def test_other_host_name_collisions(build, tmp_path, files, host_name, error):
    for name, contexts in files.items():
        write(tmp_path / name, kubeconfig(*(ctx(c) for c in contexts)))
    result = build(source(tmp_path, kubeconfigs=list(files), host_name=host_name))
    assert result["error"] == "AnsibleParserError: " + error.format(tmp=tmp_path)


HOST_NAMES = [
    ("admin@prod", "admin@prod"),
    ("gke_project_europe-west1_prod", "gke_project_europe-west1_prod"),
    ("kind-kind.v1+x", "kind-kind.v1+x"),
    ("arn:aws:eks:eu-west-1:111122223333:cluster/prod", "arn_aws_eks_eu-west-1_111122223333_cluster/prod"),
    ("operators/api-crc-testing:6443/kubeadmin", "operators/api-crc-testing_6443/kubeadmin"),
    ("my cluster, eu", "my_cluster__eu"),
    ("@home", "_home"),
    ("prod[1]*?!&~", "prod_1______"),
    ("café", "caf_"),
]


def test_host_names_are_what_host_patterns_can_name(build, tmp_path):
    write(tmp_path / "kc.yaml", kubeconfig(*(ctx(name) for name, _host in HOST_NAMES)))
    result = ok(build(source(tmp_path, kubeconfigs=["kc.yaml"])))
    assert {host: vars_["context"] for host, vars_ in result["hosts"].items()} == {host: name for name, host in HOST_NAMES}


def test_every_host_name_is_a_pattern_of_itself(tmp_path, home):
    """What the rule is for: host patterns (--limit, hosts:) can name each host (ansible --list-hosts)."""
    write(tmp_path / "kc.yaml", kubeconfig(*(ctx(name) for name, _host in HOST_NAMES)))
    source(tmp_path, kubeconfigs=["kc.yaml"])
    limit = ",".join(host for _name, host in HOST_NAMES)
    proc = ansible(tmp_path, home, "-i", "fleet.clusters.yml", "clusters", "--limit", limit, "--list-hosts", tool="ansible")
    assert proc.stdout.split() == ["hosts", f"({len(HOST_NAMES)}):"] + [host for _name, host in HOST_NAMES], proc.stdout


# ---------------------------------------------------------------------------------------------------------------------
# labels


@pytest.mark.parametrize(
    "cluster_labels, context_labels, expected",
    [
        (None, None, {}),
        (None, {"wave": "canary"}, {"wave": "canary"}),
        ({"region": "eu", "wave": "main"}, None, {"region": "eu", "wave": "main"}),
        ({"region": "eu", "wave": "main"}, {"wave": "canary", "tier": ""}, {"region": "eu", "wave": "canary", "tier": ""}),
        ({}, {}, {}),
    ],
)
def test_labels_from_context_and_cluster_extensions(build, tmp_path, cluster_labels, context_labels, expected):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod", labels=context_labels), clusters=[cluster(labels=cluster_labels)]))
    assert ok(build(source(tmp_path, kubeconfigs=["kc.yaml"])))["hosts"]["prod"]["cluster_labels"] == expected


@pytest.mark.parametrize(
    "extensions, where, problem",
    [
        (
            [{"name": LABELS, "extension": {"labels": {"wave": True}}}],
            "context",
            "the label 'wave' of the kubeforge.io/cluster extension of its context is a boolean, not a string (quote it in YAML)",
        ),
        (
            [{"name": LABELS, "extension": {"labels": {"batch": 10}}}],
            "cluster",
            "the label 'batch' of the kubeforge.io/cluster extension of its cluster 'prod' is a number, not a string (quote it in YAML)",
        ),
        (
            [{"name": LABELS, "extension": {"labels": {"owner": None}}}],
            "context",
            "the label 'owner' of the kubeforge.io/cluster extension of its context is null, not a string (quote it in YAML)",
        ),
        (
            [{"name": LABELS, "extension": {"labels": {"zones": ["a"]}}}],
            "context",
            "the label 'zones' of the kubeforge.io/cluster extension of its context is a list, not a string (quote it in YAML)",
        ),
        (
            [{"name": LABELS, "extension": {"labels": {1: "one"}}}],
            "context",
            "a label key of the kubeforge.io/cluster extension of its context is a number, not a non-empty string",
        ),
        (
            [{"name": LABELS, "extension": {"labels": "wave=canary-value"}}],
            "context",
            "the labels of the kubeforge.io/cluster extension of its context are a string, not a mapping",
        ),
        ([{"name": LABELS, "extension": "labels-value"}], "cluster", "the kubeforge.io/cluster extension of its cluster 'prod' is a string, not a mapping"),
        ({"name": LABELS}, "context", "the extensions of its context are a mapping, not a list"),
    ],
)
def test_invalid_labels_are_an_error_naming_the_context(build, tmp_path, extensions, where, problem):
    entry = ctx("c1")
    entry_cluster = cluster()
    (entry["context"] if where == "context" else entry_cluster["cluster"])["extensions"] = extensions
    path = write(tmp_path / "kc.yaml", kubeconfig(entry, ctx("other", cluster="other"), clusters=[entry_cluster, cluster("other")]))
    error = build(source(tmp_path, kubeconfigs=["kc.yaml"]))["error"]
    assert error == f"AnsibleParserError: context 'c1' of the kubeconfig {path}: {problem}"
    assert "value" not in error  # values are never quoted
    assert hosts(build(source(tmp_path, kubeconfigs=["kc.yaml"], contexts=["other"]))) == ["other"]


# ---------------------------------------------------------------------------------------------------------------------
# groups, compose, keyed_groups


def fleet_with_labels(tmp_path):
    write(
        tmp_path / "kc" / "eu.yaml",
        kubeconfig(
            ctx("eu-canary", cluster="eu-canary", labels={"wave": "canary"}),
            ctx("eu-prod", cluster="eu-prod", namespace="operators"),
            clusters=[
                cluster("eu-canary", "https://api.eu-canary.example.com:6443", labels={"region": "eu"}),
                cluster("eu-prod", "https://api.eu-prod.example.com:6443", labels={"region": "eu", "wave": "main"}),
            ],
        ),
    )
    write(
        tmp_path / "kc" / "us.yaml",
        kubeconfig(
            ctx("us-prod", cluster="us-prod"),
            clusters=[cluster("us-prod", "https://api.us-prod.example.com", labels={"region": "us", "wave": "main", "batch": "50%"})],
        ),
    )


def test_keyed_groups_groups_and_compose(build, tmp_path):
    fleet_with_labels(tmp_path)
    result = ok(
        build(
            source(
                tmp_path,
                kubeconfigs=["kc"],
                group="fleet",
                keyed_groups=[
                    {"key": "cluster_labels.wave", "prefix": "wave"},
                    {"key": "cluster_labels", "prefix": "label"},
                    {"key": "cluster_labels.tier", "prefix": "tier"},  # no cluster has it: no group (strict is false)
                ],
                groups={"namespaced": "cluster_namespace is defined", "europe": "cluster_labels.region == 'eu'"},
                compose={"api_host": "cluster_server | urlsplit('hostname')", "batch": "cluster_labels.batch | default('10%')"},
            )
        )
    )
    assert {g: members(result, g) for g in result["groups"] if g not in ("all", "ungrouped")} == {
        "fleet": ["eu-canary", "eu-prod", "us-prod"],
        "wave_canary": ["eu-canary"],
        "wave_main": ["eu-prod", "us-prod"],
        "label_region_eu": ["eu-canary", "eu-prod"],
        "label_region_us": ["us-prod"],
        "label_wave_canary": ["eu-canary"],
        "label_wave_main": ["eu-prod", "us-prod"],
        "label_batch_50_": ["us-prod"],
        "namespaced": ["eu-prod"],
        "europe": ["eu-canary", "eu-prod"],
    }
    assert [(result["hosts"][h]["api_host"], result["hosts"][h]["batch"]) for h in ("eu-canary", "us-prod")] == [
        ("api.eu-canary.example.com", "10%"),
        ("api.us-prod.example.com", "50%"),
    ]


@pytest.mark.parametrize(
    "options, groups, error",
    [
        ({"keyed_groups": [{"key": "cluster_labels.wave"}]}, {"_canary": ["eu-canary"], "_main": ["eu-prod", "us-prod"]}, None),
        ({"keyed_groups": [{"key": "cluster_labels.wave"}], "leading_separator": False}, {"canary": ["eu-canary"], "main": ["eu-prod", "us-prod"]}, None),
        ({"keyed_groups": [{"key": "cluster_labels.batch", "prefix": "batch"}]}, {"batch_50_": ["us-prod"]}, None),
        (
            {"keyed_groups": [{"key": "cluster_labels.batch", "prefix": "batch"}], "strict": True},
            None,
            "Could not generate group for host eu-canary from cluster_labels.batch entry",
        ),
    ],
)
def test_keyed_groups_options(build, tmp_path, options, groups, error):
    fleet_with_labels(tmp_path)
    result = build(source(tmp_path, kubeconfigs=["kc"], **options))
    if error:
        assert error in result["error"]
    else:
        assert {g: members(result, g) for g in ok(result)["groups"] if g not in ("all", "ungrouped", "clusters")} == groups


@pytest.mark.parametrize("group", ["my-fleet", "1st", "", "fleet eu"])
def test_an_invalid_group_name_is_refused(build, tmp_path, group):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod")))
    assert build(source(tmp_path, kubeconfigs=["kc.yaml"], group=group))["error"] == (
        f"AnsibleParserError: group {group!r} is not a valid Ansible group name (letters, digits and _, not starting with a digit)"
    )


@pytest.mark.parametrize("name, accepted", [("fleet.clusters.yml", True), ("clusters.yaml", True), ("eu-clusters.yml", True), ("fleet.yml", False)])
def test_inventory_source_file_names(build, tmp_path, name, accepted):
    write(tmp_path / "kc.yaml", kubeconfig(ctx("prod")))
    result = build(source(tmp_path, name=name, kubeconfigs=["kc.yaml"]))
    if accepted:
        assert hosts(result) == ["prod"]
    else:
        assert "could not be verified by inventory plugin 'kubeforge.operators.clusters'" in result["error"]


# ---------------------------------------------------------------------------------------------------------------------
# cache


def test_the_cache_is_read_instead_of_the_kubeconfigs(build, tmp_path):
    write(tmp_path / "kc" / "eu.yaml", kubeconfig(ctx("prod-eu", labels={"wave": "canary"}), ctx("prod-us")))
    cache_dir = tmp_path / "cache"
    options = {"kubeconfigs": ["kc"], "cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": str(cache_dir)}
    src = source(tmp_path, **options)
    first = ok(build(src))
    assert list(first["hosts"]) == ["prod-eu", "prod-us"]
    cached = [p.read_text() for p in cache_dir.iterdir()]
    assert len(cached) == 1 and "prod-eu" in cached[0] and "not-a-real-token" not in cached[0] and "Q0EgZGF0YQ==" not in cached[0]

    # the kubeconfig changes, then disappears: the cache answers as before, so no file was read
    write(tmp_path / "kc" / "eu.yaml", kubeconfig(ctx("other")))
    assert ok(build(src))["hosts"] == first["hosts"]
    shutil.rmtree(tmp_path / "kc")
    assert ok(build(src))["hosts"] == first["hosts"]
    # the options that select and name hosts apply to the cached data
    source(tmp_path, **options, exclude_contexts=["prod-us"], host_name="file_and_context")
    assert hosts(build(src)) == ["eu_prod-eu"]
    # without cache: true the files are read
    source(tmp_path, **{**options, "cache": False})
    assert build(src)["error"] == f"AnsibleParserError: kubeconfigs: {tmp_path}/kc does not exist"
    # another kubeconfigs list is read, not answered from the cache
    source(tmp_path, **{**options, "kubeconfigs": ["kc", "more"]})
    assert build(src)["error"] == f"AnsibleParserError: kubeconfigs: {tmp_path}/kc does not exist"
    # a refresh (ansible-inventory --flush-cache, meta: refresh_inventory) reads them again and updates the cache
    source(tmp_path, **options)
    write(tmp_path / "kc" / "eu.yaml", kubeconfig(ctx("new")))
    assert hosts(build(src)) == ["prod-eu", "prod-us"]
    assert hosts(build(src, cache=False)) == ["new"]
    shutil.rmtree(tmp_path / "kc")
    assert hosts(build(src)) == ["new"]


def test_warnings_are_cached_too(build, tmp_path):
    write(tmp_path / "kc" / "a.yaml", kubeconfig(ctx("prod")))
    write(tmp_path / "kc" / "notes.txt", "notes\n")
    src = source(tmp_path, kubeconfigs=["kc"], cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    first = ok(build(src))
    shutil.rmtree(tmp_path / "kc")
    assert (
        ok(build(src))["warnings"]
        == first["warnings"]
        == [f"kubeconfigs: skipping {tmp_path}/kc/notes.txt, which is a string, not a mapping with kind: Config and contexts"]
    )


# ---------------------------------------------------------------------------------------------------------------------
# no credential anywhere

SECRET = "SECRET"


def kubeconfig_full_of_secrets():
    """Every kind of credential a kubeconfig can carry, each value holding SECRET."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            cluster(
                "prod",
                server=f"https://{SECRET}-user:{SECRET}-pw@api.prod.example.com:6443",
                labels={"wave": "canary"},
                **{"certificate-authority-data": f"{SECRET}-ca-data", "proxy-url": f"http://{SECRET}:{SECRET}@proxy:3128"},
            )
        ],
        "contexts": [ctx("prod", user="token-user", namespace="operators"), ctx("prod-exec", user="exec-user"), ctx("prod-oidc", user="oidc-user")],
        "users": [
            {"name": "token-user", "user": {"token": f"{SECRET}-token", "username": "admin", "password": f"{SECRET}-password"}},
            {
                "name": "cert-user",
                "user": {"client-certificate-data": f"{SECRET}-cert-data", "client-key-data": f"{SECRET}-key-data", "client-key": f"/keys/{SECRET}.key"},
            },
            {
                "name": "exec-user",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": "aws",
                        "args": ["eks", "get-token", f"--role-arn={SECRET}-role"],
                        "env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": f"{SECRET}-exec-env"}],
                    }
                },
            },
            {
                "name": "oidc-user",
                "user": {"auth-provider": {"name": "oidc", "config": {"id-token": f"{SECRET}-id-token", "refresh-token": f"{SECRET}-refresh"}}},
            },
        ],
        "current-context": "prod",
    }


def test_no_credential_is_in_ansible_inventory_output(tmp_path, home):
    write(tmp_path / "kc" / "prod.yaml", kubeconfig_full_of_secrets())
    source(tmp_path, kubeconfigs=["kc"], cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    outputs = []
    for args in (["--list"], ["--list", "--export", "--yaml"], ["--graph", "--vars"], ["--host", "prod-exec"], ["--list", "-vvvv"]):
        proc = ansible(tmp_path, home, "-i", "fleet.clusters.yml", *args)
        outputs.append(proc.stdout + proc.stderr)
    listed = json.loads(ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--list").stdout)
    assert sorted(listed["_meta"]["hostvars"]) == ["prod", "prod-exec", "prod-oidc"]
    assert "https://api.prod.example.com:6443" in outputs[0]
    outputs += [p.read_text() for p in (tmp_path / "cache").iterdir()]
    assert len(outputs) == 6
    for output in outputs:
        assert SECRET not in output


@pytest.mark.parametrize(
    "text",
    [
        # YAML errors on a line holding a credential: the line is not quoted
        f'users:\n- name: admin\n  user:\n    token: "{SECRET}-token\n',
        f"users:\n- name: admin\n  user:\n    token: *{SECRET}alias\n",
        f"users:\n- name: admin\n  user: {{token: {SECRET}-token\n",
        f"users:\n- name: admin\n  user:\n    token: {SECRET}-token\n   password: x\n",
        # an error of a context of a kubeconfig full of them
        yaml.safe_dump(dict(kubeconfig_full_of_secrets(), contexts=[ctx("prod", labels={"owner": [f"{SECRET}-label"]})])),
        yaml.safe_dump(dict(kubeconfig_full_of_secrets(), contexts=[ctx("prod", body=f"{SECRET}-context")])),
    ],
    ids=["quoted-scalar", "alias", "flow-mapping", "indentation", "label", "context"],
)
def test_no_credential_is_in_errors_and_warnings(build, tmp_path, text):
    write(tmp_path / "kc" / "prod.yaml", text)
    named = build(source(tmp_path, kubeconfigs=["kc/prod.yaml"]))
    in_directory = build(source(tmp_path, kubeconfigs=["kc"]))
    assert named["error"]
    assert SECRET not in json.dumps([named, in_directory])


# ---------------------------------------------------------------------------------------------------------------------
# through ansible-inventory and ansible-playbook


def test_ansible_inventory_graph_and_list(tmp_path, home):
    fleet_with_labels(tmp_path)
    write(tmp_path / "kc" / "README.md", "not a kubeconfig\n")
    source(tmp_path, kubeconfigs=["kc"], keyed_groups=[{"key": "cluster_labels.wave", "prefix": "wave"}])
    graph = ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--graph")
    assert graph.stdout.splitlines() == [
        "@all:",
        "  |--@ungrouped:",
        "  |--@clusters:",
        "  |  |--eu-canary",
        "  |  |--eu-prod",
        "  |  |--us-prod",
        "  |--@wave_canary:",
        "  |  |--eu-canary",
        "  |--@wave_main:",
        "  |  |--eu-prod",
        "  |  |--us-prod",
    ]
    assert f"kubeconfigs: skipping {tmp_path}/kc/README.md" in " ".join(graph.stderr.split())
    listed = json.loads(ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--list").stdout)
    assert listed["clusters"] == {"hosts": ["eu-canary", "eu-prod", "us-prod"]}
    assert listed["wave_main"] == {"hosts": ["eu-prod", "us-prod"]}
    one = json.loads(ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--host", "eu-prod").stdout)
    assert one == {
        "ansible_connection": "local",
        "ansible_python_interpreter": INTERPRETER,
        "cluster_labels": {"region": "eu", "wave": "main"},
        "cluster_name": "eu-prod",
        "cluster_namespace": "operators",
        "cluster_server": "https://api.eu-prod.example.com:6443",
        "context": "eu-prod",
        "kubeconfig": str(tmp_path / "kc" / "eu.yaml"),
    }


def test_a_play_runs_on_the_controller_once_per_cluster(tmp_path, home):
    """The module_defaults pattern of docs/fleet.md, and the interpreter template evaluated (ping runs Python)."""
    fleet_with_labels(tmp_path)
    source(tmp_path, kubeconfigs=["kc"], keyed_groups=[{"key": "cluster_labels.wave", "prefix": "wave"}])
    play = [
        {
            "hosts": "wave_canary:wave_main",
            "gather_facts": False,
            "serial": [1, "100%"],
            "max_fail_percentage": 0,
            "module_defaults": {"group/kubeforge.operators.operators": {"kubeconfig": "{{ kubeconfig }}", "context": "{{ context }}"}},
            "tasks": [
                {"ansible.builtin.ping": None},
                {"ansible.builtin.debug": {"msg": "{{ context }} {{ kubeconfig | basename }} {{ ansible_python_interpreter }}"}},
            ],
        }
    ]
    write(tmp_path / "play.yml", play)
    proc = ansible(tmp_path, home, "-i", "fleet.clusters.yml", "play.yml", tool="ansible-playbook")
    messages = [m.split() for m in re.findall(r'"msg": "(.*)"', proc.stdout)]
    # the canary first, alone; then the other two at once (in either order)
    assert messages[0][:2] == ["eu-canary", "eu.yaml"]
    assert sorted(m[:2] for m in messages[1:]) == [["eu-prod", "eu.yaml"], ["us-prod", "us.yaml"]]
    # ansible_playbook_python: the venv's Python (a link to the same interpreter as this one)
    assert {os.path.realpath(m[2]) for m in messages} == {os.path.realpath(sys.executable)}
    assert proc.stdout.count("PLAY [wave_canary:wave_main]") == 2  # the canary alone, then the rest
    assert re.findall(r"(\S+)\s+: ok=2 ", proc.stdout) == ["eu-canary", "eu-prod", "us-prod"]


# ---------------------------------------------------------------------------------------------------------------------
# the documentation


def plugin_docs():
    """DOCUMENTATION and EXAMPLES of the plugin, read without importing it."""
    found = {}
    for node in ast.parse(PLUGIN.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and node.targets[0].id in ("DOCUMENTATION", "EXAMPLES"):
            found[node.targets[0].id] = node.value.value
    return yaml.safe_load(found["DOCUMENTATION"]), list(yaml.safe_load_all(found["EXAMPLES"]))


FRAGMENT_OPTIONS = {
    "strict",
    "compose",
    "groups",
    "keyed_groups",
    "use_extra_vars",
    "leading_separator",
    "cache",
    "cache_plugin",
    "cache_timeout",
    "cache_connection",
    "cache_prefix",
}
# the hosts each example of EXAMPLES makes from the kubeconfigs of examples_fleet()
EXAMPLE_HOSTS = [
    ["eu-canary", "eu-prod", "us-prod"],
    ["prod-eu", "prod-us", "staging-eu"],
    ["eu-1_admin", "us-2_admin"],
    ["eu-canary", "eu-prod", "us-prod"],
    ["eu-canary", "eu-prod", "us-prod"],
]


def test_every_example_names_documented_options_and_builds(build, tmp_path, home):
    documentation, examples = plugin_docs()
    assert len(examples) == len(EXAMPLE_HOSTS)
    fleet_with_labels(tmp_path)
    (tmp_path / "kc").rename(tmp_path / "kubeconfigs")
    write(home / ".kube" / "fleet.yaml", kubeconfig(*(ctx(name) for name in ("prod-eu", "prod-us", "prod-admin", "staging-eu", "dev"))))
    for name in ("eu-1", "us-2"):
        write(tmp_path / "etc" / "fleet" / f"{name}.yaml", kubeconfig(ctx("admin")))
    results = []
    for index, (example, expected) in enumerate(zip(examples, EXAMPLE_HOSTS)):
        assert example["plugin"] == "kubeforge.operators.clusters"
        assert set(example) <= set(documentation["options"]) | FRAGMENT_OPTIONS, index
        example["kubeconfigs"] = [p.replace("/etc/fleet", str(tmp_path / "etc" / "fleet")) for p in example["kubeconfigs"]]
        results.append(ok(build(write(tmp_path / f"example{index}.clusters.yml", example))))
        assert list(results[-1]["hosts"]) == expected, index
    assert members(results[2], "fleet") == ["eu-1_admin", "us-2_admin"]
    assert [members(results[3], g) for g in ("wave_canary", "region_eu", "namespaced")] == [["eu-canary"], ["eu-canary", "eu-prod"], ["eu-prod"]]
    assert results[3]["hosts"]["us-prod"]["rollout_batch"] == "50%"
    assert len(list((home / ".cache" / "kubeforge-fleet").iterdir())) == 1


def guide_section():
    """The section "Clusters as inventory" of docs/fleet.md (other sections of the guide are not this test's)."""
    text = FLEET_GUIDE.read_text(encoding="utf-8")
    start = text.index("\n## Clusters as inventory\n")
    end = text.find("\n## ", start + 1)
    return text[start : None if end == -1 else end]


def guide_blocks():
    """{first line: block} of the fenced blocks of the section."""
    return {body.split("\n", 1)[0]: body for body in re.findall(r"^```[a-z]*\n(.*?)^```", guide_section(), re.S | re.M)}


def test_the_guide_s_inventory_gives_the_graph_it_shows(tmp_path, home):
    blocks = guide_blocks()
    files = {first[2:]: body for first, body in blocks.items() if first.startswith("# ") and first.endswith((".yaml", ".yml"))}
    assert sorted(files) == ["fleet.clusters.yml", "kubeconfigs/eu.yaml", "kubeconfigs/us.yaml"]
    for name, body in files.items():
        write(tmp_path / name, body)
    shown = next(body for first, body in blocks.items() if first == "$ ansible-inventory -i fleet.clusters.yml --graph")
    graph = ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--graph")
    assert "$ ansible-inventory -i fleet.clusters.yml --graph\n" + graph.stdout == shown
    # the host variables the guide lists are the ones a host has
    listed = json.loads(ansible(tmp_path, home, "-i", "fleet.clusters.yml", "--host", "eu-prod").stdout)
    documented = re.findall(r"^\| `(\w+)` \|", guide_section(), re.M)
    assert sorted(documented) == sorted(listed)
    assert SECRET not in json.dumps(listed) and "token" not in json.dumps(listed)
