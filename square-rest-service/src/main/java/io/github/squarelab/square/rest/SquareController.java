package io.github.squarelab.square.rest;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /rest/square/unary/{number}}: the bare JSON number {@code number * number}. */
@RestController
class SquareController {

    @GetMapping(path = "/rest/square/unary/{number}", produces = MediaType.APPLICATION_JSON_VALUE)
    long square(@PathVariable String number) {
        int value = parseInt32(number);
        // Widen before multiplying: squares above 2^31 must stay correct.
        return (long) value * value;
    }

    /** Parsed here rather than bound as an int so that the 400 says exactly what was wrong. */
    private static int parseInt32(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new InvalidNumberException(text);
        }
    }
}
