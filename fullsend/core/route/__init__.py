"""The Route decision (docs/rules.md, family Route): who may command which stage.  Pure."""
