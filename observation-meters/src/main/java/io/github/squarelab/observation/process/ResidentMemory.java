package io.github.squarelab.observation.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * The process's resident memory as Linux counts it in {@code /proc/self/status}: now ({@code VmRSS}) and its peak since
 * the process started ({@code VmHWM}), in bytes. The JVM's own memory meters count heap and pools, not what the process
 * holds of the machine, which is what a lab comparing services reads.
 */
public final class ResidentMemory {

    static final Path STATUS = Path.of("/proc/self/status");

    private final Path status;

    public ResidentMemory() {
        this(STATUS);
    }

    ResidentMemory(Path status) {
        this.status = status;
    }

    /** Whether this system counts resident memory where this class reads it (Linux). */
    public boolean available() {
        return current().isPresent();
    }

    public OptionalLong current() {
        return read("VmRSS:");
    }

    public OptionalLong peak() {
        return read("VmHWM:");
    }

    private OptionalLong read(String field) {
        try {
            return kibibytes(Files.readString(status), field);
        } catch (IOException | RuntimeException notLinux) {
            return OptionalLong.empty();
        }
    }

    /** A field of a status file, "VmRSS:\t  123456 kB", in bytes. */
    static OptionalLong kibibytes(String statusText, String field) {
        for (String line : statusText.split("\n")) {
            if (line.startsWith(field)) {
                String[] words = line.substring(field.length()).trim().split("\\s+");
                return OptionalLong.of(Long.parseLong(words[0]) * 1024);
            }
        }
        return OptionalLong.empty();
    }
}
