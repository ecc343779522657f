package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ShapeValuesTests {

    @Test
    void theValuesOfAPositionDeriveFromTheNumber() {
        assertThat(ShapeValues.id(3)).isEqualTo(3);
        assertThat(ShapeValues.name(7, 3)).isEqualTo("item-7-3");
        assertThat(ShapeValues.count(7, 3)).isEqualTo(10);
        assertThat(ShapeValues.value(7, 3)).isEqualTo(7.75);
        assertThat(ShapeValues.name(-3, 0)).isEqualTo("item--3-0");
        // 32-bit arithmetic: the count wraps; the value is exact.
        assertThat(ShapeValues.count(Integer.MAX_VALUE, 99)).isEqualTo(-2147483550);
        assertThat(ShapeValues.value(Integer.MAX_VALUE, 99)).isEqualTo(2147483671.75);
        assertThat(ShapeValues.value(Integer.MIN_VALUE, 1)).isEqualTo(-2147483647.75);
    }

    @Test
    void wideCountsItsPositionsInPreOrder() {
        assertThat(ShapeValues.wideChild(0)).isEqualTo(1);
        assertThat(ShapeValues.wideLeaf(0, 0)).isEqualTo(2);
        assertThat(ShapeValues.wideLeaf(0, 8)).isEqualTo(10);
        assertThat(ShapeValues.wideChild(1)).isEqualTo(11);
        assertThat(ShapeValues.wideChild(5)).isEqualTo(51);
        assertThat(ShapeValues.wideLeaf(5, 8)).isEqualTo(60);
        assertThat(ShapeValues.WIDE_NODES).isEqualTo(61);
        assertThat(ShapeValues.objects(Shape.WIDE) * ShapeValues.VALUES_PER_OBJECT)
                .isEqualTo(244);
        assertThat(ShapeValues.objects(Shape.DEEP) * ShapeValues.VALUES_PER_OBJECT)
                .isEqualTo(32);
        assertThat(ShapeValues.objects(Shape.COLLECTION) * ShapeValues.VALUES_PER_OBJECT)
                .isEqualTo(400);
        assertThat(ShapeValues.objects(Shape.SMALL)).isZero();
    }

    @ParameterizedTest
    @CsvSource({
        "item-7-3, 7, 3, true",
        "item--3-0, -3, 0, true",
        "item-2147483647-99, 2147483647, 99, true",
        "item--2147483648-60, -2147483648, 60, true",
        "item-7-3, 7, 4, false",
        "item-7-3, 8, 3, false",
        "item-7-30, 7, 3, false",
        "item-70-3, 7, 3, false",
        "item-7--3, 7, 3, false",
        "item-7-, 7, 0, false",
        "item-7, 7, 0, false",
        "item-07-3, 7, 3, false",
        "Item-7-3, 7, 3, false",
        "'item-7-3 ', 7, 3, false",
        "'', 7, 3, false",
    })
    void recognisesANameWithoutBuildingIt(String name, int k, int i, boolean matches) {
        assertThat(ShapeValues.isName(name, k, i)).isEqualTo(matches);
        assertThat(ShapeValues.isName(name, k, i)).isEqualTo(name.equals(ShapeValues.name(k, i)));
    }

    @Test
    void aMissingNameIsNoName() {
        assertThat(ShapeValues.isName(null, 7, 3)).isFalse();
    }
}
