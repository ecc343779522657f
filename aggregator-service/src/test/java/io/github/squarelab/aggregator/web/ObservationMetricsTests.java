package io.github.squarelab.aggregator.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.CachedMeterObservationHandler;
import io.github.squarelab.observation.PrometheusScrape;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpStatus;

/**
 * http_server_requests, the observation of every request the aggregator serves, after real requests on a real port:
 * each timed once, including those answered asynchronously, and the families, types, tag sets and buckets as they
 * were with Spring Boot's DefaultMeterObservationHandler.
 *
 * <p>No square service: both point at port 1, where nothing listens. n = 0 makes no call, and rest/unary answers 503
 * because its only replica refuses the connection, after the asynchronous dispatch, as under a real failure.
 */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "aggregator.rest.base-url=http://127.0.0.1:1",
            "aggregator.grpc.target=127.0.0.1:1",
            // The test's client sends each request once: Apache HttpClient's (on the classpath for
            // aggregator.rest.client=apache, and so TestRestTemplate's default) retries a 503 with Retry-After.
            "spring.http.client.factory=jdk"
        })
@AutoConfigureObservability
class ObservationMetricsTests {

    @Autowired
    private TestRestTemplate http;

    @Autowired
    private ApplicationContext context;

    /** observation-meters' handler in place of Boot's, and no other: every observation is recorded once. */
    @Test
    void theCachedHandlerIsTheOnlyMeterObservationHandler() {
        assertThat(context.getBeansOfType(MeterObservationHandler.class).values())
                .singleElement()
                .isInstanceOf(CachedMeterObservationHandler.class);
    }

    @Test
    void eachRequestIsTimedOnceUnderItsUriTemplateAndStatus() throws Exception {
        PrometheusScrape before = scrape();

        assertThat(http.getForObject("/grpc/unary/0", String.class)).isEqualTo("[]");
        assertThat(http.getForObject("/grpc/unary/0", String.class)).isEqualTo("[]");
        assertThat(http.getForEntity("/grpc/unary/abc", String.class).getStatusCode())
                .isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(http.getForEntity("/rest/unary/2", String.class).getStatusCode())
                .isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

        assertCountedSince(
                before,
                Map.of(
                        requests("_count", "SUCCESS", "200", "/grpc/unary/{n}"), 2.0,
                        requests("_bucket", "SUCCESS", "200", "/grpc/unary/{n}\",le=\"+Inf"), 2.0,
                        requests("_count", "CLIENT_ERROR", "400", "/grpc/unary/{n}"), 1.0,
                        requests("_count", "SERVER_ERROR", "503", "/rest/unary/{n}"), 1.0));
    }

    /**
     * Pinned from the scrape with Spring Boot's DefaultMeterObservationHandler (commit "Pin the observation metrics"),
     * after one request of each kind. (The test's own client is observed as http_client_requests, tagged with each
     * test's URIs: square-grpc-service's test pins those families.)
     */
    @Test
    void theObservationMetricsKeepTheirFamiliesTypesTagSetsAndBuckets() throws Exception {
        PrometheusScrape before = scrape();
        http.getForObject("/grpc/unary/0", String.class);
        http.getForEntity("/grpc/unary/abc", String.class);
        http.getForEntity("/rest/unary/2", String.class);
        http.getForEntity("/nope", String.class);
        http.getForObject("/actuator/health", String.class);
        assertCountedSince(
                before,
                Map.of(
                        requests("_count", "SUCCESS", "200", "/grpc/unary/{n}"), 1.0,
                        requests("_count", "CLIENT_ERROR", "400", "/grpc/unary/{n}"), 1.0,
                        requests("_count", "SERVER_ERROR", "503", "/rest/unary/{n}"), 1.0,
                        requests("_count", "CLIENT_ERROR", "404", "NOT_FOUND"), 1.0,
                        requests("_count", "SUCCESS", "200", "/actuator/health"), 1.0));

        assertThat(scrape().series("http_server_requests")).isEqualTo(PINNED);
    }

    private static final String PINNED =
            """
            # TYPE http_server_requests_active_seconds histogram
            # TYPE http_server_requests_active_seconds_gcount gauge
            # TYPE http_server_requests_active_seconds_gsum gauge
            # TYPE http_server_requests_active_seconds_max gauge
            # TYPE http_server_requests_seconds histogram
            # TYPE http_server_requests_seconds_max gauge
            http_server_requests_active_seconds_bucket{application="aggregator-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"} [29 buckets]
            http_server_requests_active_seconds_gcount{application="aggregator-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_gsum{application="aggregator-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_max{application="aggregator-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/grpc/unary/{n}"} [69 buckets]
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"} [69 buckets]
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="SERVER_ERROR",status="503",uri="/rest/unary/{n}"} [69 buckets]
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"} [69 buckets]
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"} [69 buckets]
            http_server_requests_seconds_bucket{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/grpc/unary/{n}"} [69 buckets]
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/grpc/unary/{n}"}
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="SERVER_ERROR",status="503",uri="/rest/unary/{n}"}
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/grpc/unary/{n}"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/grpc/unary/{n}"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="SERVER_ERROR",status="503",uri="/rest/unary/{n}"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_max{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/grpc/unary/{n}"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/grpc/unary/{n}"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="SERVER_ERROR",status="503",uri="/rest/unary/{n}"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_sum{application="aggregator-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/grpc/unary/{n}"}""";

    /**
     * The service times a request as it ends, which may be just after the client has its answer: wait until every
     * series has moved by at least its delta, then each must have moved by exactly that.
     */
    private void assertCountedSince(PrometheusScrape before, Map<String, Double> deltas) throws Exception {
        PrometheusScrape after = PrometheusScrape.awaitMoved(this::scrape, before, deltas, Duration.ofSeconds(5));
        assertThat(after.movedSince(before, deltas.keySet())).isEqualTo(deltas);
    }

    private PrometheusScrape scrape() {
        return PrometheusScrape.parse(http.getForObject("/actuator/prometheus", String.class));
    }

    private static String requests(String suffix, String outcome, String status, String uri) {
        return "http_server_requests_seconds" + suffix
                + "{application=\"aggregator-service\",error=\"none\",exception=\"none\",method=\"GET\",outcome=\""
                + outcome + "\",status=\"" + status + "\",uri=\"" + uri + "\"}";
    }
}
