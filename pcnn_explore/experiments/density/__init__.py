"""The density models' studies: pseudo-counts (notebook 00), online vs shuffled training (01),
episode-start spikes (02), learning-rate schedules (03), samples (04), prediction gain on
Montezuma's Revenge (05), convolutional CTS (06) and the intrinsic reward over an episode (11),
with the training, statistics, verdicts and location measures they share."""
