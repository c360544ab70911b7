# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of github.com/Masterminds/semver/v3 v3.4.0 constraints (NewConstraint, Constraints.Check/Validate, NewVersion)
as operator-controller v1.5.1 applies them to a ClusterExtension's ``spec.source.catalog.version``, with the exact
error strings, plus the CRD's own validation of that field.

operator-controller (``internal/operator-controller/resolve/catalog.go``) parses the field with ``NewConstraint`` and
reports a parse error as ``desired version range %q is invalid: <library error>``. It keeps a bundle when its
``olm.package`` version parses with blang/semver (``bsemver.Parse``, strict), the result's ``String()`` parses with
Masterminds' ``NewVersion`` and ``Constraints.Check`` accepts it (``catalogmetadata/filter/bundle_predicates.go``);
a bundle whose version does not parse is dropped, never an error. ``IncludePrerelease`` is never set.

Pre-release rule of v3.4.0: a pre-release version is only considered by an AND group (the comparators between two
``||``) in which at least one comparator has a pre-release (``>=1.0.0-0``, ``~1.2.3-beta``); it need not be on the
same major.minor.patch (unlike npm). Within such a group pre-releases compare by semver precedence.

Go's regexp (RE2) is reproduced with Python's ``re``: ``\\s`` is RE2's ``[\\t\\n\\f\\r ]``, ``\\d`` is ``[0-9]``,
``$`` is the end of the text; Go and Python both pick the leftmost-first match and submatches. The library's
AND-group pattern and the CRD's rule are exponential in a backtracking engine, so they are matched with rewrites
accepting the same language (see ``_VALID_RE`` and ``_FIELD_RE``). Texts over ``MAX_CONSTRAINT_LENGTH`` are refused.

The CRD (``maxLength: 64`` and a CEL ``matches`` rule) accepts a different language from the library's: no hyphen
ranges (``1.2 - 1.4.5``), no ``1.*.*``, but ``|`` as a first major version that the library then refuses.
``validate_field`` mirrors the CRD, ``validate`` the library; a constraint must pass both to reach the resolver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import re

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc import semver as blang
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_quote

_UINT64_MAX = (1 << 64) - 1

# RE2's Perl classes: \s is [\t\n\f\r ] (no \v, no Unicode spaces), \d is ASCII.
_WS = r"[\t\n\f\r ]"


class VersionError(InvalidInputError):
    """A Masterminds NewVersion error; str() is the Go error text."""


class ConstraintError(InvalidInputError):
    """A Masterminds NewConstraint error; str() is the Go error text, ``constraint`` the text that was parsed."""

    def __init__(self, message, constraint=None):
        super().__init__(message)
        self.constraint = constraint

    @property
    def resolver_message(self):
        """The message operator-controller reports (``Progressing`` condition) for this constraint."""
        return "desired version range %s is invalid: %s" % (go_quote(self.constraint), self)


class FieldError(InvalidInputError):
    """The API server's rejection of ``spec.source.catalog.version`` by the ClusterExtension CRD's schema."""


