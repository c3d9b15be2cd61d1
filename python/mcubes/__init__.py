"""m-Cubes (Vegas Monte Carlo with sub-cube stratification), plain Monte Carlo and the midpoint rule.

The Python face of the mcubes C++ library (Sakiotis et al., "m-Cubes: An efficient and portable
implementation of multi-dimensional integration for GPUs", ISC 2022, arXiv:2202.01753)::

    import numpy as np, mcubes

    def f(x):                      # x: float64 array of shape (n, d), one point per row
        return np.exp(-625 * ((x - 0.5) ** 2).sum(axis=1))

    r = mcubes.vegas(f, [(0, 1)] * 8, rel_tol=1e-3, seed=7)
    print(r.estimate, r.error, r.status)
    print(r.summary())             # the iteration table

The integrand ``f`` is one of

* a *vectorised callable*: ``f(x)`` with ``x`` a read-only float64 NumPy array of shape (n, d)
  returning n values (anything NumPy turns into a float64 array of shape (n,)). mcubes generates
  the points (the same points as the C++ library for the same seed) and calls ``f`` on slices of up
  to 32768 of them from its CPU threads, taking the GIL for the call only; the result is bitwise
  that of a C++ integrand computing the same values, whatever ``threads`` (``x`` is a copy of the
  points, reused for a later call only when ``f`` kept no reference to it, so it may be kept);
* a *string*: a C++ expression of ``x[0] .. x[d-1]`` (and ``D``) with the <cmath> functions, as for
  ``mcubes integrate --expr``, compiled at run time to native code (the system C++ compiler; cached
  in ``$XDG_CACHE_HOME/mcubes``). The text is code, compiled and run with your rights;
* an integrand of :mod:`mcubes.suite` (the paper's test integrands with their exact values).

Options are the fields of the C++ ``vegas_options`` by name (see :data:`VEGAS_OPTIONS`). Results are
:class:`Result` objects. Errors: bad input raises ``ValueError`` with the library's message; an
unknown option, or an option or argument of the wrong type (``calls_per_iteration="1e5"``), a
``TypeError``, one outside its type's range (``seed=2**64``) a ``ValueError``, each naming the
option, the value and what is accepted; complex values of ``f`` a ``TypeError``; a NaN or infinite value of ``f`` raises :class:`NonFiniteIntegrand`
(with the point); an overflow :class:`NumericalError`; a CUDA or toolchain failure ``RuntimeError``;
an exception raised by ``f`` propagates unchanged; Ctrl-C stops a Vegas run at the next iteration
boundary (or, where ``f`` itself sees the interrupt, abandons the pass under way) and raises
:class:`Interrupted`, a ``KeyboardInterrupt`` that carries the completed iterations as ``.result``
(callables: :func:`vegas`, :func:`vegas_vector`, :meth:`Integrator.integrate`). The native work runs
with the GIL released.

Long runs: ``checkpoint=PATH`` (:func:`vegas` of callables and expression strings,
:meth:`Integrator.integrate` of callables) writes a
checkpoint file during the run (at most 2 % of its time, and when it is interrupted); ``resume=True``
continues from that file when it exists, and the continued run ends with the bits of the run never
stopped. An :class:`Integrator` pickles (its map, state and VEGAS+ allocation) and continues bitwise
after unpickling; :meth:`Integrator.save` and :meth:`Integrator.load` do the same through a file.

* a *GPU callable* (``backend="cuda"``, :func:`vegas`): ``f(x)`` with ``x`` a PyTorch CUDA tensor
  or a CuPy array of shape (n, d) (``array_module="torch"`` or ``"cupy"``; by default whichever of
  the two is imported, PyTorch first) returning n values on the same device. The points stay in
  device memory: mcubes hands its own buffer over through the CUDA Array Interface, which both
  frameworks wrap without a copy, and copies the values back device to device; slices of up to
  ``cuda_array_points`` points (default 2^22, 72 bytes a point in 8-D). The result is bitwise that of
  the C++ library's CUDA run of an integrand computing the same values, for any slice and block size.

Backends: NumPy callables run on the CPU (``backend="auto"`` means the CPU for them), GPU callables
on the CUDA backend (Vegas only; plain_mc and midpoint take NumPy callables and strings). Expression
strings run on any backend the compiler supports (``"cuda"`` needs nvcc and a GPU).
"""

import html
import math
import os

import numpy as np

from . import _mcubes
from ._mcubes import NonFiniteIntegrand, NumericalError

__all__ = ["plot_convergence", "plot_map", "vegas", "vegas_vector", "VectorResult", "plain_mc", "midpoint", "vegas_batch", "batch_seed", "Integrator", "Result", "NonFiniteIntegrand", "NumericalError",
           "Interrupted", "read_checkpoint",
           "VEGAS_OPTIONS", "PLAIN_MC_OPTIONS", "MIDPOINT_OPTIONS", "max_dim", "suite", "__version__"]

__version__ = _mcubes.version

#: Largest dimension of a callable integrand (one native instantiation per dimension).
max_dim = _mcubes.max_dim

_EXECUTION = {
    "backend": "'cpu', 'cuda' or 'auto' (default 'cpu'); callables run on the CPU",
    "threads": "CPU worker threads, 0 = all cores (default); never changes the result",
    "cuda_threads_per_block": "CUDA block size, a power of two in [32, 1024] (default 256)",
    "device": "CUDA device ordinal (default 0)",
    "devices": "CUDA device ordinals that share each run, e.g. [0, 1] (default []: device alone); expression strings "
               "on the CUDA backend: the same bits as one device",
}

_DEVICE_OPTIONS = {
    "cuda_array_points": "GPU callables: points per call at most (whole tiles; 0 = default 2^22); never changes the result",
    "array_module": "GPU callables: 'torch' (PyTorch CUDA tensors) or 'cupy' (CuPy arrays); default: the one imported",
}

#: The options of :func:`vegas` and :class:`Integrator`, with their meaning (C++ vegas_options).
VEGAS_OPTIONS = {
    **dict(_mcubes.vegas_option_docs()),  # the options table (C++ options.hpp, for_each_vegas_option)
    **_EXECUTION,
    **_DEVICE_OPTIONS,
}

