package io.github.squarelab.aggregator.fanout;

/** The ways a fan-out reaches the square service; {@link #tag} is the metrics tag value. */
public enum Transport {
    REST_UNARY("rest_unary"),
    REST_H2C("rest_h2c"),
    GRPC_UNARY("grpc_unary"),
    GRPC_PINGPONG("grpc_pingpong"),
    GRPC_STREAM("grpc_stream");

    private final String tag;

    Transport(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
