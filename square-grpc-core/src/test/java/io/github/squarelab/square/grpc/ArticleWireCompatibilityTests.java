package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The article's messages ({@code Input{number}}, {@code Output{number, result}}, from a descriptor built here by
 * hand, as its clients have them) and ours, which add a payload, read each other; and an article-style client
 * calling the service by its full method names, without payloads, gets exactly the bytes it always got.
 */
class ArticleWireCompatibilityTests {

    private static final Descriptor ARTICLE_INPUT;
    private static final Descriptor ARTICLE_OUTPUT;

    static {
        FileDescriptorProto article = FileDescriptorProto.newBuilder()
                .setName("article/square.proto")
                .setPackage("vinsmath")
                .setSyntax("proto3")
                .addMessageType(DescriptorProto.newBuilder()
                        .setName("Input")
                        .addField(field("number", 1, FieldDescriptorProto.Type.TYPE_INT32)))
                .addMessageType(DescriptorProto.newBuilder()
                        .setName("Output")
                        .addField(field("number", 1, FieldDescriptorProto.Type.TYPE_INT32))
                        .addField(field("result", 2, FieldDescriptorProto.Type.TYPE_INT64)))
                .build();
        try {
            FileDescriptor file = FileDescriptor.buildFrom(article, new FileDescriptor[0]);
            ARTICLE_INPUT = file.findMessageTypeByName("Input");
            ARTICLE_OUTPUT = file.findMessageTypeByName("Output");
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final MethodDescriptor<DynamicMessage, DynamicMessage> ARTICLE_UNARY =
            method("vinsmath.SquareRpc/findSquareUnary", MethodDescriptor.MethodType.UNARY);
    private static final MethodDescriptor<DynamicMessage, DynamicMessage> ARTICLE_BIDI =
            method("vinsmath.SquareRpc/findSquareBiStream", MethodDescriptor.MethodType.BIDI_STREAMING);

    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void startInProcessServer() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(new SquareRpcService())
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void shutDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void theArticlesInputIsOursWithoutAPayloadByteForByte() throws Exception {
        DynamicMessage article = articleInput(7);

        Input ours = Input.parseFrom(article.toByteArray());

        assertThat(ours.getNumber()).isEqualTo(7);
        assertThat(ours.hasPayload()).isFalse();
        assertThat(Input.newBuilder().setNumber(7).build().toByteArray()).isEqualTo(article.toByteArray());
        Output answer = Output.newBuilder().setNumber(7).setResult(49).build();
        assertThat(DynamicMessage.parseFrom(ARTICLE_OUTPUT, answer.toByteArray()))
                .isEqualTo(articleOutput(7, 49));
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void theArticlesMessagesReadOursWithAPayloadAndKeepItAsAnUnknownField(Shape shape) throws Exception {
        Output ours = Output.newBuilder()
                .setNumber(65536)
                .setResult(4_294_967_296L)
                .setPayload(ProtoPayloads.of(shape, 65536))
                .build();

        DynamicMessage article = DynamicMessage.parseFrom(ARTICLE_OUTPUT, ours.toByteArray());

        assertThat(article.getField(ARTICLE_OUTPUT.findFieldByName("number"))).isEqualTo(65536);
        assertThat(article.getField(ARTICLE_OUTPUT.findFieldByName("result"))).isEqualTo(4_294_967_296L);
        assertThat(article.getUnknownFields().asMap()).containsOnlyKeys(3);
        // Passed on by an article-era hop, the payload survives.
        assertThat(Output.parseFrom(article.toByteArray())).isEqualTo(ours);

        Input input = Input.newBuilder()
                .setNumber(7)
                .setPayload(ProtoPayloads.of(shape, 7))
                .build();
        DynamicMessage articleInput = DynamicMessage.parseFrom(ARTICLE_INPUT, input.toByteArray());
        assertThat(articleInput.getField(ARTICLE_INPUT.findFieldByName("number")))
                .isEqualTo(7);
        assertThat(articleInput.getUnknownFields().asMap()).containsOnlyKeys(2);
    }

    @Test
    void anArticleStyleUnaryCallGetsExactlyWhatItAlwaysGot() throws Exception {
        DynamicMessage answer = ClientCalls.blockingUnaryCall(
                channel, ARTICLE_UNARY, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), articleInput(-3));

        assertThat(answer).isEqualTo(articleOutput(-3, 9));
        assertThat(answer.getUnknownFields().asMap()).isEmpty();
        assertThat(answer.toByteArray())
                .containsExactly(0x08, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 9);
    }

    @Test
    void anArticleStyleBidiStreamGetsExactlyWhatItAlwaysGot() throws Exception {
        List<DynamicMessage> answers = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        StreamObserver<DynamicMessage> questions = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(ARTICLE_BIDI, CallOptions.DEFAULT), new StreamObserver<>() {
                    @Override
                    public void onNext(DynamicMessage answer) {
                        answers.add(answer);
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        done.countDown();
                    }
                });
        for (int i = 1; i <= 100; i++) {
            questions.onNext(articleInput(i));
        }
        questions.onCompleted();

        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(answers).hasSize(100);
        for (int i = 1; i <= 100; i++) {
            assertThat(answers.get(i - 1)).isEqualTo(articleOutput(i, (long) i * i));
            assertThat(answers.get(i - 1).getUnknownFields().asMap()).isEmpty();
        }
    }

    private static DynamicMessage articleInput(int number) {
        return DynamicMessage.newBuilder(ARTICLE_INPUT)
                .setField(ARTICLE_INPUT.findFieldByName("number"), number)
                .build();
    }

    private static DynamicMessage articleOutput(int number, long result) {
        return DynamicMessage.newBuilder(ARTICLE_OUTPUT)
                .setField(ARTICLE_OUTPUT.findFieldByName("number"), number)
                .setField(ARTICLE_OUTPUT.findFieldByName("result"), result)
                .build();
    }

    private static FieldDescriptorProto.Builder field(String name, int number, FieldDescriptorProto.Type type) {
        return FieldDescriptorProto.newBuilder()
                .setName(name)
                .setJsonName(name)
                .setNumber(number)
                .setType(type)
                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL);
    }

    private static MethodDescriptor<DynamicMessage, DynamicMessage> method(
            String fullName, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
                .setType(type)
                .setFullMethodName(fullName)
                .setRequestMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(ARTICLE_INPUT)))
                .setResponseMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(ARTICLE_OUTPUT)))
                .build();
    }
}
