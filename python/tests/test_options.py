"""Option and argument conversion: every keyword of every function and method takes exactly the values
its C++ field represents; another type is a TypeError, a value outside the field's range a
ValueError, and each message names the option, what it got and what is accepted. The library's own
checks (the method's ranges) name the option too."""

import numpy as np
import pytest

import mcubes
from conftest import poly


def poly2(x):
    v = poly(x)
    return np.stack([v, 2 * v], axis=1)


SMALL = dict(calls_per_iteration=2000, max_iterations=2, skip=0, min_iterations=1)

# entry point -> (call with options, the options it takes)
ENTRIES = {
    "vegas": (lambda **o: mcubes.vegas(poly, [(0, 1)], **dict(SMALL, **o)), mcubes.VEGAS_OPTIONS),
    "Integrator": (lambda **o: mcubes.Integrator([(0, 1)], **dict(SMALL, **o)), mcubes.VEGAS_OPTIONS),
    "Integrator.integrate": (lambda **o: mcubes.Integrator([(0, 1)], **SMALL).integrate(poly, **o),
                             mcubes._INTEGRATOR_OPTIONS),
    "vegas_batch": (lambda **o: mcubes.vegas_batch(lambda x, p: poly(x), [(0, 1)], [1, 2], **dict(SMALL, **o)),
                    mcubes.VEGAS_OPTIONS),
    "vegas_vector": (lambda **o: mcubes.vegas_vector(poly2, [(0, 1)], components=2, **dict(SMALL, **o)),
                     mcubes._INTEGRATOR_OPTIONS),
    "plain_mc": (lambda **o: mcubes.plain_mc(poly, [(0, 1)], **dict(dict(samples=2000), **o)), mcubes.PLAIN_MC_OPTIONS),
    "midpoint": (lambda **o: mcubes.midpoint(poly, [(0, 1)], 9, **o), mcubes.MIDPOINT_OPTIONS),
}

UINT64 = {"calls_per_iteration", "seed", "samples", "cuda_array_points"}
INT = {"max_iterations", "adapt_iterations", "skip", "min_iterations", "n_bins", "threads", "cuda_threads_per_block",
       "device"}
REAL = {"rel_tol", "abs_tol", "max_chi2_dof", "alpha", "beta"}
BOOL = {"symmetric_map"}
DEVICES = {"devices"}
STR = {"backend": "'cpu', 'cuda' or 'auto'", "array_module": "'torch' or 'cupy'",
       "stratification": "'adaptive' (VEGAS+) or 'uniform' (m-Cubes)"}

# (option kinds, bad value, exception, the words of the accepted type or range, what it got)
BAD = [
    (UINT64 | INT, "1e5", TypeError, "must be an integer", "got str '1e5'"),
    (UINT64 | INT, True, TypeError, "must be an integer", "got bool True"),
    (UINT64 | INT, None, TypeError, "must be an integer", "got NoneType None"),
    (UINT64 | INT, 1j, TypeError, "must be an integer", "got complex 1j"),
    (UINT64 | INT, 1.5, ValueError, "must be an integer", "got 1.5"),
    (UINT64 | INT, float("inf"), ValueError, "must be an integer", "got inf"),
    (UINT64, 2 ** 64, ValueError, "must be an integer in [0, 2^64 - 1]", "got 18446744073709551616"),
    (UINT64, -1, ValueError, "must be an integer in [0, 2^64 - 1]", "got -1"),
    (UINT64, np.int64(-5), ValueError, "must be an integer in [0, 2^64 - 1]", "-5"),
    (INT, 2 ** 31, ValueError, "must be an integer in [-2^31, 2^31 - 1]", "got 2147483648"),
    (INT, -2.0 ** 40, ValueError, "must be an integer in [-2^31, 2^31 - 1]", "got -1099511627776.0"),
    (REAL, "abc", TypeError, "must be a real number (int or float)", "got str 'abc'"),
    (REAL, 1j, TypeError, "must be a real number (int or float)", "got complex 1j"),
    (REAL, np.complex128(1), TypeError, "must be a real number (int or float)", "got complex128"),
    (REAL, False, TypeError, "must be a real number (int or float)", "got bool False"),
    (REAL, [1e-3], TypeError, "must be a real number (int or float)", "got list [0.001]"),
    (REAL, 10 ** 400, ValueError, "must be a real number within the double range", "got 1000"),
    (BOOL, 1, TypeError, "must be a bool (True or False)", "got int 1"),
    (BOOL, "yes", TypeError, "must be a bool (True or False)", "got str 'yes'"),
    (set(STR), 3, TypeError, "must be a str", "got int 3"),
    (set(STR), "tpu", ValueError, "must be", "'tpu'"),
    (DEVICES, 0, TypeError, "must be a list of CUDA device ordinals", "got int 0"),
    (DEVICES, "all", TypeError, "must be a list of CUDA device ordinals", "got str 'all'"),
    (DEVICES, [0, -1], ValueError, "must be an integer in [0, 1023]", "got -1"),
    (DEVICES, [0.5], ValueError, "must be an integer", "got 0.5"),
]

