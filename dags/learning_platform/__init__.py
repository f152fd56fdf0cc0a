"""The demo platform of seed 000: an online learning platform's eight source tables and its pipelines."""
