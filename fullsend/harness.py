"""The harness file: ``steer:``, ``role:``, ``prompt:``, ``pre_script:``, ``post_script:``.

docs/architecture.md "Harness" (keys WIRE).

* ``enabled`` absent ≠ false: a block that sets only a cap or a cadence still steers;
  ``steer: {enabled: false}`` is the only way off.  Defaults: on, ``max_steers`` 2,
  ``poll_interval_seconds`` 5.
* Loading fails with ``ConfigError`` for an unreadable file or a block outside the bounds.
* Every other key (top level, or inside ``steer:``) is ignored; :func:`harness_diagnostics`
  names it so ``fullsend lint`` can warn.  Base composition is not supported: the action
  names no key for it, so a harness is always read on its own.
* Action inputs override the harness keys (:func:`with_overrides`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fullsend.errors import ConfigError

if TYPE_CHECKING:  # loaded by load_harness: a run without a harness file never imports the YAML reader
    import yaml

DEFAULT_STEER_ENABLED = True  # on by default; the one place this constant lives
DEFAULT_MAX_STEERS = 2
DEFAULT_POLL_INTERVAL_S = 5
MAX_MAX_STEERS = 50
MAX_POLL_INTERVAL_S = 600  # 10 min, checked on the effective interval
TEXT_KEYS = ("role", "prompt", "pre_script", "post_script")
KNOWN_KEYS = frozenset({"steer", *TEXT_KEYS})
STEER_KEYS = ("enabled", "max_steers", "poll_interval_seconds")

#: Rule ids of the harness diagnostics (shared by the code, the tests and ``fullsend lint``).
RULE_STEER_ENABLED_UNSET = "steer-enabled-unset"
RULE_UNKNOWN_KEY = "unknown-key"


@dataclass(frozen=True)
class SteerBlock:
    """The ``steer:`` block as written; ``None`` means the key was absent.

    ``present`` is False when the harness has no block (or ``steer:`` with no value).  The
    ``effective_*`` properties apply the defaults; ``steer_enabled`` is the effective switch.
    """

    present: bool = False
    enabled: bool | None = None
    max_steers: int | None = None
    poll_interval_seconds: int | None = None

    @property
    def steer_enabled(self) -> bool:
        """``enabled`` when set, else the default (on)."""
        return DEFAULT_STEER_ENABLED if self.enabled is None else self.enabled

    @property
    def explicitly_enabled(self) -> bool:
        """Block present and ``enabled: true``."""
        return self.present and self.enabled is True

    @property
    def effective_max_steers(self) -> int:
        """The block's ``max_steers`` when > 0, else 2; counted per run."""
        return self.max_steers if self.max_steers and self.max_steers > 0 else DEFAULT_MAX_STEERS

    @property
    def effective_poll_interval_s(self) -> int:
        """In seconds: the block's ``poll_interval_seconds`` when > 0, else 5."""
        value = self.poll_interval_seconds
        return value if value and value > 0 else DEFAULT_POLL_INTERVAL_S


@dataclass(frozen=True)
class Harness:
    """The keys the action reads.  Text keys are stripped, ``""`` when absent.

    ``unknown_keys`` lists ignored keys, sorted: top-level names as written and unknown keys of
    the ``steer:`` block as ``steer.<name>``.  They feed :func:`harness_diagnostics`.
    """

    steer: SteerBlock = SteerBlock()
    role: str = ""
    prompt: str = ""
    pre_script: str = ""
    post_script: str = ""
    unknown_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """One lint finding about a harness: ``severity`` ``warning``, the ``field`` it is
    about (``steer.enabled``, an unknown key), a kebab-case ``rule`` id and our ``message``."""

    rule: str
    field: str
    message: str
    severity: str = "warning"


def load_harness(path: Path) -> Harness:
    """Read and validate the harness YAML at ``path``.

    An empty file is a harness with no keys.  Raises ``ConfigError`` naming the file when it
    cannot be read or parsed, its top level is not a mapping, or a key is invalid.
    """
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"harness {path.name}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"harness {path.name}: cannot be read (the file is not UTF-8 text)") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"harness {path.name}: is not valid YAML{_where(exc)}") from None
    except ValueError as exc:  # inside the YAML reader: an integer past int_max_str_digits, or a bad date
        if "digits" not in str(exc):
            raise ConfigError(f"harness {path.name}: is not valid YAML ({exc})") from None
        raise ConfigError(
            f"harness {path.name}: a number has thousands of digits; steer.max_steers must be in "
            f"0..{MAX_MAX_STEERS} and steer.poll_interval_seconds in 0..{MAX_POLL_INTERVAL_S}"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"harness {path.name}: the top level must be a mapping of keys")
    try:
        return parse_harness(data)
    except ConfigError as exc:
        raise ConfigError(f"harness {path.name}: {exc}") from None


