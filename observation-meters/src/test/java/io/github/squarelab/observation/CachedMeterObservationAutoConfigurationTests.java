package io.github.squarelab.observation;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot's observation and metrics auto-configuration with this module's: one meter handler, this one, and every
 * observation counted once.
 */
class CachedMeterObservationAutoConfigurationTests {

    private final ApplicationContextRunner boot = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class,
                    ObservationAutoConfiguration.class))
            .withConfiguration(AutoConfigurations.of(CachedMeterObservationAutoConfiguration.class));

    @Test
    void theCachedHandlerTakesTheDefaultHandlersPlaceAndCountsOnce() {
        boot.run(context -> {
            assertThat(context).hasSingleBean(MeterObservationHandler.class);
            assertThat(context).hasSingleBean(CachedMeterObservationHandler.class);
            assertThat(context).doesNotHaveBean(DefaultMeterObservationHandler.class);

            MeterRegistry registry = context.getBean(MeterRegistry.class);
            Observation call = Observation.start("lab.call", context.getBean(ObservationRegistry.class));
            assertThat(registry.get("lab.call.active").longTaskTimer().activeTasks())
                    .isEqualTo(1);
            call.event(Observation.Event.of("received"));
            call.stop();

            assertThat(registry.get("lab.call.received").counter().count()).isEqualTo(1);
            assertThat(registry.get("lab.call").tag("error", "none").timer().count())
                    .isEqualTo(1);
            assertThat(registry.get("lab.call.active").longTaskTimer().activeTasks())
                    .isZero();
        });
    }

    /** How the services get it: depending on the module is enough. */
    @Test
    void theModuleDeclaresItsAutoConfigurationToSpringBoot() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
                .contains(CachedMeterObservationAutoConfiguration.class.getName());
    }

    @Test
    void theLongTaskTimerPropertyTurnsTheActiveMetersOffAsForBootsHandler() {
        boot.withPropertyValues("management.observations.long-task-timer.enabled=false")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    Observation.start("lab.call", context.getBean(ObservationRegistry.class))
                            .stop();

                    assertThat(registry.find("lab.call.active").meters()).isEmpty();
                    assertThat(registry.get("lab.call").timer().count()).isEqualTo(1);
                });
    }

    @Test
    void springBoot4sNameForTheLongTaskTimerSwitchTurnsTheActiveMetersOffToo() {
        boot.withPropertyValues("management.metrics.observations.ignored-meters=long-task-timer")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    Observation.start("lab.call", context.getBean(ObservationRegistry.class))
                            .stop();

                    assertThat(registry.find("lab.call.active").meters()).isEmpty();
                    assertThat(registry.get("lab.call").timer().count()).isEqualTo(1);
                });
    }

    @Test
    void aServicesOwnMeterHandlerIsKept() {
        boot.withUserConfiguration(OwnHandler.class).run(context -> {
            assertThat(context).hasSingleBean(MeterObservationHandler.class);
            assertThat(context).getBean(MeterObservationHandler.class).isInstanceOf(OwnMeterHandler.class);
        });
    }

    @Test
    void withoutAMeterRegistryThereIsNoHandler() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        ObservationAutoConfiguration.class, CachedMeterObservationAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(MeterObservationHandler.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnHandler {

        @Bean
        OwnMeterHandler ownHandler() {
            return new OwnMeterHandler();
        }
    }

    /** A service's own meter handler (Boot's own default one is not a service's: Boot 4.1 always declares it). */
    static final class OwnMeterHandler implements MeterObservationHandler<Observation.Context> {}
}
