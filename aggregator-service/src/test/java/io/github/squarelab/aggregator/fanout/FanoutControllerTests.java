package io.github.squarelab.aggregator.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.admission.AdmissionBudget;
import io.github.squarelab.aggregator.admission.DeadlineAdmission;
import io.github.squarelab.aggregator.admission.RequestLimit;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.payload.Shape;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.autoconfigure.web.servlet.WebMvcTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;
import reactor.core.publisher.Mono;

/** The HTTP contract of the five paths, with the real fan-out and scripted clients behind it. */
@WebMvcTest(
        value = FanoutController.class,
        properties = {
            "aggregator.in-flight=4",
            "aggregator.deadline=2s",
            "aggregator.max-n=100000",
            "aggregator.admission.retry-after=1500ms",
            "aggregator.admission.max-requests=3"
        })
@Import({FanoutService.class, FanoutMetrics.class, FanoutControllerTests.Clients.class})
class FanoutControllerTests {

    /** The deadline admission's clock: it moves only when a test moves it. */
    private static final AtomicLong CLOCK = new AtomicLong();

    @Autowired
    private MockMvc mvc;

    @Autowired
    private ScriptedClients.Unary restClient;

    @Autowired
    private ScriptedClients.Unary grpcUnaryClient;

    @Autowired
    private ScriptedClients.Stream streamClient;

    @Autowired
    private ScriptedClients.Unary restH2cClient;

    @Autowired
    private ScriptedClients.Stream pingPongClient;

    @Autowired
    private MeterRegistry registry;

    @Autowired
    private AdmissionBudget admission;

    @Autowired
    private DeadlineAdmission deadlineAdmission;

    @Autowired
    private RequestLimit requestLimit;

