package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.ThreadMXBean;
import io.github.squarelab.proto.Payload;
import java.lang.management.ManagementFactory;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The in-place checks run on every call and, as their documentation says, allocate nothing when the echo is right. */
class CheckAllocationTests {

    private static final int CHECKS = 2_000;

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void checkingARightJsonEchoAllocatesNothing(Shape shape) throws Exception {
        PayloadJson echo = PayloadJsonCodec.readPayload(PayloadJsonCodec.write(JsonPayloads.of(shape, -123_456)));

        assertThat(bytesAllocatedPerCheck(() -> JsonPayloads.difference(shape, -123_456, echo)))
                .isLessThan(8);
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void checkingARightProtobufEchoAllocatesNothing(Shape shape) throws Exception {
        Payload echo = Payload.parseFrom(ProtoPayloads.of(shape, -123_456).toByteArray());

        assertThat(bytesAllocatedPerCheck(() -> ProtoPayloads.difference(shape, -123_456, echo)))
                .isLessThan(8);
    }

    /** The check must find nothing wrong; measured after a warm-up, on this thread. */
    private static long bytesAllocatedPerCheck(Supplier<String> check) {
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        for (int i = 0; i < CHECKS; i++) {
            assertThat(check.get()).isNull();
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < CHECKS; i++) {
            if (check.get() != null) {
                throw new AssertionError("the echo is right");
            }
        }
        return (threads.getCurrentThreadAllocatedBytes() - before) / CHECKS;
    }
}
