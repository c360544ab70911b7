# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Template files as users keep them: read for editing (key order kept), written back as YAML or JSON, and
queried (kind, images); ``execute(module)`` is catalog_template's run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core; the modules report it missing
    yaml = None

import os

from ansible_collections.kubeforge.operators.plugins.module_utils.credentials import CREDENTIALS_MESSAGE, has_credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import render_bundle_dir_blob
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load_fs
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, PublishError, decode_utf8
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import get_ci, go_marshal_indent
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import check_image_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.convert import (
    convert_declcfg,
    convert_fbc_stream,
    dump_basic_template_json,
    dump_basic_template_yaml,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import (
    add_bundle,
    add_bundle_semver,
    check_template_rewritable,
    latest_in_channel,
    remove_bundle,
    remove_bundle_semver,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import (
    SCHEMA_BASIC,
    SCHEMA_SEMVER,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput, read_bytes

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
            (k, [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
        )

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
    return yaml.dump(doc, Dumper=dumper, explicit_start=True, sort_keys=False, allow_unicode=True, default_flow_style=False, width=2**31 - 1)


def text_format(data):
    """``json`` when the text is a JSON document, else ``yaml``."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return "json" if data.lstrip().startswith("{") else "yaml"


def load_template_for_edit(data, source=None):
    """First document of a template file as plain ordered data (key order kept, unlike the Go-semantics loader) for
    editing; None for an empty file. ``source`` names the file in errors (invalid UTF-8: the first bad byte)."""
    if isinstance(data, bytes):
        data = decode_utf8(data, source, PublishError)
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
    raise PublishError("not a catalog template: schema %s is neither %s nor %s" % (json.dumps(schema), SCHEMA_BASIC, SCHEMA_SEMVER))


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


_SEMVER_UNSUPPORTED = ("replaces", "skips", "skip_range", "name", "default_channel", "package", "bundle_path")


def _refuse_other_package(doc, package, default_channel):
    """add_bundle.package and add_bundle.default_channel only name a new template's package: an existing template
    keeps its own, so a different value would be ignored."""
    packages = [e for e in get_ci(doc, "entries") or () if isinstance(e, dict) and get_ci(e, "schema") == "olm.package"]
    if not packages:
        return
    own, own_default = get_ci(packages[0], "name"), get_ci(packages[0], "defaultChannel")
    if package and own and package != own:
        raise PublishError(f"add_bundle: the bundle's package {excerpt(package)} differs from the template's package {own}")
    if default_channel and default_channel != own_default:
        raise PublishError(
            f"add_bundle.default_channel {excerpt(default_channel)} is only used to create a template; this one keeps defaultChannel {own_default}"
        )


def add_to_template(doc, kind, image, channels, name=None, bundle_path=None, package=None, replaces=None, skips=None, skip_range=None, default_channel=None):
    """Add a bundle to a basic or semver template (``doc`` None: a new basic template). Returns (doc, changed).

    ``bundle_path`` (a bundle directory) supplies the bundle and package names when they are not given.
    """
    check_image_reference(image, "add_bundle.image")
    given = {
        "replaces": replaces,
        "skips": skips,
        "skip_range": skip_range,
        "name": name,
        "default_channel": default_channel,
        "package": package,
        "bundle_path": bundle_path,
    }
    if kind == "semver":
        for key in _SEMVER_UNSUPPORTED:
            if given[key]:
                raise PublishError("add_bundle.%s is not supported for semver templates (they list bundle images only)" % key)
        return add_bundle_semver(doc, image, channels)
    if bundle_path:
        blob, _csv = render_bundle_dir_blob(bundle_path)
        name = name or blob.get("name")
        package = package or blob.get("package")
    if doc is not None:
        _refuse_other_package(doc, package, default_channel)
    if not name:
        raise PublishError("add_bundle.name (or add_bundle.bundle_path) is required for basic templates")
    return add_bundle(
        doc,
        image,
        name,
        channels,
        replaces=replaces,
        skips=skips,
        skip_range=skip_range,
        package=package if doc is None else None,
        default_channel=default_channel if doc is None else None,
    )


def remove_from_template(doc, kind, values, relink=True):
    """Remove bundles (by image, or by name for basic templates). Returns (doc, removed values)."""
    removed = []
    for value in values:
        if has_credentials(value):
            raise PublishError("remove_bundle: %s" % CREDENTIALS_MESSAGE)
        if kind == "semver":
            doc, did = remove_bundle_semver(doc, value)
        else:
            doc, did = remove_bundle(doc, image=value, name=value, relink=relink)
        if did:
            removed.append(value)
    return doc, removed


def latest_bundle(doc, kind, channel):
    """The head of ``channel`` in a basic template (semver channels only exist once rendered)."""
    if kind != "basic":
        raise PublishError("latest_in_channel needs a basic template (semver channels are generated at render time)")
    return latest_in_channel(doc, channel)


def _convert(params):
    src = params["convert_from"]
    if os.path.isdir(src):
        tpl = convert_declcfg(load_fs(src))
    else:
        data = read_bytes(src)
        if data is None:
            raise FBCError("convert_from %s not found" % src)
        tpl = convert_fbc_stream(data, source=src)
    return dump_basic_template_json(tpl) if params["format"] == "json" else dump_basic_template_yaml(tpl)


def _edit(params, doc, kind, result):
    """Apply remove_bundle then add_bundle; return (doc, changed)."""
    changed = False
    if params["remove_bundle"]:
        doc, result["removed"] = remove_from_template(doc, kind, params["remove_bundle"], relink=params["relink"])
        changed = bool(result["removed"])
    spec = params["add_bundle"]
    if spec:
        doc, added = add_to_template(doc, kind, spec["image"], spec["channels"], name=spec["name"],
                                     bundle_path=spec["bundle_path"], package=spec["package"],
                                     replaces=spec["replaces"], skips=spec["skips"], skip_range=spec["skip_range"],
                                     default_channel=spec["default_channel"])
        changed = changed or added
    return doc, changed


def execute(module):
    params = module.params
    path = params["path"]
    before = read_bytes(path)
    result = dict(changed=False, path=path, created=before is None)

    if params["convert_from"]:
        after = _convert(params)
        result["template_type"] = "basic"
        result["images"] = template_images(load_template_for_edit(after))
    else:
        doc = load_template_for_edit(before, source=path) if before is not None else None
        if doc is None and (params["remove_bundle"] or params["latest_in_channel"]):
            raise PublishError("template %s not found or empty" % path)
        kind = template_kind(doc) if doc is not None else params["template_type"]
        if doc is not None and params["template_type"] != "basic" and params["template_type"] != kind:
            raise PublishError("template_type %s does not apply: %s is a %s template" % (params["template_type"], path, kind))
        if before is not None and params["format"] != "yaml" and params["format"] != text_format(before):
            raise PublishError("format %s does not apply: %s exists and keeps its format (%s)" % (params["format"], path, text_format(before)))
        result["template_type"] = kind
        if params["latest_in_channel"]:
            result["latest"] = latest_bundle(doc, kind, params["latest_in_channel"])
            result["images"] = template_images(doc)
            return result
        doc, changed = _edit(params, doc, kind, result)
        result["images"] = template_images(doc)
        if not changed:
            return result
        check_template_rewritable(before, path)
        after = dump_template(doc, text_format(before) if before is not None else params["format"])

    with FileOutput(check_mode=module.check_mode, diff=module._diff) as output:
        output.write(path, after)
        output.commit()
    result["changed"] = output.changed
    if module._diff and output.diffs:
        result["diff"] = output.diffs[0]
    return result
