"""Example user policies: how to add a scheduler to the PCS simulator.

A policy subclasses :class:`~schedlab.pcs.policies.Policy` and implements
``allocate(world) -> numpy.ndarray``: the GPUs of every active job, aligned with
``world.active`` after the call. ``world`` (:class:`~schedlab.pcs.sim.World`) holds flat
per-job arrays indexed by the ids in ``world.active``: ``demand`` (max GPUs), ``rem`` (true
remaining single-GPU seconds), ``est_rem`` (the estimate a size-based policy may use),
``submit_us``, ``rows`` (speedup tables: ``rows[i, g]`` is job ``i``'s throughput on ``g``
GPUs) and ``gpus`` (cluster size). The simulator calls ``allocate`` at every event and
inside every predictor replay, so predictions come for free.

Such a policy has no compiled kernel: :func:`~schedlab.pcs.sim.simulate` runs it on the
reference engine (with a one-line notice), and so does the CLI::

    schedlab pcs simulate --trace trace.csv --policy schedlab.pcs.examples:ShortestRemainingTimeFirst --predict --out srtf.csv

Examples
--------
>>> from schedlab.pcs import Workload, simulate
>>> w = Workload.from_arrays(submit_s=[0, 1], service=[8.0, 2.0], demand=[2, 1])
>>> simulate(w, ShortestRemainingTimeFirst(), gpus=2, engine="reference")["end_time"].tolist()
[5.0, 3.0]
"""

from __future__ import annotations

import numpy as np

from schedlab.pcs.policies import Policy


class ShortestRemainingTimeFirst(Policy):
    """SRTF: the job that would finish first at its full demand runs first.

    Key: estimated remaining size / throughput at the job's demand (the authors' ``SRTF``
    option of ``sim.py``; SRSF multiplies this by the demand). Each job in key order takes
    ``min(GPUs left, demand)``; ties keep the current active order (stable sort), and the
    active list is reordered like the authors' ``sorted(...)``.
    """

    name = "SRTF"

    def allocate(self, world) -> np.ndarray:
        jobs = world.act()  # active job ids, in the current list order
        demand = world.demand[jobs]
        time_left = world.est_rem[jobs] / world.rows[jobs, demand]
        order = np.argsort(time_left, kind="stable")
        jobs, demand = jobs[order], demand[order]
        world.active[:] = jobs.tolist()  # the allocation below follows this order
        gpus_before = np.cumsum(demand) - demand  # GPUs wanted by the jobs ahead
        return np.clip(world.gpus - gpus_before, 0, demand).astype(float)
