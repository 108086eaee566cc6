# %% [markdown]
# # Explore PolarisProfiler's profile generator: a clustering configuration → profiles and silhouettes
#
# The paper builds workload *profiles* by clustering 17 usage features with a density-based
# algorithm (Section III-B): HDBSCAN or OPTICS, one of four feature scalings, a distance metric and
# a minimum cluster size (Table III). Table IV summarises the grid, and the paper then reads the
# chosen run profile by profile through its silhouette (the per-profile silhouette plot of the
# authors' repository) and Figure 4.
#
# Here you choose one configuration and see at once what it gives on a few hundred rows:
# the number of profiles, the share of outliers (label -1), the overall and per-profile silhouette,
# ACQUIRES (the authors' grid score) and a 2-D projection (PCA of the scaled features) coloured
# by profile.
#
# **Data.** By default a random sample of the **800 real joined rows** the authors published (the
# same file as `polaris/real_panel`). `source = "synthetic"` uses the pipeline's **synthetic
# stand-in** instead (the joined table the `polaris/pipeline` stage writes; every title then says
# SYNTHETIC). Neither is the paper's 100,001-row sample, so the numbers are for exploring, not for
# comparing with the paper's tables.
#
# The computation is in `schedlab.polaris.explore` (clustering as the grid's
# `schedlab.polaris.grid.cluster`); this notebook writes nothing. The widgets need `ipywidgets`
# (the `lab` extra: `pip install -e .[lab]`); the static cells below run without it.

# %%
source = "real"   # "real": the authors' 800 joined rows; "synthetic": the pipeline's stand-in
n_rows = 400      # rows drawn from the source (a few hundred keep every refresh under about a second)
seed = 0          # which rows are drawn

# %%
from IPython.display import Markdown, display

from schedlab.polaris import explore

rows = explore.load_rows(source, n=n_rows, seed=seed)
X = explore.feature_matrix(rows)
print(f"{rows['data'].iloc[0]}: {len(rows)} rows x {X.shape[1]} features")
rows["workload"].fillna("<none>").value_counts().rename("rows per workload").to_frame().T

# %% [markdown]
# ## The explorer
#
# Change any control: the figure and the numbers below it are recomputed (the last line gives the
# time the refresh took). *min samples* 0 keeps the grid's default: HDBSCAN's `min_samples =
# min_cluster_size`, OPTICS' 5.

# %%
import ipywidgets  # noqa: F401  (imported here so a missing `lab` extra fails in this cell, clearly)

explore.explorer(rows)

# %% [markdown]
# ## One configuration, without widgets
#
# The configuration the authors chose for HDBSCAN on their sample (Yeo-Johnson power transform,
# Euclidean distance), with a minimum cluster size scaled down to a few hundred rows.

# %%
chosen = explore.Setting(algorithm="hdbscan", min_cluster_size=20, scaling="yeo-johnson", metric="euclidean")
result = explore.explore(X, chosen)
fig = explore.figure(result, label=rows["data"].iloc[0])  # shown once, by the notebook's inline backend

# %%
display(Markdown(explore.summary(result, len(rows))))
result.per_profile.style.format({"share": "{:.1%}", "silhouette": "{:.3f}"})

# %% [markdown]
# ## How responsive is it?
#
# Wall time of one refresh (clustering, scoring, projection and drawing the figure) for a few
# configurations on these rows, measured on this machine now.

# %%
settings = [explore.Setting(), explore.Setting(algorithm="optics"), explore.Setting(min_cluster_size=10, min_samples=5),
            explore.Setting(scaling="none", metric="manhattan")]
times = explore.refresh_seconds(rows, settings)
display(Markdown(f"Slowest refresh: **{times.seconds.max():.2f} s** ({times.loc[times.seconds.idxmax(), 'algorithm']}); "
                 f"median {times.seconds.median():.2f} s over {len(times)} configurations on {len(rows)} rows."))
times

# %% [markdown]
# ## Exercises
#
# 1. **Scaling decides what "similar" means.** With HDBSCAN and min cluster size 20, try the five
#    scalings. Which gives the most profiles, which the highest silhouette? Look at the raw value
#    ranges (`rows[list(explore.FEATURES)].describe()`): which features dominate the distances when
#    nothing is scaled, and why does the paper search over four transforms (Table III)?
# 2. **Outliers against cohesion.** Keep the authors' choice (Yeo-Johnson, Euclidean) and raise
#    *min samples* from 1 to 5, 20 and 50. Write down the outlier share, the number of profiles and
#    both silhouettes each time. ACQUIRES averages three terms (closeness to 26 clusters, share of
#    clustered rows, silhouette with the outliers as a group; `schedlab.polaris.scoring`): which
#    term moves most, and which setting would ACQUIRES pick?
# 3. **HDBSCAN against OPTICS.** At the same scaling, metric and min cluster size, switch the
#    algorithm. Which labels more rows as outliers, and which has the higher silhouette? Check that
#    your answer agrees with the direction of Table IV (`results/polaris/table4_from_authors.csv`,
#    the authors' 56 runs per algorithm), and explain why a high silhouette with many outliers is a
#    poor basis for profiles that must cover new jobs.
# 4. **Two silhouettes.** Find a configuration where the silhouette of the clustered points is
#    positive but the grid's silhouette (outliers as one more group, the convention of Table IV) is
#    negative. Which points pull it down? Then pick the least cohesive profile in the bar chart and
#    locate it in the projection: is it spread out, or squeezed between two others?
# 5. *(Optional)* **Real rows against the stand-in.** Set `source = "synthetic"` (after the
#    `polaris/pipeline` stage has run) and repeat exercise 1. Does the synthetic trace, fitted on
#    the same 800 real rows, give the same ranking of scalings?
