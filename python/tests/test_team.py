"""comm= : one integral over the ranks of a communicator with mpi4py's interface (Get_rank,
Get_size, allgather). Every rank gets bitwise the one-process result. ThreadComm gives n Python
threads such a communicator, so that the glue is tested without MPI; with mpi4py and mpirun present,
the same runs go through MPI proper (skipped otherwise)."""

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import mcubes
from conftest import assert_same_result, poly


class ThreadComm:
    """Rank `rank` of a communicator of `size` Python threads (allgather through shared slots)."""

    class _Shared:
        def __init__(self, size):
            self.size = size
            self.slots = [None] * size
            self.barrier = threading.Barrier(size)

    def __init__(self, shared, rank):
        self._shared, self._rank = shared, rank

    @classmethod
    def team(cls, size):
        shared = cls._Shared(size)
        return [cls(shared, r) for r in range(size)]

    def Get_rank(self):
        return self._rank

    def Get_size(self):
        return self._shared.size

    def allgather(self, obj):
        s = self._shared
        s.slots[self._rank] = obj
        s.barrier.wait()
        out = list(s.slots)
        s.barrier.wait()  # every rank has read this round before the next one writes
        return out


def on_threads(size, run):
    """run(comm) on `size` threads of a ThreadComm team; the results by rank (an exception is raised)."""
    comms = ThreadComm.team(size)
    out, errors = [None] * size, [None] * size

    def target(r):
        try:
            out[r] = run(comms[r])
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors[r] = e
            comms[r]._shared.barrier.abort()

    threads = [threading.Thread(target=target, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    for e in errors:
        if e is not None:
            raise e
    return out


OPTS = dict(calls_per_iteration=60000, max_iterations=8, adapt_iterations=5, skip=2, min_iterations=2, rel_tol=1e-12,
            seed=11, threads=1)
REGION = [(0, 1)] * 3


@pytest.mark.parametrize("stratification", ["adaptive", "uniform"])
@pytest.mark.parametrize("size", [2, 3])
def test_vegas_over_a_team_is_bitwise_one_process(stratification, size):
    solo = mcubes.vegas(poly, REGION, stratification=stratification, **OPTS)
    for r in on_threads(size, lambda c: mcubes.vegas(poly, REGION, comm=c, stratification=stratification, **OPTS)):
        assert_same_result(r, solo)


def test_each_rank_evaluates_its_share_only():
    counts = [0, 0]

    def counted(rank):
        def f(x):
            counts[rank] += len(x)
            return poly(x)
        return f

    solo_count = [0]

    def f_solo(x):
        solo_count[0] += len(x)
        return poly(x)

    mcubes.vegas(f_solo, REGION, **OPTS)
    on_threads(2, lambda c: mcubes.vegas(counted(c.Get_rank()), REGION, comm=c, **OPTS))
    assert sum(counts) == solo_count[0]
    assert max(counts) < 0.75 * solo_count[0]


def test_chunk_methods_over_a_team_are_bitwise_one_process():
    solo = mcubes.plain_mc(poly, REGION, samples=300001, threads=1)
    for r in on_threads(2, lambda c: mcubes.plain_mc(poly, REGION, samples=300001, threads=1, comm=c)):
        assert r.estimate == solo.estimate and r.error == solo.error
    solo = mcubes.midpoint(poly, REGION, 45, threads=1)
    for r in on_threads(3, lambda c: mcubes.midpoint(poly, REGION, 45, threads=1, comm=c)):
        assert r.estimate == solo.estimate and r.error == solo.error


def test_an_exception_on_one_rank_reaches_every_rank():
    def f(x):
        if np.any((x[:, 2] > 0.97) & (x[:, 2] < 0.9701)):  # the last rank's sub-cubes (last axis slowest)
            raise ZeroDivisionError("top slab")
        return poly(x)

    comms = ThreadComm.team(2)
    messages = [None, None]

    def target(r):
        try:
            mcubes.vegas(f, REGION, comm=comms[r], **OPTS)
        except Exception as e:  # noqa: BLE001 - what each rank sees
            messages[r] = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=target, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert messages[1].startswith("ZeroDivisionError: top slab"), messages
    assert "rank 1" in messages[0] and "top slab" in messages[0], messages


def test_comm_is_refused_where_the_run_is_not_split():
    c = ThreadComm.team(1)[0]
    if mcubes._mcubes.has_jit:
        with pytest.raises(ValueError, match="comm="):
            mcubes.vegas("x0 * x1", [(0, 1)] * 2, comm=c, calls_per_iteration=1000)
    with pytest.raises(ValueError, match="comm="):
        mcubes.vegas(poly, REGION, comm=c, checkpoint=os.devnull, **OPTS)


SCRIPT = """
import sys
from mpi4py import MPI
import mcubes
sys.path.insert(0, {tests!r})
from conftest import poly
r = mcubes.vegas(poly, [(0, 1)] * 3, comm=MPI.COMM_WORLD if {use_comm} else None, calls_per_iteration=60000,
                 max_iterations=8, adapt_iterations=5, skip=2, min_iterations=2, rel_tol=1e-12, seed=11, threads=1)
if MPI.COMM_WORLD.Get_rank() == 0:
    print(repr(r.estimate), repr(r.error), [repr(x) for x in r.records.estimate])
"""


def test_mpi4py_under_mpirun_is_bitwise_one_process(tmp_path):
    pytest.importorskip("mpi4py")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("no mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    tests = os.path.dirname(os.path.abspath(__file__))
    outs = []
    for ranks, use_comm in ((1, False), (2, True), (3, True)):
        script = tmp_path / f"run{ranks}.py"
        script.write_text(SCRIPT.format(tests=tests, use_comm=use_comm))
        p = subprocess.run([mpirun, "--oversubscribe", "-np", str(ranks), sys.executable, str(script)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout.strip())
    assert outs[1] == outs[0] and outs[2] == outs[0], outs
