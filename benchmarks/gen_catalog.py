"""Deterministic generator of a large File-Based Catalog made from real community-operators bundles.

Every package of the real catalogs committed under ``tests/data`` (``<catalogs>/<ocp version>/<package>/catalog.yaml``)
is a template.
Templates are taken round-robin (sorted by version, then package) and copied under new package names
``<package>-x<NNNN>`` until the catalog has at least ``--packages`` packages and ``--min-bundles`` bundles.
A copy renames the package consistently everywhere opm looks: the olm.package object, the ``package`` field of
channels / bundles / deprecations / package-scoped others, bundle names (``<package>.<version>`` keeps its
version suffix), channel entries and their ``replaces`` / ``skips``, deprecation references and each bundle's
``olm.package`` property. Everything else (CSV metadata, bundle objects, related images) is the real content.

The catalog is loaded and written with the collection's own engine (``load_fs`` / ``write_fs``), in JSON and in
YAML, into a cache directory outside the repository (default ``~/.cache/kubeforge-bench``, or
``$KUBEFORGE_BENCH_CACHE``), keyed by the generator version, the size parameters and a digest of the template
files; an existing complete copy is reused. Generated data is never meant to be committed.

    python benchmarks/gen_catalog.py [--packages 500] [--min-bundles 10000] [--cache DIR] [--force]
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import time

GENERATOR_VERSION = 1
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
# tests/lib/testdata.py locates the committed test data (tests/data, provenance in tests/data/README.md).
sys.path.insert(0, os.path.join(REPO, "tests"))
from lib.testdata import COMMUNITY_OPERATORS_PROD  # noqa: E402

DEFAULT_SOURCE = str(COMMUNITY_OPERATORS_PROD / "catalogs")
DEFAULT_CACHE = os.environ.get("KUBEFORGE_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kubeforge-bench")


def ensure_collection_link():
    """Make the working tree importable as ansible_collections.kubeforge.operators (as conftest.py does)."""
    link = os.path.join(COLLECTIONS, "ansible_collections", "kubeforge", "operators")
    if not os.path.islink(link) and not os.path.isdir(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(REPO, link)
    if COLLECTIONS not in sys.path:
        sys.path.insert(0, COLLECTIONS)


def template_dirs(source):
    """Sorted (version, package dir) pairs of the real catalogs."""
    out = []
    for version in sorted(os.listdir(source)):
        vdir = os.path.join(source, version)
        if not os.path.isdir(vdir):
            continue
        for pkg in sorted(os.listdir(vdir)):
            if os.path.isdir(os.path.join(vdir, pkg)):
                out.append(os.path.join(vdir, pkg))
    if not out:
        raise SystemExit("no template catalogs under %s" % source)
    return out


def source_digest(dirs):
    h = hashlib.sha256()
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                h.update(os.path.relpath(path, os.path.dirname(os.path.dirname(d))).encode())
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:12]


def _renamer(old_pkg, new_pkg):
    prefix = old_pkg + "."

    def bundle_name(name):
        if isinstance(name, str) and name.startswith(prefix):
            return new_pkg + name[len(old_pkg) :]
        if isinstance(name, str) and name:
            return "%s.%s" % (new_pkg, name)
        return name

    return bundle_name


def rename_copy(cfg, new_pkg):
    """A DeclarativeConfig holding one package of cfg renamed to new_pkg (shares unchanged nested values)."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig

    if len(cfg.packages) != 1:
        raise SystemExit("template must hold exactly one package, got %d" % len(cfg.packages))
    old_pkg = cfg.packages[0]["name"]
    bname = _renamer(old_pkg, new_pkg)
    out = DeclarativeConfig()
    out.packages = [dict(p, name=new_pkg) for p in cfg.packages]
    for c in cfg.channels:
        entries = []
        for e in c.get("entries") or ():
            n = dict(e, name=bname(e.get("name")))
            if "replaces" in e:
                n["replaces"] = bname(e["replaces"])
            if "skips" in e:
                n["skips"] = [bname(s) for s in e["skips"]]
            entries.append(n)
        out.channels.append(dict(c, package=new_pkg, entries=entries))
    for b in cfg.bundles:
        props = []
        for p in b.get("properties") or ():
            if p.get("type") == "olm.package" and isinstance(p.get("value"), dict):
                p = dict(p, value=dict(p["value"], packageName=new_pkg))
            props.append(p)
        out.bundles.append(dict(b, name=bname(b.get("name")), package=new_pkg, properties=props))
    for d in cfg.deprecations:
        entries = []
        for e in d.get("entries") or ():
            ref = dict(e.get("reference") or {})
            if ref.get("schema") == "olm.bundle":
                ref["name"] = bname(ref.get("name"))
            entries.append(dict(e, reference=ref))
        out.deprecations.append(dict(d, package=new_pkg, entries=entries))
    for o in cfg.others:
        out.others.append(dict(o, package=new_pkg) if o.get("package") == old_pkg else o)
    return out


