"""One module per paper experiment: a settings dataclass with smoke/study/paper presets and a
``run(settings) -> results`` function. Notebooks call these and plot the results.

- :mod:`~pcnn_explore.experiments.density`: the density models' studies (notebooks 00-06 and 11);
- :mod:`~pcnn_explore.experiments.agents`: the agents' figures and studies (notebooks 07-10 and 13);
- :mod:`~pcnn_explore.experiments.exploration`: exploration on a laptop (notebook 12).
"""
