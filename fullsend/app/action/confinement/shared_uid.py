"""Before any child: refuse an agent that would share the action's uid, unless allowed, and limit
what children of that uid get (docs/architecture.md "Child isolation").

Raises ``ConfigError`` (exit 2) before any child starts; nothing here starts one.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable, Mapping

from fullsend.adapters.confinement import capdrop
from fullsend.adapters.confinement.isolation import CHILD_USER
from fullsend.app.action.confinement.children import Children
from fullsend.app.action.confinement.handoff import refuse_an_ancestor_holding
from fullsend.app.action.plan import RunPlan
from fullsend.errors import ConfigError
from fullsend.ports import Log


def check_isolation(
    children: Children,
    plan: RunPlan,
    holds_withheld: bool,
    log: Log,
    notice: Callable[[str, str], None],
    secrets: Mapping[str, str] | None = None,
) -> None:
    """Refuse, in GitHub Actions, an agent that would share the action's uid unless the input
    ``allow_shared_uid`` allows it (docs/adopting.md "Which deployments give receipts"); a run
    holding its deployment's public job token (``Children.public_token_run``) and runs by hand
    pass.  Sharing the uid, whatever the deployment, a process above the
    action that holds one of ``secrets`` (name -> value: ``children.reach_secrets``) is refused
    (docs/rules.md#token-in-reach).  ``holds_withheld``: this process holds the job token or the
    OIDC request token.  ``notice(text, rule_id)`` adds a timeline row.  Raises ``ConfigError``
    (exit 2) before any child."""
    if children.user is None and capdrop.applies():
        _limit_capabilities(log)
    if children.user is None and plan.ctx.actions and secrets:
        refuse_an_ancestor_holding(secrets)  # an agent of this uid could read that environment
    if children.user is not None or children.public_token_run or not plan.ctx.actions:
        return
    if plan.inputs.allow_shared_uid and capdrop.applies() and holds_withheld:
        raise ConfigError(
            "The agent would share the action's uid in a process that holds the job token or "
            "the OIDC request token (the hand-off to the agent stage was not made: per-uid "
            "isolation looked available a moment before); run the job again"
        )
    if plan.inputs.allow_shared_uid:
        log(
            "warning",
            "allow_shared_uid is set: the agent runs under the action's own uid, so it can "
            "rewrite this step's outputs and summary, and no receipt is posted",
        )
        notice(
            "the agent ran under the action's own uid (allow_shared_uid): it could write this summary and the step's "
            "outputs",
            "",
        )
        return
    raise ConfigError(
        f"The agent would run under the action's own user ({_user_name()}): {children.isolation_why}. Run "
        f"the action's own image as root (GitHub runs container actions as root; the image creates the user "
        f"{CHILD_USER}), or set allow_shared_uid: true to run it anyway, without receipts"
    )


def _limit_capabilities(log: Log) -> None:
    """No child user: every later child gets no new privileges and, as root, at most the
    capabilities for file work (docs/architecture.md "Child isolation").  Raises
    ``ConfigError`` when one that would give the agent the action's memory stays."""
    unsealed = capdrop.seal_kernel_settings()
    if unsealed:
        raise ConfigError(
            f"The agent would run as root with the kernel's settings writable ({capdrop.CORE_PATTERN}"
            f": {unsealed}), so it could make the kernel run a program of its own as full root. "
            "Mount /proc/sys read-only (an unprivileged container does), or run the action's own "
            f"image, which runs the agent as {CHILD_USER}"
        )
    left = capdrop.limit_children_capabilities()
    if left == ["unknown"]:
        raise ConfigError(
            "The agent would share the action's uid, and the action could not limit the "
            "capabilities its children get (the kernel refused or would not say): run the "
            f"action's own image, which runs the agent as {CHILD_USER}"
        )
    if left:
        caps = ", ".join("CAP_" + name.upper() for name in left)
        raise ConfigError(
            f"The agent would run as root with {caps}, which would let it read the job token "
            "from the action's memory, and the action could not drop it (it lacks CAP_SETPCAP). "
            "Drop it from the job's container (for example --cap-drop), or run the action's own "
            f"image, which runs the agent as {CHILD_USER}"
        )
    kept = ", ".join("CAP_" + name.upper() for name in capdrop.KEPT_CAPABILITIES.values())
    log(
        "info",
        "The agent and the scripts start with no_new_privs"
        + (f" and, as root, at most {kept}" if os.geteuid() == 0 else ""),
    )


def _user_name() -> str:
    """The action's effective user, by name when ``/etc/passwd`` has it, else ``uid <n>``."""
    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name}, uid {uid}"
    except KeyError:
        return f"uid {uid}"
