"""Nona: stochastic congestion-aware scheduling of DNN inference DAGs."""
