"""``fullsend.adapters.confinement.capdrop`` on this machine (needs root): once the action's own process has
limited its children, a child keeps only the capabilities for file work, so it cannot read the
non-dumpable action's memory (docs/architecture.md "Child isolation").  Each case runs in a fresh
interpreter: the limit is for good, and must not reach the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fullsend.adapters.confinement import capdrop
from tests.support.tools import missing_tool

CAP_SYS_PTRACE = 19
#: As the action is (fullsend.adapters.secrets), optionally limited, then one child: its
#: /proc/self/status, its environment, and whether it could open the action's memory.
ACTION = r"""
import ctypes, json, os, subprocess, sys
from fullsend.adapters.confinement import capdrop
left = None
if sys.argv[1] == "no-setpcap":  # CAP_SETPCAP out of the effective set: the bounding set cannot shrink
    class H(ctypes.Structure): _fields_ = [("v", ctypes.c_uint32), ("p", ctypes.c_int)]
    class D(ctypes.Structure): _fields_ = [("e", ctypes.c_uint32), ("p", ctypes.c_uint32), ("i", ctypes.c_uint32)]
    h, d = H(0x20080522, 0), (D * 2)()
    ctypes.CDLL(None).capget(ctypes.byref(h), d)
    d[0].e &= ~(1 << 8)
    assert ctypes.CDLL(None).capset(ctypes.byref(h), d) == 0
if sys.argv[1] in ("limit", "no-setpcap"):
    capdrop.own_process()
    left = capdrop.limit_children_capabilities() if capdrop.applies() else "not applied"
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # non-dumpable, as the action
probe = "import os\ntry:\n    open(f'/proc/{os.getppid()}/mem', 'rb').close(); print('read')\nexcept OSError as e: print(e.strerror)"
status = subprocess.run(["cat", "/proc/self/status"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
env = subprocess.run(["env"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True).stdout
mem = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
print(json.dumps({"left": left, "status": status.stdout, "env": env, "mem": mem}))
"""


@pytest.fixture(autouse=True)
def _root() -> None:
    if os.geteuid() != 0:
        missing_tool("root", "run the tests as root on Linux")


def _status(text: str) -> dict[str, str]:
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def _action(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", ACTION, mode], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def _host_bounding_set() -> int:
    return int(_status(open("/proc/self/status").read())["CapBnd"], 16)


def test_a_child_of_the_limited_action_keeps_only_the_file_capabilities():
    seen = _action("limit")
    status = _status(seen["status"])
    kept = sum(1 << cap for cap in capdrop.KEPT_CAPABILITIES) & _host_bounding_set()
    assert seen["left"] == []
    assert status["Uid"].split() == ["0"] * 4  # still root: the workspace is the runner's
    assert {int(status[k], 16) for k in ("CapPrm", "CapEff", "CapBnd")} == {kept}
    assert (status["CapInh"], status["CapAmb"], status["NoNewPrivs"]) == ("0000000000000000", "0000000000000000", "1")
    # The program itself, started as before: it ignores only what this test process was started
    # ignoring (a shell's background job ignores SIGINT and SIGQUIT), nothing the limit added.
    baseline = subprocess.run(
        ["cat", "/proc/self/status"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True
    ).stdout
    assert status["SigIgn"] == _status(baseline)["SigIgn"]
    assert seen["env"] == "PATH=/usr/bin:/bin\n"


def test_the_child_of_the_limited_action_cannot_read_its_memory():
    assert _action("limit")["mem"] == "Permission denied"
    if not _host_bounding_set() >> CAP_SYS_PTRACE & 1:
        pytest.skip("this host grants no CAP_SYS_PTRACE: the control below cannot read either")
    assert _action("none")["mem"] == "read"  # the control: without the limit a root child can


def test_only_the_actions_own_process_is_limited():
    assert capdrop.applies() is False  # this test process never called own_process()
    assert _action("no-limit")["left"] is None


def test_a_dangerous_capability_the_action_cannot_drop_is_named():
    if not _host_bounding_set() >> CAP_SYS_PTRACE & 1:
        pytest.skip("this host grants no CAP_SYS_PTRACE: nothing dangerous is left to name")
    assert "sys_ptrace" in _action("no-setpcap")["left"]


def test_no_kept_capability_is_one_that_refuses():
    """A kept capability that also counted as dangerous would refuse every root run."""
    assert not set(capdrop.KEPT_CAPABILITIES) & set(capdrop.DANGEROUS_CAPABILITIES)
    assert capdrop.DANGEROUS_CAPABILITIES[CAP_SYS_PTRACE] == "sys_ptrace"


SEAL = r"""
import json, os, subprocess, sys
from fullsend.adapters.confinement import capdrop
before = os.access(capdrop.CORE_PATTERN, os.W_OK)
why = capdrop.seal_kernel_settings()
capdrop.own_process()
left = capdrop.limit_children_capabilities()
write = "cat /proc/sys/kernel/core_pattern > /dev/null && sh -c 'cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern' 2>&1 || true"
child = subprocess.run(["sh", "-c", write], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True).stdout
register = [line.split()[4] + "/register" for line in open("/proc/self/mountinfo") if " binfmt_misc " in line]
print(json.dumps({"before": before, "why": why, "left": left, "child": child,
                  "after": os.access(capdrop.CORE_PATTERN, os.W_OK), "writable": capdrop.writable_kernel_mounts(),
                  "register": [os.access(path, os.W_OK) for path in register]}))
"""
THREADED = r"""
import threading, time
from fullsend.adapters.confinement import capdrop
threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
print(capdrop.seal_kernel_settings())
"""


def test_a_sealed_action_leaves_no_child_the_kernels_helpers():
    """docs/architecture.md "Child isolation": as root, the kernel's settings are read-only for the
    action and every child, which lacks CAP_SYS_ADMIN to mount them back; where they already were
    read-only there is nothing to do."""
    out = json.loads(
        subprocess.run([sys.executable, "-c", SEAL], capture_output=True, text=True, timeout=60, check=True).stdout
    )
    assert (out["why"], out["left"], out["after"], out["writable"]) == ("", [], False, []), out
    assert not any(out["register"]), out  # binfmt_misc too, where it is mounted
    assert "cannot create" in out["child"], out  # the child's write failed, whatever the host
    if out["before"]:  # this host's /proc/sys is writable: the seal is what stopped the child
        assert "Read-only file system" in out["child"], out


def test_a_second_thread_keeps_the_seal_from_being_made_and_says_so():
    """A mount namespace is per thread: with another thread alive the seal is not made (the caller refuses)."""
    out = subprocess.run(
        [sys.executable, "-c", THREADED], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    if os.access(capdrop.CORE_PATTERN, os.W_OK) or capdrop.writable_kernel_mounts():
        assert out == "the action has 2 threads, and a mount namespace is per thread", out
    else:
        assert out == "", out  # nothing writable on this host: nothing to seal
