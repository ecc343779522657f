"""CPU and memory accounting, on /proc snapshots taken right around a real ab run (tests/fixtures/proc).

The snapshots: square-rest-service's /proc/<pid>/stat and the machine's /proc/stat before and after
`ab -n 2000 -c 20` (its report is fixtures/proc/ab-during.txt), on a 2-core machine, 100 ticks a second.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from lab.host import cpu, environment
from lab.load import ab_output
from lab.results import report

from tests.support import fixture


class ProcParsingTests(unittest.TestCase):
    def test_process_ticks_are_utime_plus_stime(self):
        self.assertEqual(cpu.process_cpu_ticks(fixture("proc/pid-before.stat")), 1333 + 93)
        self.assertEqual(cpu.process_cpu_ticks(fixture("proc/pid-after.stat")), 1522 + 113)

    def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(self):
        stat = fixture("proc/pid-before.stat").replace("(java)", "(my (odd) java)")

        self.assertEqual(cpu.process_cpu_ticks(stat), 1333 + 93)

    def test_machine_busy_is_total_minus_idle_and_iowait(self):
        # cpu  49231 0 7915 147566 1019 0 184 350 0 0: user nice system idle iowait irq softirq steal guest..
        busy, total = cpu.machine_cpu_ticks(fixture("proc/stat-before"))

        self.assertEqual(total, 49231 + 0 + 7915 + 147566 + 1019 + 0 + 184 + 350)
        self.assertEqual(busy, total - 147566 - 1019)

    def test_peak_rss_is_vmhwm(self):
        self.assertEqual(cpu.peak_rss_kib(fixture("proc/pid-after.status")), 245448)


class CpuBetweenTests(unittest.TestCase):
    def window(self):
        wall = ab_output.parse_report(fixture("proc/ab-during.txt")).time_taken_s
        before = cpu.Sample(
            wall_s=100.0,
            process_ticks={"square-rest-service": 1426},
            machine_busy_ticks=cpu.machine_cpu_ticks(fixture("proc/stat-before"))[0],
            children_cpu_s=1.5,
        )
        after = cpu.Sample(
            wall_s=100.0 + wall,
            process_ticks={"square-rest-service": 1635},
            machine_busy_ticks=cpu.machine_cpu_ticks(fixture("proc/stat-after"))[0],
            children_cpu_s=1.75,
        )
        return cpu.cpu_between(before, after, ticks_per_second=100)

    def test_service_seconds_and_percent_of_one_core_over_the_run(self):
        usage = self.window()

        # 209 ticks in the 1.374 s ab took: 2.09 s, i.e. one core and a half.
        self.assertEqual(usage["square-rest-service"], {"seconds": 2.09, "percent": 152.1})

    def test_machine_is_every_core_together(self):
        usage = self.window()

        # 274 busy ticks in 1.374 s: both cores busy, 200 % at most.
        self.assertEqual(usage["machine"], {"seconds": 2.74, "percent": 199.4})

    def test_ab_and_everything_else_are_accounted_apart_from_the_services(self):
        usage = self.window()

        self.assertEqual(usage["ab"], {"seconds": 0.25, "percent": 18.2})
        self.assertEqual(usage["other"], {"seconds": 0.4, "percent": 29.1})

    def test_other_is_never_negative(self):
        before = cpu.Sample(0.0, {"svc": 0}, 0, 0.0)
        after = cpu.Sample(1.0, {"svc": 100}, 99, 0.0)

        self.assertEqual(cpu.cpu_between(before, after, ticks_per_second=100)["other"]["seconds"], 0.0)


class LiveProcTests(unittest.TestCase):
    """The same readings on this very process, through the real /proc."""

    def test_samples_a_running_process_and_the_machine(self):
        sample = cpu.take_sample({"this test": os.getpid()})
        sum(i * i for i in range(300000))
        later = cpu.take_sample({"this test": os.getpid()})

        usage = cpu.cpu_between(sample, later)
        self.assertGreaterEqual(usage["this test"]["seconds"], 0)
        self.assertGreaterEqual(usage["machine"]["seconds"], usage["this test"]["seconds"] - 0.02)

    def test_a_services_replicas_are_added_up_and_its_peak_rss_is_the_largest(self):
        parent = os.getppid()
        sample = cpu.take_sample({"one": os.getpid(), "both": [os.getpid(), parent]})
        with open("/proc/%d/stat" % parent) as handle:
            parent_ticks = cpu.process_cpu_ticks(handle.read())

        self.assertGreaterEqual(sample.process_ticks["both"], sample.process_ticks["one"] + parent_ticks)
        self.assertEqual(
            cpu.peak_rss_mib([os.getpid(), parent]), max(cpu.peak_rss_mib(os.getpid()), cpu.peak_rss_mib(parent))
        )

    def test_peak_rss_can_be_reset_to_measure_one_run(self):
        self.assertTrue(cpu.reset_peak_rss(os.getpid()))
        self.assertGreater(cpu.peak_rss_mib(os.getpid()), 1)


if __name__ == "__main__":
    unittest.main()


class CpuQuotaTests(unittest.TestCase):
    """environment.cpu_quota_cores: the CPU quota the lab ran under, read from cgroup files laid out as the kernel
    mounts them, and from a real cgroup that loadtest/slow-machine.sh makes."""

    def layout(self, files):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as handle:
                handle.write(text)
        return root

    def test_cgroup_v2_takes_the_tightest_cpu_max_on_the_way_up_and_max_is_no_quota(self):
        root = self.layout(
            {
                "cgroup": "0::/pods/lab\n",
                "fs/cpu.max": "max 100000\n",
                "fs/pods/cpu.max": "150000 100000\n",
                "fs/pods/lab/cpu.max": "max 100000\n",
            }
        )
        self.assertEqual(1.5, environment.cpu_quota_cores(os.path.join(root, "cgroup"), os.path.join(root, "fs")))

    def test_cgroup_v1_reads_its_cpu_controllers_quota_over_its_period_and_minus_one_is_none(self):
        root = self.layout(
            {
                "cgroup": "4:memory:/x\n3:cpu,cpuacct:/lab-slow\n0::/\n",
                "fs/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
                "fs/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
                "fs/cpu,cpuacct/lab-slow/cpu.cfs_quota_us": "50000\n",
                "fs/cpu,cpuacct/lab-slow/cpu.cfs_period_us": "100000\n",
            }
        )
        self.assertEqual(0.5, environment.cpu_quota_cores(os.path.join(root, "cgroup"), os.path.join(root, "fs")))
        unlimited = self.layout(
            {
                "cgroup": "1:cpu:/\n",
                "fs/cpu/cpu.cfs_quota_us": "-1\n",
                "fs/cpu/cpu.cfs_period_us": "100000\n",
            }
        )
        self.assertIsNone(environment.cpu_quota_cores(os.path.join(unlimited, "cgroup"), os.path.join(unlimited, "fs")))
        self.assertIsNone(environment.cpu_quota_cores(os.path.join(unlimited, "none"), unlimited))

    @unittest.skipUnless(os.geteuid() == 0, "a cgroup of its own needs root")
    def test_a_process_under_slow_machine_sh_reads_its_quota_and_the_summary_says_it(self):
        lab = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        code = "from lab.host import environment; print(environment.cpu_quota_cores())"
        done = subprocess.run(
            [os.path.join(lab, "slow-machine.sh"), "75", sys.executable, "-c", code],
            cwd=lab,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual((0, "0.75"), (done.returncode, done.stdout.strip()), done.stderr)
        line = report.machine_line({"cpu_model": "Xeon", "cores": 2, "cpu_quota_cores": 0.75})
        self.assertEqual(["Xeon", "2 cores (limited to 0.75 cores by a CPU quota)"], line)
