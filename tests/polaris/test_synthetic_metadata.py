"""The stand-in's metadata model: fitted rates, what it draws, what it can produce, provenance."""

import json

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import groups, metadata, synthetic


@pytest.fixture(scope="module")
def meta(calib):
    return metadata.fit_metadata(calib)


@pytest.fixture(scope="module")
def bert_jobs(calib, meta):
    """User and group of 20,000 bert jobs (the tag table carries both for a tagged job)."""
    wl = np.full(20_000, "bert", dtype=object)
    t = synthetic.generate_tables(
        wl.size, np.random.default_rng(5), calibration=calib, workload=wl, metadata=meta
    )
    return t["pai_job_table"].merge(t["pai_group_tag_table"][["inst_id", "group"]], on="inst_id")


def test_rates_are_good_turing_of_the_real_rows(calib_rows, meta):
    """Closed form, counted here independently with pandas: values seen once (+1) over rows (+1)."""
    bert = calib_rows[calib_rows.workload == "bert"]
    once = int((bert.user.value_counts() == 1).sum())
    assert meta.p_new_user["bert"] == pytest.approx((once + 1) / (len(bert) + 1))
    assert meta.p_any_user["bert"] == pytest.approx(1 / (len(bert) + 1))
    inception = calib_rows[calib_rows.workload == "inception"]
    assert inception.user.nunique() == 1  # one real user: the add-one keeps some mass for new users
    assert meta.p_new_user["inception"] == pytest.approx(1 / (len(inception) + 1))
    # the vocabulary is the trace's size: real users plus invented ones
    assert calib_rows.user.nunique() + meta.invented_users.size == metadata.N_USERS


def test_group_recurrence_is_the_maximum_likelihood_fit(calib_rows, meta):
    """The fitted (discount, concentration) beat every point of a coarse grid on the real
    partitions, built here from the rows with pandas (one count per job, per user)."""
    jobs = calib_rows.drop_duplicates("job_name")
    for w in ("bert", "ctr", "inception"):
        parts = [g.group.value_counts().to_numpy() for _, g in jobs[jobs.workload == w].groupby("user")]
        assert meta.group_fit[w] == "own"
        best = groups.partition_log_likelihood(*meta.group_py[w], parts)
        grid = [
            groups.partition_log_likelihood(d, t, parts)
            for d in np.linspace(0, 0.9, 10)
            for t in np.geomspace(0.1, 1e4, 25)
        ]
        assert best >= max(grid) - 1e-6, w
    # bert's groups recur per user with a heavy tail; graphlearn's 10 real jobs take the pooled fit
    assert meta.group_py["bert"][0] > 0.2
    assert meta.group_fit["graphlearn"] == "pooled" and meta.group_fit["rl"] == "pooled"


def test_drawn_groups_follow_the_fitted_process(calib_rows, meta):
    """Groups per (workload, user) pair of a 20,000-job draw against the closed-form expectation
    of the Pitman–Yor process (the measure's weights, the atom lookup and the tail all feed it);
    the real groups come only with their own user."""
    wl = np.full(20_000, "bert", dtype=object)
    user = np.where(np.arange(wl.size) % 2 == 0, calib_rows.user.iloc[0], "0123456789ab").astype(object)
    drawn = pd.DataFrame(
        {"user": user, "group": metadata.draw_groups(meta, wl, user, np.random.default_rng(3))}
    )
    d, theta = meta.group_py["bert"]
    n = wl.size // 2
    expected = groups.expected_groups(d, theta, n)
    per_pair = drawn.groupby("user").group.nunique()
    # one measure per pair: its group count varies as the process does, so a loose band
    assert (per_pair > 0.5 * expected).all() and (per_pair < 1.6 * expected).all(), (per_pair, expected)
    real_groups = set(calib_rows.group)
    invented_user = drawn[drawn.user == "0123456789ab"]
    assert not invented_user.group.isin(real_groups).any()
    owner = calib_rows.drop_duplicates("group").set_index("group").user
    real = drawn[drawn.group.isin(real_groups)]
    assert len(real) > 0 and (real.group.map(owner) == real.user).all()
    assert drawn.group.str.fullmatch(r"[0-9a-f]{32}").all()


