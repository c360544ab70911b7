# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Glue logic of the catalog_* modules: bundle lookup set-up, per-OpenShift fan-out, staged (all-or-nothing)
atomic writes with change detection and diffs, template text round trips, and the community-operators release
(plan computed from a git ref, committed in a throw-away worktree so the user's work tree is never touched).

Everything except :class:`GitRepo` and the write helpers is pure; nothing here imports Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core; the modules report it missing
    yaml = None

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    check_migrate_level,
    migrate,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import (
    ALLOWED_BUNDLE_REGISTRIES,
    apply_release_config,
    bundle_pullspec,
    check_bundle_registry,
    check_catalog_name,
    is_catalog_v4_17_plus,
    migrate_level_for_catalog,
    parse_ci_fbc,
    parse_release_config,
    render_tasks,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    BundleLookup,
    is_bundle_dir,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig, go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import (
    check_path_component,
    dumps,
    split_by_package,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleNotFoundError,
    FBCError,
    ReleaseConfigError,
    WriteError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.model import validate_config
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.basic import (
    SCHEMA_BASIC,
    SCHEMA_SEMVER,
    check_safe_name,
    render_template,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import (
    get_ci,
    go_marshal_indent,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_client_kwargs

OPM_COMPAT_CURRENT = "current"
DIFF_MAX_BYTES = 128 * 1024
_EXT = {"yaml": ".yaml", "json": ".json"}


def puller_factory(params):
    """A factory for the OCI image puller built from module params (None when ``pull`` is false)."""
    if not params.get("pull", True):
        return None

    def factory():
        from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import make_image_puller
        return make_image_puller(**registry_client_kwargs(params))
    return factory


class PublishError(FBCError):
    """Bad module input or a failed repository operation (message is user-facing)."""


# --------------------------------------------------------------------------------------------- bundle lookup

def _image_tag_and_name(image):
    """(last repository path component, tag or None) of an image reference, without a full parse."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = last.split(":", 1)
        return name, tag
    return last, None


class BundleDirIndex:
    """Bundle directories given without an image: matched to a template image by tag (= CSV version, with or without
    a leading ``v``, or the directory name), preferring directories whose package is the repository name."""

    def __init__(self, paths=()):
        self.entries = []
        for p in paths:
            blob, _csv = render_bundle_dir_blob(p)
            version = ""
            for prop in blob.get("properties") or ():
                if prop.get("type") == "olm.package" and isinstance(prop.get("value"), dict):
                    version = str(prop["value"].get("version") or "")
            self.entries.append({"path": p, "package": blob.get("package") or "", "version": version,
                                 "name": blob.get("name") or "", "dirname": os.path.basename(os.path.normpath(p))})

    def match(self, image):
        repo, tag = _image_tag_and_name(image)
        if not tag:
            return None
        hits = [e for e in self.entries if tag in (e["version"], "v" + e["version"], e["dirname"]) and e["version"]]
        if not hits:
            return None
        best = [e for e in hits if e["package"] == repo] or hits
        return best[0]["path"]


def build_lookup(lookup_paths=(), bundle_images=None, puller_factory=None, catalogs=()):
    """A BundleLookup over FBC catalogs (paths or DeclarativeConfigs) and bundle directories.

    ``lookup_paths``: FBC directories/files or bundle directories. ``bundle_images``: explicit image -> bundle
    directory. ``puller_factory()`` returns an ``image_puller`` (called lazily, only when an image is missing);
    None means offline (missing images raise BundleNotFoundError). Returns ``(lookup, state)``; ``state['puller']``
    holds the puller once created (the caller cleans it up).
    """
    cats = list(catalogs)
    dirs = []
    for p in lookup_paths or ():
        p = os.fspath(p)
        if not os.path.exists(p):
            raise PublishError("bundle_lookup path %s does not exist" % p)
        if os.path.isdir(p) and is_bundle_dir(p):
            dirs.append(p)
        else:
            cats.append(p)
    index = BundleDirIndex(dirs)
    state = {"puller": None, "pulled": []}

    def image_puller(image):
        path = index.match(image)
        if path is not None:
            return path
        if puller_factory is None:
            raise BundleNotFoundError("bundle image %s not found in the lookup catalogs or bundle directories "
                                      "(pulling is disabled)" % json.dumps(image))
        if state["puller"] is None:
            state["puller"] = puller_factory()
        state["pulled"].append(image)
        return state["puller"](image)

    lookup = BundleLookup(cats, bundle_dirs=dict(bundle_images or {}), image_puller=image_puller)
    return lookup, state


def cleanup_lookup(state):
    puller = state.get("puller")
    if puller is not None and hasattr(puller, "cleanup"):
        puller.cleanup()


# --------------------------------------------------------------------------------------------- fan-out

def plan_fanout(ocp_versions, migrate_level=None, migrate_levels=None):
    """[(ocp_version, migrate_level)] for each OpenShift catalog version (``vX.Y``), in the given order.

    Per version: ``migrate_levels[version]`` if set, else ``migrate_level`` if set, else the community pipeline rule
    (``bundle-object-to-csv-metadata`` for v4.17 and later, ``none`` below).
    """
    migrate_levels = dict(migrate_levels or {})
    seen = []
    for v in ocp_versions:
        if not isinstance(v, str):
            raise PublishError("ocp_versions entries must be strings like 'v4.17' (got %r)" % (v,))
        try:
            check_catalog_name(v)
        except ReleaseConfigError as e:
            raise PublishError("%s (quote OpenShift versions in YAML, for example 'v4.20')" % e) from None
        if v not in seen:
            seen.append(v)
    for k in migrate_levels:
        if k not in seen:
            raise PublishError("migrate_levels key %s is not in ocp_versions" % k)
    out = []
    for v in seen:
        if v in migrate_levels:
            level = check_migrate_level(migrate_levels[v])
        elif migrate_level is not None:
            level = check_migrate_level(migrate_level)
        else:
            level = migrate_level_for_catalog(v)
        out.append((v, level))
    return out


def opm_compat_arg(value):
    return None if value in (None, "", OPM_COMPAT_CURRENT) else value


def summarize(cfg):
    """(sorted package names, sorted bundle names) of a DeclarativeConfig."""
    pkgs = cfg.package_names()
    bundles = sorted({b.get("name") or "" for b in cfg.bundles} - {""}, key=go_sort_key)
    return pkgs, bundles


def catalog_files(cfg, directory, output_format="yaml"):
    """opm WriteFS layout in memory: [(path, text)] = <directory>/<pkg>/catalog.<ext> (+ <directory>/catalog.<ext>
    for package-less objects)."""
    ext = _EXT[output_format]
    names, by_pkg, root_others = split_by_package(cfg)
    out = []
    for name in names:
        check_path_component(name, "package")
        out.append((os.path.join(directory, name, "catalog" + ext), dumps(by_pkg[name], output_format)))
    if root_others:
        out.append((os.path.join(directory, "catalog" + ext),
                    dumps(DeclarativeConfig(others=root_others), output_format)))
    return out


def dest_is_directory(dest, fanout):
    return bool(fanout) or dest.endswith(os.sep) or dest.endswith("/") or os.path.isdir(dest)


def render_outputs(template_data, renderer, dest, output_format="yaml", migrate_level=None, opm_compat=None,
                   fanout=None):
    """Render a template into output files (in memory). Returns ``(files, renders)``.

    ``files``: [(path, text)]. ``renders``: one dict per rendered catalog (ocp_version, migrate_level, files,
    packages, bundles). With ``fanout`` ([(ocp, level)]) the layout is <dest>/<ocp>/<pkg>/catalog.<ext>; else
    ``dest`` is one file, or a directory (existing, or ending with a slash) getting <dest>/<pkg>/catalog.<ext>.
    """
    def rendered(level):
        return render_template(template_data, renderer, migrate_level=level, opm_compat=opm_compat)

    return _plan_outputs(rendered, dest, output_format, migrate_level, fanout)


def catalog_outputs(source, dest, output_format="yaml", migrate_level=None, fanout=None):
    """Like render_outputs for an existing catalog (directory or file): opm render SOURCE [--migrate-level]."""
    def rendered(level):
        return migrate(core_load.load(source), level)

    return _plan_outputs(rendered, dest, output_format, migrate_level, fanout)


def _plan_outputs(render, dest, output_format, migrate_level, fanout):
    if output_format not in _EXT:
        raise WriteError("invalid output format %s" % json.dumps(output_format))
    cache = {}

    def rendered(level):
        if level not in cache:
            cache[level] = render(level)
        return cache[level]

    files = []
    renders = []
    if fanout:
        for ocp, level in fanout:
            cfg = rendered(level)
            these = catalog_files(cfg, os.path.join(dest, ocp), output_format)
            pkgs, bundles = summarize(cfg)
            renders.append({"ocp_version": ocp, "migrate_level": level, "files": [f[0] for f in these],
                            "packages": pkgs, "bundles": bundles})
            files.extend(these)
    else:
        level = check_migrate_level(migrate_level)
        cfg = rendered(level)
        if dest_is_directory(dest, fanout):
            these = catalog_files(cfg, dest, output_format)
        else:
            these = [(dest, dumps(cfg, output_format))]
        pkgs, bundles = summarize(cfg)
        renders.append({"ocp_version": None, "migrate_level": level, "files": [f[0] for f in these],
                        "packages": pkgs, "bundles": bundles})
        files.extend(these)
    return files, renders


# --------------------------------------------------------------------------------------------- writing

def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise PublishError("%s is a directory, expected a file" % path) from None


def pending_changes(files):
    """[(path, before bytes or None, after bytes)] of the files whose content would change."""
    out = []
    for path, text in files:
        data = text.encode("utf-8") if isinstance(text, str) else text
        before = read_bytes(path)
        if before != data:
            out.append((path, before, data))
    return out


def commit_files(changes):
    """Write every change via temp files first, then rename them all (nothing is replaced if staging fails)."""
    staged = []
    try:
        for path, _before, data in changes:
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=directory)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
    except BaseException:
        for tmp, _path in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise
    for tmp, path in staged:
        os.replace(tmp, path)


def _summary(data):
    if data is None:
        return "(absent)\n"
    return "%d bytes, sha256:%s\n" % (len(data), hashlib.sha256(data).hexdigest())


def make_diff(path, before, after, max_bytes=DIFF_MAX_BYTES):
    """An Ansible diff dict: full texts when small enough, else a size/digest summary."""
    small = len(after) <= max_bytes and (before is None or len(before) <= max_bytes)
    if small:
        b = "" if before is None else before.decode("utf-8", "replace")
        a = after.decode("utf-8", "replace")
    else:
        b, a = _summary(before), _summary(after)
    return {"before_header": path if before is not None else "%s (absent)" % path, "after_header": path,
            "before": b, "after": a}


def text_diff(path, before, after):
    """An Ansible diff dict from prepared contents: bytes (shown decoded) or summary strings; before None = absent."""
    def text(value):
        if value is None:
            return ""
        return value if isinstance(value, str) else value.decode("utf-8", "replace")

    return {"before_header": path if before is not None else "%s (absent)" % path, "after_header": path,
            "before": text(before), "after": text(after)}


# --------------------------------------------------------------------------------------------- templates

_YAML = {}


def _yaml_classes():
    """(loader, dumper) classes, built on first use: a SafeLoader keeping timestamps as strings (they are plain
    strings to opm's JSON round trip) and a SafeDumper keeping key order, block style and literal multi-line
    strings (close to the ruamel output of the community pipeline)."""
    if yaml is None:
        raise PublishError("the PyYAML Python library is required to read and write YAML templates")
    if not _YAML:
        class EditLoader(yaml.SafeLoader):
            pass

        EditLoader.yaml_implicit_resolvers = dict(
            (k, [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"])
            for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items())

        class OrderedDumper(yaml.SafeDumper):
            pass

        def str_representer(dumper, value):
            style = "|" if "\n" in value else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

        OrderedDumper.add_representer(str, str_representer)
        _YAML["loader"], _YAML["dumper"] = EditLoader, OrderedDumper
    return _YAML["loader"], _YAML["dumper"]


def dump_yaml_document(doc):
    """``---`` + the document in block style, key order preserved."""
    dumper = _yaml_classes()[1]
    return yaml.dump(doc, Dumper=dumper, explicit_start=True, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=2 ** 31 - 1)


def text_format(data):
    """``json`` when the text is a JSON document, else ``yaml``."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return "json" if data.lstrip().startswith("{") else "yaml"


def load_template_for_edit(data):
    """First document of a template file as plain ordered data (key order kept, unlike the Go-semantics loader) for
    editing; None for an empty file."""
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if text_format(data) == "json":
        try:
            doc, _end = json.JSONDecoder().raw_decode(data.lstrip())
        except ValueError as e:
            raise PublishError("cannot parse template: %s" % e) from None
        return doc
    loader = _yaml_classes()[0]
    try:
        for doc in yaml.load_all(data, Loader=loader):
            return doc
    except ValueError as e:
        raise PublishError("cannot parse template: %s" % e) from None
    except yaml.YAMLError as e:
        raise PublishError("cannot parse template: %s" % e) from None
    return None


def dump_template(doc, output_format="yaml"):
    if output_format == "json":
        return go_marshal_indent(doc, escape_html=False) + "\n"
    return dump_yaml_document(doc)


def template_kind(doc):
    schema = get_ci(doc, "schema") if isinstance(doc, dict) else None
    if schema == SCHEMA_BASIC:
        return "basic"
    if schema == SCHEMA_SEMVER:
        return "semver"
    raise PublishError("not a catalog template: schema %s is neither %s nor %s"
                       % (json.dumps(schema), SCHEMA_BASIC, SCHEMA_SEMVER))


def template_images(doc):
    """Bundle images listed in a basic or semver template, in order."""
    out = []
    if template_kind(doc) == "basic":
        for e in get_ci(doc, "entries") or ():
            if isinstance(e, dict) and get_ci(e, "schema") == "olm.bundle" and get_ci(e, "image"):
                out.append(get_ci(e, "image"))
    else:
        for k, sec in doc.items():
            if isinstance(k, str) and k.casefold() in ("candidate", "fast", "stable") and isinstance(sec, dict):
                for b in get_ci(sec, "bundles") or ():
                    if isinstance(b, dict) and get_ci(b, "image") and get_ci(b, "image") not in out:
                        out.append(get_ci(b, "image"))
    return out


# --------------------------------------------------------------------------------------------- community checks

_CATALOG_DIR_RE = re.compile(r"^v\d+\.\d+$")


def catalog_version_of(path):
    """The OpenShift catalog version (``vX.Y``) a path lies in (``catalogs/v4.20/<pkg>/catalog.yaml``), or None."""
    for part in reversed(os.path.abspath(path).split(os.sep)):
        if _CATALOG_DIR_RE.match(part):
            return part
    return None


def community_checks(cfg, ocp_version=None, allowed_registries=ALLOWED_BUNDLE_REGISTRIES):
    """operator-pipelines static checks on catalogs: bundle images come from an allowed registry, and catalogs of
    OpenShift v4.17 and later carry no ``olm.bundle.object`` properties. Returns a list of problems."""
    problems = []
    new_format = ocp_version is not None and is_catalog_v4_17_plus(ocp_version)
    for b in cfg.bundles:
        name, image = b.get("name") or "", b.get("image") or ""
        if image and not check_bundle_registry(image, tuple(allowed_registries)):
            problems.append("bundle %s: image %s is not from an allowed registry (%s)"
                            % (json.dumps(name), json.dumps(image), ", ".join(allowed_registries)))
        if new_format and any(isinstance(p, dict) and p.get("type") == "olm.bundle.object"
                              for p in b.get("properties") or ()):
            problems.append("bundle %s: catalog %s must not contain olm.bundle.object properties (render with "
                            "--migrate-level bundle-object-to-csv-metadata)" % (json.dumps(name), ocp_version))
    return problems


# --------------------------------------------------------------------------------------------- git

class GitRepo:
    """Minimal git plumbing via the git CLI (``git -C repo ...``)."""

    def __init__(self, path, git="git", env=None):
        self.path = path
        self.git = git
        self.env = env

    def run(self, *args, **kwargs):
        cwd = kwargs.pop("cwd", self.path)
        data = kwargs.pop("input", None)
        env = dict(os.environ)
        env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
        env.update(self.env or {})
        env.update(kwargs.pop("env", None) or {})
        check = kwargs.pop("check", True)
        proc = subprocess.run([self.git] + list(args), cwd=cwd, input=data, capture_output=True, env=env, check=False)
        if check and proc.returncode != 0:
            words = list(args)
            while words[:1] == ["-c"]:
                words = words[2:]
            detail = proc.stderr.decode("utf-8", "replace").strip()
            raise PublishError("git %s failed (exit %d): %s" % (" ".join(words[:1]), proc.returncode, detail))
        return proc

    def out(self, *args, **kwargs):
        return self.run(*args, **kwargs).stdout.decode("utf-8", "replace").strip()

    def rev_parse(self, ref):
        proc = self.run("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    def ls_tree(self, ref, *paths):
        text = self.out("ls-tree", "-r", "--name-only", "-z", ref, "--", *paths)
        return [p for p in text.split("\0") if p]

    def read_blobs(self, ref, paths):
        """{path: bytes} for the paths present at ref (missing ones are left out)."""
        paths = list(paths)
        if not paths:
            return {}
        req = "".join("%s:%s\n" % (ref, p) for p in paths).encode("utf-8")
        raw = self.run("cat-file", "--batch", input=req).stdout
        out = {}
        pos = 0
        for p in paths:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode("utf-8", "replace")
            pos = nl + 1
            if header.endswith(" missing") or header.endswith(" ambiguous"):
                continue
            _sha, kind, size = header.rsplit(" ", 2)
            size = int(size)
            if kind == "blob":
                out[p] = raw[pos:pos + size]
            pos += size + 1
        return out

    def current_branch(self):
        proc = self.run("symbolic-ref", "-q", "HEAD", check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None


# --------------------------------------------------------------------------------------------- release

BUNDLE_PARTS = ("manifests", "metadata", os.path.join("tests", "scorecard"))


def bundle_files(bundle_path):
    """{relative path: bytes} of a bundle directory's manifests/, metadata/ and tests/scorecard/ (if present)."""
    if not os.path.isdir(bundle_path) or not is_bundle_dir(bundle_path):
        raise PublishError("bundle_path %s is not a bundle directory (manifests/ and metadata/ required)"
                           % bundle_path)
    out = {}
    for part in BUNDLE_PARTS:
        top = os.path.join(bundle_path, part)
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                rel = os.path.relpath(full, bundle_path).replace(os.sep, "/")
                with open(full, "rb") as f:
                    out[rel] = f.read()
    return out


_RC_SNAKE = {"default_channel": "defaultChannel", "skip_range": "skipRange"}


def normalize_release_config(rc):
    """Accept snake_cased release-config keys (ansible-operator converts camelCase CR fields): ``default_channel`` and
    ``skip_range`` become the pipeline's ``defaultChannel`` and ``skipRange``. Other input is returned unchanged."""
    if not isinstance(rc, dict) or not isinstance(rc.get("catalog_templates"), list):
        return rc
    items = []
    for it in rc["catalog_templates"]:
        if isinstance(it, dict):
            it = dict((_RC_SNAKE.get(k, k), v) for k, v in it.items())
        items.append(it)
    out = dict(rc)
    out["catalog_templates"] = items
    return out


class ReleasePlan:
    """Everything ``catalog_release`` would change: ``files`` {repo-relative path: bytes} (full desired content of
    each touched path), plus metadata for the module result."""

    def __init__(self):
        self.files = {}
        self.templates_changed = []
        self.catalogs = []
        self.validation = {}
        self.bundle_image = None
        self.csv_name = None
        self.release_config = None


def plan_release(repo, ref, package, version, bundle_path, release_config=None, bundle_image=None,
                 bundle_registry=None, lookup_paths=(), puller_factory=None, opm_compat=None, validate=True):
    """Compute a community-operators release of ``package`` ``version`` on top of git ``ref`` (a GitRepo commit).

    Inputs (ci.yaml, templates, committed catalogs, an existing release-config.yaml) are read from ``ref``, not from
    the work tree. Returns a ReleasePlan; raises FBCError subclasses on invalid input or invalid rendered catalogs.
    """
    check_safe_name("package", package, PublishError)
    check_safe_name("version", version, PublishError)
    op_dir = "operators/%s" % package
    ver_dir = "%s/%s" % (op_dir, version)
    plan = ReleasePlan()

    files = bundle_files(bundle_path)
    blob, _csv = render_bundle_dir_blob(bundle_path)
    if blob.get("package") and blob["package"] != package:
        raise PublishError("bundle_path belongs to package %s, not %s" % (blob["package"], package))
    plan.csv_name = blob.get("name")
    if not plan.csv_name:
        raise PublishError("bundle_path has no ClusterServiceVersion name")
    for rel, data in files.items():
        plan.files["%s/%s" % (ver_dir, rel)] = data

    tree = repo.ls_tree(ref, op_dir, "catalogs")
    existing = repo.read_blobs(ref, [p for p in tree if p.startswith(op_dir + "/") and (
        p == op_dir + "/ci.yaml" or p.startswith(op_dir + "/catalog-templates/")
        or p == ver_dir + "/release-config.yaml")])

    rc_path = ver_dir + "/release-config.yaml"
    if release_config is not None:
        release_config = normalize_release_config(release_config)
        rc = parse_release_config(release_config)
        plan.files[rc_path] = dump_yaml_document(release_config).encode("utf-8")
    elif rc_path in existing:
        rc = parse_release_config(existing[rc_path])
    else:
        rc = None
    plan.release_config = rc

    image = bundle_image or bundle_pullspec(package, version,
                                            **({"registry": bundle_registry} if bundle_registry else {}))
    plan.bundle_image = image
    if rc is None:
        return plan

    ci_path = op_dir + "/ci.yaml"
    if ci_path not in existing:
        raise PublishError("%s not found at %s: a release-config.yaml needs the operator's ci.yaml fbc section"
                           % (ci_path, ref))
    fbc = parse_ci_fbc(existing[ci_path])
    if not fbc.enabled:
        raise PublishError("%s: fbc.enabled is not true; release-config.yaml needs an FBC-enabled operator" % ci_path)

    templates = {}
    sources = {}
    formats = {}
    for m in fbc.catalog_mapping:
        p = "%s/catalog-templates/%s" % (op_dir, m.template_name)
        data = existing.get(p)
        sources[m.template_name] = data
        templates[m.template_name] = load_template_for_edit(data) if data is not None else None
        formats[m.template_name] = text_format(data) if data is not None else "yaml"
    changed, tasks, catalogs = apply_release_config(rc, fbc, templates, package, image, plan.csv_name)
    plan.templates_changed = changed
    for name in changed:
        sources[name] = dump_template(templates[name], formats[name]).encode("utf-8")
        plan.files["%s/catalog-templates/%s" % (op_dir, name)] = sources[name]

    cat_paths = [p for p in tree if p.startswith("catalogs/") and p.split("/")[2:3] == [package]]
    committed = repo.read_blobs(ref, cat_paths)
    cat_cfgs = [core_load.load_bytes(committed[p], source=p) for p in sorted(committed)]
    lookup, state = build_lookup(lookup_paths, bundle_images={image: bundle_path}, puller_factory=puller_factory,
                                 catalogs=cat_cfgs)
    try:
        results = render_tasks(tasks, sources, lookup, opm_compat=opm_compat)
    finally:
        cleanup_lookup(state)
    for task, cfg in results:
        text = dumps(cfg, "yaml")
        plan.files[task.output_path.replace(os.sep, "/")] = text.encode("utf-8")
        plan.catalogs.append(task.catalog)
        if validate:
            res = validate_config(cfg)
            plan.validation[task.catalog] = {"valid": res.valid, "errors": res.errors}
    if validate:
        bad = dict((c, v["errors"]) for c, v in plan.validation.items() if not v["valid"])
        if bad:
            first = sorted(bad)[0]
            raise PublishError("rendered catalog %s/%s is invalid: %s" % (first, package, "; ".join(bad[first])))
    return plan


def release_changes(repo, start, plan):
    """{path: bytes} of the plan's files that differ from ``start``."""
    current = repo.read_blobs(start, sorted(plan.files))
    return dict((p, d) for p, d in sorted(plan.files.items()) if current.get(p) != d)


def commit_args(message, signing_key=None, sign=None):
    """git arguments (before the subcommand's paths) for the release commit."""
    args = []
    if signing_key:
        args += ["-c", "user.signingkey=%s" % signing_key]
    args += ["commit", "--quiet", "--no-verify", "-m", message]
    if signing_key or sign:
        args.append("-S")
    else:
        args.append("--no-gpg-sign")
    return args


def commit_release(repo, start, branch, changes, message, author_name=None, author_email=None, signing_key=None,
                   sign=None, old_branch_sha=None):
    """Commit ``changes`` on top of ``start`` in a temporary detached worktree and point ``branch`` at the commit.

    The user's work tree, index and current branch are never touched; on any error the temporary worktree is removed
    and the branch is not created/moved. Returns the new commit id.
    """
    tmp = tempfile.mkdtemp(prefix="kubeforge-release-")
    wt = os.path.join(tmp, "wt")
    env = {}
    if author_name:
        env.update(GIT_AUTHOR_NAME=author_name, GIT_COMMITTER_NAME=author_name)
    if author_email:
        env.update(GIT_AUTHOR_EMAIL=author_email, GIT_COMMITTER_EMAIL=author_email)
    added = False
    try:
        repo.run("worktree", "add", "--quiet", "--detach", wt, start)
        added = True
        for rel, data in changes.items():
            full = os.path.join(wt, *rel.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        repo.run("add", "--", *sorted(changes), cwd=wt)
        repo.run(*commit_args(message, signing_key, sign), cwd=wt, env=env)
        sha = repo.out("rev-parse", "HEAD", cwd=wt)
        repo.run("update-ref", "-m", "kubeforge.operators.catalog_release", "refs/heads/%s" % branch, sha,
                 old_branch_sha or "0" * 40)
        return sha
    finally:
        if added:
            repo.run("worktree", "remove", "--force", wt, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        repo.run("worktree", "prune", check=False)


_BRANCH_RE = re.compile(r"^(?!/)(?!.*//)(?!.*\.\.)(?!.*@\{)[^\s~^:?*\[\\]+(?<![/.])$")


def check_branch_name(repo, branch):
    if not _BRANCH_RE.match(branch) or branch.endswith(".lock"):
        raise PublishError("invalid branch name %s" % json.dumps(branch))
    if repo.run("check-ref-format", "--branch", branch, check=False).returncode != 0:
        raise PublishError("invalid branch name %s" % json.dumps(branch))
    return branch
