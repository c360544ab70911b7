# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One catalog_mirror run from module parameters: read the source (a catalog image and the images its kept bundles
name, or a layout directory written before), plan, copy, push the rebuilt catalog, write the cluster resources.
No Ansible imports: the module runs :func:`execute`, which is :func:`run_mirror` of its parameters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import tempfile
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import (
    Mirror,
    MirrorError,
    as_copied,
    blocked_hint,
    blocked_matcher,
    bundle_images,
    by_digest,
    catalog_source,
    check_mirror,
    cluster_catalog,
    failure_message,
    mapping_text,
    mirror_reference,
    mirror_sets,
    parse_images,
    put_catalog,
    rebuild_catalog,
    resource_name,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import filter_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as declcfg_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import write_fs
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_client_kwargs
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for, parse_platform, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import LayoutStore, RegistryStore, is_index
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import AuthenticationError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import CONFIGS_LABEL
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import extract_layer, pull_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

CATALOG_ANNOTATION = "io.kubeforge.operators.mirror.catalog"
# on the rebuilt catalog's entry in a directory: the entry of the source catalog it was rebuilt from (the copy whose
# layers are its base); directories written before it existed are read by the rule of :meth:`_Run.from_layout`
SOURCE_CATALOG_ANNOTATION = "io.kubeforge.operators.mirror.source-catalog"
MAX_CONCURRENCY = 16
RESOURCE_FILES = (
    ("image_digest_mirror_set", "imagedigestmirrorset.yaml"),
    ("image_tag_mirror_set", "imagetagmirrorset.yaml"),
    ("catalog_source", "catalogsource.yaml"),
    ("cluster_catalog", "clustercatalog.yaml"),
)


# One image to copy: its source ImageReference, the repository to read (a layout's: the full name), the repository
# to write, the tag to write (None: by digest only) and the bundles that name it.
Job = namedtuple("Job", ["source", "source_repository", "dest_repository", "tag", "bundles"])


def _job(source, source_repository, dest_repository, tag, bundles=()):
    return Job(source, source_repository, dest_repository, tag, list(bundles))


def _dest_name(params, ref):
    """How the destination names ``ref``: its repository under the mirror, or its full name in a layout."""
    if params["mirror"]:
        return mirror_reference(ref, params["mirror"])
    return ref


def _select(fbc_dir, selection):
    cfg = declcfg_load.load(fbc_dir)
    if selection is None:
        return cfg, []
    return filter_catalog(cfg, selection)


def params_platforms(params):
    """``params["platforms"]`` checked (each ``os/arch[/variant]``), or None for image indexes whole."""
    platforms = params.get("platforms") or None
    for platform in platforms or ():
        try:
            parse_platform(platform)
        except ValueError as e:
            raise MirrorError("platforms: %s" % e) from None
    return platforms


def registry_credentials(params):
    """``{registry host: (username, password)}`` of the explicit credentials, by the rule the module documents:
    ``registry_username``/``registry_password`` are the mirror's; ``source_registry_username``/
    ``source_registry_password`` the source catalog registry's; with ``to_dir`` (no mirror) ``registry_username`` is
    the source catalog registry's too, as before the source options existed. Ambiguous combinations are refused."""
    mirror_creds = (params.get("registry_username"), params.get("registry_password"))
    source_creds = (params.get("source_registry_username"), params.get("source_registry_password"))
    given = dict((name, bool(creds[0] or creds[1])) for name, creds in (("mirror", mirror_creds), ("source", source_creds)))
    found = {}
    source = parse_reference(params["source_image"]).registry if params.get("source_image") else None
    if params.get("mirror"):
        mirror = parse_reference(params["mirror"] + "/x").registry
        if given["mirror"]:
            found[mirror] = mirror_creds
        if given["source"] and source is not None:
            if source == mirror and given["mirror"]:
                raise MirrorError(
                    "source_registry_username and registry_username are both for %s: the source catalog and the mirror are "
                    "on the same registry, reached with one set of credentials - give registry_username (a user who can "
                    "read the source and write the mirror) alone" % source
                )
            found[source] = source_creds
    elif source is not None:  # to_dir: the one registry credentials can be for is the source's
        if given["mirror"] and given["source"]:
            raise MirrorError(
                "with to_dir, registry_username is the source catalog registry's (no mirror is written to): give it or source_registry_username, not both"
            )
        if given["mirror"] or given["source"]:
            found[source] = source_creds if given["source"] else mirror_creds
    return found


def layout_catalog_packages(store, ref, work):
    """The packages of the rebuilt catalog ``ref`` in a layout ``store``: its top layer (the catalog directory, the
    opaque layer :func:`mirror.rebuild_catalog` adds) read from the first platform image."""
    data, media_type, _digest = store.get_manifest(ref.name, ref.reference)
    doc = json.loads(data)
    if is_index(doc, media_type):
        children = [d for d in doc.get("manifests") or () if d.get("digest")]
        if not children:
            raise MirrorError("%s: the rebuilt catalog %s lists no image" % (store.directory, ref))
        doc = json.loads(store.get_manifest(ref.name, children[0]["digest"])[0])
    with store.open_blob(ref.name, doc["config"]["digest"]) as stream:
        config = json.loads(stream.read(4 * 1024 * 1024).decode("utf-8"))
    configs_dir = ((config.get("config") or {}).get("Labels") or {}).get(CONFIGS_LABEL)
    if not configs_dir or not doc.get("layers"):
        raise MirrorError("%s: the rebuilt catalog %s has no label %s" % (store.directory, ref, CONFIGS_LABEL))
    root = os.path.join(work, "rebuilt")
    with store.open_blob(ref.name, doc["layers"][-1]["digest"]) as stream:
        extract_layer(stream, root)
    return declcfg_load.load(os.path.join(root, configs_dir.strip("/"))).package_names()


class _Run:
    def __init__(self, params, check_mode):
        self.params = params
        self.check_mode = check_mode
        self.work = tempfile.mkdtemp(prefix="kubeforge-mirror-")
        self.warnings = []
        self.packages = []
        self.blocked = []
        self.stores = {}
        self.credentials = {}
        self.mirror_host = None
        self.bundle_refs = set()

    def store(self, ref_text):
        """One store (one client: tokens are reused) per registry; explicit credentials only for the registries
        :func:`registry_credentials` gives them to, the auth files for the others."""
        ref = parse_reference(ref_text)
        if ref.registry not in self.stores:
            kwargs = registry_client_kwargs(self.params, credentials=False)
            username, password = self.credentials.get(ref.registry, (None, None))
            if username or password:
                kwargs.update(username=username, password=password)
            self.stores[ref.registry] = RegistryStore(client_for(ref, **kwargs))
        return self.stores[ref.registry]

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    # ------------------------------------------------------------------ sources
    def from_image(self, catalog_ref):
        """Source store, the source catalog's job, the image jobs of the kept bundles, and the rebuilt catalog's
        directory."""
        params = self.params
        catalog = parse_reference(params["source_image"])
        source = self.store(params["source_image"])
        # the source as named: registries.conf mirrors would read the mirror this run writes
        try:
            fbc_path, _pulled = pull_catalog(catalog, os.path.join(self.work, "pulled"), client=source.client, mirrors={})
        except AuthenticationError as e:
            if catalog.registry in self.credentials or not params["mirror"]:
                raise
            raise MirrorError(
                "%s - the source catalog registry's credentials are source_registry_username/source_registry_password or "
                "an auth file entry (registry_username/registry_password are the mirror's)" % e
            ) from None
        cfg, self.warnings = _select(fbc_path, params["select"])
        self.packages = cfg.package_names()
        fbc_dir = os.path.join(self.work, "configs")
        write_fs(cfg, fbc_dir, "json")
        blocked = blocked_matcher(params["blocked_images"])
        images = bundle_images(cfg)
        self.blocked = sorted(text for text in images if blocked(text))
        self.bundle_refs = set(str(ref) for ref, _b in parse_images(dict((b.get("image"), []) for b in cfg.bundles if b.get("image"))))
        jobs = []
        for ref, bundles in parse_images(dict((t, b) for t, b in images.items() if t not in self.blocked)):
            tag = None if ref.digest else ref.tag
            jobs.append((self.store(str(ref)), _job(ref, ref.repository, self._dest_repository(ref), tag, bundles)))
        # the source catalog goes by digest where the rebuilt one goes: its layers are the rebuilt one's base layers
        catalog_job = _job(catalog, catalog.repository, self._catalog_repository(catalog, catalog_ref), None)
        return source, catalog_job, jobs, fbc_dir

    def from_layout(self):
        """Source store, the catalog's target, the source catalog's job, the rebuilt catalog's job and the image jobs
        of a layout written with to_dir. The rebuilt catalog's entry names its source catalog's
        (SOURCE_CATALOG_ANNOTATION); in a directory written before that annotation, the source catalog is the one
        by-digest entry of the rebuilt catalog's repository. Other copies of a source catalog (the source's tag moved
        between two runs into the directory) are left out: the rebuilt catalog is not built on them."""
        where = self.params["from_dir"]
        source = LayoutStore(where)
        entries = source.entries()
        if not entries:
            raise MirrorError("from_dir %s holds no image (write it with to_dir first)" % where)
        refs = dict((name, parse_reference(name)) for name in entries)
        annotated = dict((name, (desc.get("annotations") or {})) for name, desc in entries.items())
        catalogs = [name for name in sorted(entries) if annotated[name].get(CATALOG_ANNOTATION)]
        if not catalogs:
            raise MirrorError("from_dir %s names no catalog (its index.json has no entry annotated %s)" % (where, CATALOG_ANNOTATION))
        if len(catalogs) > 1:
            raise MirrorError("from_dir %s holds %d rebuilt catalogs (%s): write one catalog per directory" % (where, len(catalogs), ", ".join(catalogs)))
        rebuilt = refs[catalogs[0]]
        copies = [name for name in sorted(entries) if refs[name].name == rebuilt.name and refs[name].digest]
        original = annotated[catalogs[0]].get(SOURCE_CATALOG_ANNOTATION) or (copies[0] if len(copies) == 1 else None)
        if original not in entries:
            raise MirrorError(
                "from_dir %s does not say which copy of the source catalog the catalog %s was rebuilt from (%s): write it "
                "with to_dir again" % (where, catalogs[0], ", ".join(copies) or "it holds none")
            )
        catalog_ref = self.catalog_target(rebuilt)
        jobs = []
        for name in sorted(entries):
            ref = refs[name]
            if name in catalogs or name in copies or name == original:
                continue
            jobs.append((source, _job(ref, ref.name, self._dest_repository(ref), ref.tag if not ref.digest else None)))
        catalog_job = _job(refs[original], refs[original].name, catalog_ref.repository, None)
        rebuilt_job = _job(rebuilt, rebuilt.name, catalog_ref.repository, catalog_ref.tag or "latest")
        self.packages = layout_catalog_packages(source, rebuilt, self.work)
        return source, catalog_ref, catalog_job, rebuilt_job, jobs

    def _catalog_repository(self, catalog, catalog_ref):
        return catalog_ref.repository if self.params["mirror"] else catalog.name

    def _dest_repository(self, ref):
        return _dest_name(self.params, ref).repository if self.params["mirror"] else ref.name

    # ------------------------------------------------------------------ run
    def check(self):
        params = self.params
        if params["from_dir"] and params["to_dir"]:
            raise MirrorError("from_dir with to_dir copies one directory into another; give mirror instead of to_dir")
        if params["mirror"]:
            params["mirror"] = check_mirror(params["mirror"])
            self.mirror_host = parse_reference(params["mirror"] + "/x").registry
            if params.get("catalog_image"):
                target = parse_reference(params["catalog_image"])
                if target.registry != self.mirror_host:
                    raise MirrorError(
                        "catalog_image %s is not on the mirror registry %s: the rebuilt catalog goes to the "
                        "mirror, over the source catalog's layers copied there" % (target, self.mirror_host)
                    )
                if target.digest:
                    raise MirrorError(
                        "catalog_image %s names a digest: give a repository and a tag (the rebuilt catalog's digest is known once it is built)" % target
                    )
        self.credentials = registry_credentials(params)
        self.platforms = params_platforms(params)  # a malformed platform is refused before anything is read
        if not 1 <= params["concurrency"] <= MAX_CONCURRENCY:
            raise MirrorError("concurrency must be between 1 and %d, not %d" % (MAX_CONCURRENCY, params["concurrency"]))

    def run(self):
        params = self.params
        self.check()
        concurrency = params["concurrency"]
        dest = self.store(params["mirror"] + "/x") if params["mirror"] else LayoutStore(params["to_dir"])
        rebuilt_job = fbc_dir = None
        if params["source_image"]:
            catalog_ref = self.catalog_target(parse_reference(params["source_image"]))
            source, catalog_job, jobs, fbc_dir = self.from_image(catalog_ref)
        else:
            source, catalog_ref, catalog_job, rebuilt_job, jobs = self.from_layout()
        # the source catalog first; from a directory, the rebuilt catalog is planned with the rest and copied last
        jobs = [(source, catalog_job)] + jobs + ([(source, rebuilt_job)] if rebuilt_job else [])
        plans = self.plan(jobs, dest, concurrency, fbc_dir is not None)
        rebuilt_plan = plans.pop()[1] if rebuilt_job else None
        images, totals = self.report(plans, dest)
        result = {"images": images, "totals": totals, "blocked": self.blocked, "warnings": list(self.warnings)}
        changed = totals["copied"] > 0
        if not self.check_mode:
            self.copy(plans, dest, concurrency, images, totals)
        if fbc_dir is not None:
            rebuilt, top = rebuild_catalog(source, catalog_job.source_repository, plans[0][1], fbc_dir)
            catalog = self.push_catalog(dest, catalog_ref, catalog_job.dest_repository, rebuilt, top)
        else:
            catalog = self.copy_catalog(source, dest, rebuilt_job, rebuilt_plan, catalog_ref)
        changed |= catalog.pop("changed")
        catalog.update(source=images[0]["source"], packages=self.packages)
        result["catalog"] = catalog
        if self.params["to_dir"]:
            if not self.check_mode:
                original = "%s@%s" % (catalog_job.dest_repository, plans[0][1]["digest"])
                dest.annotate(catalog_job.dest_repository, catalog_ref.tag or "latest", {CATALOG_ANNOTATION: "true", SOURCE_CATALOG_ANNOTATION: original})
            changed |= dest.save_index(self.check_mode)
        if params["mirror"]:
            changed |= self.resources(result, catalog_ref, catalog)
        result["changed"] = changed
        return result

    def catalog_target(self, catalog):
        if self.params["catalog_image"]:
            return parse_reference(self.params["catalog_image"])
        return _dest_name(self.params, catalog).with_tag(catalog.tag or "latest")

    def plan(self, jobs, dest, concurrency, hint):
        by_source = {}
        for store, job in jobs:
            by_source.setdefault(id(store), (store, []))[1].append(job)
        plans, failures = [], []
        for store, store_jobs in by_source.values():
            done, failed = Mirror(store, dest, concurrency, self.platforms).plan(store_jobs)
            plans += [(store, job, plan) for job, plan in done]
            failures += failed
        if failures:
            message = "nothing was copied: " + failure_message("looked up in the source and the mirror", failures, 0)
            catalog_job = jobs[0][1]
            # related images only: a bundle's own image is what OLM unpacks, never one to leave out
            missing = [job.source for job, _msg in failures if job.bundles and str(job.source) not in self.bundle_refs]
            if hint and missing and not any(job is catalog_job for job, _msg in failures):
                # the catalog was read from the source and looked up in the mirror: what failed are images of bundles
                message += blocked_hint(missing)
            raise MirrorError(message, result={"failed_images": [{"source": str(job.source), "error": msg} for job, msg in failures]})
        order = dict((id(job), i) for i, (_store, job) in enumerate(jobs))
        return [(job, plan, store) for store, job, plan in sorted(plans, key=lambda p: order[id(p[1])])]

    def report(self, plans, dest):
        images = []
        totals = {"images": len(plans), "present": 0, "copied": 0, "failed": 0, "bytes": 0, "bytes_to_copy": 0, "blobs_uploaded": 0, "blobs_mounted": 0}
        for index, (job, plan, _store) in enumerate(plans):
            totals["bytes"] += plan["size"]
            if plan["present"]:
                totals["present"] += 1
            else:
                totals["copied"] += 1
                totals["bytes_to_copy"] += plan["size"]
            # the source catalog is named by the digest read (its copy is by digest: the tag is the rebuilt one's)
            source = by_digest(job.source, plan["digest"]) if index == 0 else job.source
            images.append(
                {
                    "source": str(source),
                    "mirror": self.copied_text(source, job, plan, dest),
                    "digest": plan["digest"],
                    "size": plan["size"],
                    "state": "present" if plan["present"] else "missing",
                    "bundles": job.bundles,
                }
            )
        return images, totals

    def copied_text(self, source, job, plan, dest):
        """Where the copy of ``source`` is: in the mirror, in the form of ``source`` (by digest or by tag); in a
        directory, the ``oci:<dir>:<index.json name>`` reference skopeo and podman take."""
        if self.params["mirror"]:
            return str(as_copied(source, self.mirror_host, job.dest_repository, plan["digest"]))
        return "oci:%s:%s" % (dest.directory, job.dest_repository + ("@" + plan["digest"] if not job.tag else ":" + job.tag))

    def copy(self, plans, dest, concurrency, images, totals):
        by_source = {}
        for index, (job, plan, store) in enumerate(plans):
            if not plan["present"]:
                by_source.setdefault(id(store), (store, []))[1].append((index, job, plan))
            elif self.params["to_dir"]:
                top = plan["manifests"][-1]
                dest.remember(job.dest_repository, job.tag or top[0], top[1], top[2])  # listed, if it was not
        failures, copied = [], 0
        for store, items in by_source.values():
            done, failed = Mirror(store, dest, concurrency, self.platforms).copy([(job, plan) for _i, job, plan in items])
            failures += failed
            states = dict((id(job), stats) for job, _plan, stats in done)
            for index, job, _plan in items:
                stats = states.get(id(job))
                if stats is not None:
                    images[index]["state"] = "copied"
                    totals["blobs_uploaded"] += stats["uploaded"]
                    totals["blobs_mounted"] += stats["mounted"]
                    copied += 1
        totals["copied"], totals["failed"] = copied, len(failures)
        if failures:
            if self.params["to_dir"]:
                dest.save_index()  # what did copy stays listed, so the next run skips it
            index_of = dict((id(job), index) for index, (job, _plan, _store) in enumerate(plans))
            for job, _msg in failures:
                images[index_of[id(job)]]["state"] = "failed"
            raise MirrorError(
                failure_message("copied", failures, copied) + "; run again to copy the rest",
                result={
                    "images": images,
                    "totals": totals,
                    # not "failed": Ansible sets a failed module's "failed" to true
                    "failed_images": [{"source": images[index_of[id(job)]]["source"], "error": msg} for job, msg in failures],
                },
            )

    def push_catalog(self, dest, catalog_ref, repository, rebuilt, top):
        tag = catalog_ref.tag or "latest"
        if self.check_mode:
            digest = sha256_digest(top[0])
            current = dest.head_manifest(repository, tag)
            changed = not current or current.get("digest") != digest
            return {"image": "" if changed else self.catalog_text(repository, tag, digest), "digest": digest, "changed": changed}
        digest, changed = put_catalog(dest, repository, tag, rebuilt, top)
        return {"image": self.catalog_text(repository, tag, digest), "digest": digest, "changed": changed}

    def copy_catalog(self, source, dest, job, plan, catalog_ref):
        """From a directory: the rebuilt catalog copied like the images (after them), under its tag."""
        digest = plan["digest"]
        if self.check_mode or plan["present"]:
            shown = self.catalog_text(job.dest_repository, job.tag, digest) if plan["present"] else ""
            return {"image": shown, "digest": digest, "changed": not plan["present"]}
        _done, failures = Mirror(source, dest, 1, self.platforms).copy([(job, plan)])
        if failures:
            raise MirrorError(
                "the rebuilt catalog %s could not be copied to %s (every image was): %s" % (job.source, catalog_ref, excerpt(failures[0][1], 300))
            )
        return {"image": self.catalog_text(job.dest_repository, job.tag, digest), "digest": digest, "changed": True}

    def catalog_text(self, repository, tag, digest):
        """The rebuilt catalog: by digest only in the mirror (what catalogd and OLM v0 take); in a directory, its
        ``oci:<dir>:<index.json name>`` reference (listed under its tag)."""
        if self.params["mirror"]:
            return "%s/%s@%s" % (self.mirror_host, repository, digest)
        return "oci:%s:%s:%s" % (os.path.abspath(self.params["to_dir"]), repository, tag)

    def resources(self, result, catalog_ref, catalog):
        params = self.params
        images = result["images"]
        # the cluster pulls the bundle and related images by their source references; the catalog from the mirror
        pairs = [(parse_reference(i["source"]), parse_reference(i["mirror"])) for i in images[1:]]
        name = params["resource_name"] or resource_name(catalog_ref)
        catalog_image = catalog["image"] or "%s@%s" % (catalog_ref.name, catalog["digest"])
        idms, itms = mirror_sets(pairs, name)
        resources = {
            "image_digest_mirror_set": idms,
            "image_tag_mirror_set": itms,
            "catalog_source": catalog_source(name, params["catalog_source_namespace"], catalog_image),
            "cluster_catalog": cluster_catalog(name, catalog_image),
        }
        # one line per copy made, the source catalog's to its copy by digest: the rebuilt catalog is no source's copy
        mapping = mapping_text([(i["source"], i["mirror"]) for i in images])
        result.update(resources=resources, mapping=mapping.splitlines())
        if not params["manifests_dir"]:
            return False
        import yaml

        with FileOutput(check_mode=self.check_mode) as out:
            for key, filename in RESOURCE_FILES:
                if resources[key] is not None:
                    out.write(os.path.join(params["manifests_dir"], filename), yaml.safe_dump(resources[key], default_flow_style=False, sort_keys=False))
            out.write(os.path.join(params["manifests_dir"], "mapping.txt"), mapping)
            out.commit()
        result["files"] = list(out.paths)
        return out.changed


def run_mirror(params, check_mode=False):
    """The catalog_mirror module's result for its ``params``; raises MirrorError (and the OCI/FBC errors)."""
    run = _Run(dict(params), check_mode)
    try:
        return run.run()
    finally:
        run.close()


def execute(module):
    return run_mirror(module.params, check_mode=module.check_mode)
