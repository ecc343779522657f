package io.github.squarelab.aggregator.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.CachedMeterObservationHandler;
import io.github.squarelab.observation.LocalHttp;
import io.github.squarelab.observation.PrometheusScrape;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

/**
 * http_server_requests, the observation of every request the aggregator serves, after real requests on a real port:
 * each timed once, including those answered asynchronously, and the families, types, tag sets and buckets as they
 * were with Spring Boot's DefaultMeterObservationHandler.
 *
 * <p>No square service: both point at port 1, where nothing listens. n = 0 makes no call, and rest/unary answers 503
 * because its only replica refuses the connection, after the asynchronous dispatch, as under a real failure.
 *
 * <p>Both Spring generations run these tests: each has a subclass, ObservationMetricsTests, that turns its test metrics
 * on as that generation's test support spells it.
 */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {"aggregator.rest.base-url=http://127.0.0.1:1", "aggregator.grpc.target=127.0.0.1:1"})
public abstract class ObservationMetricsContract {

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
    void eachRequestIsTimedOnceUnderItsUriTemplateAndStatus() throws Exception {
        PrometheusScrape before = scrape();

        assertThat(http().get("/grpc/unary/0")).isEqualTo("[]");
        assertThat(http().get("/grpc/unary/0")).isEqualTo("[]");
        assertThat(http().exchange("/grpc/unary/abc").statusCode()).isEqualTo(400);
        assertThat(http().exchange("/rest/unary/2").statusCode()).isEqualTo(503);

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
     * after one request of each kind.
     */
    @Test
    void theObservationMetricsKeepTheirFamiliesTypesTagSetsAndBuckets() throws Exception {
        PrometheusScrape before = scrape();
        http().get("/grpc/unary/0");
        http().get("/grpc/unary/abc");
        http().get("/rest/unary/2");
        http().get("/nope");
        http().get("/actuator/health");
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
        return PrometheusScrape.parse(http().get("/actuator/prometheus"));
    }

    private LocalHttp http() {
        return LocalHttp.on(port);
    }

    private static String requests(String suffix, String outcome, String status, String uri) {
        return "http_server_requests_seconds" + suffix
                + "{application=\"aggregator-service\",error=\"none\",exception=\"none\",method=\"GET\",outcome=\""
                + outcome + "\",status=\"" + status + "\",uri=\"" + uri + "\"}";
    }
}
