"""Action inputs (``INPUT_*`` only, pydantic-settings); the GitHub context (``GITHUB_*``) is
read by ``fullsend.context``.

docs/architecture.md "Inputs and settings".  Bad input raises
``fullsend.errors.InputError`` naming the input, the problem and the fix — never the value,
which may be a secret.  Nothing here makes an API call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from fullsend.core.agent_args import owned_flags_in, split_agent_args
from fullsend.core.tokens.policy import mint_url_allowed, normalize_role
from fullsend.errors import InputError

STAGES = ("triage", "code", "review", "fix", "retro", "prioritize")
RUNTIMES = ("claude", "pi", "codex")
# Upper bounds of the whole-number inputs (docs/architecture.md "Inputs and settings"): a value
# past them is refused by name before it reaches a timedelta or a loop.
MAX_ITEM = 2_147_483_647  # GitHub's GraphQL Int (signed 32-bit) carries issue numbers
MAX_TIMEOUT_MINUTES = 1440  # a job token lives at most 24 hours
MAX_ITERATIONS = 100
MAX_DELEGATED_WAIT_SECONDS = 86_400  # a day: past any timeout_minutes, which caps the wait anyway
MAX_EXPECTED_DENIALS = 100  # patterns; one a line
_MAX_DIGITS = 20  # longer than any bound above: refused without parsing thousands of digits
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}

# How to fix each input, for the ::error:: line.
_FIXES: dict[str, str] = {
    "stage": f"Set 'stage' to one of: {', '.join(STAGES)}.",
    "runtime": f"Set 'runtime' to one of: {', '.join(RUNTIMES)}, or leave it empty for claude.",
    "sandbox": "Set 'sandbox' to 'local' (the default) or 'openshell'.",
    "item": "Set 'item' to the issue or pull request number (a whole number from 1 to 2147483647), "
    "or leave it empty to take it from the event.",
    "steer_enabled": "Use true/True/TRUE or false/False/FALSE, or leave it empty.",
    "status_comment": "Use true/True/TRUE or false/False/FALSE.",
    "status_interval_seconds": "Use a whole number of seconds from 1 to 600 (default 10).",
    "allow_shared_uid": "Use true/True/TRUE or false/False/FALSE.",
    "allow_unsigned_receipts": "Use true/True/TRUE or false/False/FALSE.",
    "receipt_issuer": "Use the OIDC issuer's https:// URL (e.g. https://token.actions.githubusercontent.com), "
    "without user@, or leave it empty for the one GITHUB_SERVER_URL implies.",
    "max_steers": "Use a whole number from 0 to 50, or leave it empty for the harness value.",
    "poll_interval_seconds": "Use a whole number of seconds from 0 to 600, or leave it empty.",
    "timeout_minutes": "Use a whole number of minutes from 1 to 1440 (a job token lives at most a day).",
    "max_iterations": "Use a whole number from 1 to 100.",
    "delegated_wait_seconds": "Use a whole number of seconds from 0 to 86400 (default 600); the run's "
    "timeout_minutes caps it.",
    "expected_denials": "Put one tool pattern per line in the CLI's permission-rule syntax, such as Bash or "
    "Bash(git push:*), at most 100 lines of at most 200 characters.",
    "prompt": "Set exactly one of 'prompt' or 'prompt_file' (or a harness with a 'prompt:' key).",
    "mint_url": "Use an https:// URL (or http://127.0.0.1 / http://localhost for local tests), without user@.",
    "role": "Use lower-case letters, digits, '-' and '_', starting with a letter.",
    "codex_transport": "Set 'codex_transport' to auto (the default), app-server or exec.",
    "agent_args": "Remove the flags the action sets itself (formats, print mode, session plumbing); "
    "put one argument per line.",
}


def _strip_empty(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value if value != "" else None
    return value


def _csv(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


def denial_patterns(value: Any) -> tuple[str, ...]:
    """``expected_denials`` as patterns: one a line, trimmed; blank lines and ``#`` comments left out.

    Raises ``ValueError`` for more than :data:`MAX_EXPECTED_DENIALS` patterns, one longer than 200
    characters, or one holding a control character.
    """
    lines = value if isinstance(value, (list, tuple)) else str(value or "").splitlines()
    patterns = tuple(p for p in (str(line).strip() for line in lines) if p and not p.startswith("#"))
    if len(patterns) > MAX_EXPECTED_DENIALS:
        raise ValueError(f"must hold at most {MAX_EXPECTED_DENIALS} patterns (it holds {len(patterns)})")
    for number, pattern in enumerate(patterns, 1):
        if len(pattern) > 200 or any(ord(ch) < 32 or ord(ch) == 127 for ch in pattern):
            raise ValueError(
                f"must hold patterns of at most 200 characters and no control character (pattern {number} is not)"
            )
    return patterns


class Inputs(BaseSettings):
    """The action's inputs as ``action.yml`` lists them (snake_case only).

    Empty strings mean "not set" (the runner sends every declared input, empty when unset).
    Raises ``pydantic.ValidationError``; use :func:`load_inputs` for an ``InputError``.
    """

    model_config = SettingsConfigDict(env_prefix="INPUT_", case_sensitive=False, extra="ignore")

    github_token: str = ""
    role_token: str = ""
    mint_url: str = ""
    role: str = ""
    command: Literal["run", "route"] = "run"  # entrypoint.py picks the command; run only checks the name
    # The Route step's policy (fullsend route, fullsend.core.route.policy); run ignores them.
    stages: str = ""
    allowed_users: str = ""
    allowed_bots: str = ""
    trigger_phrase: str = ""
    label_triggers: str = ""
    assignee_triggers: str = ""
    max_fix_rounds: str = "3"
    review_app: str = ""
    stage: Literal["triage", "code", "review", "fix", "retro", "prioritize"]
    item: int | None = Field(default=None, le=MAX_ITEM)
    runtime: Literal["claude", "pi", "codex"] = "claude"
    agent_cli: str = ""
    model: str = ""
    fallback_models: Annotated[tuple[str, ...], NoDecode] = ()
    agent_args: Annotated[tuple[str, ...], NoDecode] = ()
    codex_transport: Literal["auto", "app-server", "exec"] = "auto"
    prompt: str = ""
    prompt_file: str = ""
    harness: str = ""
    steer_enabled: bool | None = None
    max_steers: int | None = Field(default=None, ge=0, le=50)
    poll_interval_seconds: int | None = Field(default=None, ge=0, le=600)
    timeout_minutes: int = Field(default=30, gt=0, le=MAX_TIMEOUT_MINUTES)
    delegated_wait_seconds: int = Field(default=600, ge=0, le=MAX_DELEGATED_WAIT_SECONDS)
    expected_denials: Annotated[tuple[str, ...], NoDecode] = ()
    sandbox: Literal["local", "openshell"] = "local"
    openshell_cli: str = ""
    self_logins: Annotated[tuple[str, ...], NoDecode] = ()
    review_bot_logins: Annotated[tuple[str, ...], NoDecode] = ()
    pre_script: str = ""
    post_script: str = ""
    validation_script: str = ""
    max_iterations: int = Field(default=1, ge=1, le=MAX_ITERATIONS)
    status_comment: bool = True
    status_interval_seconds: int = Field(default=10, ge=1, le=600)
    allow_shared_uid: bool = False
    allow_unsigned_receipts: bool = False
    receipt_issuer: str = ""
    fullsend_dir: str = ".fullsend"

    @model_validator(mode="before")
    @classmethod
    def _clean(cls, data: Any) -> Any:
        """Strip every value and drop empties so defaults apply."""
        if not isinstance(data, dict):
            return data
        cleaned = {k: _strip_empty(v) for k, v in data.items()}
        return {k: v for k, v in cleaned.items() if v is not None}

    @field_validator("steer_enabled", "status_comment", "allow_shared_uid", "allow_unsigned_receipts", mode="before")
    @classmethod
    def _bool(cls, value: Any) -> Any:
        if isinstance(value, bool) or value is None:
            return value
        if value in _BOOLS:
            return _BOOLS[value]
        raise ValueError("is not a boolean spelled true/True/TRUE or false/False/FALSE")

    @field_validator(
        "item",
        "max_steers",
        "poll_interval_seconds",
        "timeout_minutes",
        "max_iterations",
        "status_interval_seconds",
        "delegated_wait_seconds",
        mode="before",
    )
    @classmethod
    def _whole(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.lstrip("-").isdigit():
            raise ValueError("is not a whole number")
        if isinstance(value, str) and len(value.lstrip("-")) > _MAX_DIGITS:
            raise ValueError(f"is out of range (more than {_MAX_DIGITS} digits)")
        return value

    @field_validator("item")
    @classmethod
    def _positive_item(cls, value: int | None) -> int | None:
        if value is not None and value <= 0:
            raise ValueError("must be a positive issue or pull request number")
        return value

    @field_validator("fallback_models", "self_logins", "review_bot_logins", mode="before")
    @classmethod
    def _split(cls, value: Any) -> tuple[str, ...]:
        return _csv(value)

    @field_validator("agent_args", mode="before")
    @classmethod
    def _lines(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, (list, tuple)):
            return tuple(str(v) for v in value)
        return split_agent_args(str(value or ""))

    @field_validator("expected_denials", mode="before")
    @classmethod
    def _patterns(cls, value: Any) -> tuple[str, ...]:
        return denial_patterns(value)

    @model_validator(mode="after")
    def _owned_flags(self) -> Inputs:
        owned = owned_flags_in(self.agent_args, self.runtime)
        if owned:
            raise ValueError(f"agent_args: names {', '.join(owned)}, which the action sets itself for {self.runtime}")
        return self

    @field_validator("mint_url")
    @classmethod
    def _mint_url(cls, value: str) -> str:
        if value and not mint_url_allowed(value):
            raise ValueError("must be https://, or http://localhost / http://127.0.0.1, with no user@ part")
        return value.rstrip("/")

    @field_validator("receipt_issuer")
    @classmethod
    def _receipt_issuer(cls, value: str) -> str:
        if value and not mint_url_allowed(value):
            raise ValueError("must be https://, or http://localhost / http://127.0.0.1, with no user@ part")
        return value.rstrip("/")

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value and normalize_role(value) is None:
            raise ValueError("is not a valid role name")
        return value


class _MappingEnvSource(EnvSettingsSource):
    """An env source over a given mapping instead of ``os.environ`` (no global mutation)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        if self.case_sensitive:
            return dict(self._environ)
        return {k.lower(): v for k, v in self._environ.items()}


