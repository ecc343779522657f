package main

import (
	"syscall"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// LatencyMicrosToxic delays every chunk by Latency microseconds, counted from when the proxy read it, as
// Toxiproxy's own "latency" toxic does in whole milliseconds. A LAN round trip of 0.5 ms needs 250 µs each
// way, which whole milliseconds cannot say.
type LatencyMicrosToxic struct {
	Latency int64 `json:"latency"`
}

// GetBufferSize lets chunks queue behind the one being delayed, so that delays overlap as they do on a wire.
func (t *LatencyMicrosToxic) GetBufferSize() int {
	return 1024
}

func (t *LatencyMicrosToxic) Pipe(stub *toxics.ToxicStub) {
	delay := time.Duration(t.Latency) * time.Microsecond
	for {
		select {
		case <-stub.Interrupt:
			return
		case chunk := <-stub.Input:
			if chunk == nil {
				stub.Close()
				return
			}
			// Chunks read while an earlier one waited have waited too: only the rest of their delay is left.
			sleep := delay - time.Since(chunk.Timestamp)
			if sleep > 0 && sleep < timerResolution {
				// A blocking nanosleep keeps its thread, not a core, and wakes within tens of microseconds.
				ts := syscall.NsecToTimespec(int64(sleep))
				_ = syscall.Nanosleep(&ts, nil)
			} else if sleep > 0 {
				timer := time.NewTimer(sleep)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					timer.Stop()
					stub.Output <- chunk // never drop data on the floor
					return
				}
			}
			chunk.Timestamp = chunk.Timestamp.Add(delay)
			stub.Output <- chunk
		}
	}
}

// Go's timers wake through the network poller, whose wait counts whole milliseconds: a 250 µs timer fires after
// about 1 ms. Shorter delays sleep in the kernel instead.
const timerResolution = 2 * time.Millisecond

func init() {
	toxics.Register("latency_us", new(LatencyMicrosToxic))
}
