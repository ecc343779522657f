package io.github.squarelab.aggregator.rest;

import io.github.squarelab.payload.EchoJson;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJson;
import io.github.squarelab.payload.PayloadJsonCodec;
import java.nio.charset.StandardCharsets;

/**
 * What the test servers answer to {@code POST /rest/square/unary/{number}}: the square service's echo, except for a
 * few numbers that get it wrong on purpose.
 */
final class EchoingSquares {

    /** Echoes the payload another number would have carried. */
    static final int WRONG_PAYLOAD = 21;
    /** Answers the square without the payload. */
    static final int NO_PAYLOAD = 22;
    /** Answers the bare square, as to a GET. */
    static final int BARE_SQUARE = 23;

    private EchoingSquares() {}

    /** The body of the answer; the payload read strictly, as the real service reads it. */
    static String answer(int number, byte[] body) throws InvalidPayloadException {
        long square = (long) number * number;
        PayloadJson payload = PayloadJsonCodec.readPayload(body);
        return switch (number) {
            case WRONG_PAYLOAD -> json(new EchoJson(square, JsonPayloads.of(payload.shape(), number + 1)));
            case NO_PAYLOAD -> "{\"result\":" + square + "}";
            case BARE_SQUARE -> Long.toString(square);
            default -> json(new EchoJson(square, payload));
        };
    }

    private static String json(EchoJson echo) {
        return new String(PayloadJsonCodec.write(echo), StandardCharsets.UTF_8);
    }
}
