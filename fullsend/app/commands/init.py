"""``fullsend init``: write a working, commented setup for the stages a user picks
(docs/adopting.md "Start with fullsend init").

The files, relative to ``--dir``:

* ``.github/workflows/fullsend.yml`` — the shim (names the run, one ``dispatch`` job).  By default
  (``--dispatch hosted``) its job calls the dispatch workflow steer-action hosts,
  ``.github/workflows/dispatch.yml``, pinned to ``--ref`` (the full commit SHA of the steer-action
  release to use; a commit cannot name its own SHA, so the package does not know it and ``--ref``
  is required), with the chosen stages as its ``stages`` input;
* ``.github/workflows/fullsend-dispatch.yml`` — only with ``--dispatch self-contained``: Route and
  one job per chosen stage, the action pinned to ``--ref``, for those who own every line;
* ``.fullsend/harness/<stage>.yaml``, ``.fullsend/prompts/<stage>.md`` and
  ``.fullsend/agents/<stage>.md`` (an agent definition carrying the envelope's opening line);
* ``.fullsend/init.json`` — the plan and a digest of every file, for ``--upgrade``
  (``fullsend.app.commands.init_upgrade``).

It never overwrites: when any target exists it names them and exits 2, writing nothing.
``--dry-run`` prints every file instead of writing it.  The templates are
``fullsend/templates/init/`` (Jinja with ``[[ ]]`` and ``[% %]``, so GitHub's ``${{ }}`` passes
through untouched).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from fullsend import __version__
from fullsend.app.commands.init_hints import fix_hint, next_steps, origin_owner
from fullsend.app.commands.init_release import (
    DispatchRefused,
    TagReader,
    check_release,
    choose_dispatch,
    git_ls_remote,
    is_ghes,
)
from fullsend.app.commands.init_stages import MODEL_SECRETS, SECRET_WHY, STAGE_SPECS, StageSpec
from fullsend.app.commands.init_upgrade import MANIFEST, manifest_text
from fullsend.core.route.triggers import shim_triggers
from fullsend.errors import ExitCode

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "init"
SHA = re.compile(r"[0-9a-f]{40}")
#: ``--ref`` has no default: the release commit cannot carry its own SHA (check_plan says how to find it).
RELEASE_COMMIT = ""
ROLE_TOKEN_MODES = ("app", "mint")
QUEUES = ("single", "max")
DISPATCH_MODES = ("hosted", "self-contained")
#: The action as the self-contained example and the hosted dispatch on the main branch run it.
LOCAL_ACTION = "./  # zizmor: ignore[self-repository]"
HOSTED_DISPATCH = Path(".github/workflows/dispatch.yml")
SHIM = Path(".github/workflows/fullsend.yml")
EXAMPLE_DISPATCH = Path("examples/reusable-dispatch.yml")


class InitError(Exception):
    """A bad ``fullsend init`` argument or an existing target (exit 2), with its fix."""


@dataclass(frozen=True)
class InitPlan:
    """Everything one ``fullsend init`` renders: stages, runtime, action ref, role-token mode, queue,
    dispatch (``""`` until :func:`settle_plan` chooses) and ``release``, the release tag that names
    ``ref`` (``""``: no release, or not checked)."""

    stages: tuple[str, ...]
    runtime: str = "claude"
    ref: str = RELEASE_COMMIT
    role_token: str = "app"
    queue: str = "single"
    dispatch: str = "hosted"
    release: str = ""


def parse_stages(text: str) -> tuple[str, ...]:
    """``review,fix`` → ``("review", "fix")`` in pipeline order; ``all`` → every stage.

    Raises ``InitError`` naming an unknown stage and the known ones.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return tuple(STAGE_SPECS)
    unknown = [n for n in names if n not in STAGE_SPECS]
    if unknown or not names:
        raise InitError(
            f"--stages {text!r}: {'unknown stage ' + ', '.join(unknown) if unknown else 'no stage'}; "
            f"use a comma-separated list of {', '.join(STAGE_SPECS)}, or all"
        )
    return tuple(s for s in STAGE_SPECS if s in names)


