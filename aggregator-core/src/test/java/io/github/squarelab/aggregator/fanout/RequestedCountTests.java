package io.github.squarelab.aggregator.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RequestedCountTests {

    @ParameterizedTest
    @CsvSource({"0, 0", "1, 1", "1000, 1000", "100000, 100000", "007, 7", "000, 0"})
    void readsWholeNumbersUpToTheMaximum(String text, int n) {
        assertThat(RequestedCount.parse(text, 100_000)).isEqualTo(n);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "-1", "1.5", "+5", "", " 5", "1e3", "0x10", "٣"})
    void refusesAnythingButDigits(String text) {
        assertThatThrownBy(() -> RequestedCount.parse(text, 100_000))
                .isInstanceOf(InvalidCountException.class)
                .hasMessage("n must be a non-negative integer, got '" + text + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"100001", "99999999999", "2147483648", "99999999999999999999999"})
    void refusesNumbersAboveTheMaximumAndNamesIt(String text) {
        assertThatThrownBy(() -> RequestedCount.parse(text, 100_000))
                .isInstanceOf(InvalidCountException.class)
                .hasMessage("n must be at most 100000 (aggregator.max-n), got " + text);
    }
}