_INTEGRATOR_OPTIONS = {k: v for k, v in VEGAS_OPTIONS.items() if k not in _DEVICE_OPTIONS}

#: The options of :func:`plain_mc`.
PLAIN_MC_OPTIONS = {
    "samples": "N, integrand evaluations (default 1e6)",
    "seed": "key of the Philox random stream (default 20211231)",
    "rel_tol": "converged when error <= max(abs_tol, rel_tol |estimate|) (default 1e-3)",
    "abs_tol": "absolute tolerance (default 0)",
    **_EXECUTION,
}

#: The options of :func:`midpoint`.
MIDPOINT_OPTIONS = {
    "rel_tol": "converged when error <= max(abs_tol, rel_tol |estimate|) (default 1e-3)",
    "abs_tol": "absolute tolerance (default 0)",
    **_EXECUTION,
}

def _options(method, known, options, native="vegas"):
    """The options of `method` checked and converted to plain values: an unknown name is a TypeError;
    each value goes through the native conversion of its C++ field (a value of another type is a
    TypeError, one outside the field's range a ValueError, each naming the option, the value and
    what is accepted; `native`: the C++ options struct, 'vegas', 'plain_mc' or 'midpoint'); array_module,
    a Python-side option, is checked here."""
    for k in options:
        if k not in known:
            raise TypeError(f"{method}() got an unexpected keyword argument '{k}' (options: {', '.join(known)})")
    out = _mcubes.normalized_options(native, {k: v for k, v in options.items() if k != "array_module"})
    if "array_module" in options:
        m = options["array_module"]
        if m is not None and not isinstance(m, str):
            raise TypeError(f"array_module must be a str ('torch' or 'cupy') or None, got {type(m).__name__} {m!r}")
        if m is not None and m not in ("torch", "cupy"):
            raise ValueError(f"array_module must be 'torch' or 'cupy', got {m!r}")
        out["array_module"] = m
    return out


def _callback(callback, method):
    if callback is not None and not callable(callback):
        raise TypeError(f"{method}: callback must be callable or None, got {type(callback).__name__} {callback!r}")
    return callback


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during a Vegas run of a callable: a KeyboardInterrupt carrying the run's completed
    iterations as ``result`` (a Result, or a VectorResult, with status 'interrupted'; the pass under way
    is discarded whole, so every record is a complete iteration). With ``checkpoint=``, the file holds
    the same iterations: ``resume=True`` continues the run where it stopped."""

    def __init__(self, result):
        super().__init__(f"interrupted after {result.iterations} completed iteration"
                         f"{'' if result.iterations == 1 else 's'} (the result so far is .result)")
        self.result = result


def _finished(d, kind=None):
    """The Result of a native run's dict; Interrupted when Ctrl-C stopped it."""
    keyboard = d.pop("keyboard_interrupt", False)
    r = (kind or Result)(d)
    if keyboard:
        raise Interrupted(r)
    return r


def _fingerprint(f):
    """The default fingerprint of a callable in checkpoints: 'python MODULE.QUALNAME' (a lambda's is
    '<lambda>': give tag= to tell such callables apart)."""
    module = getattr(f, "__module__", None) or type(f).__module__
    name = getattr(f, "__qualname__", None) or type(f).__qualname__
    return f"python {module}.{name}"


def _checkpoint_files(checkpoint, resume):
    """(the path to write or None, the bytes to resume from or None, their name) of checkpoint= and
    resume= (True: the checkpoint= file when it exists; a path: that file)."""
    path = None if checkpoint is None else os.fspath(checkpoint)
    source = None
    if resume is True:
        if path is None:
            raise ValueError("resume=True continues from the checkpoint= file: give checkpoint=PATH (or resume=PATH)")
        if os.path.exists(path):
            source = path
    elif resume is not False and resume is not None:
        source = os.fspath(resume)
    if source is None:
        return path, None, ""
    with open(source, "rb") as fh:
        return path, fh.read(), f"checkpoint '{source}'"


def _every(checkpoint_every):
    """checkpoint_every as seconds (ValueError for a negative or non-numeric value)."""
    every = float(checkpoint_every)
    if not every >= 0:
        raise ValueError(f"checkpoint_every must be a non-negative number of seconds, got {checkpoint_every!r}")
    return every


def read_checkpoint(path):
    """What the checkpoint file at path holds: a dict with 'integrand' (the fingerprint), 'lower',
    'upper', 'options' (the run's options, execution options aside), 'completed_iterations' (of a call
    under way; 0 between calls), 'next_iteration', 'components' (a vector integrand's; 0 for a scalar
    one), 'integrals' (a batch's or a scan's; 0 for one run) and 'integrals_completed_iterations'
    (each integral's). Raises OSError for a file that cannot be read and
    ValueError for one that is not a checkpoint, truncated, damaged (CRC-32) or of a newer format."""
    with open(path, "rb") as fh:
        data = fh.read()
    return _mcubes.read_checkpoint(data, f"checkpoint '{path}'")


def _real_bound(x, axis):
    import numbers
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"region: the bounds of axis {axis} must be real numbers, got {type(x).__name__} {x!r}")
    return float(x)


