"""Sandboxes the agent runs in: ``local`` (default) and ``openshell``
(docs/architecture.md "Sandboxes").

``sandbox_factory(kind, …)`` gives the ``name -> Sandbox`` callable (``fullsend.ports.SandboxFactory``)
a runtime takes as its ``sandbox_factory``.  A runtime launches with one ``Sandbox.launch(Launch)``:
``openshell`` runs the launch's pinned script of ``fullsend.adapters.runtimes.launch``, ``local``
its argv in the sandbox's process group.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fullsend.ports import SandboxFactory

if TYPE_CHECKING:
    from fullsend.adapters.confinement.isolation import ChildUser

SANDBOX_KINDS = ("local", "openshell")


def sandbox_factory(
    kind: str,
    root_parent: Path | None = None,
    openshell_cli: str = "openshell",
    image: str = "",
    providers: Sequence[str] = (),
    user: ChildUser | None = None,
) -> SandboxFactory:
    """``name -> sandbox`` for ``kind`` (``local``: under ``root_parent``, every process as ``user``
    (a ``fullsend.adapters.confinement.isolation.ChildUser``) when given; ``openshell``: ``sandbox create``
    through ``openshell_cli``).

    Raises ``ValueError`` for an unknown kind (the settings validate the input before this).
    """
    if kind == "local":
        from fullsend.adapters.sandbox.local import local_sandbox_factory

        return local_sandbox_factory(root_parent, user=user)
    if kind == "openshell":
        from fullsend.adapters.sandbox.openshell import OpenShellSandbox

        return lambda name: OpenShellSandbox(name, cli=openshell_cli or "openshell", image=image, providers=providers)
    raise ValueError(f"unknown sandbox kind {kind!r} (known: {', '.join(SANDBOX_KINDS)})")


__all__ = ["SANDBOX_KINDS", "sandbox_factory"]