def resolve_plan(
    stages: str | None,
    runtime: str | None,
    ref: str | None,
    role_token: str | None,
    queue: str | None,
    recorded: Mapping[str, Any],
    dispatch: str | None = None,
) -> InitPlan:
    """The plan of the arguments given; one not given is what ``recorded`` (the manifest an earlier
    init wrote, for ``--upgrade``; see :func:`recorded_plan`) says, else the default.  Raises
    ``InitError`` for bad stages."""

    def kept(value: str | None, key: str, default: str) -> str:
        old = recorded.get(key)
        return value if value is not None else old if isinstance(old, str) and old else default

    old_stages = recorded.get("stages")
    listed = old_stages if isinstance(old_stages, list) else []
    text = stages or ",".join(s for s in listed if isinstance(s, str)) or "review"
    return InitPlan(
        parse_stages(text),
        kept(runtime, "runtime", "claude"),
        ref if ref is not None else RELEASE_COMMIT,
        kept(role_token, "role_token", "app"),
        kept(queue, "queue", "single"),
        kept(dispatch, "dispatch", ""),
    )


def recorded_plan(recorded: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """The manifest ``recorded`` under ``root``, with ``dispatch`` filled in when an init from before
    the hosted dispatch wrote it (or no manifest is left): ``self-contained`` when
    ``fullsend-dispatch.yml`` is there, so ``--upgrade`` never moves a setup without being asked."""
    if "dispatch" in recorded or not (root / ".github/workflows/fullsend-dispatch.yml").exists():
        return dict(recorded)
    return {**recorded, "dispatch": "self-contained"}


def check_ref(plan: InitPlan) -> None:
    """Raise ``InitError`` for a ref that is not a full commit SHA."""
    if not SHA.fullmatch(plan.ref):
        what = "is required" if not plan.ref else f"{plan.ref!r} is not a full commit SHA (40 lowercase hex digits)"
        raise InitError(
            f"--ref {what}: pass the steer-action commit to pin, a release's (git ls-remote "
            "https://github.com/fullsend-ai/steer-action 'refs/tags/v1.2.3^{}' | cut -f1) or, "
            "with --dispatch self-contained and until you pick a release, any commit of its main branch"
        )


def settle_plan(plan: InitPlan, environ: Mapping[str, str], read: TagReader, say: TextIO) -> InitPlan:
    """``plan`` with its dispatch chosen and its release tag found (``fullsend.app.commands.
    init_release``), the reasons written to ``say``.  Raises ``InitError`` for a bad ref or a
    hosted dispatch at a commit that is no release."""
    check_ref(plan)
    check = check_release(plan.ref, environ, read)
    try:
        choice = choose_dispatch(plan.dispatch, plan.queue, plan.ref, check, is_ghes(environ))
    except DispatchRefused as exc:
        raise InitError(str(exc)) from None
    say.write("".join(choice.lines))
    return replace(plan, dispatch=choice.dispatch, release=check.tag)


def check_plan(plan: InitPlan) -> None:
    """Raise ``InitError`` for a ref that is not a full commit SHA or an unknown mode."""
    check_ref(plan)
    if plan.runtime not in MODEL_SECRETS:
        raise InitError(f"--runtime {plan.runtime!r}: use one of {', '.join(MODEL_SECRETS)}")
    if plan.dispatch not in DISPATCH_MODES:
        raise InitError(f"--dispatch {plan.dispatch!r}: use one of {', '.join(DISPATCH_MODES)}")
    if plan.dispatch == "hosted" and plan.queue == "max":
        raise InitError(
            "--queue max needs --dispatch self-contained: the hosted dispatch workflow's stage jobs "
            "queue single (GitHub takes no expression for queue)"
        )


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
    )


def render_files(plan: InitPlan) -> list[tuple[Path, str]]:
    """``[(relative path, text)]`` for ``plan``; raises ``InitError`` (see :func:`check_plan`)."""
    check_plan(plan)
    env = _environment()
    specs = [STAGE_SPECS[s] for s in plan.stages]
    common = _values(plan, hosted_caller=plan.dispatch == "hosted")
    files = [(Path(".github/workflows/fullsend.yml"), env.get_template("shim.yml.j2").render(**common))]
    if plan.dispatch == "self-contained":
        action = f"fullsend-ai/steer-action@{plan.ref} # {pin_comment(plan)}"
        text = env.get_template("dispatch.yml.j2").render(**common, action=action, local=False)
        files.append((Path(".github/workflows/fullsend-dispatch.yml"), text))
    for spec in specs:
        files += _stage_files(env, spec)
    return files


