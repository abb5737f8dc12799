"""Every input read plainly, for the fast skip (docs/architecture.md "Fast skip").

:func:`plain_inputs` accepts the inputs only when the full validation (``fullsend.settings``,
then ``fullsend.app.action.plan``) would accept them too — the choices and bounds are both read
from ``fullsend.input_table``, the one table of them — so a run with bad input still exits 2
before any API call.  It is stricter where the check would be costly or the rule subtle (a
configured mint, the openshell sandbox, a number in another script's digits): such a run is
simply left to the full lifecycle.  Standard library and ``fullsend.core`` only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from fullsend.core.agent_args import owned_flags_in, split_agent_args
from fullsend.core.tokens.policy import mint_url_allowed, normalize_role
from fullsend.input_table import BOOL_INPUTS, BOOLS, BOUNDS, CHOICES, DEFAULT_CLIS, DIGITS_MAX


class NotPlain(Exception):
    """An input the plain reader does not vouch for: the full lifecycle reads it."""


def plain_inputs(environ: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """``INPUT_*`` by lower-case name, stripped, empties dropped (as ``settings.load_inputs``).

    Raises ``NotPlain`` unless every input the full validation checks is plainly valid: the
    choices, booleans and bounded whole numbers, no ``mint_url``, a valid ``role``, no flag of
    ``agent_args`` the action owns, a prompt source, an agent CLI that will be found.  The
    harness and what it adds (its prompt, its ``steer:`` numbers) are the caller's to check.
    """
    inputs = _collect(environ)
    if "stage" not in inputs or "mint_url" in inputs:
        raise NotPlain("stage is empty or a mint is configured")
    if inputs.get("command", "run") != "run" or inputs.get("sandbox", "local") != "local":
        raise NotPlain("route is not a run, and the openshell sandbox's CLI is looked for by the full path")
    for name, allowed in CHOICES.items():
        if name in inputs and inputs[name] not in allowed:
            raise NotPlain(name)
    for name in BOOL_INPUTS:
        if name in inputs and inputs[name] not in BOOLS:
            raise NotPlain(name)
    for name, (low, high) in BOUNDS.items():
        raw = inputs.get(name)
        if raw is not None and not (
            raw.isascii()
            and raw.isdigit()
            and len(raw) <= DIGITS_MAX
            and raw == str(int(raw))
            and low <= int(raw) <= high
        ):
            raise NotPlain(name)
    if "role" in inputs and normalize_role(inputs["role"]) is None:
        raise NotPlain("role")
    if "receipt_issuer" in inputs and not mint_url_allowed(inputs["receipt_issuer"]):
        raise NotPlain("receipt_issuer")
    runtime = inputs.get("runtime", "claude")
    if owned_flags_in(split_agent_args(inputs.get("agent_args", "")), runtime):
        raise NotPlain("agent_args")
    if "prompt" in inputs and "prompt_file" in inputs:
        raise NotPlain("prompt")
    if "prompt_file" in inputs:
        _prompt_file(workspace, inputs["prompt_file"])
    _agent_cli(inputs.get("agent_cli", ""), runtime, workspace, environ)
    return inputs


def _collect(environ: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in environ.items():
        if key.upper().startswith("INPUT_"):
            name = key[len("INPUT_") :].lower()
            if name in found:
                raise NotPlain(f"{name} is given twice")
            found[name] = value.strip()
    return {name: value for name, value in found.items() if value}


def _prompt_file(workspace: Path, relative: str) -> None:
    """As ``plan._read_prompt_file``: a non-empty UTF-8 file inside the workspace."""
    path = (workspace / relative).resolve()
    if not path.is_relative_to(workspace.resolve()):
        raise NotPlain("prompt_file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise NotPlain("prompt_file") from None
    if not text.strip():
        raise NotPlain("prompt_file")


def _agent_cli(given: str, runtime: str, workspace: Path, environ: Mapping[str, str]) -> None:
    """As ``plan._agent_cli``: an executable path, a command on ``PATH``, or one this image installs."""
    name = given or DEFAULT_CLIS[runtime]
    if "/" in name:
        path = Path(name) if Path(name).is_absolute() else workspace / name
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NotPlain("agent_cli")
        return
    import shutil  # only once a run names its CLI: the fast skip decides without it

    if shutil.which(name) is not None:
        return
    from fullsend.adapters.agentcli.lock import install_root, installable  # only for a CLI not on PATH

    if given or not installable(runtime, install_root(environ)):
        raise NotPlain("agent_cli")
