"""The explorer's summary of Nona's optimum (schedlab.nona.explore)."""

from __future__ import annotations

import numpy as np
import pytest

from schedlab.nona import explore
from schedlab.nona.optimise import solve
from schedlab.nona.workload import Cluster, build_workload, job_f


def test_probabilities_sum_to_one_per_subgraph():
    s = explore.placement_summary(0.6, 80.0, min_p=-1.0)  # every option, zeros included
    sums = s.options.groupby(["job_class", "subgraph"]).p.sum()
    assert np.allclose(sums.to_numpy(), 1.0)
    assert np.allclose(s.subgraphs.p_split + s.subgraphs.p_together, 1.0)
    assert (s.options.p >= 0).all()


def test_matches_a_direct_solve():
    cluster = Cluster(servers=2, bandwidth_gbps=80.0)
    wl = build_workload(classes=[job_f()], load=0.6, cluster=cluster, background_comm_bytes=20e6)
    res = solve(wl, cluster, method="global")
    s = explore.placement_summary(0.6, 80.0)
    assert s.objective == pytest.approx(res.objective)
    assert s.rho == pytest.approx(res.rho)
    assert s.phi_ms == pytest.approx(1e3 * res.phi)
    ((_, opts),) = res.distributions()["f"]
    together = sum(p for o, p in opts if len(o.partition) == 1)
    assert s.subgraphs.p_together.iloc[0] == pytest.approx(together)
    tau = s.classes.set_index("job_class").predicted_jct_ms
    assert tau["f"] == pytest.approx(1e3 * res.tau["f"])


def test_link_wait_grows_with_load_and_f_stops_splitting():
    curve = explore.split_curve([0.2, 0.5, 0.6, 0.8], 80.0)
    assert np.all(np.diff(curve.phi_ms.to_numpy()) > 0)
    assert np.all(np.diff(curve.rho.to_numpy()) > 0)
    p = curve.p_split.to_numpy()
    assert p[0] == pytest.approx(1.0) and p[-1] == pytest.approx(0.0, abs=1e-9)
    assert np.all(np.diff(p) <= 1e-9)  # Table I's direction: less splitting as the link fills


def test_background_link_load_and_bandwidth_move_the_optimum():
    busy = explore.placement_summary(0.5, 80.0, comm_load=0.9)
    idle = explore.placement_summary(0.5, 80.0, comm_load=0.0)
    assert busy.comm_load == 0.9 and busy.rho > idle.rho and busy.phi_ms > idle.phi_ms
    assert idle.subgraphs.p_split.iloc[0] == pytest.approx(1.0)
    assert busy.subgraphs.p_split.iloc[0] == pytest.approx(0.0, abs=1e-9)
    fast = explore.placement_summary(0.8, 800.0)  # ten times the bandwidth: splitting pays again
    assert fast.subgraphs.p_split.iloc[0] > 0.5


def test_predicted_jct_against_one_server():
    s = explore.placement_summary(0.2, 80.0)
    f = s.classes.set_index("job_class").loc["f"]
    assert f.one_server_jct_ms == pytest.approx(22.0)  # 1 + 10 + 10 + 1 ms (Fig. 1a)
    assert f.predicted_jct_ms < f.one_server_jct_ms  # distributing f pays at low load


def test_model_workload_and_bad_names():
    s = explore.placement_summary(0.5, 10.0, workload=("resnet18",))
    assert set(s.subgraphs.job_class) == {"resnet18"}
    assert "background_compute" in set(s.classes.job_class)
    with pytest.raises(ValueError, match="job_f"):
        explore.placement_summary(0.5, 10.0, workload="resnet18")