def pin_comment(plan: InitPlan) -> str:
    """What follows a pin's ``#``: the release tag, or that the commit is none (docs/adopting.md)."""
    return plan.release or f"unreleased commit (written by fullsend {__version__})"


def _values(plan: InitPlan, *, hosted_caller: bool = False, hosted: bool = False) -> dict[str, Any]:
    """The template values of ``plan``: ``hosted`` renders the hosted dispatch (every runtime's
    secret, the role-token mode chosen by input), ``hosted_caller`` a shim that calls it."""
    model_secrets = sorted({n for names in MODEL_SECRETS.values() for n in names}) if hosted else []
    model_secrets = model_secrets or list(MODEL_SECRETS[plan.runtime])
    with_app = plan.role_token == "app" or hosted
    return dict(
        version=__version__,
        stages=list(plan.stages),
        runtime=plan.runtime,
        ref=plan.ref,
        pin_comment=pin_comment(plan),
        role_token="input" if hosted else plan.role_token,
        queue=plan.queue,
        secrets=[*model_secrets, *_app_secrets(plan, with_app)],
        model_secrets=model_secrets,
        secret_descriptions=SECRET_WHY,
        specs=[STAGE_SPECS[s] for s in plan.stages],
        triggers=[(event, "[" + ", ".join(types) + "]") for event, types in shim_triggers(plan.stages).items()],
        hosted=hosted or hosted_caller,
        example=False,
    )


def _app_secrets(plan: InitPlan, with_app: bool) -> list[str]:
    """The App private keys a workflow passes: the review App's too when review is a stage."""
    if not with_app:
        return []
    review = "review" in plan.stages
    return ["FULLSEND_APP_PRIVATE_KEY", *(["FULLSEND_REVIEW_APP_PRIVATE_KEY"] if review else [])]


def render_dispatch(which: Path) -> str:
    """The text of a dispatch workflow this repository ships, from the one template:
    ``HOSTED_DISPATCH`` (every stage, inputs, the action from ``./`` until a release pins it) or
    ``EXAMPLE_DISPATCH`` (self-contained, every stage, mint, the action from ``./``).  Raises
    ``KeyError`` for another path."""
    plan = InitPlan(tuple(STAGE_SPECS), ref="0" * 40, role_token="mint")
    hosted = {HOSTED_DISPATCH: True, EXAMPLE_DISPATCH: False}[which]
    values = _values(plan, hosted=hosted)
    values.update(hosted=hosted, example=not hosted, action=LOCAL_ACTION, local=True)
    return _environment().get_template("dispatch.yml.j2").render(**values)


def _stage_files(env: Environment, spec: StageSpec) -> list[tuple[Path, str]]:
    values = dict(spec=spec, version=__version__)
    return [
        (Path(f".fullsend/harness/{spec.stage}.yaml"), env.get_template("harness.yaml.j2").render(**values)),
        (Path(f".fullsend/prompts/{spec.stage}.md"), env.get_template("prompt.md.j2").render(**values)),
        (Path(f".fullsend/agents/{spec.stage}.md"), env.get_template("agent.md.j2").render(**values)),
    ]


def write_files(root: Path, files: Sequence[tuple[Path, str]]) -> list[Path]:
    """Write ``files`` under ``root``; raises ``InitError`` (nothing written) when ``root`` is not an
    existing folder (a mistyped ``--dir`` must not become a new folder), when any file exists, or
    when a folder on its way is not a folder."""
    if not root.is_dir():
        raise InitError(f"--dir {root} is not an existing folder; give the top of your repository's checkout")
    existing = [rel for rel, _ in files if (root / rel).exists() or (root / rel).is_symlink()]
    if existing:
        raise InitError(
            f"{', '.join(str(root / p) for p in existing)} already exist"
            f"{'s' if len(existing) == 1 else ''}; fullsend init never overwrites: move "
            f"{'it' if len(existing) == 1 else 'them'} away (or merge what --dry-run prints by hand)"
        )
    blocked = sorted(
        {
            str(folder)
            for rel, _ in files
            for folder in _folders(root, rel)
            if (folder.exists() or folder.is_symlink()) and not folder.is_dir()
        }
    )
    if blocked:
        raise InitError(f"{', '.join(blocked)} is in the way: fullsend init writes folders there; move it away")
    try:
        for rel, text in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InitError(
            f"cannot write under {root}: {exc.strerror or exc}; check the folder and its permissions"
        ) from None
    return [rel for rel, _ in files]


