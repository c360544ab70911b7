# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One catalog_mirror run from module parameters: read the source (a catalog image and the images its kept bundles
name, or a layout directory written before), plan, copy, push the rebuilt catalog, write the cluster resources.
No Ansible imports: the module is glue around :func:`run_mirror`."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.mirror import (
    Mirror,
    MirrorError,
    blocked_matcher,
    bundle_images,
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
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import filter_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as declcfg_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import write_fs
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.args import registry_client_kwargs
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for, parse_platform, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import LayoutStore, RegistryStore
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

CATALOG_ANNOTATION = "io.kubeforge.operators.mirror.catalog"
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


class _Run:
    def __init__(self, params, check_mode):
        self.params = params
        self.check_mode = check_mode
        self.work = tempfile.mkdtemp(prefix="kubeforge-mirror-")
        self.warnings = []
        self.packages = []
        self.blocked = []
        self.stores = {}
        self.credentials_for = None

    def store(self, ref_text):
        """One store (one client: tokens are reused) per registry; the explicit credentials only for theirs."""
        ref = parse_reference(ref_text)
        if ref.registry not in self.stores:
            kwargs = registry_client_kwargs(self.params, credentials=ref.registry == self.credentials_for)
            self.stores[ref.registry] = RegistryStore(client_for(ref, **kwargs))
        return self.stores[ref.registry]

    def close(self):
        shutil.rmtree(self.work, ignore_errors=True)

    # ------------------------------------------------------------------ sources
    def from_image(self, catalog_ref):
        """Source store, catalog job and the image jobs of the kept bundles, and the rebuilt catalog's directory.
        Explicit credentials go to the registry written to (see :meth:`store`); the others' come from the auth files."""
        params = self.params
        catalog = parse_reference(params["source_image"])
        source = self.store(params["source_image"])
        # the source as named: registries.conf mirrors would read the mirror this run writes
        fbc_path, pulled = pull_catalog(catalog, os.path.join(self.work, "pulled"), client=source.client, mirrors={})
        cfg, self.warnings = _select(fbc_path, params["select"])
        self.packages = cfg.package_names()
        fbc_dir = os.path.join(self.work, "configs")
        write_fs(cfg, fbc_dir, "json")
        blocked = blocked_matcher(params["blocked_images"])
        images = bundle_images(cfg)
        self.blocked = sorted(text for text in images if blocked(text))
        jobs = []
        for ref, bundles in parse_images(dict((t, b) for t, b in images.items() if t not in self.blocked)):
            tag = None if ref.digest else ref.tag
            jobs.append((self.store(str(ref)), _job(ref, ref.repository, self._dest_repository(ref), tag, bundles)))
        # the source catalog goes where the rebuilt one goes: its layers are the rebuilt one's base layers
        catalog_job = _job(catalog, catalog.repository, self._catalog_repository(catalog, catalog_ref), None)
        return source, catalog_job, jobs, fbc_dir, pulled.ref

    def from_layout(self):
        """Source store, the rebuilt catalog's layout entry name, and the image jobs of a layout written with to_dir."""
        source = LayoutStore(self.params["from_dir"])
        entries = source.entries()
        if not entries:
            raise MirrorError("from_dir %s holds no image (write it with to_dir first)" % self.params["from_dir"])
        jobs, catalog = [], None
        for name, desc in sorted(entries.items()):
            ref = parse_reference(name)
            if (desc.get("annotations") or {}).get(CATALOG_ANNOTATION):
                catalog = ref
                continue
            jobs.append((source, _job(ref, ref.name, self._dest_repository(ref), ref.tag if not ref.digest else None)))
        if catalog is None:
            raise MirrorError("from_dir %s names no catalog (its index.json has no entry annotated %s)"
                              % (self.params["from_dir"], CATALOG_ANNOTATION))
        return source, catalog, jobs

    def _catalog_repository(self, catalog, catalog_ref):
        return catalog_ref.repository if self.params["mirror"] else catalog.name

    def _dest_repository(self, ref):
        return _dest_name(self.params, ref).repository if self.params["mirror"] else ref.name

    # ------------------------------------------------------------------ run
    def run(self):
        params = self.params
        if params["from_dir"] and params["to_dir"]:
            raise MirrorError("from_dir with to_dir copies one directory into another; give mirror instead of to_dir")
        if params["mirror"]:
            params["mirror"] = check_mirror(params["mirror"])
        # the explicit credentials are the registry's written to: the mirror's, or with to_dir the catalog's
        written = params["mirror"] + "/x" if params["mirror"] else params["source_image"]
        self.credentials_for = parse_reference(written).registry if written else None
        self.platforms = params_platforms(params)  # a malformed platform is refused before anything is read
        concurrency = params["concurrency"]
        if not 1 <= concurrency <= MAX_CONCURRENCY:
            raise MirrorError("concurrency must be between 1 and %d, not %d" % (MAX_CONCURRENCY, concurrency))
        if params["mirror"]:
            dest = self.store(params["mirror"] + "/x")
        else:
            dest = LayoutStore(params["to_dir"])
        if params["source_image"]:
            catalog_ref = self.catalog_target(parse_reference(params["source_image"]))
            source, catalog_job, jobs, fbc_dir, source_ref = self.from_image(catalog_ref)
            jobs.insert(0, (source, catalog_job))
        else:
            source, catalog, jobs = self.from_layout()
            catalog_ref = self.catalog_target(catalog)
            # rebuilt when the layout was written: copied like any image, under the catalog's tag
            catalog_job = _job(catalog, catalog.name, self._catalog_repository(catalog, catalog_ref),
                               catalog_ref.tag or "latest")
            jobs.insert(0, (source, catalog_job))
            fbc_dir, source_ref = None, str(catalog)
        plans = self.plan(jobs, dest, concurrency)
        images, totals = self.report(plans)
        result = {"images": images, "totals": totals, "blocked": self.blocked, "warnings": list(self.warnings)}
        changed = totals["copied"] > 0
        if not self.check_mode:
            self.copy(plans, dest, concurrency, images, totals)
        catalog_plan = plans[0][1]
        if fbc_dir is not None:
            rebuilt, top = rebuild_catalog(source, catalog_job.source_repository, catalog_plan, fbc_dir)
            catalog = self.push_catalog(dest, catalog_ref, catalog_job.dest_repository, rebuilt, top)
        else:
            catalog = {"digest": catalog_plan["digest"], "changed": not catalog_plan["present"],
                       "image": self._catalog_text(catalog_ref, catalog_job.dest_repository, catalog_job.tag, catalog_plan["digest"])}
        changed |= catalog.pop("changed")
        catalog.update(source=source_ref, packages=self.packages)
        result["catalog"] = catalog
        if isinstance(dest, LayoutStore):
            if not self.check_mode:
                dest.annotate(catalog_job.dest_repository, catalog_ref.tag or "latest", {CATALOG_ANNOTATION: "true"})
            changed |= dest.save_index(self.check_mode)
        if params["mirror"]:
            changed |= self.resources(result, plans[1:], catalog_ref, catalog)
        result["changed"] = changed
        return result

    def catalog_target(self, catalog):
        if self.params["catalog_image"]:
            return parse_reference(self.params["catalog_image"])
        return _dest_name(self.params, catalog).with_tag(catalog.tag or "latest")

    def plan(self, jobs, dest, concurrency):
        by_source = {}
        for store, job in jobs:
            by_source.setdefault(id(store), (store, []))[1].append(job)
        plans, failures = [], []
        for store, store_jobs in by_source.values():
            done, failed = Mirror(store, dest, concurrency, self.platforms).plan(store_jobs)
            plans += [(store, job, plan) for job, plan in done]
            failures += failed
        if failures:
            raise MirrorError("nothing was copied: " + failure_message("looked up in the source and the mirror", failures, 0),
                              result={"failed": [{"source": str(job.source), "error": msg} for job, msg in failures]})
        order = dict((id(job), i) for i, (_store, job) in enumerate(jobs))
        return [(job, plan, store) for store, job, plan in sorted(plans, key=lambda p: order[id(p[1])])]

    def report(self, plans):
        images = []
        totals = {"images": len(plans), "present": 0, "copied": 0, "bytes": 0, "bytes_to_copy": 0,
                  "blobs_uploaded": 0, "blobs_mounted": 0}
        for job, plan, _store in plans:
            source, _repo, dest_repository, _tag, bundles = job
            totals["bytes"] += plan["size"]
            if plan["present"]:
                totals["present"] += 1
            else:
                totals["copied"] += 1
                totals["bytes_to_copy"] += plan["size"]
            images.append({"source": str(source), "mirror": self._mirror_text(source, dest_repository, plan),
                           "digest": plan["digest"], "size": plan["size"],
                           "state": "present" if plan["present"] else "missing", "bundles": bundles})
        return images, totals

    def _mirror_text(self, source, dest_repository, plan):
        if self.params["mirror"]:
            return str(_dest_name(self.params, source).with_digest(plan["digest"]))
        return "%s:%s@%s" % (self.params["to_dir"], dest_repository, plan["digest"])

    def copy(self, plans, dest, concurrency, images, totals):
        by_source = {}
        for index, (job, plan, store) in enumerate(plans):
            if not plan["present"]:
                by_source.setdefault(id(store), (store, []))[1].append((index, job, plan))
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
        if failures:
            if isinstance(dest, LayoutStore):
                dest.save_index()  # what did copy stays listed, so the next run skips it
            failed = set(str(job.source) for job, _msg in failures)
            for image in images:
                if image["source"] in failed:
                    image["state"] = "failed"
            raise MirrorError(failure_message("copied", failures, copied) + "; run again to copy the rest",
                              result={"images": images, "totals": totals,
                                      "failed": [{"source": str(job.source), "error": msg} for job, msg in failures]})

    def push_catalog(self, dest, catalog_ref, repository, rebuilt, top):
        tag = catalog_ref.tag or "latest"
        if self.check_mode:
            digest = sha256_digest(top[0])
            current = dest.head_manifest(repository, tag)
            changed = not current or current.get("digest") != digest
            shown = "" if changed else self._catalog_text(catalog_ref, repository, tag, digest)
            return {"image": shown, "digest": digest, "changed": changed}
        digest, changed = put_catalog(dest, repository, tag, rebuilt, top)
        return {"image": self._catalog_text(catalog_ref, repository, tag, digest), "digest": digest, "changed": changed}

    def _catalog_text(self, catalog_ref, repository, tag, digest):
        if self.params["mirror"]:
            return "%s@%s" % (catalog_ref.with_tag(tag), digest)
        return "%s:%s:%s@%s" % (self.params["to_dir"], repository, tag, digest)

    def resources(self, result, plans, catalog_ref, catalog):
        params = self.params
        pairs = [(job.source, _dest_name(params, job.source)) for job, _plan, _store in plans]
        name = params["resource_name"] or resource_name(catalog_ref)
        catalog_image = "%s@%s" % (catalog_ref.name, catalog["digest"])
        idms, itms = mirror_sets(pairs, name)
        resources = {"image_digest_mirror_set": idms, "image_tag_mirror_set": itms,
                     "catalog_source": catalog_source(name, params["catalog_source_namespace"], catalog_image),
                     "cluster_catalog": cluster_catalog(name, catalog_image)}
        mapping = mapping_text(pairs + [(catalog["source"], catalog_image)])
        result.update(resources=resources, mapping=mapping.splitlines())
        if not params["manifests_dir"]:
            return False
        import yaml

        with FileOutput(check_mode=self.check_mode) as out:
            for key, filename in RESOURCE_FILES:
                if resources[key] is not None:
                    out.write(os.path.join(params["manifests_dir"], filename),
                              yaml.safe_dump(resources[key], default_flow_style=False, sort_keys=False))
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
