package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.env.MockEnvironment;

/** square.server read before anything starts: which web application it makes, and what it refuses. */
class SquareServerEnvironmentTests {

    @ParameterizedTest
    @CsvSource({"netty, REACTIVE", "NETTY, REACTIVE", "tomcat, ", "jetty, "})
    void nettyMakesAReactiveApplicationAndTheServletServersLeaveItAsBootDeducesIt(String server, String type) {
        MockEnvironment environment = new MockEnvironment().withProperty("square.server", server);

        new SquareServerEnvironment().postProcessEnvironment(environment, new SpringApplication());

        assertThat(environment.getProperty("spring.main.web-application-type")).isEqualTo(type);
    }

    @Test
    void theEnvironmentVariableChoosesTheServerToo() {
        StandardEnvironment environment = new StandardEnvironment();
        environment
                .getPropertySources()
                .addFirst(new SystemEnvironmentPropertySource("env", Map.of("SQUARE_SERVER", "netty")));

        new SquareServerEnvironment().postProcessEnvironment(environment, new SpringApplication());

        assertThat(SquareServer.of(environment)).isEqualTo(SquareServer.NETTY);
        assertThat(environment.getProperty("spring.main.web-application-type")).isEqualTo("REACTIVE");
    }

    @Test
    void nettyWhenNothingIsSet() {
        assertThat(SquareServer.of(new MockEnvironment())).isEqualTo(SquareServer.NETTY);
    }

    @Test
    void anUnknownServerFailsStartUpNamingThePropertyAndTheAcceptedValues() {
        SpringApplication application = new SpringApplication(SquareRestApplication.class);

        assertThatThrownBy(() -> application.run("--square.server=undertow"))
                .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                .hasMessage("Property square.server with value 'undertow' is invalid:"
                        + " the accepted values are tomcat, jetty, netty (netty when it is not set)");
    }

    @Test
    void aWebApplicationTypeThatIsNotTheServersFailsStartUp() {
        MockEnvironment environment = new MockEnvironment()
                .withProperty("square.server", "netty")
                .withProperty("spring.main.web-application-type", "servlet");

        assertThatThrownBy(() ->
                        new SquareServerEnvironment().postProcessEnvironment(environment, new SpringApplication()))
                .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                .hasMessageContaining("spring.main.web-application-type")
                .hasMessageContaining("square.server=netty runs a reactive application");
    }
}
