package io.github.squarelab.observation.process;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.OptionalLong;

/**
 * {@code process.memory.resident} and {@code process.memory.resident.peak} (Prometheus
 * {@code process_memory_resident_bytes}, {@code process_memory_resident_peak_bytes}): what a lab that did not start the
 * service reads of its memory over a measured window, beside Micrometer's {@code process.cpu.time}. Neither is
 * registered where the system does not count resident memory as Linux does.
 */
public class ResidentMemoryMetrics implements MeterBinder {

    private final ResidentMemory memory;

    public ResidentMemoryMetrics(ResidentMemory memory) {
        this.memory = memory;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!memory.available()) {
            return;
        }
        Gauge.builder("process.memory.resident", memory, m -> orNaN(m.current()))
                .description("The resident set size of the process now (VmRSS)")
                .baseUnit(BaseUnits.BYTES)
                .register(registry);
        Gauge.builder("process.memory.resident.peak", memory, m -> orNaN(m.peak()))
                .description("The highest resident set size of the process since it started (VmHWM)")
                .baseUnit(BaseUnits.BYTES)
                .register(registry);
    }

    /** NaN, as Micrometer's own gauges give, where a read failed: a scraper skips it instead of taking it for a size. */
    private static double orNaN(OptionalLong bytes) {
        return bytes.isPresent() ? bytes.getAsLong() : Double.NaN;
    }
}
