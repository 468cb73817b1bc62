"""The agents' experiments: the paper's four agent figures as one table (Fig. 5, 11, 12, 13;
notebooks 07-10) on Atari and DeepSea, their runs, curves, summaries and claims, and the Reactor
study (notebook 13)."""
