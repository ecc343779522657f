package io.github.squarelab.aggregator.grpc;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * Resolves a comma-separated list of {@code host:port} replicas to all of their addresses, so that
 * round_robin spreads calls over them; grpc-java's own resolvers know no such list.
 */
final class ReplicaListNameResolverProvider extends NameResolverProvider {

    /** A private scheme: the provider goes into the channel's own registry, never the global one. */
    static final String SCHEME = "square-replicas";

    private final List<String> replicas;
    private final boolean ownAuthorities;

    /**
     * @param replicas {@code host:port} each, e.g. {@code 127.0.0.1:6565} or {@code [::1]:6565}
     * @param ownAuthorities each replica's calls carry its own host:port as their authority, which TLS checks its
     *     certificate against; else all carry the first replica's
     */
    ReplicaListNameResolverProvider(List<String> replicas, boolean ownAuthorities) {
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("no gRPC square service replicas given");
        }
        replicas.forEach(ReplicaListNameResolverProvider::hostAndPort);
        this.replicas = List.copyOf(replicas);
        this.ownAuthorities = ownAuthorities;
    }

    /** The target that makes a channel built with this provider's registry use it. */
    String target() {
        return SCHEME + ":///replicas";
    }

    @Override
    public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
        return SCHEME.equals(targetUri.getScheme()) ? new Resolver(args.getOffloadExecutor()) : null;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 5;
    }

    private final class Resolver extends NameResolver {

        /** Host names resolve with blocking lookups, which must not run on the channel's own threads. */
        private final Executor offload;

        private Listener2 listener;

        Resolver(Executor offload) {
            this.offload = offload != null ? offload : Runnable::run;
        }

        @Override
        public String getServiceAuthority() {
            return replicas.get(0);
        }

        @Override
        public void start(Listener2 listener) {
            this.listener = listener;
            refresh();
        }

        /** Called again by the channel when a replica fails: a host name may now point elsewhere. */
        @Override
        public void refresh() {
            Listener2 target = listener;
            offload.execute(() -> resolve(target));
        }

        @Override
        public void shutdown() {}

        private void resolve(Listener2 target) {
            List<EquivalentAddressGroup> addresses = new ArrayList<>(replicas.size());
            for (String replica : replicas) {
                String[] hostPort = hostAndPort(replica);
                InetSocketAddress address = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
                if (!address.isUnresolved()) {
                    addresses.add(
                            ownAuthorities
                                    ? new EquivalentAddressGroup(
                                            address,
                                            Attributes.newBuilder()
                                                    .set(EquivalentAddressGroup.ATTR_AUTHORITY_OVERRIDE, replica)
                                                    .build())
                                    : new EquivalentAddressGroup(address));
                }
            }
            if (addresses.isEmpty()) {
                target.onError(Status.UNAVAILABLE.withDescription("none of " + replicas + " resolves to an address"));
            } else {
                target.onResult(
                        ResolutionResult.newBuilder().setAddresses(addresses).build());
            }
        }
    }

    /** {@code host:port} or {@code [ipv6]:port}, split; anything else is a configuration error. */
    static String[] hostAndPort(String replica) {
        int colon = replica.lastIndexOf(':');
        String host = colon > 0 ? replica.substring(0, colon) : "";
        String port = colon > 0 ? replica.substring(colon + 1) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty() || !port.matches("\\d{1,5}") || Integer.parseInt(port) > 65535) {
            throw new IllegalArgumentException("'" + replica + "' in aggregator.grpc.target is not host:port");
        }
        return new String[] {host, port};
    }
}