def _re2(pattern):
    """Compile an RE2 pattern that uses only ``\\s``/``\\d`` escapes and a final ``$`` with RE2's meaning."""
    if pattern.endswith("$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern.replace(r"\s", _WS).replace(r"\d", "[0-9]"))


# ------------------------------------------------------------------------------------------------ versions

_LOOSE_VERSION_RE = re.compile(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?\Z"
)
_DIGITS_RE = re.compile(r"[0-9]+\Z")
_ALLOWED_RE = re.compile(r"[0-9A-Za-z-]+\Z")

ERR_INVALID_SEMVER = "invalid semantic version"
ERR_SEGMENT_STARTS_ZERO = "version segment starts with 0"
ERR_INVALID_METADATA = "invalid metadata string"
ERR_INVALID_PRERELEASE = "invalid prerelease string"


def _parse_uint(s):
    """strconv.ParseUint(s, 10, 64) on a digit string, wrapped as NewVersion wraps it."""
    n = int(s)
    if n > _UINT64_MAX:
        raise VersionError("error parsing version segment: strconv.ParseUint: parsing %s: value out of range" % go_quote(s))
    return n


def _validate_prerelease(p):
    for part in p.split("."):
        if part == "":
            raise VersionError(ERR_INVALID_PRERELEASE)
        if _DIGITS_RE.match(part):
            if len(part) > 1 and part[0] == "0":
                raise VersionError(ERR_SEGMENT_STARTS_ZERO)
        elif not _ALLOWED_RE.match(part):
            raise VersionError(ERR_INVALID_PRERELEASE)


def _validate_metadata(m):
    for part in m.split("."):
        if part == "" or not _ALLOWED_RE.match(part):
            raise VersionError(ERR_INVALID_METADATA)


def _uint_or_none(s):
    if _DIGITS_RE.match(s):
        n = int(s)
        if n <= _UINT64_MAX:
            return n
    return None


def _compare_pre_part(s, o):
    if s == o:
        return 0
    if s == "":
        return -1
    if o == "":
        return 1
    oi = _uint_or_none(o)
    si = _uint_or_none(s)
    if oi is None and si is None:
        # Go compares strings bytewise; identifiers are ASCII.
        return 1 if s > o else -1
    if oi is None:
        return -1
    if si is None:
        return 1
    return 1 if si > oi else -1


def _compare_prerelease(v, o):
    sparts = v.split(".")
    oparts = o.split(".")
    for i in range(max(len(sparts), len(oparts))):
        s = sparts[i] if i < len(sparts) else ""
        t = oparts[i] if i < len(oparts) else ""
        d = _compare_pre_part(s, t)
        if d:
            return d
    return 0


@functools.total_ordering
class Version:
    """A Masterminds semver.Version: ``pre`` and ``metadata`` are strings; ordering ignores metadata."""

    __slots__ = ("major", "minor", "patch", "pre", "metadata", "original")

    def __init__(self, major=0, minor=0, patch=0, pre="", metadata="", original=None):
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.metadata = metadata
        self.original = str(self) if original is None else original

    @classmethod
    def parse(cls, s):
        """NewVersion with the default CoerceNewVersion=true: a leading ``v``, missing minor/patch and leading
        zeroes in the numbers are accepted. Raises VersionError with the Go text."""
        m = _LOOSE_VERSION_RE.match(s)
        if m is None:
            raise VersionError(ERR_INVALID_SEMVER)
        major = _parse_uint(m.group(1))
        minor = _parse_uint(m.group(2)[1:]) if m.group(2) else 0
        patch = _parse_uint(m.group(3)[1:]) if m.group(3) else 0
        pre = m.group(5) or ""
        metadata = m.group(8) or ""
        if pre:
            _validate_prerelease(pre)
        if metadata:
            _validate_metadata(metadata)
        return cls(major, minor, patch, pre, metadata, original=s)

    def compare(self, o):
        for a, b in ((self.major, o.major), (self.minor, o.minor), (self.patch, o.patch)):
            if a != b:
                return -1 if a < b else 1
        if self.pre == "" and o.pre == "":
            return 0
        if self.pre == "":
            return 1
        if o.pre == "":
            return -1
        return _compare_prerelease(self.pre, o.pre)

    def __eq__(self, other):
        return isinstance(other, Version) and self.compare(other) == 0

    def __lt__(self, other):
        return self.compare(other) < 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self):
        s = "%d.%d.%d" % (self.major, self.minor, self.patch)
        if self.pre:
            s += "-" + self.pre
        if self.metadata:
            s += "+" + self.metadata
        return s

    def __repr__(self):
        return "Version(%r)" % (str(self),)


# ------------------------------------------------------------------------------------------------ constraints

