"""An infinite bonus (pseudo-count 0, as Fig. 12's c = 10 n^-1/2 PG on CTS gives on DeepSea) clips to +1 as
every reward does, so notebook 09's c = 10 line runs; a NaN or an infinite env reward is still refused
(tests/test_run_without_numba.py)."""
from __future__ import annotations


def test_the_c10_line_runs_through_an_infinite_bonus(tmp_path):
    from pcnn_explore.run import TrainConfig, train
    from pcnn_explore.run.lines import line
    from pcnn_explore.run.variants import variant_overrides

    v = line("c10")
    cfg = TrainConfig.preset("smoke", env="DeepSea-10-v0", steps=300, seed=0, tensorboard=False, out_dir=str(tmp_path),
                             mapping_seed=10_000, **{**variant_overrides(v.variant), **v.fields_for("DeepSea-10-v0")})
    result = train(cfg, progress=False)
    assert result is not None and (tmp_path / "log.csv").read_text().count("\n") > 10
