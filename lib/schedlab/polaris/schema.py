"""Layouts of the Alibaba PAI trace tables and the constants of the PolarisProfiler case study.

The column lists equal the upstream ``pai_<table>.header`` files (a test checks them against
the mirrored headers). The CSVs inside the ``pai_<table>.tar.gz`` archives have no header row.

Examples
--------
>>> len(FEATURES)
17
>>> TABLES["pai_job_table"]
('job_name', 'inst_id', 'user', 'status', 'start_time', 'end_time')
"""

from __future__ import annotations

TABLES: dict[str, tuple[str, ...]] = {
    "pai_job_table": ("job_name", "inst_id", "user", "status", "start_time", "end_time"),
    "pai_task_table": (
        "job_name",
        "task_name",
        "inst_num",
        "status",
        "start_time",
        "end_time",
        "plan_cpu",
        "plan_mem",
        "plan_gpu",
        "gpu_type",
    ),
    "pai_instance_table": (
        "job_name",
        "task_name",
        "inst_name",
        "worker_name",
        "inst_id",
        "status",
        "start_time",
        "end_time",
        "machine",
    ),
    "pai_sensor_table": (
        "job_name",
        "task_name",
        "worker_name",
        "inst_id",
        "machine",
        "gpu_name",
        "cpu_usage",
        "gpu_wrk_util",
        "avg_mem",
        "max_mem",
        "avg_gpu_wrk_mem",
        "max_gpu_wrk_mem",
        "read",
        "write",
        "read_count",
        "write_count",
    ),
    "pai_group_tag_table": ("inst_id", "user", "gpu_type_spec", "group", "workload"),
    "pai_machine_spec": ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"),
}

#: the five big tables the pipeline needs (machine spec is shipped in the mirror)
TRACE_TABLES: tuple[str, ...] = (
    "pai_job_table",
    "pai_task_table",
    "pai_instance_table",
    "pai_sensor_table",
    "pai_group_tag_table",
)

#: numeric columns per table (everything else is read as text)
NUMERIC: dict[str, frozenset[str]] = {
    "pai_job_table": frozenset({"start_time", "end_time"}),
    "pai_task_table": frozenset({"inst_num", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu"}),
    "pai_instance_table": frozenset({"start_time", "end_time"}),
    "pai_sensor_table": frozenset(
        {
            "cpu_usage",
            "gpu_wrk_util",
            "avg_mem",
            "max_mem",
            "avg_gpu_wrk_mem",
            "max_gpu_wrk_mem",
            "read",
            "write",
            "read_count",
            "write_count",
        }
    ),
    "pai_group_tag_table": frozenset(),
    "pai_machine_spec": frozenset({"cap_cpu", "cap_mem", "cap_gpu"}),
}

WORKLOADS: tuple[str, ...] = ("bert", "ctr", "graphlearn", "inception", "nmt", "resnet", "rl", "vgg", "xlnet")

#: the paper's 17 usage metrics (footnote 3), in the order used throughout
TASK_FEATURES: tuple[str, ...] = ("inst_num", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu")
SENSOR_FEATURES: tuple[str, ...] = (
    "cpu_usage",
    "gpu_wrk_util",
    "avg_mem",
    "max_mem",
    "avg_gpu_wrk_mem",
    "max_gpu_wrk_mem",
    "read",
    "write",
    "read_count",
    "write_count",
)
FEATURES: tuple[str, ...] = TASK_FEATURES + SENSOR_FEATURES + ("duration",)

#: static a-priori metadata of the classifier (Section III-C)
METADATA: tuple[str, ...] = ("job_name", "user", "task_name", "group", "workload")

#: Table I of the paper: rows per workload in the authors' joined table (the rule's input; the
#: paper's sampled rows, the result to compare with, are in reference/polaris.yaml)
TABLE_I_SIZES: dict[str, int] = {
    "bert": 10_940_142,
    "ctr": 9_128_957,
    "graphlearn": 4_888_371,
    "inception": 10_781_289,
    "nmt": 13_537,
    "resnet": 60_863,
    "rl": 849_626,
    "vgg": 11_768,
    "xlnet": 15_632,
}
#: the sample size the authors asked for (per-stratum rounding gives 100,001 rows)
TABLE_I_TARGET = 100_000

#: the grid of Table III
TRANSFORMS: tuple[str, ...] = ("standard_scaler", "minmax_scaler", "robust_scaler", "yeo-johnson")
METRICS: tuple[str, ...] = ("euclidean", "manhattan")
MIN_CLUSTER_SIZES: tuple[int, ...] = (50, 100, 200, 300, 400, 600, 1000)

#: row counts of the real trace (README of the data folder) and job status mix
REAL_JOB_ROWS = 1_055_501
REAL_GROUP_TAG_ROWS = 1_055_032
JOB_STATUS_COUNTS: dict[str, int] = {
    "Terminated": 732_355,
    "Failed": 256_555,
    "Running": 62_928,
    "Waiting": 3_663,
}
#: jobs per workload in the group-tag table (102,798 rows carry a workload)
WORKLOAD_JOB_COUNTS: dict[str, int] = {
    "bert": 54_887,
    "ctr": 27_083,
    "nmt": 10_363,
    "inception": 5_440,
    "graphlearn": 3_754,
    "resnet": 541,
    "xlnet": 415,
    "rl": 249,
    "vgg": 66,
}
