package io.github.squarelab.square.grpc;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntSupplier;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * The gRPC server's port and, when reflection shows them anyway, its services and their methods, under "grpc.server" in
 * /actuator/info, as net.devh's metric auto-configuration showed them before the service replaced it with one metering
 * layer (application.yml). Each Spring generation's GrpcServerWiring says where its starter keeps the port and whether
 * reflection is served.
 */
public class GrpcServerInfo implements InfoContributor {

    private final IntSupplier port;
    private final boolean reflection;
    private final List<BindableService> services;

    /**
     * @param port the port the server is configured with
     * @param reflection whether the server serves reflection, and so shows its services to anyone anyway
     */
    public GrpcServerInfo(IntSupplier port, boolean reflection, List<BindableService> services) {
        this.port = port;
        this.reflection = reflection;
        this.services = services;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("port", port.getAsInt());
        if (reflection) {
            Map<String, List<String>> methodsByService = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            for (BindableService service : services) {
                ServiceDescriptor descriptor = service.bindService().getServiceDescriptor();
                methodsByService.put(descriptor.getName(), methodNames(descriptor));
            }
            server.put("services", methodsByService);
        }
        builder.withDetail("grpc.server", server);
    }

    private static List<String> methodNames(ServiceDescriptor service) {
        return service.getMethods().stream()
                .map(MethodDescriptor::getBareMethodName)
                .sorted(String.CASE_INSENSITIVE_ORDER)
                .toList();
    }
}
