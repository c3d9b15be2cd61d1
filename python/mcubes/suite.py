"""The paper's test integrands (Sakiotis et al. 2022, eqs. 1-8) with their exact values.

Each is a NumPy callable that mcubes.vegas (plain_mc, midpoint) takes as it is, with its region,
exact value and the paper's run settings; its C++ expression (``.expression``) runs compiled::

    s = mcubes.suite.f4(8)                       # exp(-625 sum (x_i - 1/2)^2) over [0, 1]^8
    r = mcubes.vegas(s, s.region, **s.paper)     # the paper's settings
    print(r.estimate, s.exact, (r.estimate - s.exact) / r.error)

The exact values come from the C++ library's suite (include/mcubes/suite.hpp), at the paper's
parameters. ``names()`` lists the integrands; ``get(name, dim)`` makes one.
"""

import numpy as np

from . import _mcubes

__all__ = ["SuiteIntegrand", "names", "get", "f1", "f2", "f3", "f4", "f5", "f6", "fA", "fB"]


def _f1(x):
    return np.cos(x @ np.arange(1.0, x.shape[1] + 1))


def _f2(x):
    return np.prod(1.0 / (1.0 / 2500.0 + (x - 0.5) ** 2), axis=1)


def _f3(x):
    d = x.shape[1]
    return (1.0 + x @ np.arange(1.0, d + 1)) ** (-(d + 1))


def _f4(x):
    return np.exp(-625.0 * ((x - 0.5) ** 2).sum(axis=1))


def _f5(x):
    return np.exp(-10.0 * np.abs(x - 0.5).sum(axis=1))


def _f6(x):
    d = x.shape[1]
    i = np.arange(1.0, d + 1)
    inside = (x < (3.0 + i) / 10.0).all(axis=1)
    return np.where(inside, np.exp(x @ (i + 4.0)), 0.0)


def _fA(x):
    return np.sin(x.sum(axis=1))


def _fB(x):
    d = x.shape[1]
    return (0.39894228040143267794 / 0.01) ** d * np.exp(-5000.0 * (x * x).sum(axis=1))


def _sum(d, term):
    return " + ".join(term(i) for i in range(d))


# name -> (NumPy function, C++ expression of dimension d)
_FORMS = {
    "f1": (_f1, lambda d: f"cos({_sum(d, lambda i: f'{i + 1}*x[{i}]')})"),
    "f2": (_f2, lambda d: " * ".join(f"(1/(1.0/2500 + (x[{i}]-0.5)*(x[{i}]-0.5)))" for i in range(d))),
    "f3": (_f3, lambda d: f"pow(1 + {_sum(d, lambda i: f'{i + 1}*x[{i}]')}, -{d + 1})"),
    "f4": (_f4, lambda d: f"exp(-625*({_sum(d, lambda i: f'(x[{i}]-0.5)*(x[{i}]-0.5)')}))"),
    "f5": (_f5, lambda d: f"exp(-10*({_sum(d, lambda i: f'fabs(x[{i}]-0.5)')}))"),
    "f6": (_f6, lambda d: "(" + " && ".join(f"x[{i}] < {(4 + i) / 10.0!r}" for i in range(d)) + ") ? exp("
           + _sum(d, lambda i: f"{i + 5}*x[{i}]") + ") : 0.0"),
    "fA": (_fA, lambda d: f"sin({_sum(d, lambda i: f'x[{i}]')})"),
    "fB": (_fB, lambda d: f"pow(0.39894228040143267794/0.01, {d}) * exp(-5000*({_sum(d, lambda i: f'x[{i}]*x[{i}]')}))"),
}

_ENTRIES = {e["name"]: e for e in _mcubes.suite_entries()}


class SuiteIntegrand:
    """One suite integrand in dimension `dim`: a NumPy callable f(x), x of shape (n, dim).

    Attributes: name, dim, description, region (list of (lower, upper) pairs), exact (the exact value),
    paper (a dict of vegas options: the paper's calls_per_iteration, max_iterations, adapt_iterations,
    skip), expression (the same function as C++ text, for the compiled path).
    """

    def __init__(self, name, dim=None):
        if not isinstance(name, str):
            raise TypeError(f"name must be a str ({', '.join(_ENTRIES)}), got {type(name).__name__} {name!r}")
        if name not in _ENTRIES:
            raise ValueError(f"no suite integrand named {name!r} ({', '.join(_ENTRIES)})")
        e = _ENTRIES[name]
        dim = e["default_dim"] if dim is None else _mcubes.integer("dim", dim, 1, 2 ** 31 - 1)
        self.name = name
        self.dim = dim
        self.description = e["description"]
        self.exact = _mcubes.suite_exact(name, dim)  # ValueError for a dimension without an exact value
        self.region = [(e["lower"], e["upper"])] * dim
        self.paper = dict(e["paper"])
        self._f, expr = _FORMS[name]
        self.expression = expr(dim)

    def __call__(self, x):
        return self._f(x)

    def __repr__(self):
        return f"mcubes.suite.{self.name}({self.dim}): {self.description}, exact {self.exact!r}"


def names():
    """The suite's integrands in the library's order: f1..f6, fA, fB."""
    return list(_ENTRIES)


def get(name, dim=None):
    """The suite integrand `name` in dimension dim (default: the paper's)."""
    return SuiteIntegrand(name, dim)


def f1(dim=None): return SuiteIntegrand("f1", dim)  # noqa: E704
def f2(dim=None): return SuiteIntegrand("f2", dim)  # noqa: E704
def f3(dim=None): return SuiteIntegrand("f3", dim)  # noqa: E704
def f4(dim=None): return SuiteIntegrand("f4", dim)  # noqa: E704
def f5(dim=None): return SuiteIntegrand("f5", dim)  # noqa: E704
def f6(dim=None): return SuiteIntegrand("f6", dim)  # noqa: E704
def fA(dim=None): return SuiteIntegrand("fA", dim)  # noqa: E704
def fB(dim=None): return SuiteIntegrand("fB", dim)  # noqa: E704
