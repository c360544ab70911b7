# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Copy images by digest between registries and OCI image layout directories, as ``skopeo copy --all`` does.

A copy walks the manifest tree (an index and every image it lists, whole) and moves each blob once: blobs the
destination holds are skipped, blobs another repository of the destination registry holds are mounted, the rest
are streamed from source to destination in chunks (never a whole layer in memory). Manifests are written last,
children before their index, so a manifest present at the destination means everything it names is there too:
that is what makes an interrupted copy resumable (a re-run skips every image whose manifest is present).

Stores: :class:`RegistryStore` (one registry, through :class:`client.RegistryClient`) and :class:`LayoutStore` (an OCI
image layout directory: content-addressed blobs written atomically, ``index.json`` naming each image by its source
reference). No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput, read_bytes
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    DOCKER_FOREIGN_LAYER,
    INDEX_TYPES,
    MAX_MANIFEST_SIZE,
    OCI_INDEX,
    parse_platform,
    sha256_digest,
    verify_digest,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import (
    DigestMismatchError,
    OCIError,
    RegistryError,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    OCI_LAYOUT_FILE,
    canonical_json,
    layout_blob_path,
)

REF_NAME = "org.opencontainers.image.ref.name"
_CHUNK = 1024 * 1024


class CopyError(OCIError):
    """One image could not be copied; the message names it and why."""


def parse_manifest(data, where):
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise CopyError("%s is not a JSON manifest" % where) from None
    if not isinstance(doc, dict):
        raise CopyError("%s is not a JSON manifest" % where)
    return doc


def is_index(doc, media_type):
    return media_type in INDEX_TYPES or (not media_type and "manifests" in doc)


def manifest_blobs(doc):
    """The descriptors of the blobs an image manifest names (config and layers; foreign layers stay where they are)."""
    blobs = [doc["config"]] if isinstance(doc.get("config"), dict) else []
    blobs += [d for d in doc.get("layers") or () if d.get("mediaType") != DOCKER_FOREIGN_LAYER]
    return blobs


class _VerifyingReader:
    """Reads a source stream for an upload, counting (and hashing, for a destination that does not check digests
    itself) as it goes; a short, long or altered stream raises at its end."""

    def __init__(self, stream, digest, size, where, hashing=True):
        self.stream = stream
        self.digest = digest
        self.size = size
        self.where = where
        self.read_bytes = 0
        self._hash = hashlib.sha256() if hashing else None

    def read(self, amount=_CHUNK):
        # whole chunks whatever was asked: http.client asks for 8 KiB at a time and sends what it gets, and a
        # Python call per 8 KiB would bound a copy's speed
        chunk = self.stream.read(_CHUNK)
        if self._hash is not None:
            self._hash.update(chunk)
        self.read_bytes += len(chunk)
        if not chunk or self.read_bytes >= self.size:
            self._check(bool(chunk))
        return chunk

    def _check(self, more):
        if more and self.read_bytes > self.size:
            raise DigestMismatchError("%s: blob %s is larger than its descriptor's %d bytes" % (
                self.where, self.digest, self.size))
        if self._hash is not None and self.read_bytes == self.size and "sha256:" + self._hash.hexdigest() != self.digest:
            raise DigestMismatchError("%s: blob %s failed digest verification" % (self.where, self.digest))
        if not more and self.read_bytes < self.size:
            raise DigestMismatchError("%s: blob %s ended after %d of %d bytes" % (
                self.where, self.digest, self.read_bytes, self.size))


class _ReadAhead:
    """Reads a stream ahead on a thread, at most ``depth`` chunks (so memory stays bounded): the download of the
    next chunk overlaps the upload of this one instead of taking turns with it."""

    def __init__(self, stream, depth=4):
        self._stream = stream
        self._queue = queue.Queue(depth)
        self._stop = threading.Event()
        self._last = None  # b"" or the exception that ended the stream
        self._thread = threading.Thread(target=self._pump, name="read-ahead", daemon=True)
        self._thread.start()

    def _pump(self):
        try:
            while not self._stop.is_set():
                chunk = self._stream.read(_CHUNK)
                self._put(chunk)
                if not chunk:
                    return
        except Exception as e:  # noqa: BLE001 - handed to the reading side, which raises it
            self._put(e)

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def read(self, amount=_CHUNK):
        item = self._last if self._last is not None else self._queue.get()
        if isinstance(item, Exception):
            self._last = item
            raise item
        if not item:
            self._last = item
        return item

    def close(self):
        self._stop.set()
        self._thread.join()


