# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: clusters
short_description: One host per Kubernetes cluster, from kubeconfig files and their contexts
version_added: 0.1.0
author:
  - kubeforge maintainers (@kubeforge)
description:
  - Makes one inventory host per kubeconfig context, so that a play can roll a change across clusters with
    C(serial), C(max_fail_percentage), C(order) and host patterns, as it would across machines.
  - Reads kubeconfig files only; no cluster is contacted. The hosts run their tasks on the controller
    (O(connection), O(python_interpreter)); the host variables C(kubeconfig) and C(context) tell this collection's
    modules (and kubernetes.core's) which cluster a task acts on, best set once per play through
    C(module_defaults) and the action group C(group/kubeforge.operators.operators).
  - An inventory source of this plugin is a YAML file whose name ends in C(clusters.yml) or C(clusters.yaml)
    (for example C(fleet.clusters.yml)) with O(plugin=kubeforge.operators.clusters).
  - "Each host gets these variables and no others (besides O(compose)): C(kubeconfig) (the absolute path of its
    kubeconfig file), C(context) (the context's name), C(cluster_name) (the name of the kubeconfig's cluster entry the
    context uses), C(cluster_server) (that cluster's server URL, without any C(user:password@) part),
    C(cluster_namespace) (the context's namespace; absent when the context sets none), C(cluster_labels) (a
    dictionary, see below), C(ansible_connection) and C(ansible_python_interpreter)."
  - No credential ever becomes a host variable, a cached value or part of an error message - the C(users) of a
    kubeconfig are not read at all, and neither tokens, passwords, client keys, certificate data, C(exec) nor
    C(auth-provider) configurations are. Errors name files, keys, contexts and clusters, never quote values.
  - "Labels come from the kubeconfig itself: the extension named C(kubeforge.io/cluster) of a context
    (C(contexts[].context.extensions)) or of its cluster (C(clusters[].cluster.extensions)) may hold C(labels), a
    mapping of strings to strings, for example C(extensions: [{name: kubeforge.io/cluster, extension: {labels:
    {wave: canary, region: eu}}}]). C(cluster_labels) is the cluster's labels updated with the context's (the
    context wins a conflict). A label value that is not a string (an unquoted C(true) or C(1)) is an error naming
    the context. Groups come from labels through O(keyed_groups), for example O(keyed_groups[].key=cluster_labels.wave)
    with O(keyed_groups[].prefix=wave) gives the groups C(wave_canary), C(wave_main), ..."
  - "Host names: Ansible stores any non-empty string as a host name, but host patterns (C(hosts:), C(--limit)) split
    on C(,) and C(:), read C(!), C(&) and C(~) as operators, C(*), C(?) and C([...]) as wildcards, and C(--limit @x)
    reads the file C(x). A context name made of ASCII letters, digits and C(_ . - @ / +) (such as C(admin@prod-eu) or
    C(gke_project_europe-west1_prod)) is the host name as it is; every other character becomes C(_) (the EKS context
    C(arn:aws:eks:eu-west-1:111122223333:cluster/prod) is the host C(arn_aws_eks_eu-west-1_111122223333_cluster/prod)),
    as does a leading C(@). The host variable C(context) keeps the context's real name."
requirements:
  - PyYAML (a requirement of ansible-core)
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: Marks the file as an inventory source of this plugin.
    type: str
    required: true
    choices: [kubeforge.operators.clusters]
  kubeconfigs:
    description:
      - Kubeconfig files, and directories of kubeconfig files, to make hosts from. One file may hold many contexts.
      - A relative path is relative to the directory of the inventory source; C(~) is expanded.
      - "A directory contributes its regular files whose names do not start with C(.), in name order, not its
        subdirectories. A file there that is not a kubeconfig (not a YAML or JSON mapping with C(kind: Config) or a
        C(contexts) list) is skipped with a warning."
      - A file named here that is not a kubeconfig, or a path that does not exist, is an error.
      - A kubeconfig reached twice (named and inside a named directory, or through a link) is read once, at its first
        place.
    type: list
    elements: str
    required: true
  contexts:
    description:
      - The contexts to make hosts of, by name or shell-style pattern (C(*), C(?), C([...]), matched case-sensitively
        like Python's C(fnmatch.fnmatchcase)). The default V(["*"]) takes every context of every file.
      - A name without a pattern character that no file has is an error, which lists the contexts found.
      - An empty list is refused (it would make an empty inventory); leave the option out to take every context.
    type: list
    elements: str
    default: ["*"]
  exclude_contexts:
    description:
      - Names or shell-style patterns of contexts to leave out, applied after O(contexts).
    type: list
    elements: str
    default: []
  host_name:
    description:
      - How a host is named.
      - V(context) - the context's name. Two selected contexts of the same name (in two files) are an error that
        suggests V(file_and_context).
      - V(file_and_context) - C(<file stem>_<context>), for example C(eu_admin@prod) for the context C(admin@prod) of
        C(eu.yaml).
      - Characters that host patterns cannot hold become C(_), see the description.
    type: str
    choices: [context, file_and_context]
    default: context
  group:
    description:
      - The group every host joins (besides the groups of O(groups) and O(keyed_groups)).
      - It must be a valid Ansible group name (letters, digits and C(_), not starting with a digit).
    type: str
    default: clusters
  connection:
    description:
      - Written to each host as C(ansible_connection). The hosts are clusters, so tasks run on the controller and
        talk to the API server from there.
      - An empty string sets no C(ansible_connection).
    type: str
    default: local
  python_interpreter:
    description:
      - Written to each host as C(ansible_python_interpreter), a template that is evaluated when a task runs.
      - When not set, the template C({{ ansible_playbook_python }}) - the Python that runs C(ansible-playbook), which
        has the collection's requirements (C(kubernetes)). It is not written as this option's default because Ansible
        would evaluate a default template while it reads the inventory source, when the variable does not exist yet.
      - An empty string sets no C(ansible_python_interpreter).
    type: str
  cache:
    description:
      - "With V(true), what the plugin read (file paths, context, cluster and namespace names, server URLs without
        user information, labels, warnings - no credential) is kept in the cache plugin's store under a key of the
        inventory source's path (C(get_cache_key)). Later runs within O(cache_timeout) read no kubeconfig file;
        C(ansible-inventory --flush-cache) and C(meta: refresh_inventory) read them again and refresh the cache."
      - The selection options (O(contexts), O(exclude_contexts), O(host_name), ...) apply to the cached data, so
        changing them needs no refresh. A changed O(kubeconfigs) list reads the files again.
notes:
  - The hosts' tasks run on the controller with O(connection=local); C(serial), C(forks) and C(throttle) bound how
    many clusters a play acts on at once.
  - Inventories are not finalized at this stage, so the auto populated C(all) and C(ungrouped) groups will
    only reflect what previous inventory sources explicitly added to them.
seealso:
  - plugin: ansible.builtin.constructed
    plugin_type: inventory
    description: The O(compose), O(groups) and O(keyed_groups) options come from it.
"""

EXAMPLES = r"""
---
# fleet.clusters.yml: every context of every kubeconfig in ./kubeconfigs (relative to this file)
plugin: kubeforge.operators.clusters
kubeconfigs:
  - kubeconfigs

---
# One kubeconfig with many contexts; only the production ones, without the admin contexts
plugin: kubeforge.operators.clusters
kubeconfigs:
  - ~/.kube/fleet.yaml
contexts:
  - "prod-*"
  - staging-eu
exclude_contexts:
  - "*-admin"

---
# Several files with the same context names (each cluster's kubeconfig calls its context "admin"):
# hosts named <file stem>_<context>, e.g. eu-1_admin, us-2_admin
plugin: kubeforge.operators.clusters
kubeconfigs:
  - /etc/fleet/eu-1.yaml
  - /etc/fleet/us-2.yaml
host_name: file_and_context
group: fleet

---
# Groups from the labels of the kubeforge.io/cluster kubeconfig extension: wave_canary, wave_main, region_eu, ...
# and a group of the clusters whose context sets a namespace
plugin: kubeforge.operators.clusters
kubeconfigs:
  - kubeconfigs
keyed_groups:
  - key: cluster_labels.wave
    prefix: wave
  - key: cluster_labels.region
    prefix: region
groups:
  namespaced: cluster_namespace is defined
compose:
  rollout_batch: cluster_labels.batch | default('10%')

---
# Keep what was read for an hour in a JSON file cache (no credential is in it);
# ansible-inventory --flush-cache reads the kubeconfigs again
plugin: kubeforge.operators.clusters
kubeconfigs:
  - kubeconfigs
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/kubeforge-fleet
cache_timeout: 3600
"""

import fnmatch
import json
import os
import re

import yaml
from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable
from ansible.utils.unsafe_proxy import wrap_var

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 templates every inventory string that is not marked unsafe

    def trust_as_template(value):
        return value


# The kubeconfig extension that carries a cluster's labels (on a context or on a cluster entry).
LABELS_EXTENSION = "kubeforge.io/cluster"
# ansible_python_interpreter when python_interpreter is not set (not the option's default: see its description).
DEFAULT_PYTHON_INTERPRETER = "{{ ansible_playbook_python }}"
# What a host pattern can hold as it is; every other character of a context name becomes "_".
_HOST_UNSAFE = re.compile(r"[^A-Za-z0-9_.@/+-]")
_GLOB = re.compile(r"[*?\[]")
_GROUP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Names listed in an error at most.
_LISTED = 20
# The format of the data kept in the cache; data of another format is read again.
_CACHE_FORMAT = 1


class _Problem(Exception):
    """Signals what is wrong with one context (or a file) to the caller in this module, which adds where."""


class _NotKubeconfig(Exception):
    """Signals that a file is no kubeconfig: skipped in a directory, an error when named."""


def _kind(value):
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a %s" % type(value).__name__


def _yaml_problem(exc):
    """Where and what, from a PyYAML error, without the file's text (str(exc) quotes the line)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "a syntax error"
    if not isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError)):
        # the scanner and the parser quote single characters and token kinds ('<stream end>'); the composer and the
        # constructor quote names of the file (anchors, aliases, tags)
        problem = re.sub(r"'[^']*'|\"[^\"]*\"", "...", problem)
    if mark is None:
        return problem
    return "line %d, column %d: %s" % (mark.line + 1, mark.column + 1, problem)