#: Inputs whose value can never be a secret: an error about one of them quotes the value given.
VALUE_SHOWN = frozenset(
    {
        "stage",
        "runtime",
        "codex_transport",
        "sandbox",
        "item",
        "steer_enabled",
        "status_comment",
        "status_interval_seconds",
        "allow_shared_uid",
        "allow_unsigned_receipts",
        "receipt_issuer",
        "max_steers",
        "poll_interval_seconds",
        "timeout_minutes",
        "max_iterations",
        "delegated_wait_seconds",
    }
)
_VALUE_SHOWN_MAX = 40


def load_inputs(environ: Mapping[str, str] | None = None) -> Inputs:
    """Read and validate the inputs from ``INPUT_*`` variables.

    Raises ``InputError`` for the first invalid input.  The message quotes the value given only
    for the inputs in :data:`VALUE_SHOWN` (none of them can hold a secret), cut at 40 characters.
    """
    env = dict(os.environ if environ is None else environ)
    only_inputs = {k: v for k, v in env.items() if k.upper().startswith("INPUT_")}
    try:
        return _construct(only_inputs)
    except ValidationError as exc:
        err = exc.errors(include_input=False)[0]
        name = str(err["loc"][0]) if err.get("loc") else "input"
        problem = _problem(err)
        if name == "input" and problem.startswith("is invalid: agent_args: "):  # the model-level check
            name, problem = "agent_args", problem.removeprefix("is invalid: agent_args: ")
        given = _given(only_inputs, name)
        if given is not None and err.get("type") != "missing":
            problem = f"{given} {problem}"
        raise InputError(
            name, problem, _FIXES.get(name, "Check the value against the action's documentation.")
        ) from None
    except SettingsError as exc:  # pragma: no cover - list decoding is disabled (NoDecode)
        raise InputError("input", "could not be parsed", "Check the inputs.") from exc


