package io.github.squarelab.observation.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.SystemMetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What a lab that did not start a service reads of it: its CPU time and resident memory on the Prometheus page, and
 * where it runs in /actuator/info.
 */
class ProcessResourcesTests {

    private static final String STATUS =
            "Name:\tjava\nVmPeak:\t 9000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";

    @Test
    void residentMemoryIsReadInBytesFromTheStatusFile(@TempDir Path folder) throws Exception {
        Path status = Files.writeString(folder.resolve("status"), STATUS);

        ResidentMemory memory = new ResidentMemory(status);

        assertThat(memory.current()).hasValue(102400L * 1024);
        assertThat(memory.peak()).hasValue(204800L * 1024);
        assertThat(memory.available()).isTrue();
    }

    @Test
    void withoutAStatusFileThereIsNoResidentMemoryAndNoGauge(@TempDir Path folder) {
        ResidentMemory memory = new ResidentMemory(folder.resolve("absent"));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();

        new ResidentMemoryMetrics(memory).bindTo(registry);

        assertThat(memory.current()).isEqualTo(OptionalLong.empty());
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void aStatusFileThatCannotBeReadLaterReadsNaNNotASize(@TempDir Path folder) throws Exception {
        Path status = Files.writeString(folder.resolve("status"), STATUS);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ResidentMemoryMetrics(new ResidentMemory(status)).bindTo(registry);
        assertThat(registry.get("process.memory.resident.peak").gauge().value()).isEqualTo(204800.0 * 1024);

        Files.delete(status);

        assertThat(registry.get("process.memory.resident").gauge().value()).isNaN();
        assertThat(registry.get("process.memory.resident.peak").gauge().value()).isNaN();
    }

    @Test
    void theGaugesShowThisProcessesResidentMemoryNowAndAtItsPeak() {
        assumeTrue(Files.isReadable(ResidentMemory.STATUS), "Linux only: there is no /proc/self/status here");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();

        new ResidentMemoryMetrics(new ResidentMemory()).bindTo(registry);

        double now = registry.get("process.memory.resident").gauge().value();
        double peak = registry.get("process.memory.resident.peak").gauge().value();
        // A JVM running tests holds more than 16 MiB; its peak is never below what it holds now.
        assertThat(now).isGreaterThan(16 * 1024 * 1024);
        assertThat(peak).isGreaterThanOrEqualTo(now);
    }

    @Test
    void whereItRunsNamesHostPodNodeProcessJdkAndCores() {
        Map<String, String> kubernetes = Map.of("POD_NAME", "square-grpc-service-7d9f", "NODE_NAME", "node-a");
        Info.Builder builder = new Info.Builder();

        new WhereItRunsInfoContributor(kubernetes::get).contribute(builder);

        @SuppressWarnings("unchecked")
        Map<String, Object> process =
                (Map<String, Object>) builder.build().getDetails().get("process");
        assertThat(process)
                .containsKeys("host", "os")
                .containsEntry("pod", "square-grpc-service-7d9f")
                .containsEntry("node", "node-a")
                .containsEntry("pid", ProcessHandle.current().pid())
                .containsEntry("cores", Runtime.getRuntime().availableProcessors());
        assertThat((String) process.get("java")).endsWith(Runtime.version().toString());
    }

    @Test
    void outsideKubernetesThereIsNoPodOrNode() {
        Info.Builder builder = new Info.Builder();

        new WhereItRunsInfoContributor(name -> null).contribute(builder);

        @SuppressWarnings("unchecked")
        Map<String, Object> process =
                (Map<String, Object>) builder.build().getDetails().get("process");
        assertThat(process).containsKeys("host", "pid", "cores").doesNotContainKeys("pod", "node");
    }

    /** The page a lab scrapes: Micrometer's CPU time counter (Spring Boot's) and this module's gauges beside it. */
    @Test
    void thePrometheusPageHasProcessCpuTimeAndResidentMemory() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class,
                        SystemMetricsAutoConfiguration.class,
                        PrometheusMetricsExportAutoConfiguration.class,
                        ProcessResourcesAutoConfiguration.class))
                .run(context -> {
                    String page = context.getBean(PrometheusMeterRegistry.class).scrape();

                    assumeTrue(Files.isReadable(ResidentMemory.STATUS), "Linux only: no /proc/self/status here");
                    assertThat(page)
                            .contains("# TYPE process_cpu_time_ns_total counter")
                            .contains("# TYPE process_memory_resident_bytes gauge")
                            .contains("# TYPE process_memory_resident_peak_bytes gauge");
                    assertThat(context).hasSingleBean(WhereItRunsInfoContributor.class);
                });
    }

    @Test
    void theModuleDeclaresItsAutoConfigurationToSpringBoot() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
                .contains(ProcessResourcesAutoConfiguration.class.getName());
    }
}
