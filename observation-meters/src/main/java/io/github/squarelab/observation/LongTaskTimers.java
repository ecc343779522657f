package io.github.squarelab.observation;

import java.util.List;
import java.util.Locale;
import org.springframework.core.env.Environment;

/**
 * Whether observations get their {@code name.active} long task timers, as Spring Boot's property says: each
 * generation names it differently, and a property the running generation does not read is never set.
 */
public final class LongTaskTimers {

    /** Spring Boot 3.5's switch. */
    static final String BOOT_3 = "management.observations.long-task-timer.enabled";
    /** Spring Boot 4.1's list of the meters observations leave out (long-task-timer among them turns them off). */
    static final String BOOT_4 = "management.metrics.observations.ignored-meters";

    private LongTaskTimers() {}

    public static boolean enabled(Environment environment) {
        if (!environment.getProperty(BOOT_3, Boolean.class, true)) {
            return false;
        }
        List<String> ignored = List.of(environment.getProperty(BOOT_4, String[].class, new String[0]));
        return ignored.stream()
                .map(meter -> meter.trim().toLowerCase(Locale.ROOT).replace('_', '-'))
                .noneMatch("long-task-timer"::equals);
    }
}
