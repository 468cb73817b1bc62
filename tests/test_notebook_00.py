import math

from pcnn_explore.study import SCHEMA, decisions_of


def test_pseudo_counts_notebook_smoke(notebook_runner, tmp_path):
    metrics = notebook_runner("00_pseudo_counts.ipynb", seed=0)
    # the report's thumbnail: pseudo-count against real count (Sec. 2.1, 3.3)
    assert metrics["main_figure"] == "counts_vs_real.png"
    assert (tmp_path / "00_pseudo_counts" / "counts_vs_real.png").stat().st_size > 10_000
    s = metrics["summary"]
    assert metrics["profile"] == "smoke"
    assert s["n_frames"] == 120
    assert s["tabular_max_abs_count_error"] < 1e-9  # the empirical pseudo-count is the real count
    for model in ("cts", "pixelcnn"):
        assert s[f"{model}_mean_pg_nats"] > 0  # online training raises rho of the trained frame
        assert 0 <= s[f"{model}_median_pseudo_count"] < math.inf
        assert s[f"{model}_median_bonus"] >= 0
        # the agent's count uses the PG scaled by c n^-1/2 < 1: larger than the model's own
        assert s[f"{model}_repeat_final_scaled_pseudo_count"] > s[f"{model}_repeat_final_pseudo_count"]
    # CTS counts the repeated frame: its pseudo-count grows with the real count
    assert s["cts_repeat_count_slope"] > 0
    # the n^-1 schedule decays faster than n^-1/2, which decays faster than no decay
    assert s["bonus_inverse_second_half_mean"] < s["bonus_inverse_sqrt_second_half_mean"] < s["bonus_constant_second_half_mean"]
    assert set(metrics["paper"]) - {"verdict"} <= set(s)  # the paper's figures by name, its claim's sentence
    # two seeds at smoke (0 and 2); the first seed's figures are the unprefixed ones; never a verdict at smoke
    assert s["seeds"] == [0, 2] and len(s["pixelcnn_repeat_count_slope_per_seed"]) == 2
    assert s["pixelcnn_repeat_count_slope_per_seed"][0] == s["pixelcnn_repeat_count_slope"]
    # the verdict's quantity: the exponent of the repeated frame's PG over its visits, per seed, both models
    for model in ("cts", "pixelcnn"):
        values = s[f"{model}_repeat_pg_exponent_per_seed"]
        assert len(values) == 2 and values[0] == s[f"{model}_repeat_pg_exponent"]
        assert all(math.isfinite(v) for v in values)
    # the claims record: both claims on their per-seed values, not testable on 2 seeds, never a summary sentence
    assert not {"verdict", "claims"} & set(s) and metrics["schema"] == SCHEMA
    claims = decisions_of(metrics)
    assert [d.name for d in claims] == ["pseudo-counts grow with real counts", "PixelCNN PG does not vanish"]
    assert list(claims[0].values) == s["cts_repeat_count_slope_per_seed"]
    assert list(claims[1].values) == s["pixelcnn_repeat_pg_exponent_per_seed"] and claims[1].claim.threshold == -0.5
    assert {(d.word, d.reason, d.n) for d in claims} == {("not testable", "too few seeds at this profile", 2)}
    assert metrics["word"] == "not testable: too few seeds at this profile" and metrics["kit_word"] is None
    assert "Sec. 5" in metrics["paper"]["verdict"] and "3.4" not in metrics["paper"]["verdict"]