def test_generated_jobs_carry_recurring_groups(calib_rows, meta, bert_jobs):
    """Through the generator: real groups only with their own user, invented users' groups recur,
    and most jobs share their group with another job (the real rows' partition says so too)."""
    real_groups = set(calib_rows.group)
    owner = calib_rows.drop_duplicates("group").set_index("group").user
    real = bert_jobs[bert_jobs.group.isin(real_groups)]
    assert len(real) > 0 and (real.group.map(owner) == real.user).all()
    inv = bert_jobs[~bert_jobs.user.isin(set(calib_rows.user))]
    assert inv.group.duplicated(keep=False).any()
    assert bert_jobs.group.duplicated(keep=False).mean() > 0.5
    assert (
        bert_jobs.user.str.fullmatch(r"[0-9a-f]{12}").all()
        and bert_jobs.group.str.fullmatch(r"[0-9a-f]{32}").all()
    )


def test_groups_do_not_depend_on_the_chunking(meta):
    """A pair's measure is keyed by the pair alone: two chunks see the same recurring groups."""
    wl = np.full(4000, "ctr", dtype=object)
    user = np.full(4000, "0123456789ab", dtype=object)
    a = metadata.draw_groups(meta, wl, user, np.random.default_rng(1))
    b = metadata.draw_groups(meta, wl, user, np.random.default_rng(2))
    shared = set(a) & set(b)
    assert len(shared) > 0.3 * len(set(a)), (len(shared), len(set(a)))


def test_pitman_yor_closed_forms():
    """EPPF against the sequential seating probabilities; the expected group count against a
    simulation of the sequential process (independent of the stick-breaking sampler)."""
    d, theta = 0.3, 2.0
    # seating 1 | 2 joins 1 | 3 new | 4 joins 1: (theta+d)/(theta+1) ... sequential product
    seq = (1 - d) / (theta + 1) * (theta + d) / (theta + 2) * (2 - d) / (theta + 3)
    assert np.exp(groups.eppf_log(d, theta, np.array([3, 1]))) == pytest.approx(seq)
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(400):
        sizes: list[int] = []
        for i in range(200):
            p = np.array([s - d for s in sizes] + [theta + d * len(sizes)]) / (theta + i)
            j = rng.choice(p.size, p=p)
            sizes.append(1) if j == len(sizes) else sizes.__setitem__(j, sizes[j] + 1)
        counts.append(len(sizes))
    assert np.mean(counts) == pytest.approx(groups.expected_groups(d, theta, 200), rel=0.03)
    weights = groups.stick_weights(0.0, 50.0, np.random.default_rng(1))  # light tail: stops on mass
    assert 1 - groups.TAIL_MASS <= weights.sum() <= 1


@pytest.mark.parametrize("d, theta", [(0.84, 4.3), (0.43, 99.0), (0.0, 1936.0)])
def test_truncated_measures_keep_the_group_counts(d, theta):
    """Jobs in a truncated measure's tail get groups of their own; over many measures the group
    count of 3,000 jobs stays the process's closed-form expectation (the pooled fit's heavy tail
    leaves ~20 % of the mass there)."""
    n, counts = 3000, []
    for seed in range(60):
        cum = np.cumsum(groups.stick_weights(d, theta, np.random.default_rng(seed)))
        atom = np.searchsorted(cum, np.random.default_rng([seed, 1]).random(n), side="right")
        counts.append(np.unique(atom[atom < cum.size]).size + int((atom >= cum.size).sum()))
    assert np.mean(counts) == pytest.approx(groups.expected_groups(d, theta, n), rel=0.04)
    with pytest.raises(ValueError, match="at least one non-empty partition"):
        groups.fit_pitman_yor([])


def test_task_names_stay_in_the_real_support(calib, calib_rows, meta):
    """Every (task name, workload) drawn is one of the calibration rows' or of the authors' join;
    rl jobs belong to the one rl user of the authors' sample."""
    wl = np.repeat(np.array(["bert", "ctr", "rl", "vgg", "nmt"], dtype=object), 2000)
    t = synthetic.generate_tables(
        wl.size, np.random.default_rng(6), calibration=calib, workload=wl, metadata=meta
    )
    task = t["pai_task_table"].merge(t["pai_job_table"][["job_name", "inst_id", "user"]], on="job_name")
    task = task.merge(t["pai_group_tag_table"][["inst_id", "workload"]], on="inst_id")
    support = set(metadata.AUTHORS_TASK_WORKLOAD) | set(zip(calib_rows.task_name, calib_rows.workload))
    drawn = set(zip(task.task_name, task.workload))
    assert drawn <= support, drawn - support
    assert set(task[task.workload == "rl"].user) == {metadata.FIXED_USERS["rl"]}
    # rl is mostly single-task worker jobs, as the authors' join (6,019 of 6,515 rl rows are workers)
    rl = task[task.workload == "rl"]
    assert (rl.task_name == "worker").mean() > 0.8


