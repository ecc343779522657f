package io.github.squarelab.observation;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsProperties;
import org.springframework.boot.actuate.autoconfigure.metrics.PropertiesMeterFilter;
import org.springframework.boot.actuate.autoconfigure.metrics.ServiceLevelObjectiveBoundary;

/**
 * The same observations, through Micrometer's DefaultMeterObservationHandler in one registry and through
 * CachedMeterObservationHandler in another, configured alike: the two Prometheus scrapes must be the same text, every
 * name, tag, bucket, count and duration (both registries run on a clock the test moves, so durations are exact too).
 * Each test also checks a value of its own, so that two empty scrapes cannot pass.
 */
class CachedMeterObservationHandlerTests {

    private static final String RECEIVED =
            "rpc_server_received_total{application=\"lab\",method=\"Square\",status=\"UNKNOWN\"}";

    @Test
    void aStreamOfFiveMessagesCountsFiveEachWayUnderItsStartTagsAndIsTimedOnceUnderItsEndTags() {
        Scrapes scrapes = both(world -> {
            Observation stream = world.rpc("Square").start();
            for (int i = 0; i < 5; i++) {
                world.clock.add(Duration.ofMillis(3));
                stream.event(Observation.Event.of("received"));
                stream.event(Observation.Event.of("sent"));
            }
            stream.lowCardinalityKeyValue("status", "OK");
            stream.stop();
        });

        scrapes.areTheSame();
        PrometheusScrape cached = scrapes.cached();
        assertThat(cached.value(RECEIVED)).isEqualTo(5);
        assertThat(cached.value("rpc_server_sent_total{application=\"lab\",method=\"Square\",status=\"UNKNOWN\"}"))
                .isEqualTo(5);
        assertThat(cached.value(
                        "rpc_server_seconds_count{application=\"lab\",error=\"none\",method=\"Square\",status=\"OK\"}"))
                .isEqualTo(1);
        assertThat(cached.value(
                        "rpc_server_seconds_sum{application=\"lab\",error=\"none\",method=\"Square\",status=\"OK\"}"))
                .isEqualTo(0.015);
    }

    @Test
    void interleavedStreamsCountEachIntoItsOwnSeries() {
        Scrapes scrapes = both(world -> {
            Observation square = world.rpc("Square").start();
            Observation cube = world.rpc("Cube").start();
            for (int i = 0; i < 3; i++) {
                square.event(Observation.Event.of("received"));
                cube.event(Observation.Event.of("received"));
                cube.event(Observation.Event.of("received"));
            }
            square.stop();
            cube.stop();
        });

        scrapes.areTheSame();
        assertThat(scrapes.cached().value(RECEIVED)).isEqualTo(3);
        assertThat(scrapes.cached()
                        .value("rpc_server_received_total{application=\"lab\",method=\"Cube\",status=\"UNKNOWN\"}"))
                .isEqualTo(6);
    }

    @Test
    void callsEndingWithAndWithoutAnErrorAreTimedApartTaggedWithTheErrorsSimpleClassName() {
        Scrapes scrapes = both(world -> {
            world.rpc("Square").start().stop();
            Observation failed = world.rpc("Square").start();
            failed.error(new IllegalStateException("boom"));
            failed.stop();
            world.rpc("Square").start().stop();
        });

        scrapes.areTheSame();
        assertThat(scrapes.cached()
                        .value("rpc_server_seconds_count{application=\"lab\",error=\"none\",method=\"Square\","
                                + "status=\"UNKNOWN\"}"))
                .isEqualTo(2);
        assertThat(scrapes.cached()
                        .value("rpc_server_seconds_count{application=\"lab\",error=\"IllegalStateException\","
                                + "method=\"Square\",status=\"UNKNOWN\"}"))
                .isEqualTo(1);
    }

    @Test
    void aTagChangedOrRemovedBetweenEventsMovesTheNextEventsToTheSeriesOfTheNewTags() {
        Scrapes scrapes = both(world -> {
            Observation stream = world.rpc("Square").start();
            stream.event(Observation.Event.of("received"));
            stream.lowCardinalityKeyValue("status", "SLOW");
            stream.event(Observation.Event.of("received"));
            stream.event(Observation.Event.of("received"));
            stream.lowCardinalityKeyValue("status", "UNKNOWN");
            stream.event(Observation.Event.of("received"));
            stream.getContext().removeLowCardinalityKeyValue("status");
            stream.event(Observation.Event.of("received"));
            stream.stop();
        });

        scrapes.areTheSame();
        assertThat(scrapes.cached().value(RECEIVED)).isEqualTo(2);
        assertThat(scrapes.cached()
                        .value("rpc_server_received_total{application=\"lab\",method=\"Square\",status=\"SLOW\"}"))
                .isEqualTo(2);
    }

