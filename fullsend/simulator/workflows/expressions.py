"""GitHub Actions expressions, as the simulator evaluates a workflow's ``run-name`` and ``with:``.

The language of https://docs.github.com/en/actions/reference/workflows-and-actions/expressions:
literals (``true``, ``false``, ``null``, numbers, strings in single quotes with ``''`` for a
quote), contexts with ``.name`` and ``['name']`` (a missing property is ``null``), ``!``, ``<``,
``<=``, ``>``, ``>=``, ``==``, ``!=``, ``&&``, ``||`` (``a || b`` is ``a`` when truthy, else ``b``;
``a && b`` is ``b`` when ``a`` is truthy, else ``a``), and the functions ``contains``,
``startsWith``, ``endsWith`` and ``format``.  Falsy: ``false``, ``0``, ``-0``, ``""``, ``null``,
``NaN``.  ``==`` compares strings ignoring case and converts mixed types to numbers.  Object
filters (``*``) and the status functions are not modelled: ``ExpressionError`` names them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'(?:[^']|'')*')|(?P<op>\|\||&&|==|!=|<=|>=|[<>!().\[\],])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)
_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)


class ExpressionError(ValueError):
    """An expression this evaluator cannot read, naming the expression and where it stopped."""


def truthy(value: Any) -> bool:
    """GitHub's truthiness (module docstring)."""
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (False, 0, "", None) or isinstance(value, (dict, list))


def to_text(value: Any) -> str:
    """How ``${{ }}`` writes a value into a string: ``null`` is empty, numbers without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2)
    return str(value)


def interpolate(text: str, contexts: Mapping[str, Any]) -> str:
    """``text`` with every ``${{ expression }}`` replaced by its value as text."""
    return _TEMPLATE.sub(lambda m: to_text(evaluate(m.group(1), contexts)), text)


def evaluate_value(text: str, contexts: Mapping[str, Any]) -> Any:
    """A ``with:``/``if:`` value: one whole ``${{ }}`` gives its value, other text is interpolated."""
    whole = _TEMPLATE.fullmatch(text.strip())
    return evaluate(whole.group(1), contexts) if whole else interpolate(text, contexts)


def evaluate(expression: str, contexts: Mapping[str, Any]) -> Any:
    """The value of ``expression`` over ``contexts`` (``github``, ``inputs``, ``vars`` …).
    Raises ``ExpressionError``."""
    tokens = _tokenize(expression)
    parser = _Parser(tokens, contexts, expression)
    value = parser.disjunction()
    if parser.at < len(tokens):
        raise ExpressionError(f"{expression.strip()!r}: unexpected {tokens[parser.at][1]!r}")
    return value


def _tokenize(expression: str) -> list[tuple[str, str]]:
    tokens, at, text = [], 0, expression.rstrip()
    while at < len(text):
        m = _TOKEN.match(text, at)
        if m is None or m.end() == at:
            raise ExpressionError(f"{expression.strip()!r}: cannot read {text[at : at + 10]!r}")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind)))
        at = m.end()
    return tokens


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b) or (isinstance(a, (dict, list)) and isinstance(b, (dict, list))):
        return bool(a == b) if not isinstance(a, (dict, list)) else a is b
    return _number(a) == _number(b)


def _call(name: str, args: list[Any], expression: str) -> Any:
    lower = name.lower()
    if lower == "format" and args:
        return re.sub(r"\{(\d+)\}", lambda m: to_text(args[1 + int(m.group(1))]), to_text(args[0]))
    if lower in ("contains", "startswith", "endswith") and len(args) == 2:
        hay, needle = args
        if lower == "contains" and isinstance(hay, list):
            return any(_equal(item, needle) for item in hay)
        hay_text, needle_text = to_text(hay).casefold(), to_text(needle).casefold()
        if lower == "contains":
            return needle_text in hay_text
        return hay_text.startswith(needle_text) if lower == "startswith" else hay_text.endswith(needle_text)
    raise ExpressionError(f"{expression.strip()!r}: the function {name}() is not modelled")


class _Parser:
    """Recursive descent in GitHub's precedence: ``||`` < ``&&`` < ``== !=`` < ``< <= > >=`` < ``!``."""

    def __init__(self, tokens: list[tuple[str, str]], contexts: Mapping[str, Any], expression: str) -> None:
        self.tokens, self.contexts, self.expression, self.at = tokens, contexts, expression, 0

    def _peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ""

    def _take(self, op: str) -> bool:
        if self.at < len(self.tokens) and self.tokens[self.at] == ("op", op):
            self.at += 1
            return True
        return False

    def _expect(self, op: str) -> None:
        if not self._take(op):
            raise ExpressionError(f"{self.expression.strip()!r}: expected {op!r}")

    def disjunction(self) -> Any:
        value = self.conjunction()
        while self._take("||"):
            other = self.conjunction()
            value = value if truthy(value) else other
        return value

    def conjunction(self) -> Any:
        value = self.equality()
        while self._take("&&"):
            other = self.equality()
            value = other if truthy(value) else value
        return value

    def equality(self) -> Any:
        value = self.comparison()
        while self._peek() in ("==", "!="):
            negate = self.tokens[self.at][1] == "!="
            self.at += 1
            value = _equal(value, self.comparison()) != negate
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self._peek() in ("<", "<=", ">", ">="):
            op = self.tokens[self.at][1]
            self.at += 1
            a, b = _number(value), _number(self.unary())
            value = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return value

    def unary(self) -> Any:
        if self._take("!"):
            return not truthy(self.unary())
        return self.postfix(self.primary())

    def postfix(self, value: Any) -> Any:
        while True:
            if self._take("."):
                kind, name = self.tokens[self.at] if self.at < len(self.tokens) else ("", "")
                if kind != "name":
                    raise ExpressionError(f"{self.expression.strip()!r}: expected a property name after '.'")
                self.at += 1
                value = _property(value, name)
            elif self._take("["):
                key = self.disjunction()
                self._expect("]")
                value = _property(value, key)
            else:
                return value

    def primary(self) -> Any:
        if self.at >= len(self.tokens):
            raise ExpressionError(f"{self.expression.strip()!r}: ends too early")
        kind, text = self.tokens[self.at]
        self.at += 1
        if kind == "num":
            return float(text)
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "op" and text == "(":
            value = self.disjunction()
            self._expect(")")
            return value
        if kind == "name":
            return self._name(text)
        raise ExpressionError(f"{self.expression.strip()!r}: unexpected {text!r}")

    def _name(self, name: str) -> Any:
        literal = {"true": True, "false": False, "null": None}
        if name in literal:
            return literal[name]
        if self._take("("):
            args = []
            while not self._take(")"):
                args.append(self.disjunction())
                if self._peek() != ")":
                    self._expect(",")
            return _call(name, args, self.expression)
        return self.contexts.get(name)


def _property(value: Any, key: Any) -> Any:
    if isinstance(value, Mapping):
        if isinstance(key, str):
            return next((v for k, v in value.items() if k.casefold() == key.casefold()), None)
        return None
    if isinstance(value, list) and isinstance(key, (int, float)) and not isinstance(key, bool):
        index = int(key)
        return value[index] if 0 <= index < len(value) else None
    return None
