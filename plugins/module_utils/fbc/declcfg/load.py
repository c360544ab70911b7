# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Load File-Based Catalogs like opm's declcfg.LoadFS / LoadReader: the public entry points.

Parity points (fbc.md section 1): every regular file is parsed except `.indexignore` files and paths excluded
by them (gitignore semantics, nested ignore files); a file is a JSON stream if its first non-blank byte is `{`,
otherwise multi-document YAML split on `---` lines like k8s' YAMLReader; top-level schema/package/name keys
match case-insensitively; nested mappings are key-sorted (opm re-encodes every blob from a Go map); numbers
behave like float64; known schemas are reduced to their Go struct fields; unknown schemas go to `others`.

Unlike opm, errors name the file and document/object (LoadError.opm_message keeps opm's own text), walking
is in deterministic order, YAML alias expansion is bounded, and big YAML trees may be parsed by several
processes when CPUs are idle.

One concern per module, re-exported here: ignore.py (`.indexignore`, list_catalog_files), documents.py (stream
splitting, iter_documents), decode.py (typed decode of the known schemas), builder.py (meta_fields, add_document,
load_bytes, load_file), parallel.py (load_fs, load); the Go-typed YAML loader is golang/yaml_load.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.builder import add_document, gc_paused, load_bytes, load_file, meta_fields
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.documents import iter_documents
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.ignore import INDEX_IGNORE_FILENAME, list_catalog_files
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.parallel import count_lines, load, load_fs, usable_cpus
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.yaml_load import HAS_YAML, YAML_IMPORT_ERROR

__all__ = [
    "HAS_YAML",
    "INDEX_IGNORE_FILENAME",
    "YAML_IMPORT_ERROR",
    "add_document",
    "count_lines",
    "gc_paused",
    "iter_documents",
    "list_catalog_files",
    "load",
    "load_bytes",
    "load_file",
    "load_fs",
    "meta_fields",
    "usable_cpus",
]
