# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mirror an operator catalog for a disconnected cluster: the images its kept bundles name, copied by digest
(``oci.copy``); the catalog rebuilt with only the kept operators; and what a cluster needs to pull from the mirror
(ImageDigestMirrorSet, ImageTagMirrorSet, CatalogSource, ClusterCatalog, a ``source=mirror`` mapping).

Names follow oc-mirror v2: an image keeps its repository path under the mirror (``quay.io/ns/app@sha256:…`` →
``<mirror>/ns/app@sha256:…``; a mirror may carry a namespace prefix, ``<host>/<prefix>/ns/app``). No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import io
import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import OCI_MANIFEST, sha256_digest
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.copy import (
    Copier,
    is_index,
    run_all,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import InvalidReferenceError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    CONFIGS_LABEL,
    BaseImage,
    build_directory_image,
    canonical_json,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import (
    ImageReference,
    parse_reference,
)

IDMS_API = "config.openshift.io/v1"
CATALOG_SOURCE_API = "operators.coreos.com/v1alpha1"
CLUSTER_CATALOG_API = "olm.operatorframework.io/v1"
MAX_FAILURES_SHOWN = 10


class MirrorError(KubeforgeError):
    """The mirror could not be made; ``result`` holds what was copied and what was not."""


def mirror_reference(source, mirror):
    """Where ``source`` (an ImageReference) lives in ``mirror`` (``host[:port][/prefix]``)."""
    host, _sep, prefix = mirror.strip("/").partition("/")
    repository = "/".join(part for part in (prefix.strip("/"), source.repository) if part)
    return ImageReference(host, repository, source.tag, source.digest)


def check_mirror(mirror):
    """``mirror`` as ``host[:port][/prefix]``, or a MirrorError naming the problem."""
    text = (mirror or "").strip().strip("/")
    host = text.split("/", 1)[0]
    if not ("." in host or ":" in host or host == "localhost"):
        raise MirrorError("mirror %r must start with a registry host (host[:port][/prefix], e.g. registry.example.com:5000/mirror)" % excerpt(mirror, 100))
    try:
        parse_reference(text + "/image")
    except InvalidReferenceError as e:
        raise MirrorError("mirror %r is not a registry host with an optional path: %s" % (excerpt(mirror, 100), e)) from None
    return text


def blocked_matcher(patterns):
    """``matches(reference text)`` for oc-mirror v2's ``blockedImages``: regular expressions searched in the
    reference; an invalid one is a MirrorError naming it."""
    compiled = []
    for pattern in patterns or ():
        try:
            compiled.append(re.compile(pattern))
        except re.error as e:
            raise MirrorError("blocked_images: %r is not a valid regular expression: %s" % (excerpt(pattern, 100), e)) from None
    return lambda text: any(c.search(text) for c in compiled)


def bundle_images(cfg):
    """``{reference text: sorted names of the bundles naming it}``: every bundle's image and related images."""
    images = {}
    for bundle in cfg.bundles:
        refs = [bundle.get("image")] + [r.get("image") for r in bundle.get("relatedImages") or () if isinstance(r, dict)]
        for ref in refs:
            if ref:
                images.setdefault(ref, set()).add(bundle.get("name") or "?")
    return dict((ref, sorted(names)) for ref, names in sorted(images.items()))


def parse_images(images):
    """``[(ImageReference, bundles)]``; a reference that does not parse is an error naming its bundles."""
    parsed, bad = [], []
    for text, bundles in images.items():
        try:
            parsed.append((parse_reference(text), bundles))
        except InvalidReferenceError as e:
            bad.append("%s (named by %s)" % (e, ", ".join(bundles[:3])))
    if bad:
        raise MirrorError("the catalog names images that cannot be mirrored: " + "; ".join(bad[:MAX_FAILURES_SHOWN]))
    return parsed


def serve_command(config):
    """The catalog's Cmd for a rebuilt ``/configs``: opm's pre-built cache no longer matches it, so an ``opm serve``
    with ``--cache-dir`` is told to rebuild it at start (``--cache-enforce-integrity=false``, what opm's own
    generated Dockerfiles run); ``--cache-only`` is dropped. None: the base's Cmd stays."""
    cmd = list(((config.get("config") or {}).get("Cmd")) or ())
    if not any(arg == "--cache-dir" or arg.startswith("--cache-dir=") for arg in cmd):
        return None
    cmd = [arg for arg in cmd if arg != "--cache-only"]
    if not any(arg.startswith("--cache-enforce-integrity") for arg in cmd):
        cmd.append("--cache-enforce-integrity=false")
    return cmd


def rebuild_catalog(store, repository, plan, fbc_dir):
    """The catalog image of ``plan`` (a :meth:`Copier.plan` of the source catalog in ``store``) with ``fbc_dir`` in
    place of its catalog directory (an opaque layer on top of each platform's image: nothing of the old catalog
    shows through). Returns ``(images, top)``: the rebuilt platform images (CatalogImage) and the top manifest as
    ``(bytes, media type)`` (the new index, or the one image)."""
    rebuilt = {}
    for digest, _data, media_type, doc in plan["manifests"]:
        if is_index(doc, media_type):
            continue
        with store.open_blob(repository, doc["config"]["digest"]) as stream:
            config = json.loads(stream.read(4 * 1024 * 1024).decode("utf-8"))
        configs_dir = ((config.get("config") or {}).get("Labels") or {}).get(CONFIGS_LABEL)
        if not configs_dir:
            continue  # an attestation or another artifact of the index, not a platform image of the catalog
        base = BaseImage(
            ImageReference(store.name, repository, None, digest), None, {"manifest": doc, "config": config, "digest": digest, "media_type": media_type}
        )
        rebuilt[digest] = build_directory_image(
            fbc_dir,
            configs_dir,
            base=base,
            cmd=serve_command(config),
            forced_labels={CONFIGS_LABEL: configs_dir},
            manifest_format="oci" if media_type == OCI_MANIFEST else "docker",
            opaque=True,
        )
    if not rebuilt:
        raise MirrorError("the source catalog has no image with the label %s" % CONFIGS_LABEL)
    top_digest, _data, top_type, top_doc = plan["manifests"][-1]
    if not is_index(top_doc, top_type):
        image = rebuilt[top_digest]
        return [image], (image.manifest_bytes, image.media_type)
    index = copy.deepcopy(top_doc)
    index["manifests"] = []
    for desc in top_doc.get("manifests") or ():
        image = rebuilt.get(desc.get("digest"))
        if image is not None:
            index["manifests"].append(dict(desc, mediaType=image.media_type, digest=image.digest, size=len(image.manifest_bytes)))
    return list(rebuilt.values()), (canonical_json(index), top_type)


def put_catalog(store, repository, tag, images, top):
    """Write the rebuilt catalog (:func:`rebuild_catalog`; its base layers already in ``store``) under ``tag``;
    returns ``(digest, changed)``."""
    data, media_type = top
    digest = sha256_digest(data)
    current = store.head_manifest(repository, tag)
    if current is not None and current.get("digest") == digest:
        store.remember(repository, tag, data, media_type)
        return digest, False
    for image in images:
        for blob_digest, blob in sorted(image.blobs.items()):
            store.put_blob(repository, {"digest": blob_digest, "size": len(blob)}, io.BytesIO(blob))
        store.put_manifest(repository, image.digest, image.manifest_bytes, image.media_type)
    store.put_manifest(repository, tag, data, media_type, top=True)
    return digest, True


class Mirror:
    """Plans and copies a set of images from ``source`` to ``dest`` (stores of ``oci.copy``).

    ``jobs``: ``[(source ImageReference, source repository, dest repository, dest tag or None)]``.
    """

    def __init__(self, source, dest, concurrency=4, platforms=None):
        self.copier = Copier(source, dest, platforms)
        self.concurrency = concurrency

    def plan(self, jobs):
        """``(plans, failures)``: a plan per job that could be read; failures as ``[(job, message)]``."""
        results = run_all([lambda j=job: self.copier.plan(j[1], j[0].reference, j[2], j[3]) for job in jobs], self.concurrency)
        plans, failures = [], []
        for job, (plan, error) in zip(jobs, results):
            if error is not None:
                failures.append((job, str(error)))
            else:
                plans.append((job, plan))
        return plans, failures

    def copy(self, plans):
        """``(copied stats per job, failures)`` for the planned jobs not present at the destination."""
        results = run_all([lambda j=job, p=plan: self.copier.copy(j[1], p, j[2], j[3]) for job, plan in plans], self.concurrency)
        done, failures = [], []
        for (job, plan), (stats, error) in zip(plans, results):
            if error is not None:
                failures.append((job, str(error)))
            else:
                done.append((job, plan, stats))
        return done, failures


def failure_message(what, failures, copied):
    shown = "; ".join("%s: %s" % (job[0], excerpt(message, 300)) for job, message in failures[:MAX_FAILURES_SHOWN])
    more = len(failures) - MAX_FAILURES_SHOWN
    return "%d image(s) could not be %s (%d copied): %s%s" % (len(failures), what, copied, shown, "; and %d more" % more if more > 0 else "")


def by_digest(ref, digest=None):
    """``ref`` (an ImageReference) named by digest only - ``digest``, or its own - the one form catalogd refuses
    nothing of (a tag beside a digest it does), and what OLM v0 and CRI-O pull by. None without a digest."""
    digest = digest or ref.digest
    return ImageReference(ref.registry, ref.repository, None, digest) if digest else None


def as_copied(ref, registry, repository, digest):
    """How a copy of the source image ``ref`` is named in ``registry``/``repository``: by digest when ``ref`` names
    one (pushed by digest only), else by its tag (pushed by digest and that tag) - the same form as ``ref``, so that
    ``source=mirror`` mapping lines and mirror sets pair like with like."""
    if ref.digest:
        return ImageReference(registry, repository, None, ref.digest)
    if ref.tag:
        return ImageReference(registry, repository, ref.tag, None)
    return ImageReference(registry, repository, None, digest)


def blocked_hint(refs):
    """A suggestion for images the source has not got (``refs``: ImageReferences the kept bundles name as related
    images): leave them out with ``blocked_images``, one pattern per registry. Empty for none."""
    registries = sorted(set(ref.registry for ref in refs))
    if not registries:
        return ""
    patterns = ", ".join("'^%s/'" % re.escape(registry).replace("\\.", "[.]") for registry in registries[:3])
    return (
        "; if the cluster does not need them (placeholder images, such as those of the reserved example.invalid "
        "domain), leave them out with blocked_images: [%s]" % patterns
    )


def mirror_sets(pairs, name):
    """ImageDigestMirrorSet and ImageTagMirrorSet (None when empty) for ``[(source, mirror)]`` ImageReferences: one
    entry per source repository, digest references in the first, tag-only references in the second."""
    by_digest, by_tag = {}, {}
    for source, mirror in pairs:
        target = by_digest if source.digest else by_tag
        target.setdefault(source.name, set()).add(mirror.name)

    def entries(found):
        return [{"source": src, "mirrors": sorted(mirrors)} for src, mirrors in sorted(found.items())]

    idms = itms = None
    if by_digest:
        idms = {"apiVersion": IDMS_API, "kind": "ImageDigestMirrorSet", "metadata": {"name": name}, "spec": {"imageDigestMirrors": entries(by_digest)}}
    if by_tag:
        itms = {"apiVersion": IDMS_API, "kind": "ImageTagMirrorSet", "metadata": {"name": name}, "spec": {"imageTagMirrors": entries(by_tag)}}
    return idms, itms


def catalog_source(name, namespace, image, display_name=None):
    spec = {"sourceType": "grpc", "image": image}
    if display_name:
        spec["displayName"] = display_name
    return {"apiVersion": CATALOG_SOURCE_API, "kind": "CatalogSource", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def cluster_catalog(name, image):
    return {
        "apiVersion": CLUSTER_CATALOG_API,
        "kind": "ClusterCatalog",
        "metadata": {"name": name},
        "spec": {"source": {"type": "Image", "image": {"ref": image}}},
    }


def mapping_text(pairs):
    """``source=mirror`` lines, sorted (the format of ``oc adm catalog mirror``'s mapping.txt)."""
    return "".join("%s=%s\n" % (s, m) for s, m in sorted(set((str(s), str(m)) for s, m in pairs)))


def resource_name(catalog_ref):
    """A DNS-1123 name for the resources of a mirrored catalog: ``<repository's last part>-<tag>``."""
    base = catalog_ref.repository.rsplit("/", 1)[-1]
    tag = catalog_ref.tag or "latest"
    name = "".join(c if c.isalnum() else "-" for c in ("%s-%s" % (base, tag)).lower()).strip("-")
    return name[:63].rstrip("-") or "catalog"
