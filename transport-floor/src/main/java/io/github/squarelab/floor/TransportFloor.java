package io.github.squarelab.floor;

import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The command line: {@code server grpc|http} runs a bare square server until it is stopped;
 * {@code client TRANSPORT} measures one of the {@link Transport}s against it and prints one JSON object on
 * stdout. Exit status 0 when every answer was right, 1 when the run failed, 2 for a usage error.
 */
public final class TransportFloor {

    static final String USAGE =
            """
        usage:
          java -jar transport-floor.jar server grpc|http [--host 127.0.0.1] [--port 0] [SERVER_TLS]
          java -jar transport-floor.jar client TRANSPORT --target HOST:PORT LOAD --warmup S --duration S [CLIENT_TLS]
          java -jar transport-floor.jar session   (one client run a line on stdin, as a JSON array of the words
                                                   after "client"; its JSON object a line on stdout; until EOF)
            TRANSPORT      LOAD
            rest_unary     --connections N
            rest_h2c       --connections N --streams N
            grpc_unary     --in-flight N
            grpc_stream    --streams N --messages N
            grpc_pingpong  --streams N --messages N
        S is seconds, such as 10 or 0.5; port 0 is a free port.
        TLS, from PEM files (plaintext without them):
          SERVER_TLS  --tls-cert server.pem --tls-key server.key [--tls-client-ca ca.pem (mutual TLS)]
          CLIENT_TLS  --tls-ca ca.pem [--tls-cert client.pem --tls-key client.key (mutual TLS)]
        """;

    private static final String TRANSPORTS =
            Arrays.stream(Transport.values()).map(Transport::id).collect(Collectors.joining(", "));

    private TransportFloor() {}

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(Arrays.asList(args)));
    }

    static int run(List<String> args) throws InterruptedException {
        try {
            if (args.size() >= 2 && args.get(0).equals("server")) {
                return serve(args.get(1), Arguments.parse(args.subList(2, args.size())));
            }
            if (args.size() >= 2 && args.get(0).equals("client")) {
                return measure(clientSettings(args.get(1), Arguments.parse(args.subList(2, args.size()))));
            }
            if (args.equals(List.of("session"))) {
                new FloorSession(System.in, System.out, System.err).serve();
                return 0;
            }
            throw new IllegalArgumentException("expected 'server' or 'client' and what to run, or 'session'");
        } catch (IllegalArgumentException e) {
            System.err.println("transport-floor: " + e.getMessage());
            System.err.print(USAGE);
            return 2;
        }
    }

    /** Prints "listening on HOST:PORT" once it is, and runs until the process is told to stop. */
    private static int serve(String kind, Arguments arguments) throws InterruptedException {
        if (!kind.equals("grpc") && !kind.equals("http")) {
            throw new IllegalArgumentException("unknown server " + kind + "; expected grpc or http");
        }
        String host = arguments.text("host", "127.0.0.1");
        int port = arguments.integer("port", 0);
        Optional<FloorTls> tls = FloorTls.server(arguments);
        arguments.requireAllRead("the " + kind + " server");
        SquareServer server = kind.equals("grpc")
                ? new GrpcSquareServer(host, port, Squares::square, tls)
                : new HttpSquareServer(host, port, Squares::square, tls);
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "square-server-shutdown"));
        // Before the port, which the lab waits for: once it has that line, it has this one.
        tls.ifPresent(found -> System.out.println("tls " + found.mode() + " with " + server.tlsProvider()));
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

    /** Each transport takes exactly its own load options, all required; any other option is an error. */
    static ClientSettings clientSettings(String id, Arguments arguments) {
        Transport transport = Transport.byId(id)
                .orElseThrow(() ->
                        new IllegalArgumentException("unknown transport " + id + "; expected one of " + TRANSPORTS));
        String target = arguments.required("target");
        FloorTls tls = FloorTls.client(arguments).orElse(null);
        ClientSettings settings =
                switch (transport) {
                    case REST_UNARY ->
                        new ClientSettings(
                                transport,
                                target,
                                0,
                                0,
                                0,
                                arguments.count("connections"),
                                arguments.seconds("warmup"),
                                arguments.seconds("duration"),
                                tls);
                    case GRPC_UNARY ->
                        new ClientSettings(
                                transport,
                                target,
                                arguments.count("in-flight"),
                                0,
                                0,
                                0,
                                arguments.seconds("warmup"),
                                arguments.seconds("duration"),
                                tls);
                    case REST_H2C -> {
                        int connections = arguments.count("connections");
                        yield new ClientSettings(
                                transport,
                                target,
                                0,
                                arguments.count("streams"),
                                0,
                                connections,
                                arguments.seconds("warmup"),
                                arguments.seconds("duration"),
                                tls);
                    }
                    case GRPC_STREAM, GRPC_PINGPONG ->
                        new ClientSettings(
                                transport,
                                target,
                                0,
                                arguments.count("streams"),
                                arguments.count("messages"),
                                0,
                                arguments.seconds("warmup"),
                                arguments.seconds("duration"),
                                tls);
                };
        arguments.requireAllRead("the " + id + " client");
        return settings;
    }
}
