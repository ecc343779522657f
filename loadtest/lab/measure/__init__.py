"""Measuring: a measured window with the services' own figures around it, repeats in parts, the floor, and the run's
progress."""
