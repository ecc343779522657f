package io.github.squarelab.aggregator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.validation.ValidationAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** The REST paths' HTTP clients as the aggregator binds them at start-up: a value it does not know stops it. */
class AggregatorPropertiesTests {

    private final ApplicationContextRunner context = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ValidationAutoConfiguration.class))
            .withUserConfiguration(Bound.class)
            .withPropertyValues(
                    "aggregator.max-n=100",
                    "aggregator.in-flight=8",
                    "aggregator.deadline=30s",
                    "aggregator.call-deadline=10s",
                    "aggregator.rest.base-url=http://127.0.0.1:7575",
                    "aggregator.rest.max-connections=64",
                    "aggregator.rest.h2c-connections=4",
                    "aggregator.rest.client=reactor-netty",
                    "aggregator.rest.h2c-client=reactor-netty",
                    "aggregator.grpc.target=127.0.0.1:6565",
                    "aggregator.admission.max-squares=0",
                    "aggregator.admission.retry-after=1s",
                    "aggregator.admission.connection-wait=300ms",
                    "aggregator.admission.deadline-share=0.5");

    @Test
    void eachPathTakesTheClientItIsGiven() {
        context.withPropertyValues("aggregator.rest.client=jdk", "aggregator.rest.h2c-client=jetty")
                .run(started -> {
                    AggregatorProperties.Rest rest =
                            started.getBean(AggregatorProperties.class).rest();
                    assertThat(rest.client()).isEqualTo("jdk");
                    assertThat(rest.h2cClient()).isEqualTo("jetty");
                });
    }

    @Test
    void aDeadlineShareOutsideZeroToOneStopsStartUpNamingTheProperty() {
        for (String share : new String[] {"0.0", "-0.5", "1.5"}) {
            context.withPropertyValues("aggregator.admission.deadline-share=" + share)
                    .run(started -> assertThat(started)
                            .getFailure()
                            .rootCause()
                            .hasMessageContaining("rejected value [" + share + "]")
                            .hasMessageContaining("aggregator.admission.deadline-share must be above 0 and at most 1"));
        }
        context.withPropertyValues("aggregator.admission.deadline-share=1").run(started -> assertThat(
                        started.getBean(AggregatorProperties.class).admission().maxWait(Duration.ofSeconds(30)))
                .isEqualTo(Duration.ofSeconds(30)));
    }

    @Test
    void jdkForRestH2cStopsStartUpNamingThePropertyAndTheClientsItTakes() {
        context.withPropertyValues("aggregator.rest.h2c-client=jdk").run(started -> assertThat(started)
                .getFailure()
                .rootCause()
                .hasMessageContaining("rejected value [jdk]")
                .hasMessageContaining("aggregator.rest.h2c-client must be one of reactor-netty, webclient, jetty,"
                        + " apache (jdk's client has no HTTP/2 cleartext with prior knowledge)"));
    }

    @Test
    void anUnknownClientStopsStartUpNamingThePropertyAndTheClientsItTakes() {
        context.withPropertyValues("aggregator.rest.client=okhttp").run(started -> assertThat(started)
                .getFailure()
                .rootCause()
                .hasMessageContaining("rejected value [okhttp]")
                .hasMessageContaining(
                        "aggregator.rest.client must be one of reactor-netty, webclient, jetty, apache, jdk"));
        context.withPropertyValues("aggregator.rest.h2c-client=Jetty").run(started -> assertThat(started)
                .getFailure()
                .rootCause()
                .hasMessageContaining("rejected value [Jetty]")
                .hasMessageContaining(
                        "aggregator.rest.h2c-client must be one of reactor-netty, webclient, jetty," + " apache"));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(AggregatorProperties.class)
    static class Bound {}
}
