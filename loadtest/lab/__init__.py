"""The load-test lab's logic: ab output, /proc CPU and memory, results.json, summary.md and report.html.

loadtest/run.sh starts and stops the services; this package measures them. The standard library, and the pinned
packages of requirements.txt in loadtest/.venv (python-env.sh).
"""
