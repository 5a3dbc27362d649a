package runstore

import (
	"fmt"
	"strconv"
	"strings"
)

// Claim names one merge: the scan or merge attempt that planned it, the
// group's number in that plan, the bucket its runs belong to, and whether
// its output is final. Its text form, "<attempt>.g<group>.b<bucket>.<f|p>",
// is a row-key-safe string that merge messages carry.
type Claim struct {
	Attempt string // the planning attempt's tag (letters, digits, '-')
	Group   int
	Bucket  int
	Final   bool
}

func (c Claim) String() string {
	kind := "p"
	if c.Final {
		kind = "f"
	}
	return fmt.Sprintf("%s.g%d.b%d.%s", c.Attempt, c.Group, c.Bucket, kind)
}

// maxClaimLen bounds a claim's text; row keys embed it.
const maxClaimLen = 80

// ParseClaim reads a claim's text form.
func ParseClaim(s string) (Claim, error) {
	bad := func(why string) (Claim, error) {
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return Claim{}, fmt.Errorf("claim %q: %s", s, why)
	}
	if len(s) > maxClaimLen {
		return bad("too long")
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return bad("expected <attempt>.g<group>.b<bucket>.<f|p>")
	}
	var c Claim
	c.Attempt = parts[0]
	if c.Attempt == "" {
		return bad("empty attempt")
	}
	for _, r := range c.Attempt {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return bad("the attempt holds a character other than a-z, 0-9 and '-'")
		}
	}
	var err error
	if c.Group, err = number(parts[1], 'g'); err != nil {
		return bad("group: " + err.Error())
	}
	if c.Bucket, err = number(parts[2], 'b'); err != nil {
		return bad("bucket: " + err.Error())
	}
	switch parts[3] {
	case "f":
		c.Final = true
	case "p":
	default:
		return bad("kind must be f or p")
	}
	return c, nil
}

// number reads a tagged decimal such as "g12": digits only, no sign, no
// leading zeros, at most 9 digits, so the text form is canonical.
func number(s string, tag byte) (int, error) {
	if len(s) < 2 || s[0] != tag {
		return 0, fmt.Errorf("expected %c<number>", tag)
	}
	d := s[1:]
	if len(d) > 9 || len(d) > 1 && d[0] == '0' {
		return 0, fmt.Errorf("%q is not a canonical number", d)
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", d)
		}
	}
	return strconv.Atoi(d)
}
