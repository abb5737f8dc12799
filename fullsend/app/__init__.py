"""Application layer: wires ports, adapters and core into the action's lifecycle."""
