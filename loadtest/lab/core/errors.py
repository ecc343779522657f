"""Every error the lab raises, in one module that imports nothing of the lab, so that any module can raise them, and
how an entry point reports them."""

import sys
from typing import Callable


class LabError(Exception):
    """The lab cannot go on; the message says what was wrong and what to do."""


class SettingsError(LabError, ValueError):
    """A knob has a value the lab cannot use; the message says which and why."""


class ToolMissing(LabError):
    """A tool the lab runs is missing and the lab could not install it; the message says what to run."""


class ServiceExited(LabError):
    """A service the lab started is gone while it measured; the message names it, the run, its exit and its log."""


class FloorError(LabError):
    """The floor cannot be planned or read; the message says why."""


class ResultsError(LabError):
    """results.json cannot be read, or would not hold to its schema; the message names the file or each key."""


class ReportError(Exception):
    """The report cannot be written; the message says what to run."""


class MetricsError(Exception):
    """A metrics page cannot be read or parsed; the message says which and why."""


class TrafficError(Exception):
    """The connections' counters cannot be read; the message says why."""


class AbOutputError(ValueError):
    """ab printed something the lab cannot read: the run cannot be reported."""


class VegetaOutputError(ValueError):
    """Vegeta's results hold something the lab cannot read: the run cannot be reported."""


def exit_status(command: Callable[[], int]) -> int:
    """What an entry point exits with: the command's own status, 1 once it said why the lab cannot go on, 130 on
    Ctrl-C."""
    try:
        return command()
    except (LabError, ReportError) as error:
        print("[lab] ERROR: %s" % error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("[lab] interrupted", file=sys.stderr)
        return 130