def cache_key(packages, min_bundles, digest):
    return "gen-v%d-p%d-b%d-%s" % (GENERATOR_VERSION, packages, min_bundles, digest)


def generate(packages=500, min_bundles=10000, source=DEFAULT_SOURCE, cache=DEFAULT_CACHE, force=False, log=None):
    """Create (or reuse) the generated catalogs; returns the manifest dict with 'json' and 'yaml' dirs."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    ensure_collection_link()
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_fs
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import write_fs

    dirs = template_dirs(source)
    key = cache_key(packages, min_bundles, source_digest(dirs))
    target = os.path.join(cache, key)
    manifest_path = os.path.join(target, "manifest.json")
    if not force and os.path.isfile(manifest_path):
        with open(manifest_path) as f:
            return json.load(f)
    log("generating %s (templates: %d package catalogs under %s)" % (target, len(dirs), source))
    started = time.monotonic()
    templates = [load_fs(d, workers=1) for d in dirs]
    tmp = target + ".tmp-%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    n_pkgs = n_bundles = n_channels = 0
    names = []
    while n_pkgs < packages or n_bundles < min_bundles:
        tmpl = templates[n_pkgs % len(templates)]
        new_pkg = "%s-x%04d" % (tmpl.packages[0]["name"], n_pkgs)
        part = rename_copy(tmpl, new_pkg)
        for fmt in ("json", "yaml"):
            write_fs(part, os.path.join(tmp, fmt), fmt)
        names.append(new_pkg)
        n_pkgs += 1
        n_bundles += len(part.bundles)
        n_channels += len(part.channels)
    sizes = {}
    for fmt in ("json", "yaml"):
        total = 0
        for root, _dirs, files in os.walk(os.path.join(tmp, fmt)):
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        sizes[fmt] = total
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "key": key,
        "source": source,
        "templates": [os.path.relpath(d, source) for d in dirs],
        "packages": n_pkgs,
        "channels": n_channels,
        "bundles": n_bundles,
        "bytes": sizes,
        "json": os.path.join(target, "json"),
        "yaml": os.path.join(target, "yaml"),
    }
    with open(os.path.join(tmp, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    shutil.rmtree(target, ignore_errors=True)
    os.rename(tmp, target)
    log(
        "generated %d packages, %d bundles (JSON %.1f MiB, YAML %.1f MiB) in %.1fs"
        % (n_pkgs, n_bundles, sizes["json"] / 2**20, sizes["yaml"] / 2**20, time.monotonic() - started)
    )
    return manifest


MODIFIED_VERSION = 2
# how many packages each change of modified_copy() touches (disjoint groups, taken in package-name order)
MODIFY = {"remove": 5, "add": 5, "new_head": 20, "default_channel": 10, "deprecate": 10}


def _modify_package(cfg, change, index):
    """Apply one change of modified_copy() to a one-package config in place."""
    pkg = cfg.packages[0]
    name = pkg["name"]
    if change == "new_head":
        # a new bundle on top of the default channel (the head moves), declaring olm.maxOpenShiftVersion
        channel = next(c for c in cfg.channels if c["name"] == pkg["defaultChannel"])
        entries = channel["entries"]
        replaced = set()
        for e in entries:
            replaced.add(e.get("replaces"))
            replaced.update(e.get("skips") or ())
        head = next(e["name"] for e in entries if e["name"] not in replaced)
        bundle = "%s.v99.0.%d" % (name, index)
        entries.append({"name": bundle, "replaces": head})
        template = next(b for b in cfg.bundles if b["name"] == head)
        props = [p for p in template.get("properties") or () if p.get("type") not in ("olm.package", "olm.maxOpenShiftVersion")]
        props.append({"type": "olm.package", "value": {"packageName": name, "version": "99.0.%d" % index}})
        props.append({"type": "olm.maxOpenShiftVersion", "value": "4.%d" % (16 + index % 4)})
        cfg.bundles.append(dict(template, name=bundle, properties=props))
        # and the old head gets a maximum of its own (a change on a bundle in both catalogs)
        template["properties"] = [p for p in template.get("properties") or () if p.get("type") != "olm.maxOpenShiftVersion"]
        template["properties"].append({"type": "olm.maxOpenShiftVersion", "value": "4.15"})
    elif change == "default_channel":
        others = sorted(c["name"] for c in cfg.channels if c["name"] != pkg["defaultChannel"])
        if others:
            pkg["defaultChannel"] = others[0]
        else:  # one channel: a second one with the same entries becomes the default
            first = cfg.channels[0]
            cfg.channels.append(dict(first, name=first["name"] + "-next", entries=[dict(e) for e in first["entries"]]))
            pkg["defaultChannel"] = first["name"] + "-next"
    elif change == "deprecate":
        ref = {"schema": "olm.channel", "name": pkg["defaultChannel"]} if index % 2 else {"schema": "olm.package"}
        entry = {"reference": ref, "message": "%s is deprecated (benchmark)" % (ref.get("name") or name)}
        if cfg.deprecations:
            entries = cfg.deprecations[0].setdefault("entries", [])
            if all(e.get("reference") != ref for e in entries):
                entries.append(entry)
        else:
            cfg.deprecations.append({"schema": "olm.deprecations", "package": name, "entries": [entry]})


def modified_copy(manifest, fmt, log=None):
    """A copy of the generated catalog ``manifest[fmt]`` with changes of every kind catalog_diff reports (cached
    beside it): MODIFY["remove"] packages removed, MODIFY["add"] added (copies under new names), new channel heads
    with ``olm.maxOpenShiftVersion`` (and another on the old head), default channels changed, packages and channels
    deprecated. Unchanged package
    files are hard links to the original's. Returns the directory."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    ensure_collection_link()
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
    from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import write_fs

    source = manifest[fmt]
    target = "%s-modified-v%d" % (source, MODIFIED_VERSION)
    marker = target + ".json"  # beside the catalog: opm would read a file inside it as catalog content
    if os.path.isfile(marker) and os.path.isdir(target):
        return target
    log("writing the modified copy %s" % target)
    names = sorted(os.listdir(source))
    groups = {}
    start = 0
    for change in ("remove", "new_head", "default_channel", "deprecate", "add"):
        groups[change] = names[start : start + MODIFY[change]]
        start += MODIFY[change]
    tmp = target + ".tmp-%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    changed = {}
    for index, name in enumerate(names):
        change = next((c for c, members in groups.items() if name in members and c != "add"), None)
        if change == "remove":
            continue
        src_dir = os.path.join(source, name)
        if change is None:
            os.makedirs(os.path.join(tmp, name))
            for f in os.listdir(src_dir):
                os.link(os.path.join(src_dir, f), os.path.join(tmp, name, f))
            continue
        cfg = load(src_dir)
        _modify_package(cfg, change, index)
        changed[name] = change
        write_fs(cfg, tmp, fmt)
    for i, name in enumerate(groups["add"]):
        part = rename_copy(load(os.path.join(source, name)), "%s-added%d" % (name, i))
        write_fs(part, tmp, fmt)
    shutil.rmtree(target, ignore_errors=True)
    os.rename(tmp, target)
    with open(marker, "w") as f:
        json.dump({"groups": groups}, f, indent=2)
    return target


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    ap.add_argument("--packages", type=int, default=500, help="minimum number of packages (default 500)")
    ap.add_argument("--min-bundles", type=int, default=10000, help="minimum number of bundles (default 10000)")
    ap.add_argument("--source", default=DEFAULT_SOURCE, help="real catalogs: <source>/<version>/<package>/")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="cache directory (default %(default)s)")
    ap.add_argument("--force", action="store_true", help="regenerate even if cached")
    args = ap.parse_args(argv)
    manifest = generate(args.packages, args.min_bundles, args.source, args.cache, args.force)
    print(json.dumps(manifest, indent=2))


if __name__ == "__main__":
    main()
