"""Each notebook's claims, declared before its runs: one module per notebook (:class:`pcnn_explore.study.Claim`)."""