    @BeforeEach
    void resetClients() {
        restClient.reset();
        grpcUnaryClient.reset();
        streamClient.reset();
        restH2cClient.reset();
        pingPongClient.reset();
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"})
    void answersTheSquaresInOrderAsCompactJson(String path) throws Exception {
        get("/" + path + "/3")
                .andExpect(status().isOk())
                .andExpect(content().contentType(MediaType.APPLICATION_JSON))
                .andExpect(content().string("[{\"1\":1},{\"2\":4},{\"3\":9}]"));
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, small",
        "rest/unary, wide",
        "rest/h2c, deep",
        "rest/h2c, collection",
        "grpc/unary, collection",
        "grpc/unary, deep",
        "grpc/pingpong, wide",
        "grpc/pingpong, small",
        "grpc/stream, collection",
        "grpc/stream, deep"
    })
    void eachPathPassesThePayloadShapeToItsTransportAndAnswersTheSameSquares(String path, String shape)
            throws Exception {
        get("/" + path + "/3?payload=" + shape)
                .andExpect(status().isOk())
                .andExpect(content().contentType(MediaType.APPLICATION_JSON))
                .andExpect(content().string("[{\"1\":1},{\"2\":4},{\"3\":9}]"));

        assertThat(shapesSeenBy(path)).containsExactly(Shape.parse(shape));
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"})
    void withoutAPayloadParameterEveryCallIsSmall(String path) throws Exception {
        get("/" + path + "/3").andExpect(status().isOk());

        assertThat(shapesSeenBy(path)).containsExactly(Shape.SMALL);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "rest/unary/3?payload=huge              | huge",
                "rest/h2c/3?payload=                    | ''",
                "grpc/unary/3?payload=Wide              | Wide",
                "grpc/pingpong/3?payload=small,wide     | small,wide",
                "grpc/stream/3?payload=deep&payload=wide | deep,wide",
                "grpc/stream/0?payload=SMALL             | SMALL",
            })
    void anUnknownPayloadIsABadRequestProblemListingTheShapes(String uri, String got) throws Exception {
        String path = uri.substring(0, uri.indexOf('?'));
        get("/" + uri)
                .andExpect(status().isBadRequest())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"payload must be one of small, wide, deep, collection; got '" + got
                                + "'\",\"instance\":\"/" + path + "\"}"));

        assertThat(restClient.calls.get()
                        + grpcUnaryClient.calls.get()
                        + streamClient.streams.get()
                        + restH2cClient.calls.get()
                        + pingPongClient.streams.get())
                .isZero();
    }

    @Test
    void eachPathUsesItsOwnTransportOnly() throws Exception {
        get("/rest/unary/5").andExpect(status().isOk());
        get("/grpc/unary/6").andExpect(status().isOk());
        get("/grpc/stream/7").andExpect(status().isOk());
        get("/rest/h2c/8").andExpect(status().isOk());
        get("/grpc/pingpong/9").andExpect(status().isOk());

        assertThat(restClient.calls).hasValue(5);
        assertThat(grpcUnaryClient.calls).hasValue(6);
        assertThat(streamClient.streams).hasValue(1);
        assertThat(restH2cClient.calls).hasValue(8);
        assertThat(pingPongClient.streams).hasValue(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"})
    void zeroSquaresIsAnEmptyArrayWithoutCallingAnyone(String path) throws Exception {
        get("/" + path + "/0").andExpect(status().isOk()).andExpect(content().string("[]"));

        assertThat(restClient.calls.get()
                        + grpcUnaryClient.calls.get()
                        + streamClient.streams.get()
                        + restH2cClient.calls.get()
                        + pingPongClient.streams.get())
                .isZero();
    }

    @Test
    void keepsAtMostTheInFlightWindowOfCallsAndAnswersInOrderWhateverOrderTheyComeBack() throws Exception {
        // Later numbers answer sooner, so answers come back out of order.
        restClient.answer = number -> ScriptedClients.correct(number).delayElement(Duration.ofMillis(40 - number));

        MvcResult result = get("/rest/unary/40").andExpect(status().isOk()).andReturn();

        assertThat(restClient.mostInFlight).hasValue(4);
        assertThat(result.getResponse().getContentAsString())
                .startsWith("[{\"1\":1},{\"2\":4},{\"3\":9},{\"4\":16},{\"5\":25},")
                .endsWith(",{\"39\":1521},{\"40\":1600}]");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "abc          | n must be a non-negative integer, got 'abc'",
                "-1           | n must be a non-negative integer, got '-1'",
                "1.5          | n must be a non-negative integer, got '1.5'",
                "99999999999  | n must be at most 100000 (aggregator.max-n), got 99999999999",
                "100001       | n must be at most 100000 (aggregator.max-n), got 100001",
            })
    void badCountsAreBadRequestProblems(String n, String detail) throws Exception {
        for (String path : new String[] {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"}) {
            get("/" + path + "/" + n)
                    .andExpect(status().isBadRequest())
                    .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.type").value("about:blank"))
                    .andExpect(jsonPath("$.title").value("Bad Request"))
                    .andExpect(jsonPath("$.status").value(400))
                    .andExpect(jsonPath("$.detail").value(detail));
        }
    }

    @Test
    void unknownPathIsANotFoundProblem() throws Exception {
        get("/soap/unary/3")
                .andExpect(status().isNotFound())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.status").value(404))
                .andExpect(jsonPath("$.detail").value("No endpoint GET /soap/unary/3."));
    }

    @ParameterizedTest
    @CsvSource({"UNAVAILABLE, 503, Service Unavailable", "BAD_ANSWER, 502, Bad Gateway", "TIMEOUT, 504, Gateway Timeout"
    })
    void downstreamFailuresBecomeGatewayProblems(Kind kind, int status, String title) throws Exception {
        DownstreamException failure = new DownstreamException(kind, "what the client said about " + kind);
        restClient.answer = number -> number == 3 ? Mono.error(failure) : ScriptedClients.correct(number);
        grpcUnaryClient.answer = restClient.answer;
        restH2cClient.answer = restClient.answer;
        streamClient.failure = Mono.error(failure);
        pingPongClient.failure = Mono.error(failure);

        for (String path : new String[] {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"}) {
            get("/" + path + "/10")
                    .andExpect(status().is(status))
                    .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.title").value(title))
                    .andExpect(jsonPath("$.status").value(status))
                    .andExpect(jsonPath("$.detail").value("what the client said about " + kind));
        }
    }

    @Test
    void callsThatFailTogetherAnswerWithTheFirstFailureNotAServerError() throws Exception {
        // What flatMapSequential hands on when two calls fail at the same moment on different event loops.
        restClient.answer = number -> number == 2
                ? Mono.error(reactor.core.Exceptions.multiple(
                        new DownstreamException(Kind.UNAVAILABLE, "the first replica went away"),
                        new DownstreamException(Kind.UNAVAILABLE, "so did the second")))
                : ScriptedClients.correct(number);

        get("/rest/unary/5")
                .andExpect(status().isServiceUnavailable())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.detail").value("the first replica went away"));
    }

    @Test
    void noCompleteAnswerWithinTheDeadlineIsAGatewayTimeoutProblem() throws Exception {
        grpcUnaryClient.answer = number -> number == 2 ? Mono.never() : ScriptedClients.correct(number);

        long start = System.nanoTime();
        get("/grpc/unary/5")
                .andExpect(status().isGatewayTimeout())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.detail")
                        .value("no complete answer from the square service within 2000 ms (aggregator.deadline)"));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(6));
        assertThat(grpcUnaryClient.inFlight)
                .as("the call still waiting is cancelled")
                .hasValue(0);
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, rest_unary",
        "rest/h2c, rest_h2c",
        "grpc/unary, grpc_unary",
        "grpc/pingpong, grpc_pingpong",
        "grpc/stream, grpc_stream"
    })
    void aRequestBeyondTheMostRequestsInProgressIsShedBeforeItStarts(String path, String transport) throws Exception {
        double shed = registry.get("aggregator.admission.shed")
                .tag("transport", transport)
                .counter()
                .count();
        for (int i = 0; i < 3; i++) {
            assertThat(requestLimit.tryAcquire()).isTrue();
        }
        try {
            get("/" + path + "/5")
                    .andExpect(status().isServiceUnavailable())
                    .andExpect(header().string("Retry-After", "2"))
                    .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.status").value(503))
                    .andExpect(jsonPath("$.detail")
                            .value("the aggregator is busy: 3 requests are in progress, its most at once"
                                    + " (aggregator.admission.max-requests); retry later"))
                    .andExpect(jsonPath("$.type").value("about:blank"))
                    .andExpect(jsonPath("$.title").value("Service Unavailable"))
                    .andExpect(jsonPath("$.instance").value("/" + path + "/5"));
            assertThat(restClient.calls.get() + restH2cClient.calls.get() + grpcUnaryClient.calls.get())
                    .as("no downstream call")
                    .isZero();
            assertThat(streamClient.streams.get() + pingPongClient.streams.get())
                    .as("no stream")
                    .isZero();
            assertThat(registry.get("aggregator.admission.shed")
                            .tag("transport", transport)
                            .counter()
                            .count())
                    .isEqualTo(shed + 1);
        } finally {
            for (int i = 0; i < 3; i++) {
                requestLimit.release();
            }
        }
        get("/" + path + "/5").andExpect(status().isOk());
        assertThat(registry.get("aggregator.admission.requests").gauge().value())
                .isZero();
    }

    @Test
    void anAnsweredRequestHoldsItsPlaceUntilItsAnswerIsWritten() throws Exception {
        MvcResult started = mvc.perform(
                        org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get("/rest/unary/3"))
                .andReturn();
        assertThat(started.getRequest().isAsyncStarted()).isTrue();
        started.getAsyncResult(2000);

        assertThat(registry.get("aggregator.admission.requests").gauge().value())
                .as("the fan-out is over, but its answer waits for a thread to write it")
                .isEqualTo(1);
        mvc.perform(asyncDispatch(started)).andExpect(status().isOk());
        assertThat(registry.get("aggregator.admission.requests").gauge().value())
                .isZero();
        assertThat(registry.get("aggregator.admission.max.requests").gauge().value())
                .isEqualTo(3);
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, rest_unary",
        "rest/h2c, rest_h2c",
        "grpc/unary, grpc_unary",
        "grpc/pingpong, grpc_pingpong",
        "grpc/stream, grpc_stream"
    })
    void aRequestThatDoesNotFitTheAdmissionBudgetIsShedAtOnceWithRetryAfter(String path, String transport)
            throws Exception {
        double shed = registry.get("aggregator.admission.shed")
                .tag("transport", transport)
                .counter()
                .count();
        assertThat(admission.tryAdmit(900)).isTrue();
        try {
            get("/" + path + "/101")
                    .andExpect(status().isServiceUnavailable())
                    .andExpect(header().string("Retry-After", "2"))
                    .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.title").value("Service Unavailable"))
                    .andExpect(jsonPath("$.status").value(503))
                    .andExpect(jsonPath("$.detail")
                            .value("the aggregator is busy: 101 more squares do not fit its budget"
                                    + " of 1000 squares in flight (aggregator.admission.max-squares); retry later"));
            get("/" + path + "/100").andExpect(status().isOk());
        } finally {
            admission.release(900);
        }
        assertThat(restClient.calls.get() + grpcUnaryClient.calls.get()).isIn(0, 100);
        assertThat(registry.get("aggregator.admission.shed")
                        .tag("transport", transport)
                        .counter()
                        .count())
                .isEqualTo(shed + 1);
        assertThat(registry.get("aggregator.admission.squares").gauge().value()).isZero();
        get("/" + path + "/1000").andExpect(status().isOk());
    }

    /** One request of n squares on the lane, all answered over the given busy time. */
    private static void answerOneRequest(DeadlineAdmission.Lane lane, int n, Duration busy) {
        DeadlineAdmission.Lane.Ticket ticket = lane.admit(n);
        for (int i = 0; i < n; i++) {
            ticket.answered();
        }
        CLOCK.addAndGet(busy.toNanos());
        ticket.close();
    }

    /** The path's measured rate stays with the context, which later tests must not inherit. */
    @Test
    @DirtiesContext
    void aRequestItsPathCannotBeExpectedToAnswerWithinTheDeadlineIsShedAtOnceWithRetryAfter() throws Exception {
        double shed = registry.get("aggregator.admission.shed")
                .tag("transport", "grpc_unary")
                .counter()
                .count();
        DeadlineAdmission.Lane lane = deadlineAdmission.lane("grpc_unary");
        // The path's warm-up, after which its rate judges it: then two seconds of 500 squares with one request open,
        // which a second request open doubles.
        DeadlineAdmission.WarmUp warmUp = DeadlineAdmission.WarmUp.DEFAULT;
        answerOneRequest(lane, (int) warmUp.squares(), warmUp.busy());
        answerOneRequest(lane, 500, Duration.ofSeconds(1));
        answerOneRequest(lane, 500, Duration.ofSeconds(1));
        DeadlineAdmission.Lane.Ticket held = lane.admit(950);
        try {
            get("/grpc/unary/101")
                    .andExpect(status().isServiceUnavailable())
                    .andExpect(header().string("Retry-After", "2"))
                    .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.status").value(503))
                    .andExpect(jsonPath("$.detail")
                            .value("the aggregator is busy: grpc/unary would take about 1.1 s for 101 more squares at"
                                    + " its recent 1000 squares/s, more than 1000 ms (aggregator.admission"
                                    + ".deadline-share 0.5 of aggregator.deadline 2000 ms); retry later"));
            assertThat(grpcUnaryClient.calls).as("no call for a shed request").hasValue(0);
            assertThat(registry.get("aggregator.admission.squares").gauge().value())
                    .as("the budget it took is given back")
                    .isZero();
            get("/grpc/unary/50").andExpect(status().isOk());
            get("/grpc/stream/5000").andExpect(status().isOk());
        } finally {
            held.close();
        }
        assertThat(grpcUnaryClient.calls).hasValue(50);
        assertThat(registry.get("aggregator.admission.shed")
                        .tag("transport", "grpc_unary")
                        .counter()
                        .count())
                .isEqualTo(shed + 1);
        assertThat(registry.get("aggregator.admission.deadline.shed")
                        .tag("transport", "grpc_unary")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("aggregator.admission.deadline.squares")
                        .tag("transport", "grpc_unary")
                        .gauge()
                        .value())
                .isZero();
    }

    @Test
    void aRequestLargerThanTheWholeBudgetRunsWhenNothingElseIsAdmitted() throws Exception {
        get("/grpc/unary/1500").andExpect(status().isOk());

        assertThat(grpcUnaryClient.calls).hasValue(1500);
    }

    @Test
    void countsRequestsAndDownstreamCallsPerTransportAndOutcome() throws Exception {
        double successes = fanoutCount("grpc_unary", "success");
        double calls = downstreamCalls("grpc_unary", "success");
        double errors = fanoutCount("rest_unary", "error");
        double errorCalls = downstreamCalls("rest_unary", "error");

        get("/grpc/unary/3").andExpect(status().isOk());
        get("/grpc/unary/4").andExpect(status().isOk());
        restClient.answer = number -> Mono.error(new DownstreamException(Kind.UNAVAILABLE, "down"));
        get("/rest/unary/5").andExpect(status().isServiceUnavailable());

        assertThat(fanoutCount("grpc_unary", "success")).isEqualTo(successes + 2);
        assertThat(downstreamCalls("grpc_unary", "success")).isEqualTo(calls + 7);
        assertThat(fanoutCount("rest_unary", "error")).isEqualTo(errors + 1);
        assertThat(downstreamCalls("rest_unary", "error")).isGreaterThan(errorCalls);
        assertThat(registry.get("aggregator.downstream.latency")
                        .tags("transport", "grpc_unary", "outcome", "success")
                        .timer()
                        .count())
                .isGreaterThanOrEqualTo(7);
        assertThat(registry.get("aggregator.downstream.inflight")
                        .tag("transport", "rest_unary")
                        .gauge()
                        .value())
                .isZero();
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, rest_unary",
        "rest/h2c, rest_h2c",
        "grpc/unary, grpc_unary",
        "grpc/pingpong, grpc_pingpong",
        "grpc/stream, grpc_stream"
    })
    void eachPathCountsItsRequestAndCallsUnderItsOwnTransportOnly(String path, String transport) throws Exception {
        Map<String, double[]> before = new HashMap<>();
        for (Transport each : Transport.values()) {
            before.put(
                    each.tag(),
                    new double[] {fanoutCount(each.tag(), "success"), downstreamCalls(each.tag(), "success")});
        }

        get("/" + path + "/4").andExpect(status().isOk());

        for (Transport each : Transport.values()) {
            boolean used = each.tag().equals(transport);
            assertThat(fanoutCount(each.tag(), "success"))
                    .as("requests of " + each.tag())
                    .isEqualTo(before.get(each.tag())[0] + (used ? 1 : 0));
            assertThat(downstreamCalls(each.tag(), "success"))
                    .as("downstream calls of " + each.tag())
                    .isEqualTo(before.get(each.tag())[1] + (used ? 4 : 0));
        }
    }

    @ParameterizedTest
    @CsvSource({"grpc/stream, grpc_stream", "grpc/pingpong, grpc_pingpong"})
    void streamMessagesAreCountedBothWays(String path, String transport) throws Exception {
        double sent = registry.get("aggregator.stream.messages")
                .tag("direction", "sent")
                .counter()
                .count();
        double received = registry.get("aggregator.stream.messages")
                .tag("direction", "received")
                .counter()
                .count();

        double calls = downstreamCalls(transport, "success");

        get("/" + path + "/6").andExpect(status().isOk());

        assertThat(registry.get("aggregator.stream.messages")
                        .tag("direction", "sent")
                        .counter()
                        .count())
                .isEqualTo(sent + 6);
        assertThat(registry.get("aggregator.stream.messages")
                        .tag("direction", "received")
                        .counter()
                        .count())
                .isEqualTo(received + 6);
        assertThat(downstreamCalls(transport, "success")).isEqualTo(calls + 6);
    }

    private java.util.Set<Shape> shapesSeenBy(String path) {
        return switch (path) {
            case "rest/unary" -> restClient.shapes;
            case "rest/h2c" -> restH2cClient.shapes;
            case "grpc/unary" -> grpcUnaryClient.shapes;
            case "grpc/pingpong" -> pingPongClient.shapes;
            case "grpc/stream" -> streamClient.shapes;
            default -> throw new IllegalArgumentException(path);
        };
    }

    private double fanoutCount(String transport, String outcome) {
        return registry.get("aggregator.fanout")
                .tags("transport", transport, "outcome", outcome)
                .timer()
                .count();
    }

    private double downstreamCalls(String transport, String outcome) {
        return registry.get("aggregator.downstream.calls")
                .tags("transport", transport, "outcome", outcome)
                .counter()
                .count();
    }

    /** Performs a GET, and for the fan-out paths (which answer asynchronously) waits for the answer. */
    private ResultActions get(String uri) throws Exception {
        ResultActions actions =
                mvc.perform(org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get(uri));
        MvcResult result = actions.andReturn();
        return result.getRequest().isAsyncStarted() ? mvc.perform(asyncDispatch(result)) : actions;
    }

    /** Slices skip @ConfigurationPropertiesScan, so the properties are enabled here. */
    @TestConfiguration
    @EnableConfigurationProperties(AggregatorProperties.class)
    static class Clients {

        @Bean
        ScriptedClients.Unary restClient() {
            return new ScriptedClients.Unary(Transport.REST_UNARY);
        }

        @Bean
        ScriptedClients.Unary grpcUnaryClient() {
            return new ScriptedClients.Unary(Transport.GRPC_UNARY);
        }

        @Bean
        ScriptedClients.Stream streamClient() {
            return new ScriptedClients.Stream(Transport.GRPC_STREAM);
        }

        @Bean
        ScriptedClients.Unary restH2cClient() {
            return new ScriptedClients.Unary(Transport.REST_H2C);
        }

        @Bean
        ScriptedClients.Stream pingPongClient() {
            return new ScriptedClients.Stream(Transport.GRPC_PINGPONG);
        }

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        AdmissionBudget admissionBudget(MeterRegistry registry) {
            return new AdmissionBudget(1000, registry);
        }

        @Bean
        DeadlineAdmission deadlineAdmission(AggregatorProperties properties, MeterRegistry registry) {
            return DeadlineAdmission.from(properties, new DeadlineAdmission.Clocks(CLOCK::get, () -> 0), registry);
        }
    }
}