# The library's patterns (constraints.go, after its fmt.Sprintf), RE2 syntax; ``_re2`` compiles them for ``re``.
_GO_OPS = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^"
_GO_CV = (
    r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
)
CONSTRAINT_REGEX = r"^\s*(%s)\s*(%s)\s*$" % (_GO_OPS, _GO_CV)
RANGE_REGEX = r"\s*(%s)\s+-\s+(%s)\s*" % (_GO_CV, _GO_CV)
FIND_REGEX = r"(%s)\s*(%s)" % (_GO_OPS, _GO_CV)
VALID_CONSTRAINT_REGEX = r"^(\s*(%s)\s*(%s)\s*)((?:\s+|,\s*)(%s)\s*(%s)\s*)*$" % (_GO_OPS, _GO_CV, _GO_OPS, _GO_CV)

_CONSTRAINT_RE = _re2(CONSTRAINT_REGEX)
_RANGE_RE = _re2(RANGE_REGEX)
_FIND_RE = _re2(FIND_REGEX)

# VALID_CONSTRAINT_REGEX nests whitespace quantifiers (and two interchangeable optional ".N"): a backtracking engine
# takes exponential time on it ("1, 1, 1, ... !"). Same language, one viable parse per input: each group's trailing
# \s* joins the next separator, "\s*(\s+|,\s*)" + an empty operator + "\s*" is "\s*,\s*|\s+", and "(.N)?(.N)?" is
# "(.N(.N)?)?". The unit tests compare it with the library's pattern.
_OPNE = r"(?:=|!=|>|<|>=|=>|<=|=<|~|~>|\^)"
_IDENTS = r"[0-9A-Za-z\-]+(?:\.[0-9A-Za-z\-]+)*"
_N = r"[0-9|x|X|\*]+"
_CV_MATCH = r"v?%s(?:\.%s(?:\.%s)?)?(?:-%s)?(?:\+%s)?" % (_N, _N, _N, _IDENTS, _IDENTS)
_VALID_RE = _re2(r"^\s*(?:%s\s*)?%s(?:(?:\s*,\s*|\s+)(?:%s\s*)?%s)*\s*$" % (_OPNE, _CV_MATCH, _OPNE, _CV_MATCH))

# Longer texts are refused before any pattern runs (the library has no limit; the CRD allows 64 characters, so
# operator-controller never sees more): the library's range and find patterns are quadratic in a backtracking engine.
MAX_CONSTRAINT_LENGTH = 1024


def _is_x(s):
    return s in ("x", "*", "X")


def _pre_msg(v):
    return "%s is a prerelease version and the constraint is only looking for release versions" % v


class _Comparator:
    """One comparator (Go's unexported ``constraint``)."""

    __slots__ = ("con", "orig", "origfunc", "minor_dirty", "dirty", "patch_dirty")

    def __init__(self, con, orig, origfunc, minor_dirty=False, dirty=False, patch_dirty=False):
        self.con = con
        self.orig = orig
        self.origfunc = origfunc
        self.minor_dirty = minor_dirty
        self.dirty = dirty
        self.patch_dirty = patch_dirty

    def __str__(self):
        return self.origfunc + self.orig

    def check(self, v, include_pre):
        """(ok, error text or None), as the Go cfunc for this operator."""
        return _CHECKS[self.origfunc](v, self, include_pre)


def _parse_comparator(c):
    if c:
        m = _CONSTRAINT_RE.match(c)
        if m is None:
            raise ConstraintError("improper constraint: %s" % c)
        ver = m.group(2)
        major, minor, patch, pre = m.group(3), m.group(4) or "", m.group(5) or "", m.group(6) or ""
        minor_dirty = patch_dirty = dirty = False
        if _is_x(major) or major == "":
            ver = "0.0.0" + pre
            dirty = True
        elif _is_x(minor[1:]) or minor == "":
            minor_dirty = dirty = True
            ver = "%s.0.0%s" % (major, pre)
        elif _is_x(patch[1:]) or patch == "":
            dirty = patch_dirty = True
            ver = "%s%s.0%s" % (major, minor, pre)
        try:
            con = Version.parse(ver)
        except VersionError:
            raise ConstraintError("constraint parser error") from None
        return _Comparator(con, m.group(2), m.group(1), minor_dirty, dirty, patch_dirty)
    # An empty comparator is * (>=0.0.0); NewConstraint never gets here (its validation regex needs a version).
    return _Comparator(Version(0, 0, 0, original="0.0.0"), c, "", dirty=True)