class RegistryStore:
    """Images in one registry (``client``: a :class:`client.RegistryClient`)."""

    # a registry computes the digest of every upload and refuses one that differs (DIGEST_INVALID)
    verifies_digests = True

    def __init__(self, client):
        self.client = client
        self.name = client.registry
        self._blob_repos = {}  # digest -> a repository of this registry known to hold it (mount source)
        self._lock = threading.Lock()

    def __repr__(self):
        return "RegistryStore(%s)" % self.name

    def get_manifest(self, repository, reference):
        return self.client.get_manifest(repository, reference)

    def head_manifest(self, repository, reference):
        """``{"digest", ...}`` of a tag or digest, or None."""
        return self.client.head_manifest(repository, reference, push=True)

    def has_manifest(self, repository, digest):
        return self.client.head_manifest(repository, digest, push=True) is not None

    def has_blob(self, repository, digest):
        return self.client.blob_exists(repository, digest, push=True)

    def open_blob(self, repository, digest):
        return self.client.open_blob(repository, digest)

    def put_blob(self, repository, desc, reader, known_missing=False):
        """Store a blob (``reader``: a file object or a callable opening one, see ``upload_blob_stream``) unless
        present (``known_missing``: the caller just looked) or mountable from another repository."""
        with self._lock:
            mount_from = self._blob_repos.get(desc["digest"])
        if mount_from == repository:
            mount_from = None
        result = self.client.upload_blob_stream(repository, desc["digest"], desc["size"], reader, mount_from,
                                                check_exists=not known_missing)
        self.holds(repository, desc["digest"])
        return result

    def holds(self, repository, digest):
        with self._lock:
            self._blob_repos.setdefault(digest, repository)

    def mountable(self, repository, digest):
        """True when another repository of this registry is known to hold the blob."""
        with self._lock:
            return self._blob_repos.get(digest, repository) != repository

    def remember(self, repository, reference, data, media_type):
        """Nothing to do: a registry names its images itself."""

    def annotate(self, repository, reference, annotations):
        """Nothing to do: a registry keeps no annotations of its own on a tag."""

    def put_manifest(self, repository, reference, data, media_type, top=False):
        digest = self.client.put_manifest(repository, reference, data, media_type)
        if reference.startswith("sha256:") and digest != reference:
            raise RegistryError("registry %s: manifest %s in %s was stored as %s" % (
                self.name, reference, repository, digest), registry=self.name, repository=repository)

    def reference(self, repository, reference):
        return "%s/%s%s%s" % (self.name, repository, "@" if ":" in reference else ":", reference)


