# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of github.com/blang/semver/v4 (Parse, PRVersion, Compare, ParseRange) with its exact error strings.

opm uses blang/semver for bundle versions, release segments and skipRange; error messages end up verbatim in
validation output, so the wording here must match.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = (1 << 64) - 1


class SemverError(InvalidInputError):
    """A blang/semver parse error; str() is the Go error text."""


_ONLY = {id(_NUMBERS): re.compile(r"[0-9]*\Z"), id(_ALPHANUM): re.compile(r"[0-9A-Za-z-]*\Z")}


def _contains_only(s, allowed):
    return _ONLY[id(allowed)].match(s) is not None


def _has_leading_zeroes(s):
    return len(s) > 1 and s[0] == "0"


def _parse_uint(s):
    # strconv.ParseUint error wording (only reachable for empty or overflowing digit strings).
    if s == "":
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    n = int(s)
    if n > _UINT64_MAX:
        raise SemverError("strconv.ParseUint: parsing %s: value out of range" % go_quote(s))
    return n


@functools.total_ordering
class PRVersion:
    """One pre-release identifier."""

    __slots__ = ("value", "is_num")

    def __init__(self, value, is_num):
        self.value = value
        self.is_num = is_num

    @classmethod
    def parse(cls, s):
        if s == "":
            raise SemverError("Prerelease is empty")
        if _contains_only(s, _NUMBERS):
            if _has_leading_zeroes(s):
                raise SemverError("Numeric PreRelease version must not contain leading zeroes %s" % go_quote(s))
            return cls(_parse_uint(s), True)
        if _contains_only(s, _ALPHANUM):
            return cls(s, False)
        raise SemverError("Invalid character(s) found in prerelease %s" % go_quote(s))

    def compare(self, other):
        if self.is_num != other.is_num:
            return -1 if self.is_num else 1
        if self.value == other.value:
            return 0
        if self.is_num:
            return 1 if self.value > other.value else -1
        # Go compares strings bytewise.
        a, b = self.value.encode(), other.value.encode()
        return 1 if a > b else -1

    def __eq__(self, other):
        return isinstance(other, PRVersion) and self.compare(other) == 0

    def __lt__(self, other):
        return self.compare(other) < 0

    def __hash__(self):
        return hash((self.value, self.is_num))

    def __str__(self):
        return str(self.value)

    def __repr__(self):
        return "PRVersion(%r)" % (str(self),)


@functools.total_ordering
class Version:
    """A semantic version; ordering ignores build metadata (as blang's Compare)."""

    __slots__ = ("major", "minor", "patch", "pre", "build")

    def __init__(self, major=0, minor=0, patch=0, pre=(), build=()):
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = tuple(pre)
        self.build = tuple(build)

    @classmethod
    def parse(cls, s):
        return parse(s)

    def compare(self, o):
        for a, b in ((self.major, o.major), (self.minor, o.minor), (self.patch, o.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre and not o.pre:
            return 0
        if not self.pre:
            return 1
        if not o.pre:
            return -1
        for a, b in zip(self.pre, o.pre):
            c = a.compare(b)
            if c:
                return c
        if len(self.pre) == len(o.pre):
            return 0
        return -1 if len(self.pre) < len(o.pre) else 1

    def __eq__(self, other):
        return isinstance(other, Version) and self.compare(other) == 0

    def __lt__(self, other):
        return self.compare(other) < 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self):
        s = "%d.%d.%d" % (self.major, self.minor, self.patch)
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self):
        return "Version(%r)" % (str(self),)


def parse(s):
    """blang semver.Parse: strict MAJOR.MINOR.PATCH[-PRE][+BUILD], no leading 'v'."""
    if s == "":
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    if not _contains_only(parts[0], _NUMBERS):
        raise SemverError("Invalid character(s) found in major number %s" % go_quote(parts[0]))
    if _has_leading_zeroes(parts[0]):
        raise SemverError("Major number must not contain leading zeroes %s" % go_quote(parts[0]))
    major = _parse_uint(parts[0])
    if not _contains_only(parts[1], _NUMBERS):
        raise SemverError("Invalid character(s) found in minor number %s" % go_quote(parts[1]))
    if _has_leading_zeroes(parts[1]):
        raise SemverError("Minor number must not contain leading zeroes %s" % go_quote(parts[1]))
    minor = _parse_uint(parts[1])

    patch_str = parts[2]
    build = []
    pre = []
    idx = patch_str.find("+")
    if idx != -1:
        build = patch_str[idx + 1:].split(".")
        patch_str = patch_str[:idx]
    idx = patch_str.find("-")
    if idx != -1:
        pre = patch_str[idx + 1:].split(".")
        patch_str = patch_str[:idx]
    if not _contains_only(patch_str, _NUMBERS):
        raise SemverError("Invalid character(s) found in patch number %s" % go_quote(patch_str))
    if _has_leading_zeroes(patch_str):
        raise SemverError("Patch number must not contain leading zeroes %s" % go_quote(patch_str))
    patch = _parse_uint(patch_str)
    pre_versions = [PRVersion.parse(p) for p in pre]
    for b in build:
        if b == "":
            raise SemverError("Build meta data is empty")
        if not _contains_only(b, _ALPHANUM):
            raise SemverError("Invalid character(s) found in build meta data %s" % go_quote(b))
    return Version(major, minor, patch, pre_versions, build)


