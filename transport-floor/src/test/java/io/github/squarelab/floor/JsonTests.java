package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JsonTests {

    @Test
    void writesFieldsInOrderWithDecimalsRoundedToThreePlaces() {
        String json = new Json().field("name", "grpc-unary").field("calls", 12L).field("rate", 1234.56789)
            .field("whole", 2.0).field("nested", new Json().field("p50", 0.0004)).toString();

        assertThat(json).isEqualTo("{\"name\":\"grpc-unary\",\"calls\":12,\"rate\":1234.568,\"whole\":2,\"nested\":{\"p50\":0}}");
    }

    @Test
    void escapesQuotesBackslashesAndControlCharacters() {
        assertThat(Json.quote("a \"b\" \\ c\n\u0001")).isEqualTo("\"a \\\"b\\\" \\\\ c\\n\\u0001\"");
    }

    @Test
    void writesNullForANumberThatIsNotFinite() {
        assertThat(new Json().field("rate", Double.NaN).toString()).isEqualTo("{\"rate\":null}");
    }
}
