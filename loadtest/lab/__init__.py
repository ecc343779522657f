"""The load-test lab's logic: ab output, /proc CPU and memory, results.json, summary.md and report.html.

loadtest/run.sh starts and stops the services; this package measures them. Standard library only.
"""
