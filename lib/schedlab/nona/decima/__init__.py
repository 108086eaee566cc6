"""Decima (Mao et al., SIGCOMM 2019) as a network-oblivious Nona baseline.

The policy is spark-sched-sim's public TPC-H-trained Decima (``decima/model.pt``, MIT),
evaluated in NumPy (:mod:`.policy`); :mod:`.features` maps Nona's world (contracted DNN
DAGs on servers) to Decima's observation. Label results "Decima (public TPC-H-trained
weights)": the Nona authors' SQL-trained checkpoint is not public.
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
from schedlab.nona.decima.scheduler import DecimaScheduler

LABEL = "Decima (public TPC-H-trained weights)"

__all__ = [
    "LABEL",
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
