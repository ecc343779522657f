package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.CachedMeterObservationHandler;
import io.github.squarelab.observation.LocalHttp;
import io.github.squarelab.observation.PrometheusScrape;
import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJsonCodec;
import io.github.squarelab.payload.Shape;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
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
 * <p>A context of its own: the pinned tag sets are those of this class's requests only. Both Spring generations run
 * these tests, each with a subclass per server that turns its test metrics on as that generation spells it.
 */
@DirtiesContext(classMode = ClassMode.BEFORE_CLASS)
public abstract class ObservationMetricsContract {

    private static final String SQUARE = "uri=\"/rest/square/unary/{number}\"}";
    private static final String SQUARE_INF = "uri=\"/rest/square/unary/{number}\",le=\"+Inf\"}";

    @LocalServerPort
    private int port;

    @Autowired
    private ApplicationContext context;

    /**
     * observation-meters' handler first among the meter handlers (Boot 3.5's own default backs off for it; Boot 4.1's
     * stays, after it, and only the first handler of the group records an observation): each is recorded once.
     */
    @Test
    void theCachedHandlerIsTheMeterObservationHandlerThatRecords() {
        assertThat(context.getBeanProvider(MeterObservationHandler.class).orderedStream())
                .first()
                .isInstanceOf(CachedMeterObservationHandler.class);
    }

    @Test
    void eachRequestIsTimedOnceUnderItsMethodStatusAndUriTemplate() throws Exception {
        PrometheusScrape before = scrape();

        for (int number = 1; number <= 3; number++) {
            assertThat(http().get("/rest/square/unary/" + number)).isEqualTo(String.valueOf(number * number));
        }
        assertThat(echo(7).statusCode()).isEqualTo(200);
        assertThat(http().exchange("/rest/square/unary/abc").statusCode()).isEqualTo(400);

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
    void theScrapeInFlightIsTheOnlyActiveRequest() throws InterruptedException {
        http().get("/rest/square/unary/3");
        echo(3);

        PrometheusScrape scrape = scrape();
        // A server may end a request's observation a moment after its client has read the answer (Jetty, once on
        // CI): the POST must be over within a few seconds, and never counted again.
        for (int tries = 0; scrape.value(active("POST")) != 0 && tries < 50; tries++) {
            Thread.sleep(100);
            scrape = scrape();
        }

        assertThat(scrape.value(active("GET"))).isEqualTo(1);
        assertThat(scrape.value(active("POST"))).isZero();
    }

    /**
     * Pinned from the scrape with Spring Boot's DefaultMeterObservationHandler (commit "Pin the observation metrics"),
     * after one request of each kind.
     */
    @Test
    void theObservationMetricsKeepTheirFamiliesTypesTagSetsAndBuckets() throws Exception {
        PrometheusScrape before = scrape();
        http().get("/rest/square/unary/3");
        echo(3);
        http().get("/rest/square/unary/abc");
        http().post("/rest/square/unary/3", "text/plain;charset=ISO-8859-1", "3");
        http().get("/nope");
        http().get("/actuator/health");
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

    private HttpResponse<String> echo(int number) {
        String payload =
                new String(PayloadJsonCodec.write(JsonPayloads.of(Shape.WIDE, number)), StandardCharsets.UTF_8);
        return http().post("/rest/square/unary/" + number, "application/json", payload);
    }

    private LocalHttp http() {
        return LocalHttp.on(port);
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
        return PrometheusScrape.parse(http().get("/actuator/prometheus"));
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
