package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileFlags are -cpuprofile and -memprofile of the commands that run
// worker loops: the profiles `go tool pprof` reads, of the whole process.
type profileFlags struct {
	cpu, mem string
}

func (p *profileFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the whole process to this file, each task's samples labelled with its message's kind and ply (go tool pprof -tags)")
	fs.StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations since the start, and what is live) to this file at the end")
}

// start starts the CPU profile if one is asked for and returns the
// function that ends it and writes the heap profile. Errors of the
// profiles are returned by that function, not hidden: a profile asked
// for and missing would be read as a run that never ran.
func (p *profileFlags) start() (stop func() error, err error) {
	if err := writableFile("memprofile", p.mem); err != nil {
		return nil, err // written at the end: checked before the work
	}
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("creating the CPU profile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("starting the CPU profile: %w", err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if p.mem != "" {
			errs = append(errs, writeHeapProfile(p.mem))
		}
		return errors.Join(errs...)
	}, nil
}

func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("creating the heap profile: %w", err)
	}
	runtime.GC() // so that the live figures are up to date
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return f.Close()
}
