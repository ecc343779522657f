package io.github.squarelab.square.grpc;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.stereotype.Component;

/**
 * The gRPC server's port and, when reflection shows them anyway, its services and their methods, under "grpc.server" in
 * /actuator/info, as net.devh's metric auto-configuration showed them before the service replaced it with one metering
 * layer (application.yml).
 */
@Component
class GrpcServerInfo implements InfoContributor {

    private final GrpcServerProperties properties;
    private final List<BindableService> services;

    GrpcServerInfo(GrpcServerProperties properties, List<BindableService> services) {
        this.properties = properties;
        this.services = services;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("port", properties.getPort());
        if (properties.isReflectionServiceEnabled()) {
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
