"""Pure decision logic: no environment, clock, network, subprocess or HTTP library types.

Only the standard library and ``fullsend.core`` itself may be imported here
(docs/architecture.md "Layers"; pinned by ``tests/test_layers.py``).
"""
