"""The stand-in's metadata model: fitted rates, what it draws, what it can produce, provenance."""

import json

import numpy as np
import pandas as pd
import pytest

from schedlab.polaris import metadata, synthetic


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
    g_once = int((bert.group.value_counts() == 1).sum())
    assert meta.p_new_group["bert"] == pytest.approx(g_once / len(bert))
    assert meta.p_any_user["bert"] == pytest.approx(1 / (len(bert) + 1))
    inception = calib_rows[calib_rows.workload == "inception"]
    assert inception.user.nunique() == 1  # one real user: the add-one keeps some mass for new users
    assert meta.p_new_user["inception"] == pytest.approx(1 / (len(inception) + 1))
    # the vocabulary is the trace's size: real users plus invented ones
    assert calib_rows.user.nunique() + meta.invented_users.size == metadata.N_USERS


def test_drawn_users_and_groups_follow_the_rates(calib_rows, meta, bert_jobs):
    real_users, real_groups = set(calib_rows.user), set(calib_rows.group)
    n = len(bert_jobs)
    new_user = ~bert_jobs.user.isin(real_users)
    p = meta.p_new_user["bert"]
    assert abs(new_user.mean() - p) < 4 * np.sqrt(p * (1 - p) / n)
    # an invented group: a fresh one, or (not fresh) a recurring group of an invented user
    q = meta.p_new_group["bert"] + (1 - meta.p_new_group["bert"]) * p
    new_group = ~bert_jobs.group.isin(real_groups)
    assert abs(new_group.mean() - q) < 4 * np.sqrt(q * (1 - q) / n)
    # a real group always comes with its real user (every real group has exactly one)
    owner = calib_rows.drop_duplicates("group").set_index("group").user
    assert calib_rows.groupby("group").user.nunique().max() == 1
    real = bert_jobs[~new_group]
    assert (real.group.map(owner) == real.user).all()
    # beyond the copy list: real users on templates of other users, and invented users' groups recur
    pairs = set(zip(calib_rows.user, calib_rows.group))
    assert len(set(zip(bert_jobs.user, bert_jobs.group)) - pairs) > 0.5 * meta.p_new_group["bert"] * n
    inv = bert_jobs[new_user]
    assert inv.group.duplicated().any()
    assert (
        bert_jobs.user.str.fullmatch(r"[0-9a-f]{12}").all()
        and bert_jobs.group.str.fullmatch(r"[0-9a-f]{32}").all()
    )


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
    assert prov["rates"]["bert"]["p_new_user"] == pytest.approx(
        metadata.fit_metadata(calib).p_new_user["bert"]
    )


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
