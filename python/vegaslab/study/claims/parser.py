"""Reading a claim expression: references replaced by placeholders, the rest parsed with
:mod:`ast`, and every node checked against the language (nothing outside it is ever evaluated)."""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from .budgets import MAX_DEPTH, MAX_EXPR_CHARS
from .errors import ClaimError, over_budget
from .interpolation import check_template, interpolate


@dataclass(frozen=True)
class Ref:
    template: str  # "variant:entity.metric", possibly with {var} and wildcards

    def resolve(self, env: Mapping[str, Any]) -> tuple[str, str]:
        text = self.template
        if "{" in text or "}" in text:
            text = interpolate(text, env, f"reference {self.template!r}")
        variant, sep, key = text.partition(":")
        entity, dot, metric = key.rpartition(".")
        if not sep or not variant or not dot or not entity or not metric:
            raise ClaimError(f"reference {text!r}: expected VARIANT:ENTITY.METRIC")
        if metric.startswith("_"):
            raise ClaimError(f"reference {text!r}: a metric name cannot start with '_'")
        return variant, key


_REF_START = re.compile(r"[A-Za-z_{]")
_BARE_REF = re.compile(r"[A-Za-z_{][\w{}.+*?-]*:[\w{}*?][\w{}>*?-]*\.[A-Za-z_]\w*")
_WORD = re.compile(r"[\w{}]+")
PLACEHOLDER = "__ref_"
_PLACEHOLDER_NAME = re.compile(r"__ref_(\d+)\Z")

_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Constant, ast.Name, ast.Load, ast.Store, ast.List, ast.Tuple, ast.GeneratorExp, ast.ListComp,
    ast.comprehension, ast.keyword,
    ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)


@dataclass(frozen=True)
class Parsed:
    tree: ast.Expression
    refs: tuple[Ref, ...]


def _replace_refs(expr: str) -> tuple[str, list[str]]:
    out: list[str] = []
    refs: list[str] = []
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'":
            j = i + 1
            while j < n and expr[j] != c:
                j += 2 if expr[j] == "\\" else 1
            out.append(expr[i:j + 1])
            i = j + 1
            continue
        if c == "`":
            j = expr.find("`", i + 1)
            if j < 0:
                raise ClaimError("unterminated `reference`")
            refs.append(expr[i + 1:j].strip())
            out.append(f"{PLACEHOLDER}{len(refs) - 1}")
            i = j + 1
            continue
        prev = expr[i - 1] if i else " "
        if _REF_START.match(c) and not (prev.isalnum() or prev in "_}.{"):
            m = _BARE_REF.match(expr, i)
            if m:
                refs.append(m.group(0))
                out.append(f"{PLACEHOLDER}{len(refs) - 1}")
                i = m.end()
                continue
            # not a reference: copy the whole word so that its tail is not taken for one
            m = _WORD.match(expr, i)
            if m.group(0).startswith("_"):
                raise ClaimError(f"name {m.group(0)!r} is not allowed (names starting with '_' are reserved)")
            out.append(m.group(0))
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out), refs


def _check_node(node: ast.AST, n_refs: int) -> None:
    if isinstance(node, ast.Attribute):
        raise ClaimError(f"attribute access (.{node.attr}) is not allowed in a claim expression")
    if isinstance(node, ast.Subscript):
        raise ClaimError("indexing ([...]) is not allowed in a claim expression")
    if not isinstance(node, _ALLOWED):
        raise ClaimError(f"{type(node).__name__} is not allowed in a claim expression")
    if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
        raise ClaimError("only named functions can be called")
    if isinstance(node, ast.keyword) and node.arg is None:
        raise ClaimError("**arguments are not allowed in a claim expression")
    if isinstance(node, ast.Name) and node.id.startswith("_"):
        m = _PLACEHOLDER_NAME.match(node.id)
        if not m or int(m.group(1)) >= n_refs or not isinstance(node.ctx, ast.Load):
            raise ClaimError(f"name {node.id!r} is not allowed (names starting with '_' are reserved)")
    if isinstance(node, ast.Constant):
        v = node.value
        if not isinstance(v, (bool, int, float, str)):
            raise ClaimError(f"the constant {v!r} is not allowed (numbers and strings only)")
        if isinstance(v, float) and not math.isfinite(v):
            raise ClaimError(f"the number {v!r} is not finite (too large for a float)")
        if isinstance(v, str):
            check_template(v, f"string {v[:60]!r}")
    if isinstance(node, ast.comprehension):
        if node.is_async:
            raise ClaimError("async comprehensions are not allowed")
        if not isinstance(node.target, ast.Name):
            raise ClaimError("a comprehension variable must be a single name")


def parse(expr: str) -> Parsed:
    """Parse a claim expression; raises :class:`ClaimError` when it is malformed, too long or
    too deep, or uses a construct outside the language."""
    if not isinstance(expr, str) or not expr.strip():
        raise ClaimError("empty expression")
    if len(expr) > MAX_EXPR_CHARS:
        raise over_budget(f"the expression has {len(expr):,} characters, at most {MAX_EXPR_CHARS:,} are allowed")
    text, refs = _replace_refs(expr.strip())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ClaimError(f"syntax error: {exc.msg} in {expr[:200]!r}") from None
    except (RecursionError, MemoryError, ValueError) as exc:  # too deep for the parser, NUL bytes
        raise ClaimError(f"cannot parse the expression ({type(exc).__name__}: {exc})") from None
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]  # iterative: a deep tree must not recurse here
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise over_budget(f"the expression is nested more than {MAX_DEPTH} levels deep")
        _check_node(node, len(refs))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    for r in refs:
        check_template(r, f"reference {r!r}")
    return Parsed(tree, tuple(Ref(r) for r in refs))
