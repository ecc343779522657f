package io.github.squarelab.aggregator.endtoend;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A service (a square service, or the aggregator itself) started from its real executable jar, as a child
 * process on free loopback ports.
 * The jars come from the reactor build (system properties set by the failsafe configuration).
 */
final class ServiceProcess implements AutoCloseable {

    /** The lab's JVM options for the aggregator: its 128 MiB heap, where memory under load is what a test checks. */
    static final List<String> LAB_JVM_OPTIONS =
            List.of("-XX:+UseSerialGC", "-Xms128m", "-Xmx128m", "-Xss512k", "-XX:+ExitOnOutOfMemoryError");

    private static final Set<Integer> HANDED_OUT_PORTS = ConcurrentHashMap.newKeySet();
    private static final Duration STARTUP = Duration.ofSeconds(90);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private final String name;
    private final String logName;
    private final List<String> command;
    private final int healthPort;
    private final int servicePort;
    private String scheme = "http";
    private Process process;
    /** Where this process's output begins in its log, which earlier runs' processes wrote to as well. */
    private long logStart;

    private ServiceProcess(String name, String replica, List<String> arguments, int healthPort, int servicePort) {
        this(name, replica, List.of("-Xmx128m", "-XX:TieredStopAtLevel=1"), arguments, healthPort, servicePort);
    }

    private ServiceProcess(
            String name,
            String replica,
            List<String> jvmOptions,
            List<String> arguments,
            int healthPort,
            int servicePort) {
        this.name = name;
        this.logName = replica.isEmpty() ? name : name + "-" + replica;
        this.healthPort = healthPort;
        this.servicePort = servicePort;
        this.command = new ArrayList<>(List.of(javaExecutable()));
        this.command.addAll(jvmOptions);
        this.command.addAll(List.of("-jar", jar(name)));
        this.command.addAll(arguments);
    }

    /** The aggregator itself as a process, with the JVM options given (e.g. the lab's 128 MiB heap). */
    static ServiceProcess aggregator(List<String> jvmOptions, String... arguments) throws IOException {
        return aggregator("", jvmOptions, arguments);
    }

    /** @param replica tells this aggregator's log apart from the others a test starts, e.g. "mtls" */
    static ServiceProcess aggregator(String replica, List<String> jvmOptions, String... arguments) throws IOException {
        int port = freePort();
        List<String> all = new ArrayList<>(List.of("--server.port=" + port, "--server.address=127.0.0.1"));
        all.addAll(List.of(arguments));
        return new ServiceProcess("aggregator-service", replica, jvmOptions, all, port, port);
    }

