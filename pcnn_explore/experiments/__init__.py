"""One module per paper experiment: a settings dataclass with smoke/study/paper presets and a
``run(settings) -> results`` function. Notebooks call these and plot the results."""
