package io.github.squarelab.aggregator.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SquaresTests {

    @Test
    void writesTheContractJsonInOrderWithoutWhitespace() {
        Squares squares = new Squares(3);
        squares.add(1);
        squares.add(4);
        squares.add(9);

        assertThat(squares.isComplete()).isTrue();
        assertThat(squares.toJson()).isEqualTo("[{\"1\":1},{\"2\":4},{\"3\":9}]");
    }

    @Test
    void noSquaresIsAnEmptyArray() {
        assertThat(new Squares(0).toJson()).isEqualTo("[]");
        assertThat(new Squares(0).isComplete()).isTrue();
    }

    @Test
    void squaresAbove32BitsStayExact() {
        Squares squares = new Squares(1);
        squares.add(4_611_686_014_132_420_609L);

        assertThat(squares.toJson()).isEqualTo("[{\"1\":4611686014132420609}]");
    }

    @Test
    void knowsWhenAnswersAreMissing() {
        Squares squares = new Squares(3);
        squares.add(1);

        assertThat(squares.isComplete()).isFalse();
        assertThat(squares.size()).isEqualTo(1);
        assertThat(squares.expected()).isEqualTo(3);
    }
}
