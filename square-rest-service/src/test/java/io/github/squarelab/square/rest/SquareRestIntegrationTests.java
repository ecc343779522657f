package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** The packaged configuration on a real port: the API, health, and only the promised actuator endpoints. */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class SquareRestIntegrationTests {

    @Autowired
    private TestRestTemplate http;

    @Test
    void answersOverARealPort() {
        ResponseEntity<String> response = http.getForEntity("/rest/square/unary/65536", String.class);

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(response.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
        assertThat(response.getBody()).isEqualTo("4294967296");
    }

    @Test
    void healthIsUpWithoutDetails() {
        assertThat(http.getForObject("/actuator/health", String.class)).isEqualTo("{\"status\":\"UP\"}");
    }

    @Test
    void servedRequestsShowUpAsPrometheusHistograms() {
        assertThat(http.getForObject("/rest/square/unary/12", String.class)).isEqualTo("144");

        ResponseEntity<String> metrics = http.getForEntity("/actuator/prometheus", String.class);

        assertThat(metrics.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(metrics.getBody())
                .contains("http_server_requests_seconds_bucket{application=\"square-rest-service\"")
                .containsPattern(
                        "http_server_requests_seconds_count\\{[^}]*uri=\"/rest/square/unary/\\{number}\"[^}]*} [1-9]");
    }

    @Test
    void onlyHealthInfoAndPrometheusAreExposed() {
        assertThat(http.getForEntity("/actuator/info", String.class).getStatusCode())
                .isEqualTo(HttpStatus.OK);
        for (String hidden : new String[] {"env", "beans", "metrics", "heapdump", "shutdown"}) {
            assertThat(http.getForEntity("/actuator/" + hidden, String.class).getStatusCode())
                    .as(hidden)
                    .isEqualTo(HttpStatus.NOT_FOUND);
        }
    }
}