def _where(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def parse_harness(data: Mapping[str, Any]) -> Harness:
    """Build a ``Harness`` from parsed YAML.  Raises ``ConfigError`` (messages of :func:`validate_steer_numbers`)."""
    steer, steer_unknown = parse_steer(data.get("steer"))
    texts = {}
    for key in TEXT_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{key} must be a string")
        texts[key] = (value or "").strip()
    unknown = [str(k) for k in data if k not in KNOWN_KEYS]
    unknown += [f"steer.{k}" for k in steer_unknown]
    return Harness(steer=steer, unknown_keys=tuple(sorted(unknown)), **texts)


def parse_steer(block: Any) -> tuple[SteerBlock, tuple[str, ...]]:
    """Validate a ``steer:`` block; returns it and its unknown keys.

    ``None`` (no block, or ``steer:`` with no value) is the absent block.  Raises ``ConfigError``
    for a non-mapping block, a non-boolean ``enabled``, a non-integer number or the bounds.
    """
    if block is None:
        return SteerBlock(), ()
    if not isinstance(block, Mapping):
        raise ConfigError("steer must be a mapping with enabled, max_steers and poll_interval_seconds")
    enabled = block.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise ConfigError("steer.enabled must be true or false")
    cap = _int(block, "max_steers")
    poll = _int(block, "poll_interval_seconds")
    validate_steer_numbers(cap, poll)
    unknown = tuple(str(k) for k in block if k not in STEER_KEYS)
    return SteerBlock(present=True, enabled=enabled, max_steers=cap, poll_interval_seconds=poll), unknown


def validate_steer_numbers(max_steers: int | None, poll_interval_s: int | None) -> None:
    """The bounds: ``max_steers`` in 0..50; effective poll interval in 0..600 s.

    Raises ``ConfigError`` with messages in our wording (it carries the key and the value).
    """
    if max_steers is not None and max_steers < 0:
        raise ConfigError(f"steer.max_steers must not be negative, got {_shown(max_steers)}")
    if max_steers is not None and max_steers > MAX_MAX_STEERS:
        raise ConfigError(f"steer.max_steers must be at most {MAX_MAX_STEERS}, got {_shown(max_steers)}")
    if poll_interval_s is not None and poll_interval_s < 0:
        raise ConfigError(f"steer.poll_interval_seconds must not be negative, got {_shown(poll_interval_s)}")
    effective = poll_interval_s if poll_interval_s else DEFAULT_POLL_INTERVAL_S
    if effective > MAX_POLL_INTERVAL_S:
        raise ConfigError(f"steer.poll_interval_seconds must be at most {MAX_POLL_INTERVAL_S}, got {_shown(effective)}")


def _shown(value: int) -> str:
    """``value`` for a message: whole up to 20 digits, else its sign and its digit count."""
    if -(10**20) < value < 10**20:
        return str(value)
    try:
        count = str(len(str(abs(value))))
    except ValueError:  # past Python's int_max_str_digits
        count = "thousands of"
    return f"a {'negative ' if value < 0 else ''}number of {count} digits"


def _int(block: Mapping[str, Any], key: str) -> int | None:
    value = block.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"steer.{key} must be a whole number")
    return value


def with_overrides(block: SteerBlock, enabled: bool | None, max_steers: int | None, poll_s: int | None) -> SteerBlock:
    """Apply the ``steer_enabled`` / ``max_steers`` / ``poll_interval_seconds`` inputs.

    ``None`` (an empty input) keeps the harness value (absent ≠ false); a set input replaces it
    and makes the block present, so ``steer_enabled: true`` counts as explicitly enabled.
    Raises ``ConfigError`` when the result is outside the bounds.
    """
    result = SteerBlock(
        present=block.present or any(v is not None for v in (enabled, max_steers, poll_s)),
        enabled=block.enabled if enabled is None else enabled,
        max_steers=block.max_steers if max_steers is None else max_steers,
        poll_interval_seconds=block.poll_interval_seconds if poll_s is None else poll_s,
    )
    validate_steer_numbers(result.max_steers, result.poll_interval_seconds)
    return result


def harness_diagnostics(harness: Harness) -> tuple[Diagnostic, ...]:
    """The harness's lint findings, in a stable order.

    * ``steer-enabled-unset``: ``pre_script`` is set while ``steer.enabled`` is absent (setting
      it to either value silences the warning);
    * ``unknown-key``: one per ignored key.
    """
    found: list[Diagnostic] = []
    if harness.pre_script and harness.steer.enabled is None:
        found.append(Diagnostic(RULE_STEER_ENABLED_UNSET, "steer.enabled", STEER_ENABLED_UNSET_MESSAGE))
    for key in harness.unknown_keys:
        found.append(Diagnostic(RULE_UNKNOWN_KEY, key, _unknown_message(key)))
    return tuple(found)


STEER_ENABLED_UNSET_MESSAGE = (
    "pre_script is set but steer.enabled is not: steering is on by default, and the updates a "
    "running agent absorbs never go through the pre-script; "
    "set steer.enabled to true or false to say which you want"
)


def _unknown_message(key: str) -> str:
    if key.startswith("steer."):
        return f"unknown key {key} is ignored; the steer block takes only {', '.join(STEER_KEYS)}"
    known = ", ".join(sorted(KNOWN_KEYS))
    return f"unknown key {key} is ignored; steer-action reads only {known} from a harness"