def _region(region):
    """(lower bounds, upper bounds) of a sequence of (lower, upper) pairs of real numbers."""
    try:
        pairs = [tuple(p) for p in region]
    except TypeError as e:
        raise ValueError(f"region must be a sequence of (lower, upper) pairs, one per axis: {e}") from None
    if any(len(p) != 2 for p in pairs):
        raise ValueError(f"region must be a sequence of (lower, upper) pairs, one per axis, got {region!r}")
    pairs = [(_real_bound(lo, i), _real_bound(hi, i)) for i, (lo, hi) in enumerate(pairs)]
    if not pairs:
        raise ValueError("region must have at least one (lower, upper) pair")
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _include_dir():
    """The mcubes headers shipped with an installed package (for expressions), else '' (the build tree's)."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
    return d if os.path.isfile(os.path.join(d, "mcubes", "config.hpp")) else ""


def _native_integrand(f, backend, method):
    """Returns ('expression', text) or ('callable', f) and checks the backend for it."""
    if isinstance(f, str):
        if not _mcubes.has_jit:
            raise NotImplementedError(
                "expression strings need the library's run-time compilation (include/mcubes/jit.hpp), which this "
                "build of mcubes does not have; pass a NumPy callable instead")
        return "expression", f
    expr = getattr(f, "expression", None)
    if backend == "cuda" and isinstance(expr, str) and _mcubes.has_jit:
        return "expression", expr  # a suite integrand on the GPU: its C++ expression
    if not callable(f):
        raise TypeError(f"{method}: the integrand must be a callable f(x) with x of shape (n, d), an expression "
                        f"string or a mcubes.suite integrand, got {type(f).__name__}")
    if backend == "cuda":
        if method != "vegas":
            raise NotImplementedError(
                f"{method}: GPU callables run with vegas only; use backend='cpu' with a NumPy callable, or an "
                "expression string on the GPU")
        if not _mcubes.has_cuda_callables:
            raise RuntimeError("this build of mcubes has no CUDA backend (it was built without nvcc): GPU callables "
                               "need it; use backend='cpu' with a NumPy callable")
        return "device_callable", f
    return "callable", f


def _array_module(name):
    """The framework of a GPU callable's arrays: 'torch' or 'cupy' (None: the one imported, PyTorch first)."""
    import sys
    if name is None:
        name = "torch" if "torch" in sys.modules else "cupy" if "cupy" in sys.modules else None
        if name is None:
            raise ValueError("a GPU callable needs PyTorch or CuPy: import one, or pass array_module='torch' "
                             "or 'cupy'")
    if name not in ("torch", "cupy"):
        raise ValueError(f"array_module must be 'torch' or 'cupy', got {name!r}")
    import importlib
    try:
        return name, importlib.import_module(name)
    except ImportError as e:
        raise ValueError(f"array_module={name!r}: {e}") from None


def _as_module(xw, array_module, device):
    """(x, w) NumPy arrays as the arrays of array_module (None/'numpy': as they are; 'torch', 'cupy': copies
    on GPU `device`)."""
    if array_module in (None, "numpy"):
        return xw
    name, mod = _array_module(array_module)
    if name == "torch":
        dev = mod.device("cuda", device)
        return tuple(mod.as_tensor(a, device=dev) for a in xw)
    with mod.cuda.Device(device):
        return tuple(mod.asarray(a) for a in xw)


class _DevicePoints:
    """mcubes's device buffer of n points, row-major (n, d) float64, as a CUDA Array Interface (v3) object."""

    def __init__(self, address, n, d):
        self.__cuda_array_interface__ = {"shape": (n, d), "typestr": "<f8", "data": (address, False),
                                         "version": 3, "strides": None, "stream": None}


def _device_adapter(f, d, array_module, device):
    """The Python side of a GPU callable (python/src/module.cpp, py_device_evaluate): adapter(address,
    n) wraps mcubes's points as a tensor/array of the framework (no copy), calls f and returns
    (values, device address of n contiguous float64 values)."""
    name, mod = _array_module(array_module)
    if name == "torch":
        dev = mod.device("cuda", device)

        def wrap(view):
            return mod.as_tensor(view, device=dev)

        def values(r, n):
            if not isinstance(r, mod.Tensor):
                r = mod.as_tensor(r, device=dev)
            r = r.detach()
            if r.is_complex():
                raise TypeError(f"the integrand must return real values, got complex values: a tensor of dtype {r.dtype} "
                                "(take .real or abs() of them explicitly)")
            if r.device != dev:
                raise ValueError(f"the GPU integrand must return its values on {dev}, got a tensor on {r.device}")
            return r.to(mod.float64).reshape(-1).contiguous()
    else:
        def wrap(view):
            return mod.asarray(view)

        def values(r, n):
            r = mod.asarray(r)
            if r.dtype.kind not in "biuf":
                raise TypeError(f"the integrand must return real values (float64), got {type(r).__name__} of dtype "
                                f"{r.dtype}{' (take .real or abs() of them explicitly)' if r.dtype.kind == 'c' else ''}")
            r = mod.ascontiguousarray(r.astype(mod.float64).reshape(-1))
            if r.device.id != device:
                raise ValueError(f"the GPU integrand must return its values on device {device}, got device {r.device.id}")
            return r

    def adapter(address, n):
        r = f(wrap(_DevicePoints(address, n, d)))
        shape = tuple(getattr(r, "shape", ()))
        if shape not in ((n,), (n, 1)):
            raise ValueError(f"the integrand must return an array of shape ({n},) for x of shape ({n}, {d}), "
                             f"got shape {shape}")
        v = values(r, n)
        return v, int(v.__cuda_array_interface__["data"][0]) if n else 0

    return adapter


def _without_device(opts):
    """The options less those of GPU callables (they change nothing elsewhere)."""
    return {k: v for k, v in opts.items() if k != "cuda_array_points"}


def _cpu_for_callable(opts):
    if opts.get("backend") == "auto":
        opts = dict(opts, backend="cpu")
    return opts


def _comm_for(comm, kind, checkpoints=False):
    """comm= (one integral over MPI ranks) for the integrands that take it: Python callables on the CPU."""
    if comm is None:
        return None
    if kind != "callable" or checkpoints:
        raise ValueError("comm= splits Python callables on the CPU over the ranks; expressions, device callables "
                         "and checkpointed runs are not split yet")
    return comm


