"""The lab's vocabulary: its errors, the paths and services (catalogue), the knobs and settings, and the statistics
of repeats. Imports nothing of the lab outside this package."""
