"""Table V: the metadata-based profile classifier, and SHAP in chunks.

:class:`ProfileClassifier` is a scikit-learn style estimator: ``fit(meta, profiles, durations)``
one-hot encodes the five static a-priori metadata columns (``job_name, user, task_name, group,
workload``) into a sparse matrix (unknown categories at predict time are ignored) and trains an
XGBoost classifier with default hyper-parameters (as the paper); ``predict`` gives the profile,
(as with the authors' sparse input, XGBoost reads the absent zeros of the one-hot matrix as
*missing* values, which routes them down each split's default branch),
``predict_duration`` the mean training duration of the predicted profile (Section III-D).

Examples
--------
>>> clf = ProfileClassifier(random_state=0).fit(meta, labels, durations)   # doctest: +SKIP
>>> clf.predict(meta.head())                                              # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from schedlab.polaris.schema import METADATA


def _meta(X: pd.DataFrame, columns) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise TypeError("ProfileClassifier expects a pandas DataFrame with the metadata columns")
    missing = [c for c in columns if c not in X.columns]
    if missing:
        raise ValueError(f"metadata columns missing: {missing}")
    return X[list(columns)].astype(object).where(X[list(columns)].notna(), "<NA>").astype(str)


class ProfileClassifier(ClassifierMixin, BaseEstimator):
    """One-hot (sparse) + XGBoost profile classifier with a per-profile duration estimate."""

    def __init__(
        self, columns=METADATA, n_estimators: int | None = None, random_state: int = 0, n_jobs: int = 1
    ):
        self.columns = columns
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: pd.DataFrame, y, durations=None):
        from sklearn.preprocessing import LabelEncoder, OneHotEncoder
        from xgboost import XGBClassifier

        M = _meta(X, self.columns)
        y = np.asarray(y)
        if len(y) != len(M):
            raise ValueError(f"X has {len(M)} rows but y has {len(y)}")
        self.encoder_ = OneHotEncoder(handle_unknown="ignore", sparse_output=True).fit(M)
        self.labels_ = LabelEncoder().fit(y)
        self.classes_ = self.labels_.classes_
        kw = {} if self.n_estimators is None else {"n_estimators": self.n_estimators}
        self.model_ = XGBClassifier(
            random_state=self.random_state, n_jobs=self.n_jobs, tree_method="hist", **kw
        )
        self.model_.fit(self.encoder_.transform(M), self.labels_.transform(y))
        if durations is not None:
            d = pd.Series(np.asarray(durations, float))
            self.profile_duration_ = d.groupby(y).mean().to_dict()
        return self

    def transform_meta(self, X: pd.DataFrame):
        return self.encoder_.transform(_meta(X, self.columns))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.labels_.inverse_transform(self.model_.predict(self.transform_meta(X)).astype(int))

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.model_.predict_proba(self.transform_meta(X))

    def predict_duration(self, X: pd.DataFrame) -> np.ndarray:
        """Mean training duration of each row's predicted profile."""
        if not hasattr(self, "profile_duration_"):
            raise RuntimeError("fit was called without durations")
        return np.array([self.profile_duration_[p] for p in self.predict(X)], float)

    @property
    def feature_names_(self) -> np.ndarray:
        return self.encoder_.get_feature_names_out(list(self.columns))

    def shap_mean_abs(self, X: pd.DataFrame, chunk_size: int = 2_000, progress: bool = False) -> pd.DataFrame:
        """Mean |SHAP| per one-hot feature and class, accumulated chunk by chunk (bounded memory).

        Uses XGBoost's built-in TreeSHAP (``pred_contribs``) on the sparse matrix. ``shap.TreeExplainer``
        on an XGBoost model calls this same routine; :mod:`schedlab.polaris.explain` computes the values
        with the ``shap`` package (the figure) and checks them against shap's own TreeSHAP. Returns a
        DataFrame (features x classes).
        """
        import xgboost as xgb
        from schedlab.progress import bar

        Z = self.transform_meta(X)
        booster = self.model_.get_booster()
        n_feat, n_cls = Z.shape[1], len(self.classes_)
        acc = np.zeros((n_feat, n_cls))
        for start in bar(iterable=range(0, Z.shape[0], chunk_size), desc="shap", disable=not progress):
            contrib = booster.predict(xgb.DMatrix(Z[start : start + chunk_size]), pred_contribs=True)
            contrib = (
                contrib.reshape(contrib.shape[0], -1, n_feat + 1)
                if contrib.ndim == 3
                else contrib.reshape(contrib.shape[0], 1, n_feat + 1)
            )
            acc += np.abs(contrib[:, :, :n_feat]).sum(axis=0).T
        return pd.DataFrame(
            acc / Z.shape[0],
            index=self.feature_names_,
            columns=[str(c) for c in self.classes_[: acc.shape[1]]],
        )


def split(df: pd.DataFrame, test_size: float = 0.2, random_state: int = 5):
    """The paper's 80/20 split (``random_state=5``, as the authors)."""
    from sklearn.model_selection import train_test_split

    return train_test_split(df, test_size=test_size, random_state=random_state)


def report(y_true, y_pred) -> pd.DataFrame:
    """Per-class precision/recall/F1/support plus accuracy, macro and weighted averages (Table V)."""
    from sklearn.metrics import classification_report

    rep = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
    acc = rep.pop("accuracy")
    out = pd.DataFrame(rep).T.reset_index().rename(columns={"index": "profile"})
    out.attrs["accuracy"] = acc
    return pd.concat(
        [
            out,
            pd.DataFrame(
                [
                    {
                        "profile": "accuracy",
                        "precision": np.nan,
                        "recall": np.nan,
                        "f1-score": acc,
                        "support": out["support"].iloc[-1],
                    }
                ]
            ),
        ],
        ignore_index=True,
    )