def _not_equal(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if c.dirty:
        if c.con.major != v.major:
            return True, None
        if c.con.minor != v.minor and not c.minor_dirty:
            return True, None
        if c.minor_dirty:
            return False, "%s is equal to %s" % (v, c.orig)
        if c.con.patch != v.patch and not c.patch_dirty:
            return True, None
        if c.patch_dirty:
            if v.pre or c.con.pre:
                if _compare_prerelease(v.pre, c.con.pre) != 0:
                    return True, None
                return False, "%s is equal to %s" % (v, c.orig)
            return False, "%s is equal to %s" % (v, c.orig)
    if v.compare(c.con) == 0:
        return False, "%s is equal to %s" % (v, c.orig)
    return True, None


def _greater_than(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    fail = "%s is less than or equal to %s" % (v, c.orig)
    if c.dirty:
        if v.major > c.con.major:
            return True, None
        if v.major < c.con.major or c.minor_dirty:
            return False, fail
        if c.patch_dirty:
            return (True, None) if v.minor > c.con.minor else (False, fail)
    return (True, None) if v.compare(c.con) == 1 else (False, fail)


def _less_than(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if v.compare(c.con) < 0:
        return True, None
    return False, "%s is greater than or equal to %s" % (v, c.orig)


def _greater_than_equal(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if v.compare(c.con) >= 0:
        return True, None
    return False, "%s is less than %s" % (v, c.orig)


def _less_than_equal(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    fail = "%s is greater than %s" % (v, c.orig)
    if not c.dirty:
        return (True, None) if v.compare(c.con) <= 0 else (False, fail)
    if v.major > c.con.major:
        return False, fail
    if v.major == c.con.major and v.minor > c.con.minor and not c.minor_dirty:
        return False, fail
    return True, None


def _tilde(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if v.compare(c.con) < 0:
        return False, "%s is less than %s" % (v, c.orig)
    # ~0.0.0 accepts everything (>= 0.0.0).
    if c.con.major == 0 and c.con.minor == 0 and c.con.patch == 0 and not c.minor_dirty and not c.patch_dirty:
        return True, None
    if v.major != c.con.major:
        return False, "%s does not have same major version as %s" % (v, c.orig)
    if v.minor != c.con.minor and not c.minor_dirty:
        return False, "%s does not have same major and minor version as %s" % (v, c.orig)
    return True, None


def _tilde_or_equal(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if c.dirty:
        return _tilde(v, c, include_pre)
    if v.compare(c.con) == 0:
        return True, None
    return False, "%s is not equal to %s" % (v, c.orig)


def _caret(v, c, include_pre):
    if v.pre and not include_pre:
        return False, _pre_msg(v)
    if v.compare(c.con) < 0:
        return False, "%s is less than %s" % (v, c.orig)
    if c.con.major > 0 or c.minor_dirty:
        if v.major == c.con.major:
            return True, None
        return False, "%s does not have same major version as %s" % (v, c.orig)
    if c.con.major == 0 and v.major > 0:
        return False, "%s does not have same major version as %s" % (v, c.orig)
    if c.con.minor > 0 or c.patch_dirty:
        if v.minor == c.con.minor:
            return True, None
        tail = "Expected minor versions to match when constraint major version is 0"
        return False, "%s does not have same minor version as %s. %s" % (v, c.orig, tail)
    if c.con.minor == 0 and v.minor > 0:
        return False, "%s does not have same minor version as %s" % (v, c.orig)
    if c.con.patch == v.patch:
        return True, None
    return False, "%s does not equal %s. Expect version and constraint to equal when major and minor versions are 0" % (v, c.orig)


_CHECKS = {
    "": _tilde_or_equal,
    "=": _tilde_or_equal,
    "!=": _not_equal,
    ">": _greater_than,
    "<": _less_than,
    ">=": _greater_than_equal,
    "=>": _greater_than_equal,
    "<=": _less_than_equal,
    "=<": _less_than_equal,
    "~": _tilde,
    "~>": _tilde,
    "^": _caret,
}
# The operators, "" being "=".
OPERATORS = tuple(_CHECKS)


def rewrite_range(text):
    """rewriteRange: each ``A - B`` becomes ``>= A, <= B `` (first occurrence of each matched text, in order)."""
    out = text
    for m in _RANGE_RE.finditer(text):
        out = out.replace(m.group(0), ">= %s, <= %s " % (m.group(1), m.group(11)), 1)
    return out


class Constraint:
    """Masterminds ``Constraints``: OR of AND groups of comparators.

    ``check(version)`` is ``Constraints.Check``; calling the object (``matches``) is operator-controller's bundle
    predicate on a bundle version string."""

    __slots__ = ("groups", "contains_pre", "include_prerelease", "text")

    def __init__(self, groups, contains_pre, text, include_prerelease=False):
        self.groups = groups
        self.contains_pre = contains_pre
        self.text = text
        self.include_prerelease = include_prerelease

    @classmethod
    def parse(cls, text, include_prerelease=False):
        """NewConstraint. Raises ConstraintError with the Go text. ``include_prerelease`` sets the library's
        ``IncludePrerelease`` (operator-controller leaves it false)."""
        if not isinstance(text, str):
            raise ConstraintError("version constraint must be a string, not %s" % type(text).__name__, text)
        if len(text) > MAX_CONSTRAINT_LENGTH:
            raise ConstraintError("version constraint is %d characters long, more than %d" % (len(text), MAX_CONSTRAINT_LENGTH), text[:64])
        groups = []
        contains_pre = []
        for segment in rewrite_range(text).split("||"):
            if not _VALID_RE.match(segment):
                raise ConstraintError("improper constraint: %s" % segment, text)
            found = [m.group(0) for m in _FIND_RE.finditer(segment)] or [segment]
            group = []
            for s in found:
                try:
                    group.append(_parse_comparator(s))
                except ConstraintError as exc:
                    raise ConstraintError(str(exc), text) from None
            groups.append(group)
            contains_pre.append(any(c.con.pre for c in group))
        return cls(groups, contains_pre, text, include_prerelease)

    def _version(self, version):
        return version if isinstance(version, Version) else Version.parse(version)

    def check(self, version):
        """Constraints.Check. ``version``: a Version or a string for Version.parse (raises VersionError)."""
        v = self._version(version)
        for i, group in enumerate(self.groups):
            include_pre = self.include_prerelease or self.contains_pre[i]
            if all(c.check(v, include_pre)[0] for c in group):
                return True
        return False

    def explain(self, version):
        """Constraints.Validate: (ok, [reasons]) with the library's reason texts."""
        v = self._version(version)
        errors = []
        pre_reported = False
        for i, group in enumerate(self.groups):
            include_pre = self.include_prerelease or self.contains_pre[i]
            joy = True
            for c in group:
                if not include_pre and v.pre:
                    if not pre_reported:
                        errors.append(_pre_msg(v))
                        pre_reported = True
                    joy = False
                else:
                    msg = c.check(v, include_pre)[1]
                    if msg is not None:
                        errors.append(msg)
                        joy = False
            if joy:
                return True, []
        return False, errors

    def matches(self, bundle_version):
        """operator-controller's InMastermindsSemverRange: False when the bundle version is not strict semver
        (blang ``Parse``) or its canonical form does not parse with NewVersion."""
        if not isinstance(bundle_version, str):
            return False
        try:
            parsed = blang.parse(bundle_version)
        except blang.SemverError:
            return False
        try:
            v = Version.parse(str(parsed))
        except VersionError:
            return False
        return self.check(v)

    __call__ = matches

    def __str__(self):
        return " || ".join(" ".join(str(c) for c in group) for group in self.groups)

    def __repr__(self):
        return "Constraint(%r)" % (self.text,)


def validate(text):
    """Parse a version constraint as operator-controller does; returns the Constraint or raises ConstraintError."""
    return Constraint.parse(text)


def check(constraint, version_string):
    """Whether operator-controller would keep a bundle of version ``version_string`` under ``constraint`` (a
    Constraint or text; invalid text raises ConstraintError). An unparsable bundle version is not kept."""
    if not isinstance(constraint, Constraint):
        constraint = Constraint.parse(constraint)
    return constraint.matches(version_string)


# ------------------------------------------------------------------------------------------------ CRD field

FIELD_PATH = "spec.source.catalog.version"
MAX_LENGTH = 64
FIELD_RULE_MESSAGE = "invalid version expression"
# The x-kubernetes-validations rule of api/v1 ClusterExtension (v1.5.1) after CEL string unescaping, verbatim (RE2),
# quirks included: the first version's major is the class [x|X|\*] (so "|" is accepted), and "\*]" is a literal "*]"
# in the first version's minor and the later versions' major and patch: "1.*.*" or ">=1 <2.*.*" are rejected.
FIELD_RULE_REGEX = (
    r"^(\s*(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|[x|X|\*])(\.(0|[1-9]\d*|x|X|\*]))?(\.(0|[1-9]\d*|x|X|\*))?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)"
    r"((?:\s+|,\s*|\s*\|\|\s*)(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)\s*(v?(0|[1-9]\d*|x|X|\*])(\.(0|[1-9]\d*|x|X|\*))?"
    r"(\.(0|[1-9]\d*|x|X|\*]))?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)\s*)*$"
)


# FIELD_RULE_REGEX has the same exponential shapes (and "\\s*\\|\\|\\s*" separators); the same rewrite, with each
# version's two optional parts "(.A)?(.B)?" made "(.A(.B)?|.(B not in A))?" ("*" or "*]"). Compared with the rule
# in the unit tests.
_A = r"(?:0|[1-9]\d*|x|X|\*\])"
_B = r"(?:0|[1-9]\d*|x|X|\*)"
_PRE_META = r"(?:-%s)?(?:\+%s)?" % (_IDENTS, _IDENTS)
_CV1 = r"v?(?:0|[1-9]\d*|[x|X|\*])(?:\.%s(?:\.%s)?|\.\*)?%s" % (_A, _B, _PRE_META)
_CV2 = r"v?(?:0|[1-9]\d*|x|X|\*\])(?:\.%s(?:\.%s)?|\.\*\])?%s" % (_B, _A, _PRE_META)
_FIELD_RE = _re2(r"^\s*(?:%s\s*)?%s(?:(?:\s*(?:,|\|\|)\s*|\s+)(?:%s\s*)?%s)*\s*$" % (_OPNE, _CV1, _OPNE, _CV2))


def validate_field(text):
    """The CRD's validation of ``spec.source.catalog.version`` (maxLength 64, then the CEL rule; the API server
    skips CEL rules once the length fails). Raises FieldError with the API server's wording (Kubernetes 1.35).
    An unset field is not sent at all: "" is rejected, as the API server rejects an explicit empty string."""
    if not isinstance(text, str):
        raise FieldError("%s: Invalid value: %s: must be a string" % (FIELD_PATH, type(text).__name__))
    if len(text) > MAX_LENGTH:
        raise FieldError("%s: Too long: may not be more than %d bytes" % (FIELD_PATH, MAX_LENGTH))
    if not _FIELD_RE.match(text):
        raise FieldError("%s: Invalid value: %s: %s" % (FIELD_PATH, go_quote(text), FIELD_RULE_MESSAGE))
    return text
