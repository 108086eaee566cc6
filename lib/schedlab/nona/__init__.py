"""Nona: stochastic congestion-aware scheduling of DNN inference DAGs.

The public entry points, importable from here (:data:`__all__`); each is defined in the module
named beside it, where its documentation is:

==============  ===================================================================================
``profiles``    ``MODELS`` (Table II's five DNNs), ``table2``
``graphs``      ``read_graph``, ``write_graph``, ``GraphFormatError`` (PipeDream ``graph.txt``)
``workload``    ``Cluster``, ``JobClass``, ``build_workload``, ``inference_classes``
``queueing``    ``pk_wait``, ``UnstableLinkError`` (the link as an M/G/1 queue)
``optimise``    ``solve``, ``solve_point``, ``Result``, ``InfeasibleError``, ``METHODS``
``tables``      ``load_tables``, ``TableError`` (probability tables, the optimiser's JSON)
``sim``         ``simulate``, ``SimResult``, ``SimInputError``
``schedulers``  ``make_scheduler``, ``SCHEMES``, ``SchemeUnavailable``
``experiments`` ``run_point``, ``sweep``, ``FigureSweep`` (one point, sweeps of points x schemes)
==============  ===================================================================================

A name's module is imported on first use, not with the package: importing every module above
takes 1.5-2.7 s (scipy, networkx, pandas; measured on 2 shared cores), while
``import schedlab.nona`` stays about 2 ms.

Examples
--------
>>> from schedlab.nona import Cluster, pk_wait
>>> Cluster(bandwidth_gbps=10).link_bytes_per_s
1250000000.0
>>> round(pk_wait([0.5], [1.0]), 3)  # M/D/1 at load 0.5: rho S / (2 (1 - rho))
0.5
"""

from __future__ import annotations

import importlib

#: public name -> the module of ``schedlab.nona`` that defines it
_HOME: dict[str, str] = {
    "MODELS": "profiles",
    "table2": "profiles",
    "GraphFormatError": "graphs",
    "read_graph": "graphs",
    "write_graph": "graphs",
    "Cluster": "workload",
    "JobClass": "workload",
    "build_workload": "workload",
    "inference_classes": "workload",
    "UnstableLinkError": "queueing",
    "pk_wait": "queueing",
    "InfeasibleError": "optimise",
    "METHODS": "optimise",
    "Result": "optimise",
    "solve": "optimise",
    "solve_point": "optimise",
    "TableError": "tables",
    "load_tables": "tables",
    "SimInputError": "sim",
    "SimResult": "sim",
    "simulate": "sim",
    "SCHEMES": "schedulers",
    "SchemeUnavailable": "schedulers",
    "make_scheduler": "schedulers",
    "FigureSweep": "experiments",
    "run_point": "experiments",
    "sweep": "experiments",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> object:  # typing is not imported: it would double the import time
    """Import the module that defines ``name`` on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module 'schedlab.nona' has no attribute {name!r}")
    # a dynamic import, not an import statement: the package does not depend on its modules, so
    # a module importing ``schedlab.nona.<other>`` never runs this front door's whole list
    value = getattr(importlib.import_module(f"schedlab.nona.{_HOME[name]}"), name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
