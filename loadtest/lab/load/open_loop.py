"""The open loop (LOAD=open): Vegeta sends RATE requests a second for DURATION seconds, whether or not the earlier
ones were answered, and each latency counts from the moment its request was due, not from when it left.

A closed loop (ab) waits for an answer before it sends the next request, so a stalled service also stalls the load:
the requests that would have waited are never sent, and the stall shows as one slow request instead of many
(coordinated omission). An open loop keeps to its schedule, as real users arriving independently do; what is left
of coordinated omission, Vegeta itself falling behind its schedule, read_results corrects as wrk2 does.

Vegeta is a kept tool, pinned and installed by lab.tools; the latencies go into HdrHistograms, which keep every
latency at 3 significant digits, none sampled away.
"""

import base64
import binascii
import calendar
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from array import array
from typing import Callable, Dict, Iterable, Optional

from hdrh.histogram import HdrHistogram

from ..core.errors import LabError, VegetaOutputError
from ..host import placement
from ..host.tools import last_lines

# The histograms' range in µs: 1 µs to an hour, far above any -timeout the lab sets; 3 significant digits.
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_FIGURES = 3
# The latency summary of a run, each a percentile of the histogram (max is the 100th).
PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99_9", 99.9), ("max", 100.0))
LATENCY_KEYS = ("mean",) + tuple(name for name, _ in PERCENTILES)

# How often an attack asks its stop_when whether to end early.
STOP_POLL_S = 0.5
# How a transport error (no HTTP status: Vegeta's code 0) is counted, from Vegeta's error text, checked in order.
TIMEOUT_SIGNS = ("Client.Timeout exceeded", "context deadline exceeded", "timeout")
CONNECTION_SIGNS = re.compile(r"connection refused|connection reset|broken pipe|\bEOF\b")

