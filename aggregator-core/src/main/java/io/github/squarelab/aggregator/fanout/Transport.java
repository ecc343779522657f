package io.github.squarelab.aggregator.fanout;

import java.util.Arrays;
import java.util.Optional;

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

    /** The transport of a fan-out path such as {@code /grpc/unary/5}: its first two segments are the tag's words. */
    public static Optional<Transport> ofPath(String path) {
        String[] segments = path.split("/");
        if (segments.length < 3) {
            return Optional.empty();
        }
        String tag = segments[1] + "_" + segments[2];
        return Arrays.stream(values()).filter(t -> t.tag.equals(tag)).findFirst();
    }
}