def vegas(f, region, *, callback=None, checkpoint=None, resume=False, checkpoint_every=0.0, tag=None, comm=None,
          **options):
    """Integrates f over region with m-Cubes (Vegas with sub-cube stratification and an adaptive map).

    f: a vectorised callable (x of shape (n, d) -> n values), an expression string or a suite integrand
    (module docstring). region: a sequence of (lower, upper) pairs, one per axis. options: the fields of
    VEGAS_OPTIONS by name. callback: optional, called after each iteration with a dict (index,
    estimate, error, weighted_estimate, weighted_error, chi2_dof, iterations); a true return value stops
    the run (status 'interrupted').

    Returns a Result. Deterministic: the same options and seed give the same bits on every run, for
    any number of threads, and the bits of the C++ library's run of an integrand computing the same
    values. Raises ValueError (bad input), NonFiniteIntegrand, NumericalError, RuntimeError (CUDA or
    compiler failures), Interrupted (Ctrl-C: a KeyboardInterrupt carrying the completed iterations;
    an expression's run raises a plain KeyboardInterrupt), or what f raises.

    checkpoint, resume, checkpoint_every, tag: a long run's checkpoint file, as Integrator.integrate
    takes them: the run of a callable is one Integrator's integrate(), bitwise. An expression string's
    run checkpoints too (its fingerprint is 'expr TEXT', that of the command's --expr TEXT; tag= does
    not apply), and Ctrl-C then raises Interrupted with the completed iterations, the file written.

    comm: an MPI communicator (mpi4py.MPI.COMM_WORLD, or any object with Get_rank(), Get_size() and
    allgather(obj) -> list): every rank calls vegas with the same f, region and options, samples its
    fixed share of the sub-cubes, and gets bitwise the result of one process, for any number of
    ranks (the C++ execution::team; only part sums, flags and exact integer bin sums are exchanged).
    A callback must decide alike on every rank. Python callables on the CPU only.
    """
    checkpoints = checkpoint is not None or resume is not False
    opts = _options("vegas", VEGAS_OPTIONS, options)
    lower, upper = _region(region)
    array_module = opts.pop("array_module", None)
    kind, g = _native_integrand(f, opts.get("backend", "cpu"), "vegas")
    comm = _comm_for(comm, kind, checkpoints)
    if checkpoints and kind != "expression":
        return Integrator(region, **options).integrate(f, callback=callback, checkpoint=checkpoint, resume=resume,
                                                       checkpoint_every=checkpoint_every, tag=tag)
    callback = _callback(callback, "vegas")
    if kind == "expression" and checkpoints:
        if tag is not None:
            raise ValueError("tag= names a callable in checkpoints; an expression's fingerprint is its text")
        path, data, what = _checkpoint_files(checkpoint, resume)
        return _finished(_mcubes.expression(g, "vegas", lower, upper, _without_device(opts), 0, _include_dir(), callback,
                                            checkpoint=path or "", resume=data, resume_what=what,
                                            checkpoint_every=_every(checkpoint_every)))
    if kind == "expression":
        return Result(_mcubes.expression(g, "vegas", lower, upper, _without_device(opts), 0, _include_dir(), callback))
    if kind == "device_callable":
        adapter = _device_adapter(g, len(lower), array_module, int(opts.get("device", 0)))
        return _finished(_mcubes.vegas_device(adapter, lower, upper, opts, callback))
    return _finished(_mcubes.vegas(g, lower, upper, _cpu_for_callable(_without_device(opts)), callback, comm))


def plain_mc(f, region, *, comm=None, **options):
    """Plain Monte Carlo of f over region with N = samples uniform points (PLAIN_MC_OPTIONS).

    estimate = V mean(f), error = V sqrt(M2 / (N (N - 1))). Same integrands, errors and determinism
    as vegas() (comm= as vegas's). Returns a Result with one record.
    """
    opts = _options("plain_mc", PLAIN_MC_OPTIONS, options, "plain_mc")
    lower, upper = _region(region)
    kind, g = _native_integrand(f, opts.get("backend", "cpu"), "plain_mc")
    comm = _comm_for(comm, kind)
    if kind == "expression":
        return Result(_mcubes.expression(g, "plain_mc", lower, upper, opts, 0, _include_dir(), None))
    return Result(_mcubes.plain_mc(g, lower, upper, _cpu_for_callable(opts), comm))


def midpoint(f, region, n_per_axis, *, comm=None, **options):
    """The composite midpoint rule with n_per_axis points per axis (n^d <= 2^52 points; MIDPOINT_OPTIONS).

    The error is estimated from the embedded coarse rule when n is divisible by 3, 5 or 7 (else it is
    inf). Same integrands, errors and determinism as vegas() (comm= as vegas's). Returns a Result
    with one record.
    """
    opts = _options("midpoint", MIDPOINT_OPTIONS, options, "midpoint")
    lower, upper = _region(region)
    n_per_axis = _mcubes.integer("n_per_axis", n_per_axis, 1, 2 ** 64 - 1)
    kind, g = _native_integrand(f, opts.get("backend", "cpu"), "midpoint")
    comm = _comm_for(comm, kind)
    if kind == "expression":
        return Result(_mcubes.expression(g, "midpoint", lower, upper, opts, n_per_axis, _include_dir(), None))
    return Result(_mcubes.midpoint(g, lower, upper, n_per_axis, _cpu_for_callable(opts), comm))


