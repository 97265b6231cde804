"""Issue 35, family 7: a closed or broken stdin, stdout or stderr is one line and exit 2 (roofline.cli.main), or exit 2 quietly
where stderr is gone too; never a traceback. Each case runs the command in a child process whose descriptors are really closed
(`>&-`), as a shell script would leave them."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: (id, roofline arguments, bash redirections, exit code, stderr: '' or the start of its one line, stdout: '' or a start)
CASES = [
    ("derive-stdout-closed", "derive decode-floor", ">&-", 2, "roofline: error: stdout is closed, so nothing could be printed", ""),
    ("list-stdout-closed", "list models", ">&-", 2, "roofline: error: stdout is closed, so nothing could be printed", ""),
    ("build-check-stdout-closed", "build --check", ">&-", 2, "roofline: error: stdout is closed, so nothing could be printed", ""),
    ("quiz-ask-stdin-closed", "quiz --ask", "<&-", 2, "roofline: error: --ask reads a candidate's answers from a terminal, and stdin is closed", ""),
    ("derive-stdin-closed", "derive decode-floor", "<&-", 0, "", "# The decode floor"),
    ("derive-stderr-closed", "derive decode-floor", "2>&-", 0, None, "# The decode floor"),
    ("error-stderr-closed", "derive no-such-sheet", "2>&-", 2, None, ""),
    ("error-stdout-and-stderr-closed", "derive no-such-sheet", ">&- 2>&-", 2, None, None),
    ("all-three-closed", "derive decode-floor", "<&- >&- 2>&-", 2, None, None),
    ("stdout-full", "derive decode-floor", ">/dev/full", 2, "roofline: error: stdout: cannot write the output (No space left on device)", None),
    ("short-stdout-full", "list models", ">/dev/full", 2, "roofline: error: stdout: cannot write the output (No space left on device)", None),
    ("error-stderr-full", "derive no-such-sheet", "2>/dev/full", 2, None, ""),
]


def _run(args: str, redirections: str) -> subprocess.CompletedProcess:
    # bash applies the redirections to the child itself: `>&-` leaves it with no descriptor 1 at all
    script = f'exec "$0" -m roofline {args} {redirections}'
    return subprocess.run(["bash", "-c", script, sys.executable], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("case", "args", "redirections", "code", "err", "out"), CASES, ids=[c[0] for c in CASES])
def test_a_closed_or_broken_stream_is_one_line_or_quiet_and_exit_2(case, args, redirections, code, err, out):
    run = _run(args, redirections)
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    assert run.returncode == code, run.stderr
    if err is not None:
        assert (run.stderr == "") if err == "" else (run.stderr.startswith(err) and len(run.stderr.splitlines()) == 1), run.stderr
    if out is not None:
        assert (run.stdout == "") if out == "" else run.stdout.startswith(out)


@pytest.mark.parametrize("args", ["derive decode-floor", "list models", "quiz --count 3"])
def test_a_reader_that_closed_the_pipe_is_one_line_and_exit_2(args):
    child = subprocess.Popen([sys.executable, "-m", "roofline", *args.split()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.close()  # the reader is gone before the child writes a byte
    err = child.stderr.read()
    assert child.wait(timeout=300) == 2
    assert err == "roofline: error: stdout: its reader closed it before all the output was written (broken pipe)\n", err
