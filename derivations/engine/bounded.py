"""Run one costly sympy computation (a closed-form solve and its verification) with a bound on its CPU time and memory.

sympy cannot be interrupted cooperatively: `solve` on an equation such as
`B**(1/11) + B**(1/2) = 3` runs for over a minute, partly inside C code (big
integers, polynomial arithmetic) where no Python signal handler gets to run.
So the computation runs in a child process made with `fork`, which starts with
everything the parent has built (no re-import, no pickling of the inputs), and
the kernel bounds it:

- `RLIMIT_CPU` (soft `SOLVE_CPU_SECONDS`): past it the kernel stops the child
  with SIGXCPU, wherever it is. CPU time, not wall time, so a loaded machine
  does not refuse a solve that would finish;
- `RLIMIT_AS` (`SOLVE_MEMORY_BYTES` above what the parent already maps): an
  allocation past it fails with MemoryError in the child;
- a wall-clock backstop (`WALL_SECONDS`) for a child that waits instead of
  computing.

The child sends its result (or the exception it raised) back through a pipe,
pickled: the pipe is anonymous and joins two processes of this program, so
nothing outside it can write to it (unlike a cache file). The parent always
reaps the child, also on Ctrl-C. Why not `signal.setitimer` in the process
itself: the alarm's handler cannot run while sympy is inside C code, it works
only in the main thread, it bounds no memory, and an exception raised at an
arbitrary bytecode can leave sympy's caches half-updated; a killed child leaves
nothing behind. Where `fork` does not exist (not Linux or macOS), the
computation runs in the process, unbounded.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ...units import RooflineError, loads

#: The most CPU time one solve (with its verification) may take. The slowest shipped solve takes about 1.7 s cold.
SOLVE_CPU_SECONDS = 5
#: The most memory one solve may map beyond what the process already holds.
SOLVE_MEMORY_BYTES = 2 * 2**30
#: The most CPU time all the solves of one derivation file may take together (its solves share this budget).
FILE_SOLVE_CPU_SECONDS = 20
#: A child that has not finished after this much wall time is stopped (it waits instead of computing).
WALL_SECONDS = 120

T = TypeVar("T")
_IN_CHILD = False


class LimitExceededError(RooflineError):
    """A computation refused because it ran past a bound (CPU time, memory): `what` it was and `reason`, the bound it passed."""

    def __init__(self, what: str, reason: str) -> None:
        self.what, self.reason = what, reason
        super().__init__(f"{what} {reason}")


@dataclass
class Budget:
    """CPU seconds left for a group of computations (the solves of one derivation file)."""

    seconds: float

    def take(self, used: float) -> None:
        self.seconds = max(0.0, self.seconds - used)


def _mapped_bytes() -> int:
    """Virtual memory the process maps now (Linux: /proc/self/statm), or 0 when unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(fn: Callable[..., Any], args: tuple[Any, ...], cpu_seconds: float, memory_bytes: int, w: int) -> None:
    """In the child: set the limits, run, send the outcome; never returns."""
    global _IN_CHILD
    _IN_CHILD = True
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the whole process group: the child just ends
        import resource

        soft = max(1, int(cpu_seconds + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
        mapped = _mapped_bytes()
        if mapped:
            limit = mapped + memory_bytes
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            outcome: tuple[str, Any] = ("ok", fn(*args))
        except MemoryError:
            outcome = ("memory", None)
        except BaseException as err:  # sent to the parent, which raises it there
            outcome = ("error", err)
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
            loads(data)  # what the parent will read must read back
        except Exception as err:  # an unpicklable result or exception: say what it was
            data = pickle.dumps(("text", f"{type(outcome[1]).__name__}: {outcome[1]}"[:500] if outcome[0] == "error" else repr(err)[:500]))
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def run(fn: Callable[..., T], *args: Any, what: str = "the solve", cpu_seconds: float | None = None,
        memory_bytes: int | None = None, budget: Budget | None = None) -> T:
    """`fn(*args)`, computed in a child process within the bounds; LimitExceededError naming `what` when it runs past one.

    An exception `fn` raises is raised here. With `budget`, the child may use at most what is left of it (and no more than
    `cpu_seconds`), and the CPU time it used is taken from it.
    """
    cpu_seconds = SOLVE_CPU_SECONDS if cpu_seconds is None else cpu_seconds
    memory_bytes = SOLVE_MEMORY_BYTES if memory_bytes is None else memory_bytes
    if budget is not None:
        if budget.seconds <= 0:
            raise LimitExceededError(what, f"was not started: this file's solves have used their {FILE_SOLVE_CPU_SECONDS:g} s of CPU time (the bound on a derivation file)")
        cpu_seconds = min(cpu_seconds, budget.seconds)
    if _IN_CHILD or not hasattr(os, "fork"):
        return fn(*args)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        os.close(r)
        _child(fn, args, cpu_seconds, memory_bytes, w)
    os.close(w)
    chunks: list[bytes] = []
    status, usage = None, None
    deadline = time.monotonic() + WALL_SECONDS
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([r], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(r, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        _, status, usage = os.wait4(pid, 0)
        pid = 0
    finally:
        os.close(r)
        if pid:  # interrupted (Ctrl-C): stop and reap the child before going on
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
    used = (usage.ru_utime + usage.ru_stime) if usage is not None else cpu_seconds
    if budget is not None:
        budget.take(used)
    limit = f"{cpu_seconds:g} s of CPU time"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL) and (sig == signal.SIGXCPU or used >= cpu_seconds):
            raise LimitExceededError(what, f"did not finish within {limit} (the bound on every solve; simplify the equation, or equate one term at a time)")
        if time.monotonic() >= deadline:
            raise LimitExceededError(what, f"did not finish within {WALL_SECONDS} s")
        raise LimitExceededError(what, f"stopped (signal {sig})")
    try:
        kind, value = loads(b"".join(chunks))
    except Exception:
        raise LimitExceededError(what, "stopped without a result") from None
    if kind == "ok":
        return value
    if kind == "memory":
        raise LimitExceededError(what, f"needs more than {memory_bytes / 2**30:g} GiB of memory (the bound on every solve)")
    if kind == "text":
        raise RooflineError(f"{what} failed: {value}")
    raise value


__all__ = ["FILE_SOLVE_CPU_SECONDS", "SOLVE_CPU_SECONDS", "SOLVE_MEMORY_BYTES", "WALL_SECONDS", "Budget", "LimitExceededError", "run"]
