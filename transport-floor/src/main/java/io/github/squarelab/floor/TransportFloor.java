package io.github.squarelab.floor;

import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The command line: {@code server grpc|http} runs a bare square server until it is stopped;
 * {@code client rest_unary|grpc_unary|grpc_stream} measures one transport against it and prints one JSON object
 * on stdout. Exit status 0 when every answer was right, 1 when the run failed, 2 for a usage error.
 */
public final class TransportFloor {

    static final String USAGE = """
        usage:
          java -jar transport-floor.jar server <grpc|http> [--port P] [--host 127.0.0.1]
          java -jar transport-floor.jar client <rest_unary|grpc_unary|grpc_stream> --target HOST:PORT
              [--in-flight 800] [--streams 100] [--messages 1000] [--connections 64] [--warmup 10s]
              [--duration 10s]
        """;

    private static final Set<String> SERVER_OPTIONS = Set.of("port", "host");
    private static final Set<String> CLIENT_OPTIONS =
        Set.of("target", "in-flight", "streams", "messages", "connections", "warmup", "duration");

    private TransportFloor() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(Arrays.asList(args)));
    }

    static int run(List<String> args) throws InterruptedException {
        try {
            if (args.size() >= 2 && args.get(0).equals("server")) {
                return serve(args.get(1), Arguments.parse(args.subList(2, args.size()), SERVER_OPTIONS));
            }
            if (args.size() >= 2 && args.get(0).equals("client")) {
                return measure(clientSettings(args.get(1), Arguments.parse(args.subList(2, args.size()), CLIENT_OPTIONS)));
            }
            throw new IllegalArgumentException("expected 'server' or 'client' and what to run");
        } catch (IllegalArgumentException e) {
            System.err.println("transport-floor: " + e.getMessage());
            System.err.print(USAGE);
            return 2;
        }
    }

    /** Prints "listening on HOST:PORT" once it is, and runs until the process is told to stop. */
    private static int serve(String kind, Arguments arguments) throws InterruptedException {
        String host = arguments.text("host", "127.0.0.1");
        int port = arguments.integer("port", 0);
        SquareServer server = switch (kind) {
            case "grpc" -> new GrpcSquareServer(host, port, Squares::square);
            case "http" -> new HttpSquareServer(host, port, Squares::square);
            default -> throw new IllegalArgumentException("unknown server " + kind + "; expected grpc or http");
        };
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "square-server-shutdown"));
        System.out.println("listening on " + host + ":" + server.port());
        server.awaitTermination();
        return 0;
    }

    private static int measure(ClientSettings settings) throws InterruptedException {
        FloorClient client = new FloorClient(settings, System.err);
        try {
            Measurement measurement = client.run();
            System.out.println(client.toJson(measurement));
            return 0;
        } catch (FloorFailure e) {
            System.err.println("floor: FAILED: " + e.getMessage());
            return 1;
        }
    }

    static ClientSettings clientSettings(String transport, Arguments arguments) {
        return new ClientSettings(
            Transport.byId(transport).orElseThrow(() -> new IllegalArgumentException("unknown transport " + transport
                + "; expected rest_unary, grpc_unary or grpc_stream")),
            arguments.required("target"),
            arguments.integer("in-flight", ClientSettings.DEFAULT_IN_FLIGHT),
            arguments.integer("streams", ClientSettings.DEFAULT_STREAMS),
            arguments.integer("messages", ClientSettings.DEFAULT_MESSAGES_PER_STREAM),
            arguments.integer("connections", ClientSettings.DEFAULT_CONNECTIONS),
            arguments.duration("warmup", ClientSettings.DEFAULT_WARMUP),
            arguments.duration("duration", ClientSettings.DEFAULT_DURATION));
    }
}