def _folders(root: Path, rel: Path) -> list[Path]:
    """The folders ``root / rel`` needs, ``root`` included."""
    return [root, *(root / parent for parent in reversed(rel.parents) if str(parent) != ".")]


def run_init(
    plan: InitPlan,
    root: Path,
    dry_run: bool,
    out: TextIO,
    err: TextIO,
    environ: Mapping[str, str] = os.environ,
    read: TagReader = git_ls_remote,
) -> int:
    """``fullsend init``: exit 0 after writing (or printing, ``dry_run``) the files, 2 on an
    ``InitError`` (one line on ``err``).  ``environ`` and ``read``: where steer-action's release
    tags are read (``fullsend.app.commands.init_release``)."""
    try:
        plan = settle_plan(plan, environ, read, err if dry_run else out)
        files = render_files(plan)
        if dry_run:
            for rel, text in files:
                out.write(f"==> {rel} <==\n{text}\n")
            return ExitCode.OK
        written = write_files(root, [*files, (MANIFEST, manifest_text(plan, files))])
    except InitError as exc:
        err.write(f"fullsend init: {exc}\n")
        return ExitCode.BAD_INPUT
    out.write(f"Wrote {len(written)} files under {root}:\n" + "".join(f"  {p}\n" for p in written))
    if not (root / ".git").exists():
        out.write(
            f"Note: {root} is not the top of a git repository; GitHub runs only the workflows in the "
            "repository root's .github/workflows.\n"
        )
    owner = origin_owner(root)
    out.write(next_steps(plan.role_token, plan.stages, " and ".join(MODEL_SECRETS[plan.runtime]), owner))
    if "fix" in plan.stages:
        out.write(fix_hint(plan.dispatch == "hosted", owner))
    return ExitCode.OK


def run_upgrade(
    plan: InitPlan,
    root: Path,
    apply: bool,
    force: bool,
    out: TextIO,
    err: TextIO,
    environ: Mapping[str, str] = os.environ,
    read: TagReader = git_ls_remote,
) -> int:
    """``fullsend init --upgrade``: print what this release would change (``fullsend.app.commands.
    init_upgrade``), and with ``apply`` write it.  Exit 0, 2 on an ``InitError`` or a ``--dir`` that
    is not a folder, 1 when a write fails."""
    from fullsend.app.commands.init_upgrade import apply_changes, compare, read_manifest, report, upgrade_manifest

    if not root.is_dir():
        err.write(
            f"fullsend init: --dir {root} is not an existing folder; give the top of your repository's checkout\n"
        )
        return ExitCode.BAD_INPUT
    if not (root / MANIFEST).exists() and not (root / SHIM).exists():
        err.write(
            f"fullsend init --upgrade: no setup under {root} (neither {MANIFEST} nor {SHIM}); run it from the "
            "top of a repository where fullsend init wrote one (--dir), or run fullsend init\n"
        )
        return ExitCode.BAD_INPUT
    try:
        plan = settle_plan(plan, environ, read, out)
        files = render_files(plan)
    except InitError as exc:
        err.write(f"fullsend init: {exc}\n")
        return ExitCode.BAD_INPUT
    recorded = read_manifest(root)
    changes = compare(root, files, recorded)
    report(changes, out)
    pending = [c for c in changes if c.kind != "same"]
    if not pending:
        out.write(f"Up to date: every file is what steer-action {__version__} writes.\n")
        return ExitCode.OK
    if not apply:
        ours = sum(c.kind in ("add", "update") for c in pending)
        out.write(
            f"Nothing written; --apply writes the {ours} add and update file(s)"
            + (f", --apply --force also the {len(pending) - ours} of yours" if ours < len(pending) else "")
            + ".\n"
        )
        return ExitCode.OK
    return apply_changes(root, changes, upgrade_manifest(plan, changes, recorded, force), force, out, err)