# ---------------------------------------------------------------- ranges

_COMPARATORS = {
    "": lambda c: c == 0,
    "=": lambda c: c == 0,
    "==": lambda c: c == 0,
    ">": lambda c: c == 1,
    ">=": lambda c: c >= 0,
    "<": lambda c: c == -1,
    "<=": lambda c: c <= 0,
    "!": lambda c: c != 0,
    "!=": lambda c: c != 0,
}


class Range:
    """A parsed range: OR of AND-groups of (comparator, version)."""

    __slots__ = ("_or_groups", "text")

    def __init__(self, or_groups, text):
        self._or_groups = or_groups
        self.text = text

    def __call__(self, version):
        for group in self._or_groups:
            if all(test(version.compare(v)) for test, v in group):
                return True
        return False


def _split_and_trim(s):
    result = []
    last = 0
    last_char = ""
    for i, ch in enumerate(s):
        if ch == " " and last_char not in (">", "<", "="):
            if last < i - 1:
                result.append(s[last:i])
            last = i + 1
        elif ch != " ":
            last_char = ch
    if last < len(s) - 1:
        result.append(s[last:])
    return [r.replace(" ", "") for r in result]


def _split_or_parts(parts):
    or_parts = []
    last = 0
    for i, p in enumerate(parts):
        if p == "||":
            if i == 0:
                raise SemverError("First element in range is '||'")
            or_parts.append(parts[last:i])
            last = i + 1
    if last == len(parts):
        raise SemverError("Last element in range is '||'")
    or_parts.append(parts[last:])
    return or_parts


def _split_comparator_version(s):
    for i, ch in enumerate(s):
        if ch.isdigit():
            return s[:i].strip(), s[i:]
    raise SemverError("Could not get version from string: %s" % go_quote(s))


def _wildcard_type(v_str):
    parts = v_str.split(".")
    if parts[-1] == "x" and len(parts) in (1, 2, 3):
        return len(parts)
    return 0


def _version_from_wildcard(v_str):
    v2 = v_str.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
    if len(v2.split(".")) == 2:
        return v2 + ".0"
    return v2


def _increment(v_str, idx):
    parts = v_str.split(".")
    try:
        parts[idx] = str(int(parts[idx]) + 1)
    except (ValueError, IndexError):
        # Go ignores the Atoi error here and returns an empty version, which then fails to parse.
        return ""
    return ".".join(parts)


def _expand_wildcards(or_parts):
    expanded = []
    for group in or_parts:
        new_parts = []
        for ap in group:
            if "x" in ap:
                op, v_str = _split_comparator_version(ap)
                wtype = _wildcard_type(v_str)
                flat = _version_from_wildcard(v_str)
                increment = False
                result_op = ""
                if op == ">":
                    result_op, increment = ">=", True
                elif op == ">=":
                    result_op = ">="
                elif op == "<":
                    result_op = "<"
                elif op == "<=":
                    result_op, increment = "<", True
                elif op in ("", "=", "=="):
                    new_parts.append(">=" + flat)
                    result_op, increment = "<", True
                elif op in ("!=", "!"):
                    new_parts.append("<" + flat)
                    result_op, increment = ">=", True
                if increment:
                    if wtype == 3:
                        result_v = _increment(flat, 1)
                    elif wtype == 2:
                        result_v = _increment(flat, 0)
                    else:
                        result_v = ""
                else:
                    result_v = flat
                ap = result_op + result_v
            new_parts.append(ap)
        expanded.append(new_parts)
    return expanded


def parse_range(s):
    """blang semver.ParseRange; returns a callable Range or raises SemverError with blang's message."""
    or_parts = _split_or_parts(_split_and_trim(s))
    groups = []
    for group in _expand_wildcards(or_parts):
        tests = []
        for ap in group:
            op, v_str = _split_comparator_version(ap)
            test = _COMPARATORS.get(op)
            if test is None:
                raise SemverError("Could not parse Range %s: Could not parse comparator %s in %s"
                                  % (go_quote(ap), go_quote(op), go_quote(op + v_str)))
            try:
                v = parse(v_str)
            except SemverError as e:
                raise SemverError("Could not parse Range %s: Could not parse version %s in %s: %s"
                                  % (go_quote(ap), go_quote(v_str), go_quote(op + v_str), e)) from None
            tests.append((test, v))
        groups.append(tests)
    return Range(groups, s)