class LayoutStore:
    """Images in an OCI image layout directory. Blobs are shared by every image; ``index.json`` lists each image
    under its source reference (annotation ``org.opencontainers.image.ref.name``), written by :meth:`save_index`."""

    verifies_digests = False

    def __init__(self, directory):
        self.directory = os.path.abspath(directory)
        self.name = self.directory
        self._lock = threading.Lock()
        self._entries = None

    def __repr__(self):
        return "LayoutStore(%s)" % self.directory

    def entries(self):
        """``{reference: descriptor}`` of ``index.json`` (empty for a new directory)."""
        if self._entries is None:
            data = read_bytes(os.path.join(self.directory, "index.json"))
            doc = parse_manifest(data, "%s/index.json" % self.directory) if data is not None else {}
            self._entries = dict(((d.get("annotations") or {}).get(REF_NAME), d)
                                 for d in doc.get("manifests") or () if (d.get("annotations") or {}).get(REF_NAME))
        return self._entries

    def _ref_name(self, repository, reference):
        return "%s%s%s" % (repository, "@" if ":" in reference else ":", reference)

    def head_manifest(self, repository, reference):
        if ":" in reference:
            return {"digest": reference} if self.has_manifest(repository, reference) else None
        desc = self.entries().get(self._ref_name(repository, reference))
        return {"digest": desc["digest"]} if desc and self.has_blob(repository, desc["digest"]) else None

    def get_manifest(self, repository, reference):
        if ":" not in reference:
            desc = self.entries().get(self._ref_name(repository, reference))
            if desc is None:
                raise CopyError("%s holds no image %s" % (self.directory, self._ref_name(repository, reference)))
            reference = desc["digest"]
        data = read_bytes(layout_blob_path(self.directory, reference))
        if data is None:
            raise CopyError("%s holds no manifest %s (of %s)" % (self.directory, reference, repository))
        if len(data) > MAX_MANIFEST_SIZE:
            raise CopyError("%s: manifest %s is larger than %d bytes" % (self.directory, reference, MAX_MANIFEST_SIZE))
        verify_digest(data, reference, "%s manifest %s" % (self.directory, reference))
        return data, parse_manifest(data, reference).get("mediaType") or "", reference

    def has_manifest(self, repository, digest):
        return self.has_blob(repository, digest)

    def has_blob(self, repository, digest):
        # blobs are renamed into place complete (and verified before), so presence is enough
        return os.path.isfile(layout_blob_path(self.directory, digest))

    def open_blob(self, repository, digest):
        return open(layout_blob_path(self.directory, digest), "rb")

    def put_blob(self, repository, desc, reader, known_missing=False):
        if not known_missing and self.has_blob(repository, desc["digest"]):
            return "exists"

        def produce(f, source):
            while True:
                chunk = source.read(_CHUNK)
                if not chunk:
                    return
                f.write(chunk)

        with (reader() if callable(reader) else nullcontext(reader)) as source, FileOutput() as out:
            out.stream(layout_blob_path(self.directory, desc["digest"]), lambda f: produce(f, source))
            out.commit()
        return "uploaded"

    def holds(self, repository, digest):
        pass

    def mountable(self, repository, digest):
        return False  # one blob directory: present or not

    def put_manifest(self, repository, reference, data, media_type, top=False):
        digest = sha256_digest(data)
        if ":" in reference and reference != digest:
            raise CopyError("%s: manifest content is %s, not %s" % (self.directory, digest, reference))
        if not self.has_blob(repository, digest):
            with FileOutput() as out:
                out.write(layout_blob_path(self.directory, digest), data)
                out.commit()
        if top:
            self.remember(repository, reference, data, media_type)

    def remember(self, repository, reference, data, media_type):
        """List the image in ``index.json`` (written by :meth:`save_index`)."""
        digest = sha256_digest(data)
        with self._lock:
            self.entries()[self._ref_name(repository, reference)] = {
                "mediaType": media_type, "digest": digest, "size": len(data),
                "annotations": {REF_NAME: self._ref_name(repository, reference)}}

    def annotate(self, repository, reference, annotations):
        """Add ``annotations`` to the ``index.json`` entry of an image listed before."""
        with self._lock:
            entry = self.entries()[self._ref_name(repository, reference)]
            entry["annotations"] = dict(entry.get("annotations") or {}, **annotations)

    def save_index(self, check_mode=False):
        """Write ``oci-layout`` and ``index.json`` (every image listed so far); returns whether they changed."""
        manifests = [self.entries()[name] for name in sorted(self.entries())]
        with FileOutput(check_mode=check_mode) as out:
            changed = out.write(os.path.join(self.directory, "oci-layout"), OCI_LAYOUT_FILE)
            changed |= out.write(os.path.join(self.directory, "index.json"), canonical_json(
                {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}))
            out.commit()
        return changed

    def reference(self, repository, reference):
        return "%s:%s" % (self.directory, self._ref_name(repository, reference))