def vegas_batch(f, region, params, *, callback=None, checkpoint=None, resume=False, checkpoint_every=0.0, tag=None,
                **options):
    """A parameter scan: integral k is f(x, params[k]) over region, k = 0 .. K-1, by m-Cubes.

    f(x, p): a vectorised callable (x of shape (n, d), p one element of params). Integral k uses the
    seed batch_seed(seed, k) (independent errors across the scan), so result k is bitwise member k of
    the C++ mcubes::vegas_batch for an integrand computing the same values; each has its own adaptive
    map, iterations and stopping test. The integrals run one after the other on the CPU threads (the
    C++ batch's shared rounds are for C++ integrands). callback(k, info) as vegas's, per integral.
    Returns the K Results in order.

    checkpoint, resume, checkpoint_every, tag: the batch's checkpoint file, as vegas takes them: one
    file for the whole batch (the format of the C++ batch's and of `mcubes scan`'s: every
    integral's progress, its parameter values and the batch's options and seed), written at the
    integrals' iteration boundaries (at most 2 % of the time, checkpoint_every seconds apart at
    least) and when Ctrl-C stops the batch (Interrupted, carrying the interrupted integral's result;
    .results holds the integrals completed before it). A continued batch ends every finished
    integral at once with its result, continues the one under way and runs the rest: the bits of the
    batch never stopped. The parameters must then be numbers or arrays of numbers (their float64
    values are the batch's fingerprint with tag, default 'python MODULE.QUALNAME' of f; TypeError
    otherwise); a checkpoint of other parameters, region or options is refused with ValueError
    naming the difference.

    A failing integral k names itself, as the C++ batch_error does: an error of mcubes (ValueError,
    TypeError, NonFiniteIntegrand, NumericalError, RuntimeError) is raised again, of the same type and
    with the same attributes, with the message "integral k (params[k] = p): ..."; an exception that f
    raised propagates itself, with that text as a note (add_note). Either carries .integral (k) and
    .parameter (params[k]). Options are checked once, before the first integral.
    """
    opts = _options("vegas_batch", VEGAS_OPTIONS, options)
    lower, upper = _region(region)
    callback = _callback(callback, "vegas_batch")
    if not callable(f):
        raise TypeError(f"vegas_batch: the integrand must be a callable f(x, p), got {type(f).__name__}")
    params = list(params)
    if not params:
        raise ValueError("a parameter batch needs at least one parameter value")
    seed = opts.pop("seed", 20211231)
    batch = None
    tag = _fingerprint(f) if tag is None else str(tag)
    if checkpoint is not None or resume is not False:
        path, data, what = _checkpoint_files(checkpoint, resume)
        problem = _cpu_for_callable(dict(opts, seed=seed))
        problem.pop("array_module", None)
        batch = _mcubes.BatchCheckpoints(path or "", tag, lower, upper, problem,
                                         [_parameter_values(k, p) for k, p in enumerate(params)], data, what,
                                         _every(checkpoint_every))
    results = []
    for k, p in enumerate(params):
        cb = None if callback is None else (lambda info, k=k: callback(k, info))
        raised_by_f = []

        def member(x, p=p, raised_by_f=raised_by_f):
            try:
                return f(x, p)
            except BaseException as e:
                raised_by_f.append(e)
                raise

        try:
            if batch is None:
                results.append(vegas(member, list(zip(lower, upper)), callback=cb, seed=_mcubes.batch_seed(seed, k),
                                     **opts))
                continue
            integ = Integrator(list(zip(lower, upper)), seed=_mcubes.batch_seed(seed, k), **opts)
            single = batch.member(k)
            if single is not None:
                integ._native.resume(single, tag, f"integral {k} of the batch's checkpoint")
            integ._native.checkpoint_with(batch, k)
            results.append(integ.integrate(member, callback=cb, tag=tag))
            integ._native.checkpoint_with(None, 0)
        except Interrupted as e:
            if batch is not None:
                batch.finish(True)
            e.results = results
            raise
        except Exception as e:
            raise _batch_failure(e, k, p, any(e is x for x in raised_by_f)) from None
    if batch is not None:
        batch.finish(False)
    return results


def _parameter_values(k, p):
    """params[k] as the float64 values that fingerprint a checkpointed batch (vegas_batch)."""
    try:
        v = np.asarray(p, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"vegas_batch: a checkpointed batch needs numeric parameters (numbers or arrays of numbers: "
                        f"their values fingerprint the batch); params[{k}] is {type(p).__name__}") from None
    return [float(x) for x in v]


def _batch_failure(e, k, p, raised_by_f):
    """The exception of vegas_batch's integral k (vegas_batch's docstring)."""
    text = repr(p)
    where = f"integral {k} (params[{k}] = {text if len(text) <= 80 else text[:77] + '...'})"
    own = (NonFiniteIntegrand, NumericalError, ValueError, TypeError, RuntimeError)
    if raised_by_f or type(e) not in own:
        if hasattr(e, "add_note"):  # Python 3.11
            e.add_note(f"in vegas_batch's {where}")
        out = e
    else:
        out = type(e)(f"{where}: {e}")
        out.__dict__.update(e.__dict__)
    out.integral, out.parameter = k, p
    return out.with_traceback(e.__traceback__)


#: Largest number of components of a vector-valued callable (64, as C++'s vegas_vector).
max_components = _mcubes.max_components


def vegas_vector(f, region, *, components=None, callback=None, checkpoint=None, resume=False, checkpoint_every=0.0,
                 tag=None, **options):
    """Integrates the vector-valued f over region with m-Cubes: every component from the same samples.

    f: a vectorised callable, x of shape (n, d) -> values of shape (n, N), 1 <= N <= max_components
    (N = components, or, when not given, the number of columns f returns for the region's centre,
    one extra call). The adaptive map adapts to component 0 (as Lepage's vegas: put the component
    whose shape matters first); every component's estimate is the weighted average of its
    iterations, with the N x N covariance of the estimates (the iterations' covariances, combined
    with the weights) and the vector's correlated chi2 (C++ mcubes::vegas_vector). The run converges
    when every component meets rel_tol/abs_tol and max_chi2_dof. Options and callback as vegas()
    (the callback sees component 0). CPU backend.

    Returns a VectorResult. Deterministic: the same options and seed give the same bits for any
    threads; a one-component f gives vegas()'s bits for the same values. Up to 8 components run in a
    native instantiation of that count (bitwise C++ vegas_vector of values<N>); 9 to 64 in the
    instantiation of 16, 32 or 64 components with the extra ones 0 (the same estimates' statistics,
    the chunking of the wider run, so not bitwise a C++ run of exactly N). Raises as vegas().

    checkpoint, resume, checkpoint_every, tag: the run's checkpoint file, as vegas takes them (the
    file also holds every iteration's estimates and covariance; a scalar run's checkpoint is refused
    and the reverse); Ctrl-C then raises Interrupted, the file written. A continued run ends with
    the bits of the run never stopped, whatever the threads.
    """
    opts = _options("vegas_vector", _INTEGRATOR_OPTIONS, options)
    lower, upper = _region(region)
    callback = _callback(callback, "vegas_vector")
    if isinstance(f, str) or not callable(f):
        raise TypeError("vegas_vector: the integrand must be a callable f(x) with x of shape (n, d) returning an "
                        f"array of shape (n, N), got {type(f).__name__}")
    if opts.get("backend") == "cuda":
        raise NotImplementedError("vegas_vector runs Python callables on the CPU backend (backend='cpu' or 'auto')")
    if components is None:
        centre = np.array([[(lo + hi) / 2 for lo, hi in zip(lower, upper)]])
        v = _real_values(f(centre))
        if v.ndim != 2 or v.shape[0] != 1:
            raise ValueError("vegas_vector: f must return an array of shape (n, N) for x of shape (n, d); for x of shape "
                             f"{centre.shape} it returned shape {v.shape}")
        components = v.shape[1]
    components = _mcubes.integer("components", components, 1, max_components)
    path, data, what = _checkpoint_files(checkpoint, resume)
    return _finished(_mcubes.vegas_vector(f, lower, upper, components, _cpu_for_callable(opts), callback,
                                          checkpoint=path or "", resume=data, resume_what=what,
                                          checkpoint_every=_every(checkpoint_every),
                                          tag=_fingerprint(f) if tag is None else str(tag)), VectorResult)


