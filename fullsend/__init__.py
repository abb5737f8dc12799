"""steer-action: steer an AI agent run in flight with authorized follow-up updates.

The package layout follows docs/architecture.md "Layers": ``core`` is pure, ``adapters`` talk to the
world, ``app`` wires them, ``testing`` ships the GitHub simulator and scripted agents.
"""

__version__ = "0.1.0"
