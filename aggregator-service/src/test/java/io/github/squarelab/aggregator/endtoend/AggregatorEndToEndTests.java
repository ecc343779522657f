package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.DynamicMessage;
import io.github.squarelab.aggregator.TestMetricsExport;
import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The aggregator on a real port, in front of the real square services running from their jars on free
 * ports: every path end to end over real HTTP/1.1 and HTTP/2, and what happens when a square service
 * stops, crashes, hangs or comes back.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@TestMetricsExport
class AggregatorEndToEndTests {

    /** Long enough that a busy machine never mistakes slowness for a hang; 503s must come in well under it. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(8);

    private static final String[] PATHS = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"};

    private static ServiceProcess rest;
    private static ServiceProcess grpc;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @LocalServerPort
    private int port;

    @BeforeAll
    static void startSquareServices() throws Exception {
        rest = ServiceProcess.rest();
        grpc = ServiceProcess.grpc();
        ServiceProcess.startAll(rest, grpc);
    }

    @AfterAll
    static void stopSquareServices() throws Exception {
        rest.close();
        grpc.close();
    }

    @DynamicPropertySource
    static void pointAtSquareServices(DynamicPropertyRegistry registry) {
        registry.add("aggregator.rest.base-url", () -> rest.baseUrl());
        registry.add("aggregator.grpc.target", () -> grpc.grpcTarget());
        registry.add("aggregator.call-deadline", () -> CALL_DEADLINE.toMillis() + "ms");
        // n = 100000 must finish even while the machine is busy with other builds.
        registry.add("aggregator.deadline", () -> "120s");
    }

    /** Whatever a test did to them, the next test finds both services up, and the aggregator using them. */
    @AfterEach
    void restoreSquareServices() throws Exception {
        rest.thaw();
        grpc.thaw();
        ServiceProcess.startAll(rest, grpc);
        awaitEveryPathAnswering();
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"})
    void answersTheContractOverTheRealTransports(String path) throws Exception {
        HttpResponse<String> ten = get(path + "/10");
        assertThat(ten.statusCode()).isEqualTo(200);
        assertThat(ten.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(ten.body())
                .isEqualTo(IntStream.rangeClosed(1, 10)
                        .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                        .collect(Collectors.joining(",", "[", "]")));

        assertThat(get(path + "/0").body()).isEqualTo("[]");
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, wide", "rest/unary, deep", "rest/unary, collection",
        "rest/h2c, wide", "rest/h2c, deep", "rest/h2c, collection",
        "grpc/unary, wide", "grpc/unary, deep", "grpc/unary, collection",
        "grpc/pingpong, wide", "grpc/pingpong, deep", "grpc/pingpong, collection",
        "grpc/stream, wide", "grpc/stream, deep", "grpc/stream, collection"
    })
    void everyPayloadShapeAnswersTheExactSquaresOverTheRealTransports(String path, String shape) throws Exception {
        HttpResponse<String> fifty = get(path + "/50?payload=" + shape);

        assertThat(fifty.statusCode()).as(fifty.body()).isEqualTo(200);
        assertThat(fifty.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(fifty.body())
                .isEqualTo(IntStream.rangeClosed(1, 50)
                        .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                        .collect(Collectors.joining(",", "[", "]")));
        assertThat(get(path + "/0?payload=" + shape).body()).isEqualTo("[]");
    }

    @Test
    void theRestSquareServiceGetsTheArticlesGetForSmallAndAPostForEveryOtherShape() throws Exception {
        double gets = restSquareRequests("GET");
        double posts = restSquareRequests("POST");

        assertThat(get("rest/unary/20").statusCode()).isEqualTo(200);
        assertThat(get("rest/h2c/20?payload=small").statusCode()).isEqualTo(200);
        awaitRestSquareRequests("GET", gets + 40);
        assertThat(restSquareRequests("POST")).isEqualTo(posts);

        assertThat(get("rest/unary/20?payload=collection").statusCode()).isEqualTo(200);
        assertThat(get("rest/h2c/20?payload=wide").statusCode()).isEqualTo(200);
        awaitRestSquareRequests("POST", posts + 40);
        assertThat(restSquareRequests("GET")).isEqualTo(gets + 40);
    }

    @Test
    void anUnknownPayloadIsABadRequestProblemOnEveryPath() throws Exception {
        for (String path : PATHS) {
            for (String payload : new String[] {"huge", "", "Deep"}) {
                HttpResponse<String> response = get(path + "/10?payload=" + payload);
                assertThat(response.statusCode()).isEqualTo(400);
                assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
                assertThat(json.readTree(response.body()).get("detail").asText())
                        .isEqualTo("payload must be one of small, wide, deep, collection; got '" + payload + "'");
            }
        }
    }

    @Test
    void anArticleStyleClientGetsExactlyWhatItAlwaysGotFromTheRealGrpcService() throws Exception {
        ManagedChannel channel = Grpc.newChannelBuilder(grpc.grpcTarget(), InsecureChannelCredentials.create())
                .build();
        try {
            MethodDescriptor<DynamicMessage, DynamicMessage> unary = ArticleMessages.method(
                    ArticleMessages.UNARY,
                    MethodDescriptor.MethodType.UNARY,
                    ArticleMessages.input(0),
                    ArticleMessages.output(0, 0));
            DynamicMessage answer = ClientCalls.blockingUnaryCall(
                    channel,
                    unary,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                    ArticleMessages.input(7));
            assertThat(answer).isEqualTo(ArticleMessages.output(7, 49));
            assertThat(answer.toByteArray()).containsExactly(0x08, 7, 0x10, 49);

            MethodDescriptor<DynamicMessage, DynamicMessage> bidi = ArticleMessages.method(
                    ArticleMessages.BIDI,
                    MethodDescriptor.MethodType.BIDI_STREAMING,
                    ArticleMessages.input(0),
                    ArticleMessages.output(0, 0));
            List<DynamicMessage> answers = bidi(
                    channel,
                    bidi,
                    IntStream.rangeClosed(1, 100)
                            .mapToObj(ArticleMessages::input)
                            .toList());
            assertThat(answers)
                    .containsExactlyElementsOf(IntStream.rangeClosed(1, 100)
                            .mapToObj(i -> ArticleMessages.output(i, (long) i * i))
                            .toList());
            assertThat(answers)
                    .allSatisfy(
                            each -> assertThat(each.getUnknownFields().asMap()).isEmpty());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void theArticlesMessagesAndOursReadEachOtherThroughTheRealGrpcService() throws Exception {
        ManagedChannel channel = Grpc.newChannelBuilder(grpc.grpcTarget(), InsecureChannelCredentials.create())
                .build();
        try {
            // Ours, with a payload, read by the article's Output: its fields, and the payload kept as unknown.
            MethodDescriptor<Input, DynamicMessage> oursToArticle = ArticleMessages.method(
                    ArticleMessages.BIDI,
                    MethodDescriptor.MethodType.BIDI_STREAMING,
                    Input.getDefaultInstance(),
                    ArticleMessages.output(0, 0));
            List<DynamicMessage> articleAnswers = bidi(
                    channel,
                    oursToArticle,
                    IntStream.rangeClosed(1, 20)
                            .mapToObj(i -> Input.newBuilder()
                                    .setNumber(i)
                                    .setPayload(ProtoPayloads.of(Shape.COLLECTION, i))
                                    .build())
                            .toList());
            assertThat(articleAnswers).hasSize(20);
            for (int i = 1; i <= 20; i++) {
                DynamicMessage answer = articleAnswers.get(i - 1);
                assertThat(answer.getField(ArticleMessages.OUTPUT.findFieldByName("number")))
                        .isEqualTo(i);
                assertThat(answer.getField(ArticleMessages.OUTPUT.findFieldByName("result")))
                        .isEqualTo((long) i * i);
                assertThat(answer.getUnknownFields().asMap()).containsOnlyKeys(3);
                Output ours = Output.parseFrom(answer.toByteArray());
                assertThat(ProtoPayloads.difference(Shape.COLLECTION, i, ours.getPayload()))
                        .isNull();
            }

            // The article's Input, read as ours: no payload, and an Output without one.
            MethodDescriptor<DynamicMessage, Output> articleToOurs = ArticleMessages.method(
                    ArticleMessages.UNARY,
                    MethodDescriptor.MethodType.UNARY,
                    ArticleMessages.input(0),
                    Output.getDefaultInstance());
            Output answer = ClientCalls.blockingUnaryCall(
                    channel,
                    articleToOurs,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                    ArticleMessages.input(65536));
            assertThat(answer)
                    .isEqualTo(Output.newBuilder()
                            .setNumber(65536)
                            .setResult(4_294_967_296L)
                            .build());
            assertThat(answer.hasPayload()).isFalse();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"})
    void theLargestAllowedNWorks(String path) throws Exception {
        HttpResponse<String> response = get(path + "/100000");

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode squares = json.readTree(response.body());
        assertThat(squares).hasSize(100_000);
        assertThat(squares.get(65535).get("65536").asLong()).isEqualTo(4_294_967_296L);
        assertThat(squares.get(99_999).get("100000").asLong()).isEqualTo(10_000_000_000L);
    }

    @Test
    void aStoppedServiceIsServiceUnavailableAtOnceAndTheAggregatorRecoversWhenItReturns() throws Exception {
        rest.stop();
        grpc.stop();

        for (String path : PATHS) {
            long start = System.nanoTime();
            HttpResponse<String> response = get(path + "/10");
            assertThat(response.statusCode()).as(path).isEqualTo(503);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(json.readTree(response.body()).get("detail").asText())
                    .as(path)
                    .containsAnyOf("is unreachable", "is unavailable");
            assertThat(elapsedSince(start)).as(path + " fails fast").isLessThan(CALL_DEADLINE.dividedBy(2));
        }

        ServiceProcess.startAll(rest, grpc);
        awaitEveryPathAnswering();
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc/unary", "rest/unary", "grpc/stream", "rest/h2c", "grpc/pingpong"})
    void aServiceThatCrashesMidRequestEndsTheRequestWithAnErrorNotAHang(String path) throws Exception {
        CompletableFuture<HttpResponse<String>> running = getAsync(path + "/100000");
        Thread.sleep(300);
        (path.startsWith("rest") ? rest : grpc).kill();

        HttpResponse<String> response = running.get();
        assertThat(response.statusCode()).isIn(502, 503);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "rest/h2c", "grpc/unary"})
    void aServiceThatHangsIsAGatewayTimeoutAtTheCallDeadline(String path) throws Exception {
        get(path + "/1");
        (path.startsWith("rest") ? rest : grpc).freeze();

        long start = System.nanoTime();
        HttpResponse<String> response = get(path + "/5");

        assertThat(response.statusCode()).isEqualTo(504);
        assertThat(json.readTree(response.body()).get("detail").asText())
                .contains("within 8000 ms (aggregator.call-deadline)");
        assertThat(elapsedSince(start)).isBetween(CALL_DEADLINE, CALL_DEADLINE.plusSeconds(3));
    }

    @Test
    void theFanOutMetricsAreExposedForPrometheus() throws Exception {
        for (String path : PATHS) {
            get(path + "/3");
        }

        String metrics = get("actuator/prometheus").body();

        for (String transport : new String[] {"rest_unary", "rest_h2c", "grpc_unary", "grpc_pingpong", "grpc_stream"}) {
            assertThat(metrics)
                    .containsPattern(
                            "aggregator_fanout_seconds_bucket\\{application=\"aggregator-service\",outcome=\"success\","
                                    + "transport=\"" + transport + "\",le=\"[^\"]+\"} [1-9]")
                    .containsPattern("aggregator_downstream_calls_total\\{application=\"aggregator-service\","
                            + "outcome=\"success\",transport=\"" + transport + "\"} [1-9]")
                    .containsPattern("aggregator_downstream_latency_seconds_count\\{application=\"aggregator-service\","
                            + "outcome=\"success\",transport=\"" + transport + "\"} [1-9]")
                    .contains("aggregator_downstream_inflight{application=\"aggregator-service\",transport=\""
                            + transport + "\"} 0");
        }
        assertThat(metrics)
                .containsPattern("aggregator_stream_messages_total\\{application=\"aggregator-service\","
                        + "direction=\"received\"} [1-9]");
    }

    @Test
    void theSettingsThatShapeItsLoadAreInActuatorInfo() throws Exception {
        HttpResponse<String> info = get("actuator/info");

        assertThat(info.statusCode()).isEqualTo(200);
        assertThat(info.body())
                .startsWith("{\"aggregator\":{\"in-flight\":8,\"rest-max-connections\":64,\"rest-replicas\":1,"
                        + "\"rest-h2c-connections\":4,\"rest-h2c-max-streams\":40,\"rest-client\":\"reactor-netty\","
                        + "\"rest-h2c-client\":\"reactor-netty\",\"deadline-ms\":120000,\"call-deadline-ms\":"
                        + CALL_DEADLINE.toMillis()
                        + ",\"max-n\":100000,\"rest-base-url\":[\"" + rest.baseUrl() + "\"],\"grpc-target\":\""
                        + grpc.grpcTarget() + "\"},")
                // Where it runs (observation-meters), for a lab measuring it from elsewhere.
                .contains(
                        "\"process\":{\"host\":\"",
                        "\"cores\":" + Runtime.getRuntime().availableProcessors());
    }

    /** Every message of one bidi stream's answers, in order, once the stream has completed. */
    private static <I, O> List<O> bidi(ManagedChannel channel, MethodDescriptor<I, O> method, List<I> questions)
            throws Exception {
        List<O> answers = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<I> requests = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)),
                new StreamObserver<O>() {
                    @Override
                    public void onNext(O answer) {
                        answers.add(answer);
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        questions.forEach(requests::onNext);
        requests.onCompleted();
        done.get(30, TimeUnit.SECONDS);
        return answers;
    }

    /** The REST square service's own count of its square requests with this method. */
    private static double restSquareRequests(String method) throws Exception {
        Matcher series = Pattern.compile("(?m)^http_server_requests_seconds_count\\{[^}]*method=\"" + method
                        + "\"[^}]*uri=\"/rest/square/unary/\\{number}\"[^}]*} (\\S+)$")
                .matcher(rest.prometheus());
        double sum = 0;
        while (series.find()) {
            sum += Double.parseDouble(series.group(1));
        }
        return sum;
    }

    /** The service counts a request as it ends, which may be just after the aggregator has its answer. */
    private static void awaitRestSquareRequests(String method, double expected) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (restSquareRequests(method) < expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(restSquareRequests(method)).as(method).isEqualTo(expected);
    }

    /** The services are healthy: within a few seconds every path must answer again, without a restart. */
    private void awaitEveryPathAnswering() throws Exception {
        for (String path : PATHS) {
            long start = System.nanoTime();
            while (get(path + "/10").statusCode() != 200) {
                assertThat(elapsedSince(start)).as(path + " recovers").isLessThan(Duration.ofSeconds(3));
                Thread.sleep(50);
            }
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return getAsync(path).get();
    }

    private CompletableFuture<HttpResponse<String>> getAsync(String path) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + path))
                .timeout(Duration.ofSeconds(60))
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    private static Duration elapsedSince(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }
}
