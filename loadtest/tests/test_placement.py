"""CPUS: where the load generator and the services run."""

import os
import subprocess
import unittest

from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.host import placement
from lab.host.processes import Processes


class PlanTest(unittest.TestCase):
    def test_shared_puts_both_sides_on_every_cpu(self):
        shared = placement.plan("shared", frozenset({0, 1}))
        self.assertEqual({"mode": "shared", "load_generator": "0-1", "services": "0-1"}, shared.record())

    def test_split_gives_the_load_generator_a_quarter_and_the_services_the_rest(self):
        self.assertEqual(
            {"mode": "split", "load_generator": "0", "services": "1-3"},
            placement.plan("split", frozenset(range(4))).record(),
        )
        self.assertEqual(
            {"mode": "split", "load_generator": "2-3", "services": "4-5,7-10"},
            placement.plan("split", frozenset({2, 3, 4, 5, 7, 8, 9, 10})).record(),
        )

    def test_split_on_fewer_than_four_cpus_says_why_not(self):
        with self.assertRaises(SettingsError) as raised:
            placement.plan("split", frozenset({0, 1}))
        self.assertEqual(
            "CPUS=split needs at least 4 CPUs (one for the load generator, the rest for the services); this lab may "
            "use 2 (0-1): use CPUS=shared",
            str(raised.exception),
        )

    def test_cpus_is_a_knob_with_two_values(self):
        self.assertEqual("shared", Settings.from_env({}).cpus)
        with self.assertRaises(SettingsError) as raised:
            Settings.from_env({"CPUS": "half"})
        self.assertIn("CPUS must be one of shared, split, got 'half'", str(raised.exception))


class PinTest(unittest.TestCase):
    def tearDown(self):
        placement.use(placement.plan("shared"))

    def allowed(self, pid: int) -> str:
        with open("/proc/%d/status" % pid) as status:
            return next(line.split()[1] for line in status if line.startswith("Cpus_allowed_list"))

    def test_shared_children_run_as_without_the_lab(self):
        placement.use(placement.plan("shared"))
        self.assertIsNone(placement.pin("services"))

    def test_a_split_child_and_its_threads_run_on_its_sides_cpus(self):
        available = frozenset(os.sched_getaffinity(0))
        # A split of this machine's CPUs as a 4-CPU one would split them: the services on the last one.
        services = frozenset({max(available)})
        placement.use(placement.Placement("split", available - services or available, services))
        with Processes() as processes:
            child = processes.start(["sleep", "5"], stdout=subprocess.DEVNULL, side="services")
            self.assertEqual(placement.cpu_list(services), self.allowed(child.pid))
        ab = subprocess.run(
            ["sh", "-c", "grep Cpus_allowed_list /proc/self/status"],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=placement.pin("load_generator"),
        )
        self.assertEqual(placement.cpu_list(available - services or available), ab.stdout.split()[1])


if __name__ == "__main__":
    unittest.main()
