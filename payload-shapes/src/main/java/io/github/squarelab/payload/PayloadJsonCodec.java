package io.github.squarelab.payload;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.InvalidNullException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads and writes {@link PayloadJson} and {@link EchoJson} strictly, with a Jackson mapper of its own so that Spring's
 * lenient settings do not apply: anything but exactly a known shape is an {@link InvalidPayloadException} saying where.
 */
public final class PayloadJsonCodec {

    /**
     * The deepest a document may nest: an answer carrying a deep payload nests 10 levels (the answer, its payload,
     * the 8 levels). Jackson's own limit, 1000, is deeper than a request thread's stack goes through records: a 28 KB
     * body 600 levels deep overflowed the square service's stack at the lab's -Xss512k, a 500 instead of a 400.
     */
    static final int MAX_NESTING = 16;

    private static final JsonMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxNestingDepth(MAX_NESTING)
                            .build())
                    .build())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            // A number or a boolean where the name's string belongs (scalar coercion covers only the other way).
            .withCoercionConfig(
                    LogicalType.Textual, text -> text.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            // The messages carry our own description, not a snippet of the input.
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .build();

    private static final ObjectReader PAYLOAD_READER = MAPPER.readerFor(PayloadJson.class);
    private static final ObjectReader ECHO_READER = MAPPER.readerFor(EchoJson.class);
    private static final ObjectWriter PAYLOAD_WRITER = MAPPER.writerFor(PayloadJson.class);
    private static final ObjectWriter ECHO_WRITER = MAPPER.writerFor(EchoJson.class);

    private static final Pattern MISSING = Pattern.compile("^Missing required creator property '([^']*)'");

    private PayloadJsonCodec() {}

    /** A POST body: one payload of a known shape. */
    public static PayloadJson readPayload(InputStream body) throws InvalidPayloadException {
        try {
            return checked(PAYLOAD_READER.readValue(body), "");
        } catch (IOException e) {
            throw invalid(e);
        }
    }

    /** A POST body: one payload of a known shape. */
    public static PayloadJson readPayload(byte[] body) throws InvalidPayloadException {
        try {
            return checked(PAYLOAD_READER.readValue(body), "");
        } catch (IOException e) {
            throw invalid(e);
        }
    }

    /** A POST's answer: the square and the echoed payload. */
    public static EchoJson readEcho(byte[] body) throws InvalidPayloadException {
        EchoJson echo;
        try {
            echo = ECHO_READER.readValue(body);
        } catch (IOException e) {
            throw invalid(e);
        }
        checked(echo.payload(), " in payload");
        return echo;
    }

    private static PayloadJson checked(PayloadJson payload, String within) throws InvalidPayloadException {
        String wrong = payload.structureError();
        if (wrong != null) {
            throw new InvalidPayloadException(wrong + within);
        }
        return payload;
    }

    /** For a reader that refuses a body larger than any payload before parsing it. */
    public static InvalidPayloadException tooLarge(int maxBytes) {
        return new InvalidPayloadException("larger than any payload: more than " + maxBytes + " bytes");
    }

    public static byte[] write(PayloadJson payload) {
        try {
            return PAYLOAD_WRITER.writeValueAsBytes(payload);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] write(EchoJson echo) {
        try {
            return ECHO_WRITER.writeValueAsBytes(echo);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What Jackson found wrong, said in the payload's own terms: what, and where. */
    private static InvalidPayloadException invalid(IOException e) {
        // Jackson wraps what its parser refused inside the object with the path it was reading: still not JSON (or too
        // deep), not a value of the wrong type. A number out of range is a wrong value, said below.
        if (e instanceof JsonMappingException
                && e.getCause() instanceof JsonProcessingException parse
                && !(parse instanceof DatabindException)
                && !(parse instanceof InputCoercionException)) {
            return notJson(parse);
        }
        if (e instanceof JsonMappingException mapping) {
            List<JsonMappingException.Reference> path = mapping.getPath();
            String original = firstLine(mapping.getOriginalMessage());
            if (e instanceof UnrecognizedPropertyException unknown) {
                return new InvalidPayloadException(
                        "unknown key '" + unknown.getPropertyName() + "'" + in(path, path.size() - 1));
            }
            if (e instanceof InvalidNullException nullValue) {
                // A null in a list is reported at its index; a null value at its key.
                boolean inList = !path.isEmpty() && path.get(path.size() - 1).getFieldName() == null;
                return new InvalidPayloadException(
                        inList
                                ? where(path, path.size()) + " is null"
                                : "'" + nullValue.getPropertyName().getSimpleName() + "' is null"
                                        + in(path, path.size() - 1));
            }
            if (original.startsWith("No content to map due to end-of-input")) {
                return new InvalidPayloadException("no body: a payload is a JSON object");
            }
            if (original.startsWith("Trailing token")) {
                return new InvalidPayloadException("more than one JSON value: a payload is one JSON object");
            }
            Matcher missing = MISSING.matcher(original);
            if (missing.find()) {
                return new InvalidPayloadException("'" + missing.group(1) + "' is missing" + in(path, path.size() - 1));
            }
            if (path.isEmpty()) {
                return new InvalidPayloadException("not a JSON object");
            }
            Class<?> expected = e instanceof MismatchedInputException mismatch
                    ? mismatch.getTargetType()
                    : e.getCause() instanceof InputCoercionException outOfRange ? outOfRange.getTargetType() : null;
            return new InvalidPayloadException(
                    "wrong value at " + where(path, path.size()) + ": " + kind(expected) + " belongs there");
        }
        if (e instanceof StreamReadException parse && !(e instanceof DatabindException)) {
            return notJson(parse);
        }
        return new InvalidPayloadException("unreadable: " + firstLine(e.getMessage()));
    }

    /** What the parser refused, without Jackson's location. */
    private static InvalidPayloadException notJson(JsonProcessingException parse) {
        String original = firstLine(parse.getOriginalMessage());
        if (parse instanceof StreamConstraintsException && original.startsWith("Document nesting depth")) {
            return new InvalidPayloadException(
                    "nested deeper than any payload: more than " + MAX_NESTING + " levels of objects and lists");
        }
        int location = original.indexOf(" (start marker at");
        return new InvalidPayloadException("not JSON: " + (location < 0 ? original : original.substring(0, location)));
    }

    /** What belongs where a value of the wrong type was, in the payload's terms rather than Java's. */
    private static String kind(Class<?> type) {
        if (type == int.class) {
            return "a 32-bit integer";
        }
        if (type == long.class) {
            return "a 64-bit integer";
        }
        if (type == double.class) {
            return "a number";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type != null && List.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "an object";
    }

    /** " in wide.children[2]" for the first {@code size} steps of a path; nothing at the top level. */
    private static String in(List<JsonMappingException.Reference> path, int size) {
        return size <= 0 ? "" : " in " + where(path, size);
    }

    private static String where(List<JsonMappingException.Reference> path, int size) {
        StringBuilder where = new StringBuilder();
        for (int i = 0; i < size; i++) {
            JsonMappingException.Reference step = path.get(i);
            if (step.getFieldName() != null) {
                if (!where.isEmpty()) {
                    where.append('.');
                }
                where.append(step.getFieldName());
            } else {
                where.append('[').append(step.getIndex()).append(']');
            }
        }
        return where.isEmpty() ? "the top level" : where.toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int end = message.indexOf('\n');
        return end < 0 ? message : message.substring(0, end);
    }
}
