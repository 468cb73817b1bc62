"""Exploration you can see on a laptop (notebook 12): DeepSea and MiniGrid runs
(:mod:`~pcnn_explore.experiments.exploration.laptop`) and the density models' pseudo-count maps of
DeepSea (:mod:`~pcnn_explore.experiments.exploration.count_maps`)."""
