package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidQueueName checks Azure's queue naming rules: 3-63 characters of
// lowercase letters, digits and single hyphens, starting and ending with a
// letter or digit.
func ValidQueueName(name string) error { return validDNSName("queue", name) }

// ValidContainerName checks Azure's container naming rules, which match the
// queue rules.
func ValidContainerName(name string) error { return validDNSName("container", name) }

func validDNSName(kind, name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("%w: %s name %q must be 3 to 63 characters", ErrInvalid, kind, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return fmt.Errorf("%w: %s name %q: hyphens must be single and inside the name", ErrInvalid, kind, name)
			}
		default:
			return fmt.Errorf("%w: %s name %q may hold only lowercase letters, digits and hyphens", ErrInvalid, kind, name)
		}
	}
	return nil
}

// ValidTableName checks Azure's table naming rules: 3-63 letters and
// digits, starting with a letter, and not "tables".
func ValidTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("%w: table name %q must be 3 to 63 characters", ErrInvalid, name)
	}
	if strings.EqualFold(name, "tables") {
		return fmt.Errorf("%w: table name %q is reserved", ErrInvalid, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("%w: table name %q must be letters and digits, starting with a letter", ErrInvalid, name)
		}
	}
	return nil
}

// ValidBlobName checks a blob name: 1-1024 characters, valid UTF-8, no
// control characters, and not ending with a dot or slash.
func ValidBlobName(name string) error {
	if name == "" || len(name) > 1024 || !utf8.ValidString(name) {
		return fmt.Errorf("%w: blob name %q must be 1 to 1024 bytes of UTF-8", ErrInvalid, name)
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, "/") {
		return fmt.Errorf("%w: blob name %q must not end with a dot or slash", ErrInvalid, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: blob name %q holds a control character", ErrInvalid, name)
		}
	}
	return nil
}

// ValidKey checks a PartitionKey or RowKey: at most 1 KiB of UTF-8, no
// / \ # ?, and no control characters.
func ValidKey(key string) error {
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("%w: table key of %d bytes exceeds %d", ErrInvalid, len(key), MaxKeyBytes)
	}
	// Keys travel in JSON bodies and URLs, which carry only valid UTF-8.
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: table key %q is not valid UTF-8", ErrInvalid, key)
	}
	for _, r := range key {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return fmt.Errorf("%w: table key %q holds a forbidden character %q", ErrInvalid, key, r)
		}
	}
	return nil
}
