// Package cputime reads the CPU time this process has used: what a run
// report prices as compute, and what benchmarks divide by on a machine
// shared with other work.
package cputime