def _real_values(r):
    """r as a float64 NumPy array; TypeError for complex or other non-real values (as the native check
    of an integrand's values, python/src/module.cpp)."""
    a = np.asarray(r)
    if a.dtype.kind not in "biufO":
        raise TypeError(f"the integrand must return real values (float64), got "
                        f"{'complex values: ' if a.dtype.kind == 'c' else ''}{type(r).__name__} of dtype {a.dtype}"
                        f"{' (take .real or abs() of them explicitly)' if a.dtype.kind == 'c' else ''}")
    return np.asarray(a, dtype=np.float64)


def batch_seed(seed, k):
    """The seed of integral k of a parameter batch run with `seed` (C++ mcubes::batch_seed); seed and k
    are integers in [0, 2^64 - 1] (TypeError or ValueError otherwise)."""
    return _mcubes.batch_seed(seed, k)


class Integrator:
    """An m-Cubes integrator that keeps its adaptive map between calls (C++ mcubes::integrator).

    Each integrate() continues from the current map and iteration index, so training and measuring
    can be separate calls and a map can warm-start a similar integrand::

        integ = mcubes.Integrator([(0, 1)] * 4, calls_per_iteration=1e5)
        integ.integrate(f, max_iterations=10, adapt_iterations=10, skip=0, min_iterations=10)  # adapt
        r = integ.integrate(f, adapt_iterations=0, skip=0)                                    # map frozen

    gives bitwise one vegas() call that adapts in its first 10 iterations and skips them. The options
    given at construction are the defaults of every call; backend, threads, n_bins, the CUDA block
    size and cuda_array_points are fixed. Callables only (an expression string has no integrator
    here): NumPy callables on the CPU, GPU callables (PyTorch, CuPy) with backend='cuda'.

    One call at a time: a call (integrate, edges, set_edges, reset, next_iteration) while another
    call on this integrator is in progress, from another thread or from the running integrand or
    callback, raises RuntimeError ("... in use by another thread ...") at once rather than waiting.
    Use one Integrator per thread.
    """

    def __init__(self, region, **options):
        self._options = _options("Integrator", VEGAS_OPTIONS, options)
        self._array_module = self._options.pop("array_module", None)
        if self._options.get("backend") == "cuda" and not _mcubes.has_cuda_callables:
            raise RuntimeError("this build of mcubes has no CUDA backend (it was built without nvcc): GPU callables "
                               "need it; use backend='cpu' with a NumPy callable")
        self._options = _cpu_for_callable(self._options)
        if self._options.get("backend") != "cuda":
            self._options = _without_device(self._options)
        lower, upper = _region(region)
        self._lower, self._upper = list(lower), list(upper)
        self._native = _mcubes.Integrator(lower, upper, self._options)
        self._tag = ""  # the fingerprint of the integrand of the last call (checkpoints)

    @property
    def dim(self):
        return self._native.dim

    @property
    def next_iteration(self):
        """The index of the next iteration (it keys the random numbers: a continued run never reuses samples)."""
        return self._native.next_iteration

    def integrate(self, f, *, callback=None, checkpoint=None, resume=False, checkpoint_every=0.0, tag=None,
                  **options):
        """Runs m-Cubes from the current map with the construction options updated by `options`.

        Ctrl-C raises Interrupted, a KeyboardInterrupt whose .result holds the completed iterations.

        checkpoint: a path; the call writes its checkpoint there (atomically: the file always holds a
        whole checkpoint) at iteration boundaries, at most 2 % of the run's time and at least
        checkpoint_every seconds apart, and at its end when it was interrupted (Ctrl-C, a callback's
        stop) or nothing was written yet (unless the call was short and the checkpoint large: a
        write over 0.1 s and over 2 % of the call is skipped). resume: True continues from the checkpoint file when it
        exists (else the call starts as usual: the same script serves the first submission and
        every resubmission), or a path to continue from (which must exist). A resumed call ends with
        the bits of the call that was never stopped, whatever the threads; it must have the same
        options, except max_iterations, min_iterations, rel_tol, abs_tol and max_chi2_dof (ValueError
        naming the difference). tag: the integrand's fingerprint in the file (default 'python
        MODULE.QUALNAME' of f); a checkpoint of another fingerprint, region or dimension is refused
        with ValueError.
        """
        opts = dict(self._options, **_options("integrate", _INTEGRATOR_OPTIONS, options))
        callback = _callback(callback, "integrate")
        kind, g = _native_integrand(f, opts.get("backend", "cpu"), "vegas")
        if kind == "expression":
            raise NotImplementedError("Integrator.integrate takes callables; for an expression string use "
                                      "mcubes.vegas (no map is kept)")
        tag = _fingerprint(f) if tag is None else str(tag)
        if checkpoint is not None:
            checkpoint = os.fspath(checkpoint)
        if resume is True:
            if checkpoint is None:
                raise ValueError("resume=True continues from the checkpoint= file: give checkpoint=PATH (or resume=PATH)")
            if os.path.exists(checkpoint):
                self._resume_file(checkpoint, tag)
        elif resume is not False and resume is not None:
            self._resume_file(os.fspath(resume), tag)
        self._native.checkpoint_to(checkpoint or "", tag, _every(checkpoint_every))
        self._tag = tag
        try:
            if kind == "device_callable":
                adapter = _device_adapter(g, self.dim, self._array_module, int(opts.get("device", 0)))
                return _finished(self._native.integrate_device(adapter, opts, callback))
            return _finished(self._native.integrate(g, opts, callback))
        finally:
            if checkpoint is not None:
                self._native.checkpoint_to("", "", 0.0)

    def _resume_file(self, path, tag):
        with open(path, "rb") as fh:
            data = fh.read()
        self._native.resume(data, tag, f"checkpoint '{path}'")

    def save(self, path, *, tag=None):
        """Writes the integrator's checkpoint to path (atomically and durably): its map, iteration index
        and VEGAS+ allocation, with tag (default: the fingerprint of the last call's integrand) and the
        last call's options. Integrator.load(path) continues from it bitwise."""
        self._native.save(os.fspath(path), self._tag if tag is None else str(tag))

    @classmethod
    def load(cls, path, *, tag=None, **options):
        """An Integrator continued from the checkpoint file at path (save(), or checkpoint= of a call):
        its region and options are the file's, the execution options (backend, threads, ...) those
        given. A checkpoint written during a call (checkpoint=) makes the next integrate() continue that
        call, bitwise. tag: the fingerprint expected (ValueError for another); None accepts the file's.
        Raises OSError for a file that cannot be read, ValueError for a damaged one."""
        path = os.fspath(path)
        info = read_checkpoint(path)
        bounds = list(zip(info["lower"], info["upper"]))
        integ = cls(bounds, **dict(info["options"], **options))
        integ._resume_file(path, info["integrand"] if tag is None else str(tag))
        integ._tag = info["integrand"] if tag is None else str(tag)
        return integ

    def __getstate__(self):
        """Pickling (vegas's habit): the region, the options and the integrator's checkpoint (map,
        iteration index, VEGAS+ allocation), so that the unpickled Integrator continues bitwise."""
        return {"lower": self._lower, "upper": self._upper, "options": dict(self._options),
                "array_module": self._array_module, "tag": self._tag,
                "checkpoint": self._native.checkpoint_bytes(self._tag)}

    def __setstate__(self, state):
        options = dict(state["options"])
        if state.get("array_module") is not None:
            options["array_module"] = state["array_module"]
        self.__init__(list(zip(state["lower"], state["upper"])), **options)
        self._tag = state["tag"]
        self._native.resume(state["checkpoint"], self._tag, "a pickled Integrator")

    def __call__(self, f, *, callback=None, **options):
        """integ(f, ...) is integ.integrate(f, ...): vegas's call shape, with mcubes's option names
        (calls_per_iteration, max_iterations, ...; vegas's neval and nitn are not taken)."""
        return self.integrate(f, callback=callback, **options)

    def sample(self, n, *, seed=None, array_module=None):
        """n weighted points from the trained map and VEGAS+ allocation: (x, w), arrays of shapes (n, d)
        and (n,) such that (w * f(x)).sum() estimates the integral of any f over the region; a
        histogram of a quantity of x with weights w * f(x) estimates its distribution under f.

        Train first (integrate() with adapting iterations); from an untrained integrator they are plain
        stratified Monte Carlo points. Exactly n points, in sub-cubes of the VEGAS+ grid (or a uniform
        grid), weight V J / (m n_c) (the guide's "Weighted samples"). seed: default the integrator's
        seed. The same bits on every backend and thread count, and point i is the same whatever the
        batches (random_batch). array_module: None or 'numpy' for NumPy arrays, 'torch' or 'cupy' for
        arrays on the GPU (copied after the points are computed on the host).
        """
        s = self._sampler(n, seed)
        return _as_module(s.points(0, s.size), array_module, int(self._options.get("device", 0)))

    def random_batch(self, n=None, *, seed=None, batch_size=1 << 20, array_module=None):
        """vegas's Integrator.random_batch(): yields (x, w) batches of at most batch_size of the n points
        of sample(n, seed) (default n: calls_per_iteration), in order, so that summing (w * f(x)).sum()
        over the batches estimates the integral; the batches together are bitwise sample(n, seed).
        Memory: one batch at a time."""
        if n is None:
            n = int(self._options.get("calls_per_iteration", 1000000))
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError(f"random_batch: batch_size must be at least 1, got {batch_size}")
        s = self._sampler(n, seed)
        device = int(self._options.get("device", 0))
        first = 0
        while first < s.size:
            count = min(batch_size, s.size - first)
            yield _as_module(s.points(first, count), array_module, device)
            first += count

    def _sampler(self, n, seed):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) and not (isinstance(n, float) and n.is_integer()):
            raise TypeError(f"the number of points must be an integer, got {n!r}")
        n = int(n)
        if n < 1:
            raise ValueError(f"the number of points must be at least 1, got {n}")
        return self._native.sampler(n, int(self._options.get("seed", 20211231)) if seed is None else seed)

    def edges(self):
        """The adaptive map: an array of shape (d, n_bins + 1) of unit coordinates (row j: axis j's edges)."""
        return self._native.edges()

    def set_edges(self, edges):
        """Replaces the map (each row from 0 to 1, strictly increasing; ValueError otherwise; TypeError for
        complex or other non-real values)."""
        a = np.asarray(edges)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"set_edges: edges must be an array of real numbers, got {type(edges).__name__} of dtype "
                            f"{a.dtype}")
        self._native.set_edges(np.asarray(a, dtype=np.float64))

    def reset(self):
        """Back to a uniform map at iteration 0."""
        self._native.reset()

    def plot_map(self, *, axes=(0, 1), every=1, ax=None):
        """Draws the map (mcubes.plots.plot_map, matplotlib): the grid on two axes, as vegas's
        map.show_grid(), or the sampling density along one axis. Returns the Axes."""
        from . import plots
        return plots.plot_map(self, axes=axes, every=every, ax=ax)


