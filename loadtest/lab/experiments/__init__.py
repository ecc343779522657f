"""Each experiment the lab runs, from its options to its results folder (lab/experiments/base.py is their skeleton).
COMMANDS is every one that loadtest/run.sh --<name> runs; the main run (run.py) is loadtest/run.sh with no command."""

from . import article, design, faults, many_clients, overload, profile

# Each command's experiment; loadtest/run.sh --help lists them with their `about`.
COMMANDS = {
    experiment.name: experiment
    for experiment in (
        faults.Faults,
        many_clients.Clients,
        overload.Overload,
        design.Design,
        article.Article,
        profile.Profile,
    )
}
