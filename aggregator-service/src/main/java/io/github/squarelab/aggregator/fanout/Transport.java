package io.github.squarelab.aggregator.fanout;

/** The three ways a fan-out reaches the square service; {@link #tag} is the metrics tag value. */
public enum Transport {
    REST_UNARY("rest_unary"),
    GRPC_UNARY("grpc_unary"),
    GRPC_STREAM("grpc_stream");

    private final String tag;

    Transport(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