def load_kubeconfig(path):
    """The mapping of a kubeconfig file; _NotKubeconfig with the reason when the file is no kubeconfig."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise _NotKubeconfig("cannot be read (%s)" % (exc.strerror or type(exc).__name__)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _NotKubeconfig("is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        if not text.lstrip().startswith("{"):
            raise _NotKubeconfig("is not valid YAML (%s)" % _yaml_problem(exc)) from None
        try:  # JSON that YAML refuses (tab indentation)
            data = json.loads(text)
        except ValueError as json_exc:
            raise _NotKubeconfig("is not valid YAML or JSON (line %d, column %d: %s)" % (json_exc.lineno, json_exc.colno, json_exc.msg)) from None
    if data is None:
        raise _NotKubeconfig("is empty")
    if not isinstance(data, dict):
        raise _NotKubeconfig("is %s, not a mapping with kind: Config and contexts" % _kind(data))
    if data.get("kind") != "Config" and "contexts" not in data:
        raise _NotKubeconfig("has neither kind: Config nor contexts")
    return data


def _named_entries(data, key):
    """[(name, body)] of a kubeconfig list such as contexts: [{name: ..., context: {...}}]."""
    entries = data.get(key)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise _Problem("%s is %s, not a list" % (key, _kind(entries)))
    found = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise _Problem("%s[%d] has no name (a non-empty string)" % (key, index))
        found.append((name, entry.get(key[:-1])))
    return found


def _labels(extensions, where):
    """The labels of the kubeforge.io/cluster entry of a kubeconfig extensions list; where: 'its context', ..."""
    if extensions is None:
        return {}
    if not isinstance(extensions, list):
        raise _Problem("the extensions of %s are %s, not a list" % (where, _kind(extensions)))
    labels = {}
    for extension in extensions:
        if not isinstance(extension, dict) or extension.get("name") != LABELS_EXTENSION:
            continue
        body = extension.get("extension")
        if body is None:
            continue
        if not isinstance(body, dict):
            raise _Problem("the %s extension of %s is %s, not a mapping" % (LABELS_EXTENSION, where, _kind(body)))
        found = body.get("labels")
        if found is None:
            continue
        if not isinstance(found, dict):
            raise _Problem("the labels of the %s extension of %s are %s, not a mapping" % (LABELS_EXTENSION, where, _kind(found)))
        for key, value in found.items():
            if not isinstance(key, str) or not key:
                raise _Problem("a label key of the %s extension of %s is %s, not a non-empty string" % (LABELS_EXTENSION, where, _kind(key)))
            if not isinstance(value, str):
                raise _Problem("the label %r of the %s extension of %s is %s, not a string (quote it in YAML)" % (key, LABELS_EXTENSION, where, _kind(value)))
            labels[key] = value
    return labels


def without_userinfo(url):
    """The URL without a user:password@ part in its authority."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = len(rest)
    for delimiter in "/?#":
        position = rest.find(delimiter)
        if position != -1:
            end = min(end, position)
    authority = rest[:end].rpartition("@")[2]
    return scheme + sep + authority + rest[end:]


