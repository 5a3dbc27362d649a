package cli

import (
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/reversi-cloud/reversi/storage/faulty"
	"github.com/reversi-cloud/reversi/storage/sim"
)

// registerSim registers the storage flags of a command that runs a
// whole run in its process, with -storage sim among them: one Azure
// account simulated in the process (storage/sim), which nothing outside
// it could reach.
func (s *storageFlags) registerSim(fs *flag.FlagSet, def string) {
	s.simOK = true
	s.register(fs, def)
	fs.DurationVar(&s.sim.Latency, "sim-latency", sim.DefaultLatency, "-storage sim: the time every storage call takes, as within an Azure region")
	fs.Float64Var(&s.simMBps, "sim-bandwidth", sim.DefaultBandwidth/1e6, "-storage sim: the MB (10^6 bytes) a second one blob call moves, on top of -sim-latency")
}

// simUsage is what -storage says of sim.
const simUsage = ", sim (one Azure account simulated in this process: embedded storage with -sim-latency on every call and Azure's rate limits, to rehearse a fleet of -workers in the hundreds; kept in memory, it cannot be resumed),"

// validateSim checks the flags of -storage sim.
func (s *storageFlags) validateSim() error {
	switch {
	case s.data != "":
		return usagef("-data keeps the run in embedded storage in a directory; leave out -storage sim")
	case s.sim.Latency <= 0:
		return usagef("-sim-latency %v: must be positive (-storage embedded has no latency)", s.sim.Latency)
	case s.sim.Latency > time.Minute:
		return usagef("-sim-latency %v: must be at most a minute", s.sim.Latency)
	case !(s.simMBps > 0) || math.IsInf(s.simMBps, 1):
		return usagef("-sim-bandwidth %v: must be a positive number of MB a second", s.simMBps)
	}
	s.sim.Bandwidth = max(1, int64(s.simMBps*1e6))
	return s.sim.Validate()
}

// simSummary says how the simulated account's rate limits held the run
// back, once open opened it.
func (s *storageFlags) simSummary() string {
	t := s.simBE.ThrottleStats()
	return fmt.Sprintf("simulated account: %d calls admitted, %d of them after waiting for the rate limits (%v in all), %d refused as ServerBusy (by the binding limit: %v); the busiest account, queue and partition took %v (the queue %q, the partition %q)",
		t.Calls, t.Waits, t.Waited.Round(time.Millisecond), t.Refused, t.RefusedBy, t.Busiest, t.BusiestName[faulty.ScopeQueue], t.BusiestName[faulty.ScopePartition])
}
