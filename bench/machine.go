package bench

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Machine describes the machine and build the harness runs on, for the
// record: OS and architecture, the processor's model name and CPU count,
// memory, kernel release, Go version and (on amd64) the GOAMD64 level the
// harness was built for. Parts the system does not tell are left out.
func Machine() string {
	parts := []string{runtime.GOOS + "/" + runtime.GOARCH}
	cpu := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if m := regexp.MustCompile(`(?m)^model name\s*:\s*(.+)$`).FindSubmatch(b); m != nil {
			cpu = strings.TrimSpace(string(m[1])) + ", " + cpu
		}
	}
	parts = append(parts, cpu)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if m := regexp.MustCompile(`(?m)^MemTotal:\s*(\d+) kB`).FindSubmatch(b); m != nil {
			kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
			parts = append(parts, fmt.Sprintf("%d GiB", (kb+1<<19)>>20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		parts = append(parts, "Linux "+strings.TrimSpace(string(b)))
	}
	parts = append(parts, runtime.Version())
	if info, ok := debug.ReadBuildInfo(); ok && runtime.GOARCH == "amd64" {
		level := "v1"
		for _, s := range info.Settings {
			if s.Key == "GOAMD64" {
				level = s.Value
			}
		}
		parts = append(parts, "GOAMD64="+level)
	}
	return strings.Join(parts, ", ")
}

// Intro is the sentence above the table in results.md: the command, when
// it started, and the machine.
func Intro(command string, start time.Time, machine string) string {
	return fmt.Sprintf("Measured with `%s`, started %s UTC, on %s:", command, start.UTC().Format("2006-01-02 15:04"), machine)
}

// IntroPattern matches an Intro sentence; its groups are the command, the
// date and time, and the machine.
var IntroPattern = regexp.MustCompile("^Measured with `(bench [^`]*)`, started (\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d) UTC, on (.+):$")