def test_can_produce_reads_the_model(calib, calib_rows, meta):
    own = calib_rows[["workload", "task_name", "gpu_type", "user", "group"]].copy()
    assert metadata.can_produce(meta, calib, own).all()  # its own calibration rows
    assert metadata.can_produce(meta, calib, own, gpu=True).all()
    row = own.iloc[[0]].copy()
    other_user = next(u for u in calib_rows.user.unique() if u != row.user.iloc[0])
    stolen = row.assign(user=other_user)  # a real group with a user it never had
    assert not metadata.can_produce(meta, calib, stolen).iloc[0]
    fresh = row.assign(user="0123456789ab", group="f" * 32)  # ids the model does not hold: invented path
    assert metadata.can_produce(meta, calib, fresh).iloc[0]
    odd = row.assign(task_name="JupyterTask")  # no template has it
    assert not metadata.can_produce(meta, calib, odd).iloc[0]
    with pytest.raises(ValueError, match="can_produce needs columns.*'group'"):
        metadata.can_produce(meta, calib, own.drop(columns="group"))
    with pytest.raises(ValueError, match="workload must be one of.*chess"):
        metadata.can_produce(meta, calib, own.assign(workload="chess"))


def test_deterministic_and_provenance_written(tmp_path, calib, calib_rows):
    a = synthetic.generate_tables(500, np.random.default_rng(9), calibration=calib)
    b = synthetic.generate_tables(500, np.random.default_rng(9), calibration=calib)
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k])
    synthetic.synthesize(tmp_path, 300, np.random.default_rng(2), calibration=calib, progress=False)
    prov = json.loads((tmp_path / synthetic.METADATA_PROVENANCE).read_text())
    assert set(prov["real_users"]) == set(calib_rows.user)
    assert set(prov["real_groups"]) == set(calib_rows.group)
    assert prov["invented_workloads"] == ["rl", "vgg"]
    fitted = metadata.fit_metadata(calib)
    assert prov["rates"]["bert"]["p_new_user"] == pytest.approx(fitted.p_new_user["bert"])
    d, theta = fitted.group_py["bert"]
    assert prov["rates"]["bert"]["group_discount"] == pytest.approx(d)
    assert prov["rates"]["bert"]["group_concentration"] == pytest.approx(theta)
    assert prov["rates"]["rl"]["group_fit"] == "pooled"


def test_bad_vocabulary_size(calib):
    with pytest.raises(ValueError, match="n_users must be positive"):
        metadata.fit_metadata(calib, n_users=0)


def test_strata_sized_for_borrowed_templates(calib, meta):
    """Borrowing changes a small workload's expected join rows per job (resnet borrows half its
    jobs' templates); the strata are sized with the mixture's moments, which the drawn jobs match."""
    own = calib.templates["resnet"]
    inst = calib.values["inst_num"]
    own_rows = np.mean(
        (1 + (own.second >= 0)) * (inst[own.first] + np.where(own.second >= 0, inst[own.second], 0)) ** 2
    )
    expected, _ = metadata.mixed_template_moments(meta, calib, "resnet")
    assert abs(expected / own_rows - 1) > 0.5  # the correction matters here
    wl = np.full(4000, "resnet", dtype=object)
    t = synthetic.generate_tables(
        wl.size, np.random.default_rng(8), calibration=calib, workload=wl, metadata=meta
    )
    task, n_inst = t["pai_task_table"], t["pai_instance_table"].groupby("job_name").size()
    term = task[task.status == "Terminated"].groupby("job_name").size()
    all_inst = task.groupby("job_name").inst_num.sum()  # waiting jobs have no instance rows
    rows = term * all_inst.reindex(term.index) ** 2
    se = rows.std() / np.sqrt(len(rows))
    assert abs(rows.mean() - expected) < 4 * se, (rows.mean(), expected, se)
    resized = synthetic.resize_strata(calib, meta)
    need = 60_863 / expected  # Table I's resnet rows over the mixture's rows per job
    n = resized.job_share["resnet"] * 1_055_032
    assert resized.terminated_share["resnet"] * n == pytest.approx(need, rel=1e-9)
    assert len(n_inst) > 0
