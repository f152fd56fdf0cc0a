"""The demo platform: an online learning platform's eight source tables and its pipelines."""
