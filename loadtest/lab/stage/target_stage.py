"""TARGET's stage: the services a run measures when the lab started none of them (lab.stage.target found them),
shaped as lab.stage.stage's are, so that lab.experiments.run measures them with the same checks, rounds and records:
one stack (what the services say they run), one network (the real one between their hosts), and nothing to start or
stop.
"""

import contextlib
from typing import Dict, Iterator, List, Optional

from ..core import catalogue
from ..core.catalogue import AGGREGATOR, SQUARE_REST
from . import deadlines, services, target
from .stacks import Jdk, Stack


def stack_of(remotes: List[target.Remote], paths: List[str]) -> Stack:
    """The stack the target runs, as its services say: the REST square service's server, the aggregator's REST
    client, its JDK and its TLS mode."""
    info = {remote.module: remote.info for remote in remotes}
    aggregator = info.get(AGGREGATOR, {}).get("aggregator") or {}
    square = info.get(SQUARE_REST, {}).get("square") or {}
    java = str(((info.get(AGGREGATOR) or {}).get("process") or {}).get("java") or square.get("java") or "0")
    return Stack(
        rest_server=str(square.get("server") or "netty"),
        rest_client=str(aggregator.get("rest-client") or "reactor-netty"),
        # "Eclipse Adoptium 21.0.5+11-LTS": the version is the last word.
        jdk=Jdk("", "", java.split()[-1]),
        virtual_threads=bool(square.get("virtual-threads")),
        paths=tuple(paths),
        tls=str((aggregator.get("tls") or {}).get("mode") or catalogue.PLAINTEXT),
    )


def record(settings_target: str, remotes: List[target.Remote], prometheus_url: str) -> Dict:
    """What results.json says of a target: where each service's replicas ran and how their CPU and memory were read."""
    read = target.PROMETHEUS if prometheus_url else target.ACTUATOR
    return {
        "aggregator_url": settings_target,
        "prometheus_url": prometheus_url or None,
        "read": read,
        "how_read": target.HOW_READ[read],
        "services": {remote.module: remote.where for remote in remotes},
        "endpoints": {remote.module: remote.base_url for remote in remotes if remote.base_url},
        "metrics_endpoints": {remote.module: ",".join(remote.metrics_urls) for remote in remotes},
    }


class TargetStage:
    """lab.stage.stage.Stage's part that lab.experiments.run.measure uses, for services the lab did not start."""

    def __init__(
        self, remotes: List[target.Remote], stack: Stack, prometheus: Optional[target.Prometheus] = None
    ) -> None:
        self.remotes = remotes
        self.stack = stack
        self.prometheus = prometheus
        self.read = target.PROMETHEUS if prometheus else target.ACTUATOR
        self.toxiproxy = None
        self.routes: List = []
        self.aggregator = next(remote for remote in remotes if remote.module == AGGREGATOR)

    def start_squares(self, stack: Stack, log_suffix: str = "") -> None:
        """Nothing to start: they run already."""

    def stop_squares(self) -> None:
        """Nothing to stop: they are not the lab's."""

    def tls_details(self) -> Dict:
        """The target's TLS mode, as its aggregator says it; its side's providers are added by lab.experiments.run."""
        return {"mode": self.stack.tls, "squares": {}}

    @contextlib.contextmanager
    def aggregator_on(
        self, profile: catalogue.Profile, limits: deadlines.Deadlines
    ) -> Iterator[List[services.Service]]:
        yield [
            services.Service(
                remote.module,
                [],
                remote.base_url,
                remote.metrics_urls,
                read=self.read,
                prometheus=self.prometheus,
            )
            for remote in self.remotes
        ]

    def aggregator_info(self) -> Optional[Dict]:
        return target.read_json(self.aggregator.actuators[0] + "/info")
