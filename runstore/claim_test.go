package runstore

import "testing"

func TestClaimRoundTrip(t *testing.T) {
	for _, c := range []Claim{
		{Attempt: "0123456789abcdef", Group: 0, Bucket: 0, Final: true},
		{Attempt: "0123456789abcdef-3", Group: 17, Bucket: 123456, Final: false},
	} {
		got, err := ParseClaim(c.String())
		if err != nil || got != c {
			t.Errorf("ParseClaim(%q) = %+v, %v; want %+v", c.String(), got, err, c)
		}
	}
	for _, bad := range []string{"", "a.g0.b0", "a.g0.b0.x", ".g0.b0.f", "A.g0.b0.f", "a.g00.b0.f", "a.g-1.b0.f", "a.h0.b0.f", "a.g0.b1234567890.f", "a/b.g0.b0.f"} {
		if c, err := ParseClaim(bad); err == nil {
			t.Errorf("ParseClaim(%q) = %+v, want an error", bad, c)
		}
	}
}

// FuzzParseClaim: claims arrive in queue messages, so any text must give
// an error or a claim whose text form is the input.
func FuzzParseClaim(f *testing.F) {
	for _, s := range []string{"0123456789abcdef.g0.b3.p", "0123456789abcdef-2.g3.b0.f", "", "a.g0.b0.q", "a.g01.b0.f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseClaim(s)
		if err != nil {
			return
		}
		if c.String() != s {
			t.Fatalf("ParseClaim(%q) = %+v, whose text is %q", s, c, c.String())
		}
	})
}
