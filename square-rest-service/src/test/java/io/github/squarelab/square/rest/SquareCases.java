package io.github.squarelab.square.rest;

/** The cases the MVC routes' tests and the WebFlux routes' tests both run: one list, two stacks. */
final class SquareCases {

    /** A number and its square. */
    static final String SQUARES =
            """
            7, 49
            -3, 9
            0, 0
            65536, 4294967296
            2147483647, 4611686014132420609
            -2147483648, 4611686018427387904
            """;

    /** Anything but a 32-bit signed integer. */
    static final String NOT_INT32 =
            """
            abc
            1.5
            2147483648
            -2147483649
            99999999999
            0x10
            ' 7'
            """;

    /** Not a 32-bit signed integer, with a payload. */
    static final String NOT_INT32_POSTED =
            """
            abc
            1.5
            2147483648
            -2147483649
            """;

    /** A shape, a number and its square. */
    static final String ECHOES =
            """
            wide, 7, 49
            collection, -3, 9
            deep, 65536, 4294967296
            collection, 2147483647, 4611686014132420609
            wide, -2147483648, 4611686018427387904
            """;

    /** Content types that are not JSON. */
    static final String NOT_JSON =
            """
            text/plain
            application/xml
            application/x-www-form-urlencoded
            application/*
            """;

    /** Methods the square path does not allow. */
    static final String OTHER_METHODS = """
            PUT
            DELETE
            PATCH
            """;

    private SquareCases() {}
}