class Copier:
    """Copies images from ``source`` to ``dest`` stores; safe to use from several threads at once."""

    def __init__(self, source, dest, platforms=None):
        self.source = source
        self.dest = dest
        # None: image indexes whole; else ``parse_platform`` dicts: only those platforms' images (a sparse index)
        self.platforms = [parse_platform(p) for p in platforms] if platforms else None
        self._blob_locks = {}
        self._lock = threading.Lock()

    def _kept_children(self, where, children):
        """The children of an index to copy: all of them, or those of the chosen platforms and the attestation
        manifests that refer to one of those (an index none of whose platforms is chosen is an error)."""
        if self.platforms is None:
            return list(children)

        def chosen(desc):
            p = desc.get("platform") or {}
            return any(p.get("os") == want["os"] and p.get("architecture") == want["architecture"]
                       and ("variant" not in want or not p.get("variant") or p.get("variant") == want["variant"])
                       for want in self.platforms)

        kept = [c for c in children if chosen(c)]
        if not kept:
            available = ["/".join(x for x in ((c.get("platform") or {}).get(k) for k in ("os", "architecture", "variant")) if x) or "?"
                         for c in children]
            raise CopyError("%s has none of the platforms chosen (it has %s)" % (where, ", ".join(available) or "none"))
        digests = {c["digest"] for c in kept}
        return kept + [c for c in children if c not in kept
                       and (c.get("annotations") or {}).get("vnd.docker.reference.digest") in digests]

    def _blob_lock(self, digest):
        with self._lock:
            return self._blob_locks.setdefault(digest, threading.Lock())

    def tree(self, repository, reference):
        """``(digest, [(digest, data, media_type, doc)] children first, blob descriptors)`` of a source image."""
        data, media_type, digest = self.source.get_manifest(repository, reference)
        manifests, blobs = [], []
        self._walk(repository, digest, data, media_type, manifests, blobs, 0)
        seen = set()
        blobs = [b for b in blobs if not (b["digest"] in seen or seen.add(b["digest"]))]
        return digest, manifests, blobs

    def _walk(self, repository, digest, data, media_type, manifests, blobs, depth):
        where = "%s@%s" % (repository, digest)
        doc = parse_manifest(data, where)
        media_type = media_type or doc.get("mediaType") or ""
        if is_index(doc, media_type):
            if depth:
                raise CopyError("%s: an index inside an index is not supported" % where)
            for child in self._kept_children(where, doc.get("manifests") or ()):
                cdata, cmt, cdigest = self.source.get_manifest(repository, child["digest"])
                self._walk(repository, cdigest, cdata, cmt, manifests, blobs, depth + 1)
        else:
            blobs.extend(manifest_blobs(doc))
        manifests.append((digest, data, media_type, doc))

    def plan(self, repository, reference, dest_repository, tag=None):
        """What copying one image would do: ``{digest, size, present}`` (``size``: bytes of its blobs and
        manifests; ``present``: the destination holds it under its digest, and under ``tag`` when given)."""
        digest, manifests, blobs = self.tree(repository, reference)
        size = sum(int(b.get("size") or 0) for b in blobs) + sum(len(m[1]) for m in manifests)
        present = self.dest.has_manifest(dest_repository, digest)
        if present and tag:
            current = self.dest.head_manifest(dest_repository, tag)
            present = bool(current) and current.get("digest") == digest
        return {"digest": digest, "size": size, "present": present, "manifests": manifests, "blobs": blobs}

    def copy(self, repository, plan, dest_repository, tag=None):
        """Copy one planned image; returns ``{"uploaded", "mounted", "exists", "bytes"}``."""
        stats = {"uploaded": 0, "mounted": 0, "exists": 0, "bytes": 0}
        top = plan["manifests"][-1]
        if plan["present"]:
            stats["exists"] = len(plan["blobs"])
            self.dest.remember(dest_repository, tag or top[0], top[1], top[2])
            return stats
        for desc in plan["blobs"]:
            with self._blob_lock(desc["digest"]):
                result = self._copy_blob(repository, desc, dest_repository)
            stats[result] += 1
            if result == "uploaded":
                stats["bytes"] += int(desc.get("size") or 0)
        for digest, data, media_type, doc in plan["manifests"]:
            # written again when present (a resumed copy): a PUT of the same bytes changes nothing and costs what
            # asking first would
            self._put_manifest(dest_repository, digest, data, media_type, doc, top=not tag and digest == top[0])
        if tag:
            self._put_manifest(dest_repository, tag, top[1], top[2], top[3], top=True)
        return stats

    def _put_manifest(self, repository, reference, data, media_type, doc, top):
        try:
            self.dest.put_manifest(repository, reference, data, media_type, top=top)
        except RegistryError as e:
            if self.platforms is None or not is_index(doc, media_type) or e.status != 400:
                raise
            raise CopyError(
                "%s refuses image index %s in %s without the images of the platforms not chosen (a sparse index): copy "
                "these images whole (no platforms), or mirror to a registry that accepts sparse indexes or to a "
                "directory. The registry says: %s" % (self.dest.name, reference, repository, e)) from None

    def _copy_blob(self, repository, desc, dest_repository):
        digest = desc["digest"]
        # a blob another repository of the destination holds is mounted without asking first: a mount of a blob the
        # repository already has succeeds too
        if not self.dest.mountable(dest_repository, digest) and self.dest.has_blob(dest_repository, digest):
            self.dest.holds(dest_repository, digest)
            return "exists"
        if self.source is self.dest:
            self.dest.holds(repository, digest)  # one registry: mounted from the source repository, not copied

        @contextmanager
        def source_reader():
            # opened only for an upload: a mounted blob is never read from the source
            with self.source.open_blob(repository, digest) as stream:
                ahead = _ReadAhead(stream)
                try:
                    reader = _VerifyingReader(ahead, digest, int(desc.get("size") or 0),
                                              "%s %s" % (self.source.name, repository), not self.dest.verifies_digests)
                    yield reader
                    if reader.read_bytes < reader.size:
                        reader.read(_CHUNK)  # a store that stopped reading early has not verified the end
                finally:
                    ahead.close()

        return self.dest.put_blob(dest_repository, desc, source_reader, known_missing=True)


def run_all(tasks, concurrency):
    """Run ``task()`` callables on ``concurrency`` threads; returns ``[(result, None) or (None, exception)]`` in
    order: every task runs, one failure does not stop the others."""

    def guarded(task):
        try:
            return task(), None
        except Exception as e:  # noqa: BLE001 - collected and reported with the image it belongs to
            return None, e

    if concurrency <= 1 or len(tasks) <= 1:
        return [guarded(t) for t in tasks]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(guarded, tasks))