class Records:
    """The per-iteration records of a Result: one NumPy array per field, one entry per iteration.

    Fields: index, estimate, error, weighted_estimate, weighted_error, chi2_dof, q, adapted,
    accumulated, underflow, rescaled, n_eval, n_nonzero, top_bin_level, seconds (result.hpp,
    iteration_record). Weighted fields are NaN before the first accumulated iteration.
    """

    def __init__(self, columns):
        self._columns = dict(columns)
        for k, v in self._columns.items():
            setattr(self, k, v)

    def __len__(self):
        return len(self._columns["index"])

    def __getitem__(self, key):
        return self._columns[key]

    def keys(self):
        return self._columns.keys()

    def __repr__(self):
        return f"Records({len(self)} iterations: {', '.join(self._columns)})"


class Result:
    """The result of vegas(), plain_mc() or midpoint().

    estimate, error (1 sigma), chi2_dof, q (the p-value of chi2), dof, status ('converged', 'not
    converged', 'not resolved', 'underflow', 'interrupted'; only 'converged' is a result to use),
    status_text (a sentence), iterations, accumulated, n_eval, seed, seconds, backend, records
    (Records: NumPy arrays per iteration), stratification (vegas: 'adaptive' or 'uniform', what
    ran; None for the other methods). summary()
    gives the iteration table.

    vegas() only: the estimate is the average of the accumulated iterations with predictable
    weights (each iteration weighted by 1 / the previous one's variance), unbiased where an
    iteration's error falls with its estimate; inverse_variance_estimate and inverse_variance_error
    are Lepage's inverse-variance weighted average of the same iterations, for comparison; warnings
    is a list of the signs of an underestimated error ('heavy tail', 'weighted disagreement'; empty
    when none), which do not change the status (the guide's "Error estimates" section).
    """

    def __init__(self, d):
        for k, v in d.items():
            if k != "records":
                setattr(self, k, v)
        self.records = Records(d["records"])

    @property
    def converged(self):
        return self.status == "converged"

    @property
    def mean(self):
        """The estimate (gvar's and vegas's name)."""
        return self.estimate

    @property
    def sdev(self):
        """The error, one standard deviation (gvar's and vegas's name)."""
        return self.error

    def __float__(self):
        return float(self.estimate)

    def to_gvar(self):
        """The estimate and its error as a gvar.GVar (needs the gvar package; ImportError otherwise)."""
        return _gvar().gvar(self.estimate, self.error)

    def _repr_html_(self):
        """Jupyter's display: the value(error), the status and the iteration table."""
        return (f"<p><b>{html.escape(self._value_text())}</b> &nbsp; {html.escape(self.status)}"
                f" &nbsp; ({self.iterations} iterations, {self.n_eval} evaluations, seed {self.seed})</p>"
                f"<pre>{html.escape(self.summary())}</pre>")

    def __repr__(self):
        return (f"Result(estimate={self.estimate!r}, error={self.error!r}, chi2_dof={self.chi2_dof!r}, q={self.q!r}, "
                f"status={self.status!r}, iterations={self.iterations}, n_eval={self.n_eval}, seed={self.seed})")

    def __str__(self):
        return f"{_with_error(self.estimate, self.error)} ({self.status})"

    def summary(self, extended=False):
        """The iteration table, as vegas's RAvg.summary(): one line per iteration with its estimate, the
        weighted average so far, chi2/dof and Q (values as estimate(error in the last digits)), then the
        result's line. With extended=True the full table of the command's report instead (flags: a
        adapted, * accumulated, ...; estimates, weighted estimates, chi2/dof, Q, seconds). Both are the
        C++ library's (mcubes::summary, result_io.hpp): one implementation for C++, the command and
        Python."""
        return _mcubes.summary(self, bool(extended))

    def _value_text(self):
        return _with_error(self.estimate, self.error)

    def plot(self, *, exact=None, ax=None):
        """Draws the iterations (mcubes.plots.plot_convergence, matplotlib): each estimate with its error
        bar, the weighted average with its one-sigma band, `exact` when given. Returns the Axes."""
        from . import plots
        return plots.plot_convergence(self, exact=exact, ax=ax)


