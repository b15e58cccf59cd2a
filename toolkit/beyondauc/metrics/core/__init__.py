"""The core every analysis reuses: the sort-and-threshold kernel on sorted score cells, the batched calibrators, and the per-model views of a benchmark."""
