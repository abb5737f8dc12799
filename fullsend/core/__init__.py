"""Pure decision logic: no environment, clock, network, subprocess or PyGithub types.

Only the standard library and ``fullsend.core`` itself may be imported here
(``shared/design.md`` "Layers and the dependency rule"; pinned by ``tests/test_layers.py``).
"""
