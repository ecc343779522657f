"""results.json's schema (lab/results/results.schema.json): a real default run's file holds to it, every key it or the
lab's test results carry is described, and a wrong type or a missing key is named by its path, by the writer and the
check.
"""

import ast
import contextlib
import io
import json
import os
import tempfile
import unittest

import jsonschema
from lab.core.errors import ResultsError
from lab.results import check_results, results

from tests.support import FIXTURES, sample_conditions, sample_open_results, sample_results, sample_with_floor
from tests.test_knee import knee_results

# The default run (REPEATS=3, DURATION=20, CONCURRENCY=100, N=1000, FLOOR=1, every path) at commit 3998d39 on a busy
# 2-core machine, as run.sh wrote it.
DEFAULT_RUN = os.path.join(FIXTURES, "results", "default-run.json")
# The Maven build's fault run and many-clients run (small knobs: every path, 2 clients at 10 requests a second; 20 and
# 300 clients on two paths), as python3 -m lab faults and clients wrote them.
FAULTS_RUN = os.path.join(FIXTURES, "results", "faults-ci-run.json")
CLIENTS_RUN = os.path.join(FIXTURES, "results", "clients-ci-run.json")


def default_run():
    with open(DEFAULT_RUN) as handle:
        return json.load(handle)


def soak_and_mix():
    """An open-loop results.json with a soak's per-minute series in a run and a mix section, as lab.soak and lab.mix
    write them."""
    data = sample_open_results()
    data["runs"][0]["per_minute"] = {
        "minute_s": 60.0,
        "sent": [600, 600],
        "ok": [600, 599],
        "p99_ms": [12.0, None],
        "rss_mib": {"aggregator-service": [250.0, 251.0]},
        "heap_after_gc_mib": {"aggregator-service": [40.0, None]},
        "jcmd_cpu_s": 0.4,
        "errors": ["aggregator-service: no heap after GC: jcmd exited with code 1"],
    }
    mixed = {
        "path": "grpc/unary",
        "seconds": 27.0,
        "completed": 60,
        "ok": 40,
        "goodput": 1.48,
        "p99_ms": 4100.0,
        "non200": 20,
        "statuses": {"504": 20},
        "transport_errors": {"timeout": 2},
        "alone": {"goodput": 38.2, "p99_ms": 210.0, "non200": {}, "answered": 1000, "repeats": 1},
        "wrong_answers": 0,
    }
    closed = dict(mixed, path="grpc/stream", length_checked=False, alone={"error": "no measurement alone"})
    del closed["wrong_answers"]
    data["mix"] = {
        "paths": ["grpc/unary"],
        "payload": "small",
        "network": "loopback",
        "stack": "",
        "load": "open",
        "runs": [{"n": 50, "point": 10, "seconds": 2, "paths": [mixed, closed]}],
    }
    return data


def warmed():
    """sample_results() with each run's warm-up as lab.run records it (warmup.WarmUp.record)."""
    data = sample_results()
    for run in data["runs"]:
        run["warm_up"] = {"seconds": 12.0, "jit_settled": run["path"] != "rest/unary" or None}
    return data


