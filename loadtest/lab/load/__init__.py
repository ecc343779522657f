"""The load: one interface over ab and Vegeta, and one Python client for the faults, overload and health probes."""
