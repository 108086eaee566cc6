"""PCS (Bin Faisal et al.): elastic GPU-job simulator, WFQ and baseline policies, predictor.

Examples
--------
>>> from schedlab.pcs import Workload, make_policy, simulate
>>> w = Workload.from_arrays(submit_s=[0, 1], service=[4.0, 2.0], demand=[2, 2])
>>> simulate(w, make_policy("SRSF"), gpus=2)["end_time"].tolist()
[2.0, 3.0]
"""

from schedlab.pcs.configs import ConfigError, WFQConfig, heuristic_config, load_config, load_configs
from schedlab.pcs.models import SpeedupTables, UnknownModelError, load_speedups, throughput
from schedlab.pcs.policies import POLICIES, make_policy
from schedlab.pcs.sim import OUTPUT_COLUMNS, SimulationError, simulate
from schedlab.pcs.workload import TraceError, Workload, load_trace

__all__ = [
    "ConfigError",
    "OUTPUT_COLUMNS",
    "POLICIES",
    "SimulationError",
    "SpeedupTables",
    "TraceError",
    "UnknownModelError",
    "WFQConfig",
    "Workload",
    "heuristic_config",
    "load_config",
    "load_configs",
    "load_speedups",
    "load_trace",
    "make_policy",
    "simulate",
    "throughput",
]
