package io.github.squarelab.aggregator;

import io.github.squarelab.payload.H2cStreams;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.annotation.Validated;

/**
 * Every setting of the aggregator ({@code aggregator.*}); defaults are in application.yml and the README.
 *
 * @param maxN the largest n a request may ask for
 * @param inFlight how many unary calls one request keeps in flight at once (1 = the article's sequential loop)
 * @param deadline how long one whole request may take, and so one whole bidi stream
 * @param callDeadline how long one unary call may take, including the wait for a pooled connection
 * @param rest where the REST square service is, and how many connections to keep to it
 * @param grpc where the gRPC square service is
 * @param admission how much work the aggregator takes on at once, and what it tells the rest to do
 */
@Validated
@ConfigurationProperties("aggregator")
public record AggregatorProperties(
        @Min(0) @Max(Integer.MAX_VALUE) int maxN,
        @Min(1) int inFlight,
        @NotNull Duration deadline,
        @NotNull Duration callDeadline,
        @Valid @NotNull Rest rest,
        @Valid @NotNull Grpc grpc,
        @Valid @NotNull Admission admission) {

    /**
     * @param baseUrl the REST square service, e.g. http://127.0.0.1:7575, or its replicas, comma-separated
     * @param maxConnections the size of the keep-alive connection pool shared by all requests, per replica
     * @param h2cConnections the HTTP/2 cleartext connections per replica that carry all of rest/h2c's calls
     * @param client the HTTP client rest/unary calls through: reactor-netty (directly), or WebClient over
     *     webclient (Reactor Netty), jetty, apache or jdk
     * @param h2cClient the HTTP client rest/h2c calls through: the same, except jdk
     */
    public record Rest(
            @NotEmpty List<@NotNull URI> baseUrl,
            @Min(1) int maxConnections,
            @Min(1) int h2cConnections,
            @NotNull
                    @Pattern(
                            regexp = "reactor-netty|webclient|jetty|apache|jdk",
                            message = "aggregator.rest.client must be one of reactor-netty, webclient, jetty, apache,"
                                    + " jdk")
                    String client,
            @NotNull
                    @Pattern(
                            regexp = "reactor-netty|webclient|jetty|apache",
                            message = "aggregator.rest.h2c-client must be one of reactor-netty, webclient, jetty,"
                                    + " apache (jdk's client has no HTTP/2 cleartext with prior knowledge)")
                    String h2cClient) {

        /** The HTTP client both REST paths use unless told otherwise. */
        public static final String DEFAULT_CLIENT = "reactor-netty";

        /** Calls one HTTP/2 connection carries at once: the replica's share, split between its connections. */
        public int h2cMaxStreams() {
            return Math.max(1, H2cStreams.PER_REPLICA / h2cConnections);
        }
    }

    /**
     * @param maxSquares the most squares all admitted requests may hold at once; 0 derives it from the heap
     * @param maxRequests the most requests admitted at once, whatever their n; 0 derives it from the heap
     * @param maxConnections the most connections Tomcat keeps open at once; 0 derives it from the heap
     * @param retryAfter what a shed request's Retry-After says, in whole seconds
     * @param deadlineShare the share of the deadline a request may be expected to take on its path and still be
     *     admitted (expected from the squares its path holds and the rate it answers them at)
     */
    public record Admission(
            @Min(0) long maxSquares,
            @Min(0) long maxRequests,
            @Min(0) @Max(Integer.MAX_VALUE) long maxConnections,
            @NotNull Duration retryAfter,
            @NotNull Duration connectionWait,
            @DecimalMin(value = "0", inclusive = false, message = SHARE_RANGE)
                    @DecimalMax(value = "1", message = SHARE_RANGE)
                    double deadlineShare) {

        private static final String SHARE_RANGE = "aggregator.admission.deadline-share must be above 0 and at most 1";

        /** The longest a request may be expected to take on its path: the deadline's share. */
        public Duration maxWait(Duration deadline) {
            return Duration.ofNanos(Math.max(1, (long) (deadline.toNanos() * deadlineShare)));
        }
    }

    /** @param target the gRPC square service as a grpc-java target, e.g. 127.0.0.1:6565 or dns:///host:6565 */
    public record Grpc(@NotBlank String target) {}
}