CASES = [pytest.param(entry, name, value, exc, accepted, got, id=f"{entry}-{name}-{value!r}")
         for entry, (_, known) in ENTRIES.items() for name in known
         for kinds, value, exc, accepted, got in BAD if name in kinds]


def test_every_option_is_covered():
    known = set(mcubes.VEGAS_OPTIONS) | set(mcubes.PLAIN_MC_OPTIONS) | set(mcubes.MIDPOINT_OPTIONS)
    assert known == UINT64 | INT | REAL | BOOL | set(STR) | DEVICES


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_several_devices_are_refused_where_the_run_is_not_on_the_gpu(entry):
    # NumPy callables run on the CPU: a list of several devices is an error naming it, never ignored
    call, _ = ENTRIES[entry]
    with pytest.raises(ValueError, match="devices"):
        call(devices=[0, 0])


@pytest.mark.parametrize("entry,name,value,exc,accepted,got", CASES)
def test_bad_option_names_option_value_and_accepted(entry, name, value, exc, accepted, got):
    call, _ = ENTRIES[entry]
    with pytest.raises(exc) as e:
        call(**{name: value})
    text = str(e.value)
    assert text.startswith(name + " "), text  # the option first, not a member of a batch
    assert accepted in text and got in text, text
    if name in STR and exc is ValueError:
        assert STR[name] in text, text


# the method's own ranges (the library's checks, options.hpp): a value of the right type outside them
METHOD_RANGE = {
    "rel_tol": -1, "abs_tol": float("nan"), "calls_per_iteration": 1, "max_iterations": 0, "adapt_iterations": -1,
    "skip": -1, "min_iterations": 0, "max_chi2_dof": 0, "n_bins": 1, "alpha": 65, "threads": -1,
    "cuda_threads_per_block": 48, "device": -1, "cuda_array_points": 2 ** 41, "samples": 1,
    "beta": 0.6,  # not a multiple of 1/16
}


@pytest.mark.parametrize("entry,name", [(entry, name) for entry, (_, known) in ENTRIES.items() for name in known
                                        if name in METHOD_RANGE])
def test_value_outside_the_method_range_names_the_option(entry, name):
    call, _ = ENTRIES[entry]
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call(**{name: METHOD_RANGE[name]})


def test_the_messages_of_the_report():
    with pytest.raises(ValueError) as e:
        mcubes.vegas(poly, [(0, 1)], seed=2 ** 64)
    assert str(e.value) == "seed must be an integer in [0, 2^64 - 1], got 18446744073709551616"
    with pytest.raises(TypeError) as e:
        mcubes.Integrator([(0, 1)], calls_per_iteration="1e5")
    assert str(e.value) == "calls_per_iteration must be an integer, got str '1e5'"
    with pytest.raises(TypeError) as e:
        mcubes.vegas_batch(lambda x, p: poly(x), [(0, 1)], [1], rel_tol="abc")
    assert str(e.value) == "rel_tol must be a real number (int or float), got str 'abc'"


def test_accepted_forms_are_converted():
    n = mcubes._mcubes.normalized_options(
        "vegas", dict(calls_per_iteration=1e4, seed=np.uint64(2 ** 64 - 1), max_iterations=np.int32(3),
                      rel_tol=np.float32(0.5), abs_tol=1, symmetric_map=np.bool_(True), backend="automatic"))
    assert n == dict(calls_per_iteration=10000, seed=2 ** 64 - 1, max_iterations=3, rel_tol=0.5, abs_tol=1.0,
                     symmetric_map=True, backend="auto")
    assert all(type(v) in (int, float, bool, str) for v in n.values())
    a = mcubes.vegas(poly, [(0, 1)], seed=np.int64(5), rel_tol=np.float64(1e-12), **dict(SMALL, calls_per_iteration=2e3))
    b = mcubes.vegas(poly, [(0, 1)], seed=5, rel_tol=1e-12, **SMALL)
    assert a.estimate == b.estimate and a.seed == 5


