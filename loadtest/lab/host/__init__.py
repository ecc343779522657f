"""This machine: the tools the lab installs and runs, the processes it starts and stops, their CPU, memory and JIT,
and where they run."""
