"""Issue 2 acceptance 4: ``fullsend demo`` exits 0 and prints the receipt marker."""

import subprocess
import sys

from fullsend.core.receipt.marker import parse_marker


def test_demo_exits_zero_and_prints_the_receipt_marker():
    proc = subprocess.run([sys.executable, "-m", "fullsend", "demo"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    marker = parse_marker(proc.stdout)
    assert marker is not None and len(marker.consumed) == 1 and marker.head == "aaa111"
    assert "skip" in proc.stdout and "receipt-lists-my-run" in proc.stdout