    /** Whether the process runs; false once it has exited, e.g. on an OutOfMemoryError. */
    boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** What the process has written to its log so far (since it was last started: not earlier runs' output). */
    String log() throws IOException {
        byte[] all = Files.readAllBytes(logFile());
        return new String(all, (int) logStart, all.length - (int) logStart, StandardCharsets.UTF_8);
    }

    static ServiceProcess rest() throws IOException {
        return rest("");
    }

    /** @param replica tells this replica's log apart from the others', e.g. "a" */
    static ServiceProcess rest(String replica) throws IOException {
        int port = freePort();
        return new ServiceProcess(
                "square-rest-service",
                replica,
                List.of("--server.port=" + port, "--server.address=127.0.0.1"),
                port,
                port);
    }

    /**
     * The REST square service serving TLS on its port, as the Spring arguments given say (server.ssl.*), with its
     * actuator on a plaintext port of its own, as a probe that presents no certificate needs under mutual TLS.
     */
    static ServiceProcess restTls(String replica, String... tlsArguments) throws IOException {
        int port = freePort();
        int managementPort = freePort();
        List<String> arguments = new ArrayList<>(List.of(
                "--server.port=" + port,
                "--server.address=127.0.0.1",
                "--management.server.port=" + managementPort,
                "--management.server.address=127.0.0.1",
                // Else the management server inherits server.ssl.
                "--management.server.ssl.enabled=false"));
        arguments.addAll(List.of(tlsArguments));
        ServiceProcess service = new ServiceProcess("square-rest-service", replica, arguments, managementPort, port);
        service.scheme = "https";
        return service;
    }

    /** The gRPC square service serving TLS on its gRPC port, as the arguments given say ({@link TlsArguments}). */
    static ServiceProcess grpcTls(String replica, String... tlsArguments) throws IOException {
        int grpcPort = freePort();
        int actuatorPort = freePort();
        List<String> arguments = new ArrayList<>(SpringGeneration.current().grpcServer(grpcPort));
        arguments.addAll(List.of("--server.port=" + actuatorPort, "--server.address=127.0.0.1"));
        arguments.addAll(List.of(tlsArguments));
        return new ServiceProcess("square-grpc-service", replica, arguments, actuatorPort, grpcPort);
    }

    static ServiceProcess grpc() throws IOException {
        return grpc("");
    }

    /** @param replica tells this replica's log apart from the others', e.g. "a" */
    static ServiceProcess grpc(String replica) throws IOException {
        int grpcPort = freePort();
        int actuatorPort = freePort();
        List<String> arguments = new ArrayList<>(SpringGeneration.current().grpcServer(grpcPort));
        arguments.addAll(List.of("--server.port=" + actuatorPort, "--server.address=127.0.0.1"));
        return new ServiceProcess("square-grpc-service", replica, arguments, actuatorPort, grpcPort);
    }

    /** Starts the process, if it is not running, and waits until its health is UP. */
    ServiceProcess start() throws IOException, InterruptedException {
        if (process != null && process.isAlive()) {
            return this;
        }
        Path log = logFile();
        Files.createDirectories(log.getParent());
        logStart = Files.exists(log) ? Files.size(log) : 0;
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        awaitHealthy(log);
        return this;
    }

    /** Starts the services side by side and waits until every one is healthy. */
    static void startAll(ServiceProcess... services) {
        CompletableFuture.allOf(Arrays.stream(services)
                        .map(service -> CompletableFuture.runAsync(() -> {
                            try {
                                service.start();
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        }))
                        .toArray(CompletableFuture[]::new))
                .join();
    }

    /** SIGTERM: the service shuts down gracefully, as under an orchestrator. */
    void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** SIGKILL: the service is gone at once, mid-call, as in a crash. */
    void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * SIGSTOP: connections stay open and nothing answers, as with a hung or overloaded service. kill returns
     * once the signal is sent, not once it took effect: this waits until the process is stopped ('T'), or a
     * busy machine lets it answer one more request.
     */
    void freeze() throws IOException, InterruptedException {
        signal("STOP");
        Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!stoppedState(Files.readString(stat)) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    /** The state field of /proc/PID/stat, after the command name in parentheses. */
    private static boolean stoppedState(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
    }

    /** SIGCONT: undoes {@link #freeze()}. */
    void thaw() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** The service's own metrics, in Prometheus' text format. */
    String prometheus() throws IOException, InterruptedException {
        return actuator("prometheus");
    }

    /** A JVM option more for the next start, e.g. a system property. */
    ServiceProcess withJvmOption(String option) {
        command.add(command.indexOf("-jar"), option);
        return this;
    }

    /**
     * The class names in the process's heap histogram (jcmd GC.class_histogram): the classes of its live objects,
     * such as the SSLEngines its open TLS connections hold.
     */
    String liveClasses() throws IOException, InterruptedException {
        Path java = Path.of(javaExecutable());
        Path jcmd = java.resolveSibling("jcmd");
        Process histogram = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "GC.class_histogram")
                .redirectErrorStream(true)
                .start();
        String output = new String(histogram.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!histogram.waitFor(60, TimeUnit.SECONDS) || histogram.exitValue() != 0) {
            throw new IllegalStateException("jcmd GC.class_histogram failed for " + name + ": " + output);
        }
        return output;
    }

    @Override
    public String toString() {
        return logName;
    }

    /** The service's GET /actuator/info document, from its plaintext actuator. */
    String info() throws IOException, InterruptedException {
        return actuator("info");
    }

    private String actuator(String endpoint) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + healthPort + "/actuator/" + endpoint))
                .timeout(Duration.ofSeconds(5))
                .build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    String baseUrl() {
        return scheme + "://127.0.0.1:" + servicePort;
    }

    String grpcTarget() {
        return "127.0.0.1:" + servicePort;
    }

    /** Closes each service that was created (a null is one whose start-up never came). */
    static void closeAll(ServiceProcess... services) throws Exception {
        for (ServiceProcess service : services) {
            if (service != null) {
                service.close();
            }
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            thaw();
            stop();
        }
    }

    private Path logFile() {
        return Path.of("target", "end-to-end").resolve(logName + ".log");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                .inheritIO()
                .start()
                .waitFor();
    }

    private void awaitHealthy(Path log) throws IOException, InterruptedException {
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/actuator/health"))
                .timeout(Duration.ofSeconds(2))
                .build();
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited at start-up; see " + log.toAbsolutePath());
            }
            try {
                if (HTTP.send(health, HttpResponse.BodyHandlers.ofString())
                        .body()
                        .equals("{\"status\":\"UP\"}")) {
                    return;
                }
            } catch (IOException notYet) {
                // Still starting.
            }
            Thread.sleep(200);
        }
        process.destroyForcibly();
        throw new IllegalStateException(name + " not healthy within " + STARTUP + "; see " + log.toAbsolutePath());
    }

    private static String jar(String module) {
        String jar = System.getProperty(module + ".jar");
        if (jar == null || !new File(jar).isFile()) {
            throw new IllegalStateException("No jar for " + module + " at " + jar
                    + ": run the end-to-end tests through './mvnw verify', which packages it first");
        }
        return jar;
    }

    private static String javaExecutable() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /**
     * A port no process of this JVM's tests was given yet: the kernel may hand a released port out again, and two
     * services started together on one port once let the second's readiness check see the first answer (CI, 5
     * aggregators of BadCertificatesEndToEndTests).
     */
    private static int freePort() throws IOException {
        while (true) {
            try (ServerSocket socket = new ServerSocket(0)) {
                if (HANDED_OUT_PORTS.add(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            }
        }
    }
}
