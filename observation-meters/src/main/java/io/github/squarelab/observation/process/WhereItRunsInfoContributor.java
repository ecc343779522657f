package io.github.squarelab.observation.process;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * {@code "process"} in {@code /actuator/info}: where the service runs, as a lab measuring it from elsewhere records it
 * beside its figures: host, pod and node (from {@code POD_NAME} and {@code NODE_NAME}, which a Kubernetes manifest sets
 * from the downward API), process id, JDK, operating system and the cores the JVM sees (a container's CPU limit, not the
 * node's cores).
 */
public class WhereItRunsInfoContributor implements InfoContributor {

    private final UnaryOperator<String> environment;
    /** Looked up once: a host's name does not change while it runs, and the lookup may ask DNS. */
    private final String host;

    public WhereItRunsInfoContributor() {
        this(System::getenv);
    }

    WhereItRunsInfoContributor(UnaryOperator<String> environment) {
        this.environment = environment;
        this.host = hostName();
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> process = new LinkedHashMap<>();
        process.put("host", host);
        putIfSet(process, "pod", "POD_NAME");
        putIfSet(process, "node", "NODE_NAME");
        process.put("pid", ProcessHandle.current().pid());
        process.put("java", System.getProperty("java.vm.vendor") + " " + Runtime.version());
        process.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        process.put("cores", Runtime.getRuntime().availableProcessors());
        builder.withDetail("process", process);
    }

    private void putIfSet(Map<String, Object> process, String key, String variable) {
        String value = environment.apply(variable);
        if (value != null && !value.isBlank()) {
            process.put(key, value);
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException unresolved) {
            // The name is known even when it does not resolve; the exception's message starts with it.
            String message = String.valueOf(unresolved.getMessage());
            return message.contains(":") ? message.substring(0, message.indexOf(':')) : message;
        }
    }
}
