"""The webhook events GitHub sends for what happens in the simulator, and the workflow runs they
start (``fullsend.simulator.events.emitter``)."""
