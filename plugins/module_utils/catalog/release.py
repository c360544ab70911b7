# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A community-operators(-prod) release in a local git clone: the plan computed from a git ref (bundle files,
release-config, templates, rendered and validated catalogs), then committed on a branch in a throw-away worktree
so the user's work tree is never touched. ``execute(module)`` is catalog_release's run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import subprocess
import tempfile

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.lookup import build_lookup, cleanup_lookup, puller_factory
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.outputs import opm_compat_arg
from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.templates import (
    dump_template,
    dump_yaml_document,
    load_template_for_edit,
    text_format,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.release import (
    ALLOWED_BUNDLE_REGISTRIES,
    apply_release_config,
    bundle_pullspec,
    check_bundle_registry,
    check_release_version,
    is_catalog_v4_17_plus,
    parse_ci_fbc,
    parse_release_config,
    render_tasks,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    is_bundle_dir,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import (
    dumps,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    PublishError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import check_image_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import check_template_rewritable
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import check_safe_name
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput, make_diff
from ansible_collections.kubeforge.operators.plugins.module_utils.git import GitRepo
from ansible_collections.kubeforge.operators.plugins.module_utils.options import OptionError

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
        self.warnings = []


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
    check_release_version(version, _csv)
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
    check_image_reference(image, "bundle image")
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
        templates[m.template_name] = load_template_for_edit(data, source=p) if data is not None else None
        formats[m.template_name] = text_format(data) if data is not None else "yaml"
    changed, tasks, catalogs = apply_release_config(rc, fbc, templates, package, image, plan.csv_name, plan.warnings)
    plan.templates_changed = changed
    for name in changed:
        check_template_rewritable(sources[name], "%s/catalog-templates/%s" % (op_dir, name))
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


def check_signing_key(repo, signing_key=None, sign=None):
    """What a signed release commit needs, tried without committing (for check mode): the OpenPGP key in gpg's secret
    keyring (``signing_key``, else git's ``user.signingkey``, else any). PublishError naming the key otherwise;
    nothing to try for an unsigned commit or another ``gpg.format`` (ssh, x509)."""
    if not (signing_key or sign):
        return
    if (repo.out("config", "--get", "gpg.format", check=False) or "openpgp") != "openpgp":
        return
    key = signing_key or repo.out("config", "--get", "user.signingkey", check=False)
    program = repo.out("config", "--get", "gpg.program", check=False) or "gpg"
    try:
        proc = subprocess.run([program, "--batch", "--list-secret-keys"] + ([key] if key else []), capture_output=True, check=False)
    except OSError as e:
        raise PublishError("cannot run %s to check the signing key: %s" % (program, e.strerror or e)) from None
    if proc.returncode != 0 or not proc.stdout.strip():
        raise PublishError("%s is not in %s's secret keyring (%s --list-secret-keys): the signed commit would fail"
                           % ("signing key %s" % key if key else "no signing key", program, program))


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


def worktree_file(worktree, rel):
    """The path of the repository file ``rel`` (``a/b/c``) in ``worktree``. PublishError when ``rel`` is not a plain
    relative path or a directory on the way is a symbolic link: a link committed in the repository must not
    redirect the write outside the worktree. (A link in place of the file itself is replaced, never followed.)"""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise PublishError("invalid repository path %s" % json.dumps(rel))
    current = worktree
    for i, part in enumerate(parts[:-1]):
        current = os.path.join(current, part)
        if os.path.islink(current):
            raise PublishError("cannot write %s: %s is a symbolic link in the repository"
                               % (rel, "/".join(parts[:i + 1])))
    return os.path.join(current, parts[-1])


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
        with FileOutput() as out:
            for rel, data in sorted(changes.items()):
                out.write(worktree_file(wt, rel), data)
            out.commit()
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


def default_branch(package, version):
    """The release branch when none is given: ``<package>-<version>``."""
    return "%s-%s" % (package, version)


def default_commit_message(package, version):
    """The community-operators commit message: ``operator <package> (<version>)``."""
    return "operator %s (%s)" % (package, version)


def work_tree_top(returncode, stdout):
    """The top-level directory from ``git rev-parse --is-inside-work-tree --show-toplevel`` (exit code, output),
    or None when that is no work tree (not a repository, a bare one, or inside ``.git``)."""
    lines = stdout.decode("utf-8", "replace").splitlines() if isinstance(stdout, bytes) else stdout.splitlines()
    if returncode != 0 or len(lines) < 2 or lines[0] != "true" or not lines[1]:
        return None
    return lines[1]


def open_work_tree(path, git="git"):
    """A GitRepo for the top level of the git work tree ``path`` lies in; PublishError ``<path> is not a git work
    tree`` otherwise (missing directory, no repository, a bare repository, inside ``.git``)."""
    if not os.path.isdir(path):
        raise PublishError("%s is not a git work tree" % path)
    proc = GitRepo(path, git=git).run("rev-parse", "--is-inside-work-tree", "--show-toplevel", check=False)
    top = work_tree_top(proc.returncode, proc.stdout)
    if top is None:
        raise PublishError("%s is not a git work tree" % path)
    return GitRepo(top, git=git)


def release_refs(repo, branch, base_ref, base_given=False):
    """``(branch, base, existing)``: the validated ``branch`` name, the commit ``base_ref`` names (PublishError
    ``base_ref <ref> is not a commit`` otherwise) and the current tip of ``branch`` (None when it does not exist).
    The release is computed on top of ``existing or base``; a ``base_ref`` the user gave (``base_given``) that the
    existing branch does not contain is refused (the commit would not be on top of it)."""
    branch = check_branch_name(repo, branch)
    base = repo.rev_parse(base_ref)
    if base is None:
        raise PublishError("base_ref %s is not a commit" % base_ref)
    existing = repo.rev_parse("refs/heads/%s" % branch)
    if base_given and existing and repo.run("merge-base", "--is-ancestor", base, existing, check=False).returncode != 0:
        raise PublishError("branch %s exists and does not contain base_ref %s: the release would be committed on top of the "
                           "branch, not of base_ref - rebase or delete the branch, or leave base_ref out" % (branch, base_ref))
    return branch, base, existing


def parse_worktree_branches(text):
    """{branch ref: work tree path} of the branches checked out, from ``git worktree list --porcelain``."""
    out = {}
    path = None
    for line in text.splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree "):]
        elif not line:
            path = None
        elif line.startswith("branch ") and path is not None:
            out[line[len("branch "):]] = path
    return out


def checked_out_branches(repo):
    """{branch ref: work tree path} of the branches checked out in any work tree of ``repo``."""
    return parse_worktree_branches(repo.out("worktree", "list", "--porcelain"))


def check_branch_free(branch, worktrees, repo_top, repo_path, result=None):
    """Refuse to move ``branch`` while a work tree has it checked out (its files and index would no longer match
    its HEAD). ``worktrees``: :func:`checked_out_branches`; ``repo_path`` names the work tree ``repo_top`` in the
    message. ``result``: partial results the failure carries."""
    where = worktrees.get("refs/heads/%s" % branch)
    if where is None:
        return
    same = os.path.realpath(where) == os.path.realpath(repo_top)
    err = PublishError("branch %s is checked out in %s; check out another branch first (the release commit is made "
                       "without touching the work tree)" % (branch, repo_path if same else where))
    err.result.update(result or {})
    raise err


def release_diff(repo, start, changes):
    """Ansible diffs of ``changes`` ({path: bytes}) against the files at ``start`` (files.make_diff)."""
    before = repo.read_blobs(start, sorted(changes))
    return [make_diff(path, before.get(path), data) for path, data in sorted(changes.items())]


def execute(module):
    p = module.params
    if p["gpg_key"] and p["sign"] is False:
        raise OptionError("sign=false contradicts gpg_key (a signing key always signs): drop one of them")
    repo = open_work_tree(p["repo_path"])
    branch, base, existing = release_refs(repo, p["branch"] or default_branch(p["package"], p["version"]),
                                          p["base_ref"], base_given=p["base_ref"] != "HEAD")
    start = existing or base
    plan = plan_release(repo, start, p["package"], p["version"], p["bundle_path"],
                        release_config=p["release_config"], bundle_image=p["bundle_image"],
                        bundle_registry=p["bundle_registry"], lookup_paths=p["bundle_lookup"],
                        puller_factory=puller_factory(p), opm_compat=opm_compat_arg(p["opm_compat"]),
                        validate=p["validate"])
    changes = release_changes(repo, start, plan)
    result = dict(changed=bool(changes), branch=branch, commit=existing, base=start, files=sorted(changes),
                  templates=plan.templates_changed, catalogs=plan.catalogs, validation=plan.validation,
                  bundle_image=plan.bundle_image, csv_name=plan.csv_name, warnings=plan.warnings)
    if module._diff and changes:
        result["diff"] = release_diff(repo, start, changes)
    if not changes:
        return result
    # also in check mode: a real run would fail
    check_branch_free(branch, checked_out_branches(repo), repo.path, p["repo_path"], result)
    if module.check_mode:
        check_signing_key(repo, p["gpg_key"], p["sign"])
        result["commit"] = None
        return result
    message = p["commit_message"] or default_commit_message(p["package"], p["version"])
    result["commit"] = commit_release(repo, start, branch, changes, message, author_name=p["author_name"],
                                      author_email=p["author_email"], signing_key=p["gpg_key"], sign=p["sign"],
                                      old_branch_sha=existing)
    return result
