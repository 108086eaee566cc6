"""Decima (Mao et al., SIGCOMM 2019) as a network-oblivious Nona baseline.

The policy is spark-sched-sim's public TPC-H-trained Decima (``decima/model.pt``, MIT),
evaluated in NumPy (:mod:`.policy`, the tested reference; :mod:`.engine`, the fast per-job
evaluation the simulator plug-in :mod:`.scheduler` uses); :mod:`.features` maps Nona's world
(contracted DNN DAGs on servers) to Decima's observation; :mod:`.train` retrains the same
network in the Nona simulator (PyTorch, the ``trace`` extra). Label results "Decima (public
TPC-H-trained weights)" and "Decima (retrained in our simulator)": the Nona authors'
SQL-trained checkpoint is not public.
"""

from schedlab.nona.decima.policy import (
    DecimaAction,
    DecimaObservation,
    DecimaOutput,
    DecimaPolicy,
    DecimaWeights,
    exec_scores,
    forward,
    load_weights,
    node_embeddings,
)

from schedlab.nona.decima.features import ClusterState, JobState, job_state, node_features, to_observation
from schedlab.nona.decima.scheduler import DecimaScheduler, DecisionRecord, ReferenceDecimaScheduler

LABEL = "Decima (public TPC-H-trained weights)"
LABEL_RETRAINED = "Decima (retrained in our simulator)"

__all__ = [
    "LABEL",
    "LABEL_RETRAINED",
    "DecisionRecord",
    "ReferenceDecimaScheduler",
    "ClusterState",
    "DecimaAction",
    "DecimaObservation",
    "DecimaOutput",
    "DecimaPolicy",
    "DecimaScheduler",
    "DecimaWeights",
    "exec_scores",
    "forward",
    "JobState",
    "job_state",
    "node_features",
    "to_observation",
    "load_weights",
    "node_embeddings",
]
