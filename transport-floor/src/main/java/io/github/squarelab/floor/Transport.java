package io.github.squarelab.floor;

import java.util.Arrays;
import java.util.Optional;

/** The bare transports, one for each of the aggregator's paths. */
public enum Transport {

    /** The rest_unary path's floor: bare HTTP/1.1, one call at a time per keep-alive connection. */
    REST_UNARY("rest_unary"),
    /** The rest_h2c path's: bare HTTP/2 cleartext (prior knowledge), calls multiplexed on a few connections. */
    REST_H2C("rest_h2c"),
    /** The grpc_unary path's: unary calls multiplexed on one HTTP/2 connection. */
    GRPC_UNARY("grpc_unary"),
    /** The grpc_stream path's: messages on bidi streams multiplexed on one HTTP/2 connection. */
    GRPC_STREAM("grpc_stream"),
    /** The grpc_pingpong path's: bidi streams on one connection, each with one message in flight. */
    GRPC_PINGPONG("grpc_pingpong");

    private final String id;

    Transport(String id) {
        this.id = id;
    }

    /** The name on the command line and in the JSON: the lab's name of the path whose floor it is. */
    public String id() {
        return id;
    }

    public static Optional<Transport> byId(String id) {
        return Arrays.stream(values())
                .filter(transport -> transport.id.equals(id))
                .findFirst();
    }
}
