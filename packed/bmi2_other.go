//go:build !amd64 || purego

package packed

import "unsafe"

// Elsewhere the white discs go through the tables of rank.go.
const hasBMI2, fastBMI2 = false, false

func pextBMI2(x, mask uint64) uint64 { panic("packed: no BMI2") }

func pdepBMI2(x, mask uint64) uint64 { panic("packed: no BMI2") }

func depositBMI2(p unsafe.Pointer, n int, stride uintptr) { panic("packed: no BMI2") }

func extractBMI2(p unsafe.Pointer, n int, stride uintptr) { panic("packed: no BMI2") }

func extractDeltasBMI2(occ uint64, dOcc, whites *uint64, n int) { panic("packed: no BMI2") }