def schema_keys(schema=None):
    """Every key name the schema describes, anywhere."""
    schema = results.schema() if schema is None else schema
    if isinstance(schema, list):
        return set().union(*map(schema_keys, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    return set(schema.get("properties", {})) | set().union(*map(schema_keys, schema.values()))


def keys_read(module_path):
    """The string keys a module reads of a dict: record["key"], record.get("key"), "key" in record."""
    with open(module_path) as handle:
        tree = ast.parse(handle.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            found.add(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            found.update(node.args[:1])
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            found.add(node.left)
    return {key.value for key in found if isinstance(key, ast.Constant) and isinstance(key.value, str)}


def undescribed(schema, value, at=()):
    """The key paths of value that the schema does not name (as a property, or under additionalProperties)."""
    schema = _resolved(schema)
    found = []
    if isinstance(value, dict):
        for key, inner in value.items():
            branches = [_resolved(s) for s in [schema] + schema.get("anyOf", []) if isinstance(s, dict)]
            described = [b["properties"][key] for b in branches if key in b.get("properties", {})] + [
                b["additionalProperties"] for b in branches if isinstance(b.get("additionalProperties"), dict)
            ]
            if not described:
                found.append(results.key_path(at + (key,)))
            elif described[0]:
                found += undescribed(described[0], inner, at + (key,))
    elif isinstance(value, list) and "items" in schema:
        for index, inner in enumerate(value):
            found += undescribed(schema["items"], inner, at + (index,))
    return found


def _resolved(schema):
    while "$ref" in schema:
        schema = results.schema()["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema and "properties" not in schema:
        objects = [_resolved(s) for s in schema["anyOf"] if _resolved(s).get("type") not in ("null", "boolean")]
        return objects[0] if len(objects) == 1 else {"anyOf": objects}
    return schema


class SchemaTests(unittest.TestCase):
    def test_the_schema_is_a_draft_2020_12_schema(self):
        jsonschema.Draft202012Validator.check_schema(results.schema())
        self.assertEqual(results.schema()["$schema"], "https://json-schema.org/draft/2020-12/schema")

    def test_a_real_default_runs_results_hold_to_the_schema_and_every_key_is_described(self):
        data = default_run()
        self.assertEqual(results.violations(data), [])
        self.assertEqual(undescribed(results.schema(), data), [])
        self.assertEqual(len(data["runs"]), 5)

    def test_what_the_lab_tests_build_holds_to_the_schema_and_every_key_is_described(self):
        for name, data in (
            ("closed loop", sample_results()),
            ("closed loop with its warm-ups", warmed()),
            ("payload shapes and networks", sample_conditions()),
            ("open loop", sample_open_results()),
            ("floor", sample_with_floor()),
            ("soak and mix", soak_and_mix()),
            ("knee", knee_results()),
        ):
            with self.subTest(name):
                data = json.loads(json.dumps(data))
                self.assertEqual(results.violations(data), [])
                self.assertEqual(undescribed(results.schema(), data), [])

    def test_every_key_the_check_reads_is_one_the_schema_describes(self):
        # Not keys: the check's options, and the open loop's kind of error (a key of a run's errors, by kind).
        others = {"--round-trips", "--knee-bracketed", "wrong_answer"}
        lab = os.path.dirname(results.__file__)
        self.assertEqual(keys_read(os.path.join(lab, "check_results.py")) - schema_keys() - others, set())
        self.assertIn("rps", keys_read(os.path.join(lab, "check_results.py")))

    def test_a_wrong_type_is_named_by_its_key_path(self):
        data = default_run()
        data["runs"][2]["latency_ms"]["p50"] = "fast"
        data["settings"]["n"] = 1000
        self.assertEqual(
            results.violations(data),
            ['runs[2].latency_ms.p50: "fast" is not of type number or null', "settings.n: 1000 is not of type array"],
        )

    def test_a_missing_key_is_named_by_its_key_path(self):
        data = default_run()
        del data["runs"][1]["rps"]
        del data["floor"]["runs"][0]["window"]
        del data["finished_at"]
        self.assertEqual(
            results.violations(data),
            ["finished_at: missing", "floor.runs[0].window: missing", "runs[1].rps: missing"],
        )

    def test_a_failed_run_needs_none_of_its_figures_but_says_why_in_a_string(self):
        data = default_run()
        data["runs"][0] = {"path": "rest/unary", "n": 1000, "concurrency": 100, "error": "ab exited with code 1"}
        data["floor"]["runs"][1] = dict(data["floor"]["runs"][1], error="the floor client died")
        del data["floor"]["runs"][1]["calls_per_second"]
        self.assertEqual(results.violations(data), [])
        data["runs"][0]["error"] = 1
        self.assertEqual(results.violations(data), ["runs[0].error: 1 is not of type string"])

    def test_what_the_lab_could_not_read_is_null_and_still_written(self):
        # lab.environment, cpu.load_average and a zero-length window say None; the lab must still write the run.
        data = default_run()
        data["environment"].update(cpu_model=None, git_commit=None, ab=None, jdk=None, jdk_detail=None)
        data["runs"][0]["load_average_before"] = None
        data["runs"][0]["cpu"]["machine"]["percent"] = None
        data["runs"][0]["latency_ms"]["p99"] = None
        self.assertEqual(results.violations(data), [])
        data["runs"][0]["rps"] = None
        self.assertEqual(results.violations(data), ["runs[0].rps: null is not of type number"])

    def test_the_writer_checks_the_document_as_json_reads_it_back(self):
        # cpu.load_average gives a tuple, which json writes as the array the schema asks for.
        data = default_run()
        data["runs"][0]["load_average_before"] = (3.2, 3.4, 4.1)
        with tempfile.TemporaryDirectory() as folder:
            results.write_json(folder, data)
            self.assertEqual([3.2, 3.4, 4.1], results.read_json(folder)["runs"][0]["load_average_before"])

    def test_the_writer_keeps_a_document_that_breaks_the_schema_and_says_so_first(self):
        # Minutes of measuring are never lost to a bookkeeping error: the file is written, the breach said first.
        with tempfile.TemporaryDirectory() as folder:
            broken = default_run()
            broken["runs"][0]["cpu"]["aggregator-service"]["seconds"] = None
            found = results.write_json(folder, broken)
            self.assertEqual(found, ["runs[0].cpu.aggregator-service.seconds: null is not of type number"])
            kept = results.read_json(folder)
            self.assertEqual(kept["runs"], broken["runs"])
            self.assertEqual(
                results.failures(kept),
                [
                    "%s (results.json):\n  runs[0].cpu.aggregator-service.seconds: null is not of type number"
                    % results.SCHEMA_BREACH
                ],
            )
            self.assertFalse(os.path.exists(os.path.join(folder, "results.json.part")))
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as errors:
                self.assertEqual(check_results.main([folder]), 1)
            self.assertIn("[check] FAIL: schema: runs[0].cpu.aggregator-service.seconds", errors.getvalue())
            # Mended and written again, the breach is no longer said.
            broken["runs"][0]["cpu"]["aggregator-service"]["seconds"] = 1.5
            self.assertEqual(results.write_json(folder, broken), [])
            self.assertEqual(results.failures(results.read_json(folder)), [])

    def test_the_check_fails_a_file_that_breaks_the_schema_naming_each_key(self):
        with tempfile.TemporaryDirectory() as folder:
            results.write_json(folder, default_run())
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(check_results.main([folder]), 0)
            broken = default_run()
            del broken["runs"][3]["latency_ms"]
            broken["runs"][4]["n"] = "1000"
            with open(os.path.join(folder, "results.json"), "w") as handle:
                json.dump(broken, handle)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as errors:
                self.assertEqual(check_results.main([folder]), 1)
            self.assertEqual(
                errors.getvalue().splitlines(),
                [
                    "[check] FAIL: schema: runs[3].latency_ms: missing",
                    '[check] FAIL: schema: runs[4].n: "1000" is not of type integer',
                ],
            )

    def test_a_missing_or_unreadable_file_is_a_results_error_naming_it(self):
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(ResultsError, "cannot read .*results.json: No such file or directory"):
                results.read_json(folder)
            with open(os.path.join(folder, "results.json"), "w") as handle:
                handle.write('{"runs": [')
            with self.assertRaisesRegex(ResultsError, "results.json is not JSON"):
                results.read_json(folder)
            with open(os.path.join(folder, "results.json"), "w") as handle:
                handle.write("[]")
            with self.assertRaisesRegex(ResultsError, "holds a list, not a results object"):
                results.read_json(folder)

    def test_the_fault_and_many_clients_runs_documents_hold_to_their_part_of_the_schema(self):
        for name, fixture in (("faults.json", FAULTS_RUN), ("clients.json", CLIENTS_RUN)):
            with self.subTest(name), open(fixture) as handle:
                data = json.load(handle)
                self.assertEqual(results.violations(data, name), [])
                described = {"$ref": results.DOCUMENTS[name]}
                self.assertEqual(undescribed(described, data), [])
                data["rows"][1]["path"] = None
                del data["passed"]
                self.assertEqual(
                    results.violations(data, name), ["passed: missing", "rows[1].path: null is not of type string"]
                )

    def test_the_writer_holds_faults_json_to_its_schema_too(self):
        with open(FAULTS_RUN) as handle:
            record = json.load(handle)
        with tempfile.TemporaryDirectory() as folder:
            self.assertEqual(results.write_json(folder, record, name="faults.json"), [])
            with open(os.path.join(folder, "faults.json")) as handle:
                self.assertEqual(json.load(handle), record)
            record["after"]["heap"]["used_bytes"] = "a lot"
            self.assertEqual(
                results.write_json(folder, record, name="faults.json"),
                ['after.heap.used_bytes: "a lot" is not of type integer'],
            )
            with open(os.path.join(folder, "faults.json")) as handle:
                self.assertIn(results.SCHEMA_BREACH, json.load(handle)["failures"][0]["what"])


if __name__ == "__main__":
    unittest.main()
