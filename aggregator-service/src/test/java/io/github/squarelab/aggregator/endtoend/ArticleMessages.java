package io.github.squarelab.aggregator.endtoend;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;

/**
 * The article's messages as its clients have them, {@code vinsmath.Input{int32 number = 1}} and
 * {@code vinsmath.Output{int32 number = 1; int64 result = 2}}, from a descriptor built here by hand (not from our
 * .proto), and methods that call our service by the article's full names with them.
 */
final class ArticleMessages {

    static final Descriptor INPUT;
    static final Descriptor OUTPUT;

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
            INPUT = file.findMessageTypeByName("Input");
            OUTPUT = file.findMessageTypeByName("Output");
        } catch (DescriptorValidationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final String UNARY = "vinsmath.SquareRpc/findSquareUnary";
    static final String BIDI = "vinsmath.SquareRpc/findSquareBiStream";

    private ArticleMessages() {}

    static DynamicMessage input(int number) {
        return DynamicMessage.newBuilder(INPUT)
                .setField(INPUT.findFieldByName("number"), number)
                .build();
    }

    static DynamicMessage output(int number, long result) {
        return DynamicMessage.newBuilder(OUTPUT)
                .setField(OUTPUT.findFieldByName("number"), number)
                .setField(OUTPUT.findFieldByName("result"), result)
                .build();
    }

    /** A method of the square service by its full name, with the given request and response messages. */
    static <I extends Message, O extends Message> MethodDescriptor<I, O> method(
            String fullName, MethodDescriptor.MethodType type, I request, O response) {
        return MethodDescriptor.<I, O>newBuilder()
                .setType(type)
                .setFullMethodName(fullName)
                .setRequestMarshaller(ProtoUtils.marshaller(request))
                .setResponseMarshaller(ProtoUtils.marshaller(response))
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
}