def _context_record(name, context, clusters):
    """What the inventory keeps of one context: names, server, namespace, labels - or the error it would raise."""
    record = {"name": name}
    try:
        if not isinstance(context, dict):
            raise _Problem("it has no context mapping")
        cluster_name = context.get("cluster")
        if not isinstance(cluster_name, str) or not cluster_name:
            raise _Problem("it names no cluster")
        if cluster_name not in clusters:
            raise _Problem("the cluster %r it names is not defined in the file" % cluster_name)
        cluster = clusters[cluster_name]
        server = cluster.get("server") if isinstance(cluster, dict) else None
        if not isinstance(server, str) or not server:
            raise _Problem("its cluster %r has no server" % cluster_name)
        namespace = context.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise _Problem("its namespace is %s, not a string" % _kind(namespace))
        labels = _labels(cluster.get("extensions"), "its cluster %r" % cluster_name)
        labels.update(_labels(context.get("extensions"), "its context"))
    except _Problem as problem:
        record["error"] = str(problem)
        return record
    record.update({"cluster": cluster_name, "server": without_userinfo(server), "labels": labels})
    if namespace:
        record["namespace"] = namespace
    return record


def read_kubeconfig(path):
    """[record of each context] of a kubeconfig file, in the file's order (_NotKubeconfig, _Problem)."""
    data = load_kubeconfig(path)
    clusters = dict(_named_entries(data, "clusters"))
    return [_context_record(name, context, clusters) for name, context in _named_entries(data, "contexts")]