@pytest.mark.parametrize("value,exc,text", [
    ("3", TypeError, "n_per_axis must be an integer, got str '3'"),
    (True, TypeError, "n_per_axis must be an integer, got bool True"),
    (0, ValueError, "n_per_axis must be an integer in [1, 2^64 - 1], got 0"),
    (2.5, ValueError, "n_per_axis must be an integer, got 2.5"),
])
def test_midpoint_n_per_axis(value, exc, text):
    with pytest.raises(exc) as e:
        mcubes.midpoint(poly, [(0, 1)], value)
    assert str(e.value) == text


@pytest.mark.parametrize("value,exc,text", [
    ("2", TypeError, "components must be an integer, got str '2'"),
    (0, ValueError, f"components must be an integer in [1, {mcubes.max_components}], got 0"),
    (mcubes.max_components + 1, ValueError, f"components must be an integer in [1, {mcubes.max_components}]"),
])
def test_vegas_vector_components(value, exc, text):
    with pytest.raises(exc) as e:
        mcubes.vegas_vector(poly2, [(0, 1)], components=value)
    assert str(e.value).startswith(text)


def test_batch_seed_arguments():
    assert mcubes.batch_seed(np.uint64(7), 2.0) == mcubes.batch_seed(7, 2)
    with pytest.raises(ValueError, match=r"^seed must be an integer in \[0, 2\^64 - 1\], got -1$"):
        mcubes.batch_seed(-1, 0)
    with pytest.raises(TypeError, match=r"^k must be an integer, got str 'a'$"):
        mcubes.batch_seed(1, "a")


@pytest.mark.parametrize("call", [
    lambda: mcubes.vegas(poly, [(0, 1)], callback=3),
    lambda: mcubes.vegas_vector(poly2, [(0, 1)], callback=3),
    lambda: mcubes.vegas_batch(lambda x, p: poly(x), [(0, 1)], [1], callback=3),
    lambda: mcubes.Integrator([(0, 1)]).integrate(poly, callback=3),
])
def test_callback_must_be_callable(call):
    with pytest.raises(TypeError, match="callback must be callable or None, got int 3"):
        call()


def test_region_bounds_are_real_numbers():
    with pytest.raises(TypeError, match=r"region: the bounds of axis 1 must be real numbers, got str '1'"):
        mcubes.vegas(poly, [(0, 1), (0, "1")])
    with pytest.raises(TypeError, match=r"region: the bounds of axis 0 must be real numbers, got complex 1j"):
        mcubes.plain_mc(poly, [(0, 1j)])
    with pytest.raises(ValueError, match="region must be a sequence of"):
        mcubes.midpoint(poly, [(0, 1, 2)], 3)


def test_suite_arguments():
    with pytest.raises(TypeError, match="dim must be an integer, got str '3'"):
        mcubes.suite.get("f4", "3")
    with pytest.raises(ValueError, match="dim must be an integer, got 2.5"):
        mcubes.suite.f1(2.5)
    with pytest.raises(TypeError, match="name must be a str"):
        mcubes.suite.get(4, 3)
    assert mcubes.suite.get("f4", 3.0).dim == 3


def test_set_edges_refuses_complex_edges():
    integ = mcubes.Integrator([(0, 1)], n_bins=4)
    with pytest.raises(TypeError, match="edges must be an array of real numbers, got ndarray of dtype complex128"):
        integ.set_edges(integ.edges() + 0j)


def test_vegas_options_come_from_the_options_table():
    """mcubes.VEGAS_OPTIONS begins with the C++ options table (options.hpp, for_each_vegas_option), in its
    order, with its docs; every entry is a keyword of vegas() that round-trips through the result's options."""
    table = mcubes._mcubes.vegas_option_docs()
    assert len(table) == 14 and len({name for name, _ in table}) == 14
    assert list(mcubes.VEGAS_OPTIONS)[:len(table)] == [name for name, _ in table]
    for name, doc in table:
        assert mcubes.VEGAS_OPTIONS[name] == doc and len(doc) > 10
    assert "symmetric_map" in dict(table) and "stratification" in dict(table)
