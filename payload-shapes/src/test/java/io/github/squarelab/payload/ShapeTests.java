package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ShapeTests {

    @Test
    void parsesEachShapeByItsLowerCaseNameAndNothingAsSmall() {
        assertThat(Shape.parse("small")).isEqualTo(Shape.SMALL);
        assertThat(Shape.parse("wide")).isEqualTo(Shape.WIDE);
        assertThat(Shape.parse("deep")).isEqualTo(Shape.DEEP);
        assertThat(Shape.parse("collection")).isEqualTo(Shape.COLLECTION);
        assertThat(Shape.parse(null)).isEqualTo(Shape.SMALL);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "x", "Wide", "DEEP", " small", "collection ", "small,wide"})
    void anythingElseIsRejectedWithAMessageListingTheShapes(String text) {
        assertThatThrownBy(() -> Shape.parse(text))
                .isInstanceOf(UnknownShapeException.class)
                .hasMessage("payload must be one of small, wide, deep, collection; got '" + text + "'");
    }

    @Test
    void onlySmallCarriesNoPayload() {
        assertThat(Shape.SMALL.hasPayload()).isFalse();
        assertThat(Shape.WIDE.hasPayload()).isTrue();
        assertThat(Shape.DEEP.hasPayload()).isTrue();
        assertThat(Shape.COLLECTION.hasPayload()).isTrue();
        assertThat(Shape.COLLECTION.wireName()).isEqualTo("collection");
        assertThat(Shape.DEEP).hasToString("deep");
    }
}