def _construct(env: Mapping[str, str]) -> Inputs:
    class _FromMapping(Inputs):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            *args: PydanticBaseSettingsSource,
            **kwargs: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return (_MappingEnvSource(settings_cls, env),)

    built = _FromMapping()  # type: ignore[call-arg]  # the fields come from the mapping source, not arguments
    return Inputs.model_construct(**built.model_dump())


def _given(env: Mapping[str, str], name: str) -> str | None:
    """The value of input ``name`` as given, quoted and cut (``None`` when it may be a secret)."""
    if name not in VALUE_SHOWN:
        return None
    raw = next((v for k, v in env.items() if k.upper() == f"INPUT_{name.upper()}"), None)
    if raw is None:
        return None
    text = raw.strip()
    return repr(text if len(text) <= _VALUE_SHOWN_MAX else text[:_VALUE_SHOWN_MAX] + "…")


def _problem(err: Mapping[str, Any]) -> str:
    kind = str(err.get("type", ""))
    if kind == "missing":
        return "is required but empty"
    if kind == "literal_error":
        return "is not one of the allowed values"
    msg = str(err.get("msg", "is invalid"))
    msg = msg.removeprefix("Value error, ")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than"):
        return f"is out of range ({msg.lower()})"
    return msg if msg.startswith(("is ", "must ")) else f"is invalid: {msg.lower()}"