class VectorResult(Result):
    """The result of vegas_vector(): a Result whose estimate, error and chi2_dof are arrays of the N
    components, with covariance (N x N, of the estimates), chi2_dof_vector, dof_vector and q_vector
    (the vector's correlated chi2 over the iterations and its p-value), components (N),
    iteration_estimates (iterations x N) and iteration_covariances (iterations x N x N). records,
    summary() and the status are those of the run (component 0's iteration records).
    """

    def __repr__(self):
        return (f"VectorResult(estimate={self.estimate!r}, error={self.error!r}, chi2_dof_vector="
                f"{self.chi2_dof_vector!r}, status={self.status!r}, iterations={self.iterations}, n_eval={self.n_eval}, "
                f"seed={self.seed})")

    def __str__(self):
        return f"{self._value_text()} ({self.status})"

    def __float__(self):
        raise TypeError(f"float() of a vector result of {len(self.estimate)} components: take one, "
                        "e.g. float(r.estimate[0])")

    def to_gvar(self):
        """The N estimates with their covariance as an array of correlated gvar.GVar (needs gvar)."""
        return _gvar().gvar(np.asarray(self.estimate), np.asarray(self.covariance))

    def _value_text(self):
        return "[" + ", ".join(_with_error(e, s) for e, s in zip(self.estimate, self.error)) + "]"

    def summary(self, extended=False):
        """Component 0's iteration table, then each component's estimate, error and chi2/dof and the
        vector's correlated chi2/dof and Q."""
        lines = [super().summary(extended).rstrip("\n")]
        for i, (e, s, c) in enumerate(zip(self.estimate, self.error, self.chi2_dof)):
            lines.append(f"component {i}: {_with_error(e, s)}  chi2/dof {c:.2f}")
        lines.append(f"vector: chi2/dof {self.chi2_dof_vector:.2f} (dof {self.dof_vector}), Q {self.q_vector:.2f}")
        return "\n".join(lines) + "\n"


def _gvar():
    try:
        import gvar
    except ImportError as e:
        raise ImportError("to_gvar() needs the gvar package (pip install gvar); r.mean and r.sdev need "
                          "nothing") from e
    return gvar


def _with_error(value, error):
    """value(error) with the error's two leading digits in the last digits of the value: 1.0012(23),
    4.407(97)e-11 (the C++ library's format_with_error, result_io.hpp: one implementation); '-' for
    NaN (a column of the table with nothing yet)."""
    value = float(value)
    return "-" if math.isnan(value) else _mcubes.format_with_error(value, float(error))


from . import suite  # noqa: E402  (after the definitions it uses)
from .plots import plot_convergence, plot_map  # noqa: E402  (matplotlib is imported when a plot is made)