def host_name_of(name):
    host = _HOST_UNSAFE.sub("_", name)
    if host.startswith("@"):
        host = "_" + host[1:]
    return host


def _listing(names):
    names = sorted(set(names))
    if not names:
        return "none"
    shown = ", ".join(names[:_LISTED])
    if len(names) > _LISTED:
        shown += ", ... and %d more" % (len(names) - _LISTED)
    return shown


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "kubeforge.operators.clusters"

    def verify_file(self, path):
        return super().verify_file(path) and path.endswith(("clusters.yml", "clusters.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache=cache)
        self._read_config_data(path)
        sources = self._sources(path)

        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache")
        read_cache = use_cache and cache
        update_cache = use_cache and not cache
        data = None
        if read_cache:
            try:
                data = self._cache[cache_key]
            except KeyError:
                update_cache = True
            else:
                if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT or data.get("kubeconfigs") != sources:
                    data, update_cache = None, True
        if data is None:
            data = self._read(sources)
        if update_cache:
            self._cache[cache_key] = data

        for warning in data["warnings"]:
            self.display.warning(warning)
        self._populate(self._hosts(data))

    def _sources(self, path):
        """The absolute paths of O(kubeconfigs): ~ expanded, relative to the inventory source's directory."""
        base = os.path.dirname(os.path.abspath(path))
        sources = []
        for given in self.get_option("kubeconfigs") or []:
            if not isinstance(given, str) or not given:
                raise AnsibleParserError("kubeconfigs: every entry must be a non-empty path, got %s" % _kind(given))
            sources.append(os.path.normpath(os.path.join(base, os.path.expanduser(given))))
        if not sources:
            raise AnsibleParserError("kubeconfigs is empty: name at least one kubeconfig file or directory")
        return sources

    def _read(self, sources):
        """What the kubeconfigs hold, as kept in the cache: {format, kubeconfigs, files: [{path, contexts}], warnings}."""
        files, warnings, seen = [], [], set()

        def add(path, named):
            real = os.path.realpath(path)
            if real in seen:
                return True
            try:
                contexts = read_kubeconfig(path)
            except _NotKubeconfig as exc:
                if named:
                    raise AnsibleParserError("kubeconfig %s %s" % (path, exc)) from None
                warnings.append("kubeconfigs: skipping %s, which %s" % (path, exc))
                return False
            except _Problem as exc:
                raise AnsibleParserError("kubeconfig %s: %s" % (path, exc)) from None
            seen.add(real)
            files.append({"path": path, "contexts": contexts})
            return True

        for source in sources:
            if os.path.isdir(source):
                try:
                    names = sorted(os.listdir(source))
                except OSError as exc:
                    raise AnsibleParserError("kubeconfigs: cannot list the directory %s (%s)" % (source, exc.strerror or type(exc).__name__)) from None
                paths = [os.path.join(source, name) for name in names if not name.startswith(".")]
                found = [add(p, named=False) for p in paths if os.path.isfile(p)]
                if not any(found):
                    warnings.append("kubeconfigs: the directory %s holds no kubeconfig file" % source)
            elif os.path.isfile(source):
                add(source, named=True)
            elif os.path.exists(source):
                raise AnsibleParserError("kubeconfigs: %s is neither a file nor a directory" % source)
            else:
                raise AnsibleParserError("kubeconfigs: %s does not exist" % source)
        return {"format": _CACHE_FORMAT, "kubeconfigs": sources, "files": files, "warnings": warnings}

    def _hosts(self, data):
        """[(host name, file path, context record)] of the selected contexts, checked."""
        include = self.get_option("contexts")
        exclude = self.get_option("exclude_contexts") or []
        if not include:
            raise AnsibleParserError("contexts is empty, which would select no cluster: leave it out to take every context")
        found = [(f["path"], record) for f in data["files"] for record in f["contexts"]]
        names = set(record["name"] for _path, record in found)
        missing = [name for name in include if not _GLOB.search(name) and name not in names]
        if missing:
            raise AnsibleParserError(
                "contexts: no kubeconfig has a context named %s; the contexts found are: %s" % (", ".join(repr(n) for n in missing), _listing(names))
            )

        def matches(name, patterns):
            return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)

        selected = [(path, record) for path, record in found if matches(record["name"], include) and not matches(record["name"], exclude)]
        for path, record in selected:
            if "error" in record:
                raise AnsibleParserError("context %r of the kubeconfig %s: %s" % (record["name"], path, record["error"]))
        if not selected:
            why = "matches contexts and exclude_contexts" if found else "was found"
            self.display.warning("no context of the kubeconfigs %s: the inventory has no cluster" % why)

        by_file = self.get_option("host_name") == "file_and_context"
        hosts, taken = [], {}
        for path, record in selected:
            if by_file:
                stem = os.path.splitext(os.path.basename(path))[0]
                host = host_name_of("%s_%s" % (stem, record["name"]))
            else:
                host = host_name_of(record["name"])
            if host in taken:
                raise AnsibleParserError(self._duplicate(host, taken[host], (path, record["name"]), by_file))
            taken[host] = (path, record["name"])
            hosts.append((host, path, record))
        return hosts

    @staticmethod
    def _duplicate(host, first, second, by_file):
        (first_path, first_name), (second_path, second_name) = first, second
        if first_path == second_path and first_name == second_name:
            return "the kubeconfig %s has two contexts named %r: remove one of them" % (first_path, first_name)
        what = "the context %r of %s and the context %r of %s both make the host name %r" % (first_name, first_path, second_name, second_path, host)
        if first_path != second_path and not by_file:
            return what + ": set host_name: file_and_context to name the hosts <file stem>_<context>, or leave one out with exclude_contexts"
        return what + " (characters that host patterns cannot hold become _): rename one of them or leave one out with exclude_contexts"

    def _populate(self, hosts):
        group = self.get_option("group")
        if not isinstance(group, str) or not _GROUP_NAME.match(group):
            raise AnsibleParserError("group %r is not a valid Ansible group name (letters, digits and _, not starting with a digit)" % (group,))
        connection = self.get_option("connection")
        interpreter = self.get_option("python_interpreter")
        if interpreter is None:
            interpreter = DEFAULT_PYTHON_INTERPRETER
        strict = self.get_option("strict")
        self.inventory.add_group(group)
        for host, kubeconfig, record in hosts:
            self.inventory.add_host(host, group=group)
            variables = {
                "kubeconfig": kubeconfig,
                "context": record["name"],
                "cluster_name": record["cluster"],
                "cluster_server": record["server"],
                "cluster_labels": dict(record["labels"]),
            }
            if "namespace" in record:
                variables["cluster_namespace"] = record["namespace"]
            for name, value in variables.items():
                # values of kubeconfig files are data, never templates
                self.inventory.set_variable(host, name, wrap_var(value))
            if connection:
                self.inventory.set_variable(host, "ansible_connection", connection)
            if interpreter:
                # a template of the inventory source (or the documented default): evaluated when a task runs
                self.inventory.set_variable(host, "ansible_python_interpreter", trust_as_template(interpreter))

            host_vars = self.inventory.get_host(host).get_vars()
            self._set_composite_vars(self.get_option("compose"), host_vars, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), host_vars, host, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), host_vars, host, strict=strict)