    @Test
    void anObservationInFlightIsActiveInItsLongTaskTimerUntilItStops() {
        World micrometers = new World(DefaultMeterObservationHandler::new);
        World cached = new World(registry -> new CachedMeterObservationHandler(registry, true));
        Observation[] inFlight = {
            micrometers.rpc("Square").start(), cached.rpc("Square").start()
        };
        micrometers.clock.add(Duration.ofSeconds(2));
        cached.clock.add(Duration.ofSeconds(2));

        new Scrapes(micrometers.scrape(), cached.scrape()).areTheSame();
        String active = "rpc_server_active_seconds_gcount{application=\"lab\",method=\"Square\",status=\"UNKNOWN\"}";
        assertThat(PrometheusScrape.parse(cached.scrape()).value(active)).isEqualTo(1);

        inFlight[0].stop();
        inFlight[1].stop();
        new Scrapes(micrometers.scrape(), cached.scrape()).areTheSame();
        assertThat(PrometheusScrape.parse(cached.scrape()).value(active)).isZero();
    }

    @Test
    void withLongTaskTimersOffThereIsNoActiveMeter() {
        Consumer<World> calls = world -> {
            Observation stream = world.rpc("Square").start();
            stream.event(Observation.Event.of("received"));
            stream.stop();
        };
        World micrometers = new World(registry -> new DefaultMeterObservationHandler(
                registry, DefaultMeterObservationHandler.IgnoredMeters.LONG_TASK_TIMER));
        World cached = new World(registry -> new CachedMeterObservationHandler(registry, false));
        calls.accept(micrometers);
        calls.accept(cached);

        new Scrapes(micrometers.scrape(), cached.scrape()).areTheSame();
        assertThat(cached.scrape()).doesNotContain("rpc_server_active").contains(RECEIVED + " 1.0");
    }

    /**
     * The registries carry Spring Boot's own property filter, as management.metrics.* configures it: a common tag, a
     * histogram with an objective of 50 ms among its buckets, and a denied name.
     */
    @Test
    void metricsPropertiesApplyAsTheyDoThroughTheRegistry() {
        Scrapes scrapes = both(world -> {
            for (int i = 1; i <= 4; i++) {
                Observation call = world.rpc("Square").start();
                world.clock.add(Duration.ofMillis(i * 40));
                call.stop();
            }
            Observation denied = Observation.createNotStarted("denied.call", world.observations)
                    .start();
            denied.event(Observation.Event.of("received"));
            denied.stop();
        });

        scrapes.areTheSame();
        String shape = scrapes.cached().shape("rpc_server_seconds", "denied");
        assertThat(shape)
                .contains("# TYPE rpc_server_seconds histogram")
                // Micrometer's default buckets for a timer and the objective.
                .contains("rpc_server_seconds_bucket{application=\"lab\",error=\"none\",method=\"Square\","
                        + "status=\"UNKNOWN\"} [70 buckets]")
                .doesNotContain("denied");
        assertThat(scrapes.cached()
                        .value("rpc_server_seconds_bucket{application=\"lab\",error=\"none\",method=\"Square\","
                                + "status=\"UNKNOWN\",le=\"0.05\"}"))
                .isEqualTo(1);
    }

    @Test
    void aCounterRemovedFromTheRegistryMidStreamIsRegisteredAgainForTheNextMessages() {
        Scrapes scrapes = both(world -> {
            Observation stream = world.rpc("Square").start();
            stream.event(Observation.Event.of("received"));
            stream.event(Observation.Event.of("received"));
            Counter counter = world.registry.get("rpc.server.received").counter();
            world.registry.remove(counter);
            stream.event(Observation.Event.of("received"));
            stream.stop();
        });

        scrapes.areTheSame();
        assertThat(scrapes.cached().value(RECEIVED)).isEqualTo(1);
    }

    /** Past the bound, meters come from the registry each time, as with Micrometer's handler: still exact. */
    @Test
    void tagSetsPastTheCacheBoundAreStillCountedExactly() {
        int methods = MeterCache.MAX_METERS;
        Scrapes scrapes = both(world -> {
            for (int round = 0; round < 2; round++) {
                for (int method = 0; method < methods; method++) {
                    // Not rpc.server: no histograms, which would make thousands of series bigger for nothing here.
                    Observation call = world.call("bulk", "m" + method).start();
                    call.event(Observation.Event.of("received"));
                    call.stop();
                }
            }
        });

        scrapes.areTheSame();
        for (int method : new int[] {0, methods / 2, methods - 1}) {
            assertThat(scrapes.cached()
                            .value("bulk_received_total{application=\"lab\",method=\"m" + method
                                    + "\",status=\"UNKNOWN\"}"))
                    .isEqualTo(2);
        }
    }

