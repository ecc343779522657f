package io.github.squarelab.observation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A Prometheus text scrape, read for what the metrics contract fixes: which families exist with which type, which
 * series (tag sets) each has, how many histogram buckets, and the counts. Durations depend on the run, so
 * {@link #shape} replaces them with {@code <seconds>}; counts stay, as written.
 *
 * <p>Shared with the services' tests (this module's test jar), so that every pin reads a scrape the same way.
 */
public final class PrometheusScrape {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{.*})? (\\S+)$");
    private static final Pattern LE = Pattern.compile("([{,])le=\"[^\"]*\"");

    private final List<String> types = new ArrayList<>();
    /** Series (name and tags, as written) to their value, as written. */
    private final Map<String, String> samples = new LinkedHashMap<>();

    private PrometheusScrape(String text) {
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                types.add(line);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                Matcher sample = SAMPLE.matcher(line);
                if (!sample.matches()) {
                    throw new IllegalArgumentException("not a Prometheus sample: " + line);
                }
                String labels = sample.group(2) == null ? "" : sample.group(2);
                samples.put(sample.group(1) + labels, sample.group(3));
            }
        }
    }

    public static PrometheusScrape parse(String text) {
        return new PrometheusScrape(text);
    }

    /**
     * The families whose name starts with one of {@code prefixes}, one line per series, sorted: their {@code # TYPE}
     * lines; a histogram's buckets as one line without {@code le}, with the number of buckets; {@code _count},
     * {@code _gcount} and {@code _total} with their value; every other value (sums, maxima) as {@code <seconds>}.
     */
    public String shape(String... prefixes) {
        return lines(true, prefixes);
    }

    /** As {@link #shape}, without the values: which families and series there are, and how many buckets. */
    public String series(String... prefixes) {
        return lines(false, prefixes);
    }

    private String lines(boolean counts, String[] prefixes) {
        TreeMap<String, String> lines = new TreeMap<>();
        for (String type : types) {
            String family = type.split(" ")[2];
            if (matches(family, prefixes)) {
                lines.put(type, "");
            }
        }
        Map<String, Integer> buckets = new TreeMap<>();
        samples.forEach((series, value) -> {
            String name = name(series);
            if (!matches(name, prefixes)) {
                return;
            }
            if (name.endsWith("_bucket")) {
                buckets.merge(withoutLe(series), 1, Integer::sum);
            } else if (!counts) {
                lines.put(series, "");
            } else if (name.endsWith("_count") || name.endsWith("_gcount") || name.endsWith("_total")) {
                lines.put(series, " " + value);
            } else {
                lines.put(series, " <seconds>");
            }
        });
        buckets.forEach((series, count) -> lines.put(series, " [" + count + " buckets]"));
        return lines.entrySet().stream().map(e -> e.getKey() + e.getValue()).collect(Collectors.joining("\n"));
    }

    /** The value of one series, written as {@code name{tag="value",...}} with its tags in the scrape's order. */
    public double value(String series) {
        String value = samples.get(series);
        if (value == null) {
            throw new AssertionError("no series " + series + " in the scrape; its series of that name: "
                    + samples.keySet().stream()
                            .filter(s -> name(s).equals(name(series)))
                            .toList());
        }
        return Double.parseDouble(value);
    }

    /** The value of one series, 0 when the scrape does not have it (yet). */
    public double valueOrZero(String series) {
        String value = samples.get(series);
        return value == null ? 0 : Double.parseDouble(value);
    }

    /**
     * How far each series moved from {@code before} to this scrape, in {@code series}' order; a series a scrape
     * does not have counts as 0 there.
     */
    public Map<String, Double> movedSince(PrometheusScrape before, Iterable<String> series) {
        Map<String, Double> moved = new LinkedHashMap<>();
        series.forEach(name -> moved.put(name, valueOrZero(name) - before.valueOrZero(name)));
        return moved;
    }

    /**
     * Scrapes until every series has moved from {@code before} by at least its delta, or until {@code timeout} has
     * passed, and returns the last scrape. A service records a request or a call as it ends, which may be just after
     * the client has its answer; the caller then asserts the exact deltas on the scrape this returns.
     */
    public static PrometheusScrape awaitMoved(
            Supplier<PrometheusScrape> scrape, PrometheusScrape before, Map<String, Double> deltas, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        PrometheusScrape after = scrape.get();
        while (!hasMoved(before, after, deltas) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            after = scrape.get();
        }
        return after;
    }

    private static boolean hasMoved(PrometheusScrape before, PrometheusScrape after, Map<String, Double> deltas) {
        return after.movedSince(before, deltas.keySet()).entrySet().stream()
                .allMatch(moved -> moved.getValue() >= deltas.get(moved.getKey()));
    }

    /** Every family name the scrape declares, sorted. */
    public List<String> families() {
        return types.stream().map(type -> type.split(" ")[2]).sorted().toList();
    }

    private static String withoutLe(String series) {
        return LE.matcher(series)
                .replaceFirst("$1")
                .replace("{,", "{")
                .replace(",,", ",")
                .replace(",}", "}");
    }

    private static boolean matches(String name, String[] prefixes) {
        return Arrays.stream(prefixes).anyMatch(name::startsWith);
    }

    private static String name(String series) {
        int brace = series.indexOf('{');
        return brace < 0 ? series : series.substring(0, brace);
    }
}
