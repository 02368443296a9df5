"""Simulation: producers that deal whole rounds and nights through the real producer
path (the demo, the sample batch, the load generator). Write side only: nothing here
imports the read side (``projections``); the CLI's ``demo`` command runs the jobs."""