    @Test
    void anEventOutsideStartAndStopIsCountedAsWell() {
        Scrapes scrapes = both(world -> world.rpc("Square").event(Observation.Event.of("received")));

        scrapes.areTheSame();
        assertThat(scrapes.cached().value(RECEIVED)).isEqualTo(1);
    }

    /**
     * The one difference, documented in EventCounter: a key added after the first event of a name is not seen by the
     * next events of that name (Micrometer's handler would count them into a meter with one more tag key, which the
     * Prometheus registry does not export). No observation in the services adds keys between events.
     */
    @Test
    void aKeyAddedAfterTheFirstEventIsNotSeenByTheNextEventsOfThatName() {
        World cached = new World(registry -> new CachedMeterObservationHandler(registry, true));
        Observation stream = cached.rpc("Square").start();
        stream.event(Observation.Event.of("received"));
        stream.lowCardinalityKeyValue("peer", "a");
        stream.event(Observation.Event.of("received"));
        stream.event(Observation.Event.of("sent"));
        stream.stop();

        PrometheusScrape scrape = PrometheusScrape.parse(cached.scrape());
        assertThat(scrape.value(RECEIVED)).isEqualTo(2);
        assertThat(scrape.value(
                        "rpc_server_sent_total{application=\"lab\",method=\"Square\",peer=\"a\",status=\"UNKNOWN\"}"))
                .isEqualTo(1);
    }

    /** A gRPC stream receives on one thread while it may send on another: no message lost or counted twice. */
    @Test
    void eventsFromTwoThreadsOnOneStreamAreEachCountedOnce() throws Exception {
        World cached = new World(registry -> new CachedMeterObservationHandler(registry, true));
        Observation stream = cached.rpc("Square").start();
        int messages = 20_000;
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch go = new CountDownLatch(1);
            Future<?> receiving = threads.submit(() -> eventsAfter(go, stream, "received", messages));
            Future<?> sending = threads.submit(() -> eventsAfter(go, stream, "sent", messages));
            go.countDown();
            receiving.get(30, TimeUnit.SECONDS);
            sending.get(30, TimeUnit.SECONDS);
        } finally {
            threads.shutdownNow();
        }
        stream.stop();

        PrometheusScrape scrape = PrometheusScrape.parse(cached.scrape());
        assertThat(scrape.value(RECEIVED)).isEqualTo(messages);
        assertThat(scrape.value("rpc_server_sent_total{application=\"lab\",method=\"Square\",status=\"UNKNOWN\"}"))
                .isEqualTo(messages);
    }

    private static Void eventsAfter(CountDownLatch go, Observation stream, String event, int count)
            throws InterruptedException {
        go.await();
        Observation.Event each = Observation.Event.of(event);
        for (int i = 0; i < count; i++) {
            stream.event(each);
        }
        return null;
    }

    private static Scrapes both(Consumer<World> calls) {
        World micrometers = new World(DefaultMeterObservationHandler::new);
        World cached = new World(registry -> new CachedMeterObservationHandler(registry, true));
        calls.accept(micrometers);
        calls.accept(cached);
        return new Scrapes(micrometers.scrape(), cached.scrape());
    }

    /** The scrape of the registry behind Micrometer's handler, and of the one behind the cached handler. */
    private record Scrapes(String micrometersText, String cachedText) {

        void areTheSame() {
            assertThat(cachedText).isEqualTo(micrometersText);
        }

        PrometheusScrape cached() {
            return PrometheusScrape.parse(cachedText);
        }
    }

    /** A Prometheus registry as the services configure theirs, observed through one handler. */
    private static final class World {

        final MockClock clock = new MockClock();
        final PrometheusMeterRegistry registry =
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(), clock);
        final ObservationRegistry observations = ObservationRegistry.create();

        World(Function<PrometheusMeterRegistry, MeterObservationHandler<Observation.Context>> handler) {
            MetricsProperties properties = new MetricsProperties();
            properties.getTags().put("application", "lab");
            properties.getEnable().put("denied", false);
            properties.getDistribution().getPercentilesHistogram().put("rpc.server", true);
            properties.getDistribution().getSlo().put("rpc.server", new ServiceLevelObjectiveBoundary[] {
                ServiceLevelObjectiveBoundary.valueOf("50ms")
            });
            registry.config().meterFilter(new PropertiesMeterFilter(properties));
            observations.observationConfig().observationHandler(handler.apply(registry));
        }

        /** An RPC as gRPC's observation has it: its method, and a status that is UNKNOWN until the call ends. */
        Observation rpc(String method) {
            return call("rpc.server", method);
        }

        Observation call(String name, String method) {
            return Observation.createNotStarted(name, observations)
                    .lowCardinalityKeyValue("method", method)
                    .lowCardinalityKeyValue("status", "UNKNOWN");
        }

        String scrape() {
            return registry.scrape();
        }
    }
}
