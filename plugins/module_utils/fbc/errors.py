# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exception types of the FBC engine.

Every error raised by module_utils.fbc derives from FBCError, so callers (modules, tests) catch one type.
``opm_message`` holds opm's wording without our file/object prefix, for parity checks.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, excerpt

# The longest message an FBCError keeps: a safety net behind the per-site excerpts of user input (opm parity
# messages of normal-sized input are far shorter and pass unchanged).
MESSAGE_LIMIT = 4096


class FBCError(KubeforgeError):
    """Base error; str() is the user-facing message: "<path>: <context>: <opm message>" (parts when known)."""

    def __init__(self, message, path=None, context=None):
        if isinstance(message, str) and len(message) > MESSAGE_LIMIT:
            message = excerpt(message, MESSAGE_LIMIT)
        if isinstance(context, str) and len(context) > MESSAGE_LIMIT:
            context = excerpt(context, MESSAGE_LIMIT)
        self.opm_message = message
        self.path = path
        self.context = context
        prefix = ": ".join(p for p in (path, context) if p)
        super().__init__("%s: %s" % (prefix, message) if prefix else message)


class LoadError(FBCError):
    """A file or directory could not be read or parsed as FBC."""


class WriteError(FBCError):
    """Output could not be produced or written."""


class UnsafeNameError(FBCError):
    """A package/channel/bundle name cannot be used as a path component."""


class ConvertError(FBCError):
    """One of ConvertToModel's sequential checks failed (message is opm's flat error string)."""


def _leaf(sub):
    """A sub-error's text, bounded like every message."""
    return excerpt(str(sub), MESSAGE_LIMIT)


class ValidationTree(FBCError):
    """model.Validate()'s aggregated error: a message with nested sub-errors, printed as opm's tree."""

    def __init__(self, message, sub_errors=None):
        self.message = excerpt(message, MESSAGE_LIMIT) if isinstance(message, str) else message
        self.sub_errors = list(sub_errors or [])
        FBCError.__init__(self, message)

    def or_none(self):
        return self if self.sub_errors else None

    def _render(self, prefix, last, out):
        out.append("%s%s%s" % (prefix, self.message, ":\n" if self.sub_errors else "\n"))
        n = len(self.sub_errors)
        for i, sub in enumerate(self.sub_errors):
            sub_prefix = prefix
            if len(sub_prefix) >= 4:
                sub_prefix = sub_prefix[:-4] + ("    " if last else "│   ")
            sub_last = i == n - 1
            sub_prefix += "└── " if sub_last else "├── "
            if isinstance(sub, ValidationTree):
                sub._render(sub_prefix, sub_last, out)
            else:
                out.append("%s%s\n" % (sub_prefix, _leaf(sub)))

    def __str__(self):
        out = []
        self._render("", True, out)
        return "".join(out).strip()

    def leaves(self):
        """Leaf messages (the actual problems), depth-first."""
        result = []
        for sub in self.sub_errors:
            if isinstance(sub, ValidationTree):
                result.extend(sub.leaves())
            else:
                result.append(_leaf(sub))
        return result

    def messages(self):
        """Every node message (like opm's hasError, which matches any node of the tree)."""
        result = [self.message]
        for sub in self.sub_errors:
            if isinstance(sub, ValidationTree):
                result.extend(sub.messages())
            else:
                result.append(_leaf(sub))
        return result


class FbcTemplateError(FBCError, ValueError):
    """Base class: invalid template, bundle or release input."""


class TemplateSchemaError(FbcTemplateError):
    """Template schema missing / unknown / mismatching."""


class TemplateParseError(FbcTemplateError):
    """Template could not be decoded (bad YAML/JSON, wrong field types, unknown fields)."""


class BundleRenderError(FbcTemplateError):
    """A bundle reference (image or directory) could not be rendered."""


class BundleNotFoundError(BundleRenderError):
    """A bundle image is neither in the lookup catalogs/directories nor obtainable from the image puller."""


class MigrationError(FbcTemplateError):
    """Unknown migrate level or a bundle that cannot be migrated."""


class ReleaseConfigError(FbcTemplateError):
    """Invalid ci.yaml fbc section, release-config.yaml or template edit request."""


class PublishError(FBCError):
    """Bad module input or a failed repository operation (message is user-facing)."""


def decode_utf8(data, source=None, error=LoadError):
    """Decode input bytes as strict UTF-8 (str passes through); raise ``error`` naming ``source`` and the byte offset
    of the first invalid byte, never replacing it with U+FFFD. The offset is only computed on failure."""
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise error("invalid UTF-8 at byte %d" % e.start, path=source) from None


# C0 controls (newline, carriage return, NUL, ...), DEL and the Unicode line separators: a generated line (a
# Dockerfile instruction, an image reference) has no escape for them, and a newline would start a new instruction.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def check_one_line(field, value, error=None):
    """Refuse a string that cannot be written on one line (``error``: the exception class, FBCError by default);
    returns ``value``."""
    error = error or FBCError
    if not isinstance(value, str):
        raise error("%s must be a string" % field)
    m = _CONTROL_RE.search(value)
    if m:
        raise error("%s must not contain a line break or control character (%s at character %d)"
                    % (field, json.dumps(m.group()), m.start()))
    return value
