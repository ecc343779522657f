// Command toxiproxy-server is Toxiproxy's own server (v2.12.0, from its Go module) with one more toxic,
// latency_us (latency_us.go). The lab builds it into loadtest/.tools/bin when NETWORK asks for a proxied
// profile. Its byte counters (toxiproxy_proxy_*_bytes_total on /metrics) are always on: the lab reads them.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address for the API to listen on")
	port := flag.String("port", "8474", "port for the API to listen on")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Printf("toxiproxy-server %s + latency_us\n", toxiproxy.Version)
		return
	}

	logger := zerolog.New(os.Stderr).With().Timestamp().Logger().Level(zerolog.InfoLevel)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	server.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()

	failed := make(chan error, 1)
	go func() { failed <- server.Listen(net.JoinHostPort(*host, *port)) }()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-failed:
		logger.Error().Err(err).Msg("the API server stopped")
		os.Exit(1)
	case <-signals:
		if err := server.Shutdown(); err != nil {
			logger.Error().Err(err).Msg("shutdown failed")
			os.Exit(1)
		}
	}
}
