# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Catalog templates by schema: ``opm alpha render-template [TYPE] FILE`` (cmd/opm/alpha/template and the template
registry of alpha/template, schema detection of alpha/template/schema.go).

``TEMPLATES`` is the one dispatch table (schema -> (parse, render)); basic.py and semver.py do not know each other.
A module of its own rather than template/__init__.py: template.util is imported by action.migrate, which basic and
semver import, so a package __init__ importing them would be an import cycle.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    TemplateParseError,
    TemplateSchemaError,
    decode_utf8,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import fold_matches
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template import basic, semver
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import as_document

SCHEMA_BASIC = basic.SCHEMA_BASIC
SCHEMA_SEMVER = semver.SCHEMA_SEMVER
SCHEMA_SUBSTITUTES = "olm.template.substitutes"


def _render_basic(data, renderer, migrate_level=None, opm_compat=None, strict_names=True):
    # opm_compat only changes semver templates
    return basic.render_basic_template(data, renderer, migrate_level=migrate_level, strict_names=strict_names)


def _render_semver(data, renderer, migrate_level=None, opm_compat=None, strict_names=True):
    return semver.render_semver_template(data, renderer, migrate_level=migrate_level, opm_compat=opm_compat,
                                         strict_names=strict_names)


# schema -> (parse(data) -> template, render(data, renderer, migrate_level=, opm_compat=, strict_names=) -> config)
TEMPLATES = {
    SCHEMA_BASIC: (basic.parse_basic_template, _render_basic),
    SCHEMA_SEMVER: (semver.parse_semver_template, _render_semver),
}
# Known to opm (alpha/template/substitutes) but not implemented here: rejected like an unknown schema.
UNSUPPORTED_SCHEMAS = (SCHEMA_SUBSTITUTES,)
# render-template's TYPE argument -> schema
TEMPLATE_TYPES = {"basic": SCHEMA_BASIC, "semver": SCHEMA_SEMVER, "substitutes": SCHEMA_SUBSTITUTES}


def detect_template_schema(data):
    """Schema of a template document (schema.go detectSchema); data may be str/bytes or a decoded dict.

    detectSchema decodes into ``struct{ Schema string `json:"schema"` }``: keys match like encoding/json (last
    matching key wins, a null is ignored, a non-string is an error).
    """
    doc = as_document(data)
    schema = None
    if isinstance(doc, dict):
        for _field, value in fold_matches(doc, ("schema",)):
            if value is None:
                continue
            if not isinstance(value, str):
                raise TemplateSchemaError("template input has a non-string 'schema' field")
            schema = value
    if not schema:
        raise TemplateSchemaError("template input missing required 'schema' field")
    if schema not in TEMPLATES:
        raise TemplateSchemaError("unknown template schema: %s" % schema)
    return schema


def render_template(data, renderer, template_type=None, migrate_level=None, opm_compat=None, strict_names=True):
    """``opm alpha render-template [TYPE] FILE``: TYPE in basic|semver (or the schema), auto-detected when None.

    ``opm_compat="v1.46"`` selects v1.46 behaviour for semver templates (inchworm linking, no package metadata).
    """
    if isinstance(data, bytes):
        data = decode_utf8(data, error=TemplateParseError)
    if template_type is None:
        schema = detect_template_schema(data)
    else:
        schema = TEMPLATE_TYPES.get(template_type, template_type)
        if schema not in TEMPLATES:
            raise TemplateSchemaError("unknown template schema: %s" % template_type)
    _parse, render = TEMPLATES[schema]
    return render(data, renderer, migrate_level=migrate_level, opm_compat=opm_compat, strict_names=strict_names)