# RFC 3339 with up to nanoseconds, as Go writes a time.Time in JSON: 2026-11-23T12:37:04.349344165Z (or +01:00).
_TIMESTAMP = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def run(
    vegeta: str,
    url: str,
    expected_body: str,
    rate: int,
    duration_s: float,
    timeout_s: int,
    raw_dir: str,
    slug: str,
    after_attack: Optional[Callable[[], None]] = None,
    minute_s: Optional[float] = None,
    stop_when: Optional[Callable[[], bool]] = None,
) -> Dict:
    """Sends `GET url` rate times a second for duration_s seconds and returns the run's record (read_results).

    Vegeta keeps connections alive (its default, -keepalive=true, over HTTP/1.1 on plain http), so a request reuses
    an idle connection, and opens another when none is idle. The attack ends once the last scheduled request was
    sent and every request in flight answered or reached timeout_s. raw/<slug>.txt gets `vegeta report`, for humans.
    It runs with subprocess.run, so its CPU lands in this process's RUSAGE_CHILDREN: lab.host.cpu reads that as the load
    generator's. So would the CPU of `vegeta report` and `vegeta encode`, which read the results afterwards: the
    caller's after_attack runs between the two, to read its counters over the attack alone. stop_when, asked every
    STOP_POLL_S, ends the attack early when it answers True (a service died: an hour's soak need not go on).
    """
    results_path = os.path.join(raw_dir, slug + ".gob")
    report_path = os.path.join(raw_dir, slug + ".txt")
    try:
        done = _attack(attack_command(vegeta, rate, duration_s, timeout_s, results_path), "GET %s\n" % url, stop_when)
        if after_attack:
            after_attack()
        if done.returncode != 0:
            _write(report_path, "--- vegeta attack stderr ---\n" + done.stderr)
            return _failed(
                rate, duration_s, "vegeta exited with code %d: %s" % (done.returncode, last_lines(done.stderr, 1)[0])
            )
        report = subprocess.run(
            [vegeta, "report", results_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        _write(
            report_path,
            report.stdout + ("\n--- vegeta attack stderr ---\n" + done.stderr if done.stderr.strip() else ""),
        )
        return _read_file(vegeta, results_path, expected_body, rate, duration_s, minute_s)
    finally:
        # The binary results hold every response's body: with large answers a sweep's add up to hundreds of MB, and
        # the record and raw/<slug>.txt keep what is read from them.
        if os.path.exists(results_path):
            os.remove(results_path)


def _attack(command, targets: str, stop_when: Optional[Callable[[], bool]]) -> subprocess.CompletedProcess:
    """Runs `vegeta attack`; interrupted (SIGINT, on which Vegeta stops sending and writes what it has) as soon as
    stop_when says so. Killed if the lab is interrupted while it waits, so that no Vegeta outlives the lab."""
    attack = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=placement.pin("load_generator"),
    )
    watcher = None
    if stop_when:
        watcher = threading.Thread(target=_interrupt_when, args=(attack, stop_when), daemon=True)
        watcher.start()
    try:
        stdout, stderr = attack.communicate(targets)
    except BaseException:
        attack.kill()
        attack.wait()
        raise
    if watcher:
        watcher.join()
    return subprocess.CompletedProcess(command, attack.returncode, stdout, stderr)


def _interrupt_when(attack: subprocess.Popen, stop_when: Callable[[], bool]) -> None:
    while attack.poll() is None:
        if stop_when():
            attack.send_signal(signal.SIGINT)
            return
        time.sleep(STOP_POLL_S)


def attack_command(vegeta: str, rate: int, duration_s: float, timeout_s: int, output: str):
    """The `vegeta attack` command line of one run; its target comes on stdin.

    It leaves -max-workers at Vegeta's default, unlimited: Vegeta starts another worker whenever a request is due
    and all are waiting for answers. A capped pool would wait for answers before sending, which is the closed loop's
    coordinated omission again.
    """
    return [
        vegeta,
        "attack",
        "-rate=%d/1s" % rate,
        "-duration=%gs" % duration_s,
        "-timeout=%ds" % timeout_s,
        "-output=" + output,
    ]


def read_results(
    lines: Iterable[str], expected_body: str, rate: int, duration_s: float, minute_s: Optional[float] = None
) -> Dict:
    """The record of a run from Vegeta's results as `vegeta encode --to json` writes them, one JSON object a line.

    The schedule: request seq was due at t0 + seq / rate, where t0 is the earliest on-time send, the smallest
    timestamp - seq / rate. Each request's lag (timestamp - due) is how late Vegeta sent it (it fell behind, e.g.
    starved of CPU, and then sends the overdue requests at once), and the corrected latency is lag + latency: what a
    user arriving on schedule would have waited. latency_uncorrected_ms keeps Vegeta's own figures beside them, to
    show what the correction changed.

    ok is a 200 with exactly the expected body. rps is ok / duration_s, the goodput: a path past its saturation
    answers fast 503s, which are not service. For the same reason the latencies are of ok responses only, so that a
    fast 503 or a fast wrong answer does not flatter them. failed counts transport errors, wrong answers and a 2xx
    other than 200; non2xx
    the HTTP responses that are not 2xx (shed 503s among them).
    """
    expected = expected_body.encode()
    interval_ns = 1e9 / rate
    errors: Dict[str, int] = {}
    sent = completed = checked = non2xx = 0
    first_ns = None
    earliest = latest = 0.0
    # Per ok response: its send time - seq / rate, counted from the first timestamp (its lag once t0, the smallest
    # of these, is known after the last line), and its latency. 16 bytes each, so that a long run at a high rate
    # fits; the bodies are never kept.
    ok_offsets = array("d")
    ok_latencies = array("q")
    minutes = Minutes(rate, duration_s, minute_s) if minute_s else None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        seq, code, sent_ns, latency_ns, error, body = _fields(line, number)
        if first_ns is None:
            first_ns = sent_ns
        offset = (sent_ns - first_ns) - seq * interval_ns
        earliest, latest = (offset, offset) if sent == 0 else (min(earliest, offset), max(latest, offset))
        sent += 1
        if code:
            completed += 1
            if not 200 <= code < 300:
                non2xx += 1
        if code == 200:
            checked += 1
        kind = classify(code, body, error, expected)
        if minutes:
            minutes.sent(seq, kind == "ok")
        if kind == "ok":
            ok_offsets.append(offset)
            ok_latencies.append(latency_ns)
        else:
            errors[kind] = errors.get(kind, 0) + 1

    corrected, uncorrected = Latencies(), Latencies()
    for offset, latency_ns in zip(ok_offsets, ok_latencies):
        corrected.record(offset - earliest + latency_ns)
        uncorrected.record(latency_ns)
    if minutes:
        for index, (offset, latency_ns) in enumerate(zip(ok_offsets, ok_latencies)):
            minutes.record(index, offset - earliest + latency_ns)
    ok = len(ok_latencies)
    # Neither transport errors nor non-2xx: timeouts, refusals, wrong answers and a 2xx that is not the 200 promised.
    other_2xx = sum(count for kind, count in errors.items() if kind.startswith("http_2"))
    transport = sum(errors.get(kind, 0) for kind in ("timeout", "connection", "other")) + other_2xx
    record = {
        "load": "open",
        "rate": rate,
        "duration_s": duration_s,
        "sent": sent,
        "completed": completed,
        "ok": ok,
        "errors": dict(sorted(errors.items())),
        "failed": transport + errors.get("wrong_answer", 0),
        "non2xx": non2xx,
        "rps": round(ok / duration_s, 2),
        "sent_rate": round(sent / duration_s, 2),
        "latency_ms": corrected.summary(),
        "latency_uncorrected_ms": uncorrected.summary(),
        "max_schedule_lag_ms": round((latest - earliest) / 1e6, 3) if sent else None,
        "verified": {"check": "exact body", "expected_bytes": len(expected), "checked": checked, "passed": ok},
    }
    if minutes:
        record["per_minute"] = minutes.summary()
    return record


class Minutes:
    """A soak's requests by the whole minute of the schedule each was due in (seq / rate): sent, ok, and the ok
    answers' corrected latencies, whose p99 is the minute's."""

    def __init__(self, rate: int, duration_s: float, minute_s: float) -> None:
        self.per_minute = rate * minute_s
        self.count = int(duration_s // minute_s)
        self.minute_s = minute_s
        self.sent_counts = [0] * self.count
        self.ok_counts = [0] * self.count
        # The minute of each ok answer, in the order read_results keeps their latencies (-1: past the last minute).
        self.ok_minutes = array("i")
        self.latencies = [Latencies() for _ in range(self.count)]

    def sent(self, seq: int, ok: bool) -> None:
        minute = int(seq // self.per_minute)
        minute = minute if minute < self.count else -1
        if minute >= 0:
            self.sent_counts[minute] += 1
            self.ok_counts[minute] += ok
        if ok:
            self.ok_minutes.append(minute)

    def record(self, ok_index: int, corrected_ns: float) -> None:
        minute = self.ok_minutes[ok_index]
        if minute >= 0:
            self.latencies[minute].record(corrected_ns)

    def summary(self) -> Dict:
        return {
            "minute_s": self.minute_s,
            "sent": self.sent_counts,
            "ok": self.ok_counts,
            "p99_ms": [latencies.summary()["p99"] for latencies in self.latencies],
        }


def classify(code: int, body: bytes, error: str, expected: bytes) -> str:
    """ok, wrong_answer (a 200 with another body), shed_503, http_<code>, or a transport error (code 0) by kind from
    Vegeta's error text: timeout, connection (refused, reset, EOF, broken pipe) or other."""
    if code == 200:
        return "ok" if body == expected else "wrong_answer"
    if code == 503:
        return "shed_503"
    if code:
        return "http_%d" % code
    if any(sign in error for sign in TIMEOUT_SIGNS):
        return "timeout"
    return "connection" if CONNECTION_SIGNS.search(error) else "other"


class Latencies:
    """An HdrHistogram of latencies in µs (1 µs to an hour, 3 significant digits), and the exact sum of them."""

    def __init__(self):
        self.histogram = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
        self.sum_us = 0

    def record(self, nanoseconds: float) -> None:
        # Held within the histogram's range: it silently drops a value outside it.
        micros = min(max(int(round(nanoseconds / 1000)), 0), HIGHEST_US)
        self.histogram.record_value(micros)
        self.sum_us += micros

    def summary(self) -> Dict[str, Optional[float]]:
        """Mean and percentiles in ms (3 decimals); None for each when there is no latency.

        The percentiles are the histogram's (the highest value of the 3-significant-digit bucket they fall in); the
        mean is the exact one, from the sum, as ab's is.
        """
        count = self.histogram.get_total_count()
        if not count:
            return dict.fromkeys(LATENCY_KEYS)
        summary = {"mean": round(self.sum_us / count / 1000, 3)}
        for name, percentile in PERCENTILES:
            summary[name] = round(self.histogram.get_value_at_percentile(percentile) / 1000, 3)
        return summary


def timestamp_ns(text: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time as Go writes it; Python's datetime keeps only µs."""
    match = _TIMESTAMP.match(text)
    if not match:
        raise VegetaOutputError("not an RFC 3339 timestamp: %r" % text)
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7) or "", match.group(8)
    offset_s = 0
    if zone != "Z":
        offset_s = (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) - offset_s
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0"))


def _fields(line: str, number: int):
    """(seq, code, timestamp in ns, latency in ns, error text, body bytes) of one result line."""
    try:
        result = json.loads(line)
        body = result.get("body")
        return (
            int(result["seq"]),
            int(result["code"]),
            timestamp_ns(result["timestamp"]),
            int(result["latency"]),
            result.get("error") or "",
            base64.b64decode(body, validate=True) if body else b"",
        )
    except (ValueError, KeyError, TypeError, binascii.Error) as error:
        raise VegetaOutputError("result %d: %s" % (number, error)) from None


def _read_file(
    vegeta: str, results_path: str, expected_body: str, rate: int, duration_s: float, minute_s: Optional[float] = None
) -> Dict:
    """read_results on `vegeta encode --to json` of a results file, read a line at a time: the lines carry the
    bodies, which can add up to more than the lab should hold at once."""
    with tempfile.TemporaryFile("w+") as stderr:
        encode = subprocess.Popen(
            [vegeta, "encode", "--to", "json", results_path], stdout=subprocess.PIPE, stderr=stderr, text=True
        )
        lines = encode.stdout
        if lines is None:
            raise LabError("vegeta encode was started without its output pipe")
        try:
            record = read_results(lines, expected_body, rate, duration_s, minute_s)
        except BaseException as error:
            # Nothing reads its output any more, which would block it for ever.
            encode.kill()
            if not isinstance(error, VegetaOutputError):
                raise
            return _failed(rate, duration_s, "cannot read Vegeta's results: %s" % error)
        finally:
            lines.close()
            encode.wait()
        if encode.returncode != 0:
            stderr.seek(0)
            return _failed(
                rate,
                duration_s,
                "vegeta encode exited with code %d: %s" % (encode.returncode, last_lines(stderr.read(), 1)[0]),
            )
    return record


def _failed(rate: int, duration_s: float, error: str) -> Dict:
    return {"load": "open", "rate": rate, "duration_s": duration_s, "error": error}


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)
