package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.CachedMeterObservationHandler;
import io.github.squarelab.observation.PrometheusScrape;
import io.github.squarelab.payload.Shape;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.annotation.DirtiesContext.ClassMode;

/**
 * http_server_requests, the observation of every request (the one the lab reads for the REST square service's time
 * per call), after real requests on a real port: each request timed once, in its histogram, and the families, types,
 * tag sets and buckets as they were with Spring Boot's DefaultMeterObservationHandler.
 *
 * <p>On each server (a subclass per value of square.server): observation-meters' handler sees the same observations
 * from Spring MVC and from WebFlux.
 *
 * <p>A context of its own: the pinned tag sets are those of this class's requests only.
 */
@AutoConfigureObservability
@DirtiesContext(classMode = ClassMode.BEFORE_CLASS)
abstract class ObservationMetricsTests {

    private static final String SQUARE = "uri=\"/rest/square/unary/{number}\"}";
    private static final String SQUARE_INF = "uri=\"/rest/square/unary/{number}\",le=\"+Inf\"}";

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
    void eachRequestIsTimedOnceUnderItsMethodStatusAndUriTemplate() throws Exception {
        PrometheusScrape before = scrape();

        for (int number = 1; number <= 3; number++) {
            assertThat(http.getForObject("/rest/square/unary/" + number, String.class))
                    .isEqualTo(String.valueOf(number * number));
        }
        assertThat(echo(7).getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(http.getForEntity("/rest/square/unary/abc", String.class).getStatusCode())
                .isEqualTo(HttpStatus.BAD_REQUEST);

        assertCountedSince(
                before,
                Map.of(
                        requests("_count", "GET", "SUCCESS", "200") + SQUARE, 3.0,
                        requests("_bucket", "GET", "SUCCESS", "200") + SQUARE_INF, 3.0,
                        requests("_count", "POST", "SUCCESS", "200") + SQUARE, 1.0,
                        requests("_count", "GET", "CLIENT_ERROR", "400") + SQUARE, 1.0));
    }

    /** A request is active from its start to its end: while the scrape runs, it is the one active GET. */
    @Test
    void theScrapeInFlightIsTheOnlyActiveRequest() {
        http.getForObject("/rest/square/unary/3", String.class);
        echo(3);

        PrometheusScrape scrape = scrape();

        assertThat(scrape.value(active("GET"))).isEqualTo(1);
        assertThat(scrape.value(active("POST"))).isZero();
    }

    /**
     * Pinned from the scrape with Spring Boot's DefaultMeterObservationHandler (commit "Pin the observation metrics"),
     * after one request of each kind. (The test's own client, TestRestTemplate, is observed in the same registry as
     * http_client_requests, tagged with each test's URIs: square-grpc-service's test pins those families.)
     */
    @Test
    void theObservationMetricsKeepTheirFamiliesTypesTagSetsAndBuckets() throws Exception {
        PrometheusScrape before = scrape();
        http.getForObject("/rest/square/unary/3", String.class);
        echo(3);
        http.getForEntity("/rest/square/unary/abc", String.class);
        http.postForEntity("/rest/square/unary/3", "3", String.class);
        http.getForEntity("/nope", String.class);
        http.getForObject("/actuator/health", String.class);
        assertCountedSince(
                before,
                Map.of(
                        requests("_count", "GET", "SUCCESS", "200") + SQUARE, 1.0,
                        requests("_count", "POST", "SUCCESS", "200") + SQUARE, 1.0,
                        requests("_count", "GET", "CLIENT_ERROR", "400") + SQUARE, 1.0,
                        requests("_count", "POST", "CLIENT_ERROR", "415") + SQUARE, 1.0,
                        requests("_count", "GET", "CLIENT_ERROR", "404") + "uri=\"NOT_FOUND\"}", 1.0,
                        requests("_count", "GET", "SUCCESS", "200") + "uri=\"/actuator/health\"}", 1.0));

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
            http_server_requests_active_seconds_bucket{application="square-rest-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"} [29 buckets]
            http_server_requests_active_seconds_bucket{application="square-rest-service",exception="none",method="POST",outcome="SUCCESS",status="200",uri="UNKNOWN"} [29 buckets]
            http_server_requests_active_seconds_gcount{application="square-rest-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_gcount{application="square-rest-service",exception="none",method="POST",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_gsum{application="square-rest-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_gsum{application="square-rest-service",exception="none",method="POST",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_max{application="square-rest-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_max{application="square-rest-service",exception="none",method="POST",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/rest/square/unary/{number}"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="POST",outcome="CLIENT_ERROR",status="415",uri="/rest/square/unary/{number}"} [69 buckets]
            http_server_requests_seconds_bucket{application="square-rest-service",error="none",exception="none",method="POST",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"} [69 buckets]
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="POST",outcome="CLIENT_ERROR",status="415",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_count{application="square-rest-service",error="none",exception="none",method="POST",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="POST",outcome="CLIENT_ERROR",status="415",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_max{application="square-rest-service",error="none",exception="none",method="POST",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="400",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="GET",outcome="CLIENT_ERROR",status="404",uri="NOT_FOUND"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="POST",outcome="CLIENT_ERROR",status="415",uri="/rest/square/unary/{number}"}
            http_server_requests_seconds_sum{application="square-rest-service",error="none",exception="none",method="POST",outcome="SUCCESS",status="200",uri="/rest/square/unary/{number}"}""";

    private org.springframework.http.ResponseEntity<String> echo(int number) {
        HttpHeaders headers = new HttpHeaders();
        headers.setContentType(MediaType.APPLICATION_JSON);
        return http.postForEntity(
                "/rest/square/unary/" + number,
                new HttpEntity<>(SquareEchoRoutesTests.json(Shape.WIDE, number), headers),
                String.class);
    }

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

    private static String requests(String suffix, String method, String outcome, String status) {
        return "http_server_requests_seconds" + suffix
                + "{application=\"square-rest-service\",error=\"none\",exception=\"none\",method=\"" + method
                + "\",outcome=\"" + outcome + "\",status=\"" + status + "\",";
    }

    /** Tagged as a request starts: its URI, status and outcome are not known yet. */
    private static String active(String method) {
        return "http_server_requests_active_seconds_gcount{application=\"square-rest-service\",exception=\"none\","
                + "method=\"" + method + "\",outcome=\"SUCCESS\",status=\"200\",uri=\"UNKNOWN\"}";
    }
}
